//! Which node serves a namespace (docs/scale-out.md, "Tenants spread over
//! nodes"): a node started with `--namespace-range LO-HI/BUCKETS` serves the
//! namespaces whose bucket lies in `LO..=HI`.
//!
//! The bucket is memcore's own hash and is fixed forever, because every node,
//! every release and an operator's proxy configuration must place a namespace
//! alike: the first 8 bytes of the SHA-256 digest of the namespace's UTF-8
//! bytes, read as a big-endian unsigned 64-bit integer, modulo `BUCKETS`.
//! (Rust's `DefaultHasher` is seeded per process and may change between
//! releases; it would place a namespace differently on every node.) A test
//! pins known values; the command line calls this one definition
//! (`memcore namespace-bucket NAME`, via `python/memcore/_facade/placement.py`).
//!
//! The range names its bucket count rather than assuming 100, so a deployment
//! can grow past 100 nodes, or split finer, without a new hash: a node's range
//! reads the same whatever the others use.

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The most buckets a range may split namespaces into.
pub const MAX_BUCKETS: u32 = 1 << 20;

/// The bucket of `namespace` among `buckets` (at least 1).
pub fn bucket(namespace: &str, buckets: u32) -> u32 {
    let digest = Sha256::digest(namespace.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(first) % u64::from(buckets.max(1))) as u32
}

/// A contiguous range of buckets: `lo..=hi` of `buckets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceRange {
    pub lo: u32,
    pub hi: u32,
    pub buckets: u32,
}

impl NamespaceRange {
    /// Parse `LO-HI/BUCKETS` (e.g. `0-49/100`); anything else is an
    /// `INVALID_PARAMETER` that shows the form.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::invalid(
                "namespace_range",
                format!(
                    "{why} in namespace range {text:?}; write LO-HI/BUCKETS, e.g. 0-49/100 \
                     (the namespaces whose bucket of 100 is 0 to 49)."
                ),
            )
        };
        let (range, buckets) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| bad("No /BUCKETS"))?;
        let (lo, hi) = range.split_once('-').ok_or_else(|| bad("No LO-HI"))?;
        let number = |part: &str| part.trim().parse::<u32>().map_err(|_| bad("Not a number"));
        let (lo, hi, buckets) = (number(lo)?, number(hi)?, number(buckets)?);
        if buckets == 0 || buckets > MAX_BUCKETS {
            return Err(bad(&format!("BUCKETS must be 1 to {MAX_BUCKETS}")));
        }
        if lo > hi || hi >= buckets {
            return Err(bad("Need LO <= HI < BUCKETS"));
        }
        Ok(NamespaceRange { lo, hi, buckets })
    }

    /// Whether `namespace` falls in this range.
    pub fn contains(&self, namespace: &str) -> bool {
        (self.lo..=self.hi).contains(&bucket(namespace, self.buckets))
    }
}

impl std::fmt::Display for NamespaceRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}/{}", self.lo, self.hi, self.buckets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash is a contract with every node and proxy ever configured:
    /// these values must never change (tests/test_settings.py pins the
    /// Python twin to the same ones).
    #[test]
    fn buckets_are_fixed_forever() {
        for (name, of_100, of_7) in [
            ("default", 49, 4),
            ("tenant-a", 37, 6),
            ("tenant-b", 90, 3),
            ("acme", 72, 2),
            ("é-ünïcode", 65, 1),
        ] {
            assert_eq!(bucket(name, 100), of_100, "{name}");
            assert_eq!(bucket(name, 7), of_7, "{name}");
        }
        assert_eq!(bucket("default", 1), 0);
    }

    #[test]
    fn ranges_parse_or_say_the_form() {
        assert_eq!(
            NamespaceRange::parse("0-49/100").unwrap(),
            NamespaceRange {
                lo: 0,
                hi: 49,
                buckets: 100
            }
        );
        for bad in [
            "",
            "0-49",
            "49-0/100",
            "0-100/100",
            "0-0/0",
            "a-b/c",
            "5/10",
        ] {
            let err = NamespaceRange::parse(bad).unwrap_err();
            assert_eq!(err.code(), "INVALID_PARAMETER", "{bad}");
            assert!(err.to_string().contains("LO-HI/BUCKETS"), "{err}");
        }
    }

    #[test]
    fn every_namespace_is_in_exactly_one_of_two_halves() {
        let low = NamespaceRange::parse("0-49/100").unwrap();
        let high = NamespaceRange::parse("50-99/100").unwrap();
        for i in 0..200 {
            let name = format!("tenant-{i}");
            assert!(low.contains(&name) != high.contains(&name), "{name}");
        }
    }
}
