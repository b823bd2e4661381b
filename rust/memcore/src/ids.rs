//! Sortable, prefixed record ids (`mem_01JD…`).
//!
//! The body is a ULID-style 26-character Crockford base32 string: 48 bits of
//! milliseconds then 80 random bits. Within one process ids are strictly
//! increasing: when the clock has not moved (or went backwards) the previous
//! body is incremented instead of drawing new randomness, so ids sort in
//! creation order and "newest first" is a plain descending sort.

use parking_lot::Mutex;

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const RANDOM_BITS: u32 = 80;

/// Generates monotonic ids; one per engine, shared by all record kinds.
#[derive(Debug, Default)]
pub struct IdGenerator {
    last: Mutex<u128>,
}

impl IdGenerator {
    /// A new id with `prefix` (e.g. `"mem"`), joined by an underscore.
    pub fn next(&self, prefix: &str, now_ms: u64) -> String {
        let body = self.next_raw(now_ms);
        let mut out = String::with_capacity(prefix.len() + 27);
        out.push_str(prefix);
        out.push('_');
        encode(body, &mut out);
        out
    }

    /// Continue after an existing id body, so ids made after a reopen in
    /// the same millisecond still sort after the stored ones.
    pub fn resume_after(&self, body: &str) {
        if let Some(value) = decode(body) {
            let mut last = self.last.lock();
            *last = (*last).max(value);
        }
    }

    fn next_raw(&self, now_ms: u64) -> u128 {
        let mut last = self.last.lock();
        let time_part = u128::from(now_ms & 0xFFFF_FFFF_FFFF) << RANDOM_BITS;
        let candidate = time_part | (rand::random::<u128>() & ((1u128 << RANDOM_BITS) - 1));
        // Same millisecond or clock skew: keep order by incrementing.
        let next = if candidate > *last {
            candidate
        } else {
            *last + 1
        };
        *last = next;
        next
    }
}

fn encode(mut value: u128, out: &mut String) {
    let mut buf = [0u8; 26];
    for slot in buf.iter_mut().rev() {
        *slot = ALPHABET[(value & 31) as usize];
        value >>= 5;
    }
    out.extend(buf.iter().map(|&b| b as char));
}

fn decode(body: &str) -> Option<u128> {
    if body.len() != 26 {
        return None;
    }
    body.bytes().try_fold(0u128, |acc, b| {
        let digit = ALPHABET.iter().position(|&a| a == b.to_ascii_uppercase())?;
        Some((acc << 5) | digit as u128)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefixed_and_sortable() {
        let ids = IdGenerator::default();
        let a = ids.next("mem", 1_700_000_000_000);
        let b = ids.next("mem", 1_700_000_000_000);
        let c = ids.next("mem", 1_699_999_999_999); // clock went back
        assert!(a.starts_with("mem_"));
        assert_eq!(a.len(), 30);
        assert!(a < b && b < c, "{a} {b} {c}");
    }

    #[test]
    fn resume_continues_after_a_stored_id() {
        let first = IdGenerator::default();
        let stored = first.next("mem", 5_000);
        let body = stored.strip_prefix("mem_").unwrap();
        assert_eq!(decode(body).map(|v| v >> RANDOM_BITS), Some(5_000));
        let reopened = IdGenerator::default();
        reopened.resume_after(body);
        assert!(reopened.next("mem", 5_000) > stored);
    }

    #[test]
    fn later_milliseconds_sort_later() {
        let ids = IdGenerator::default();
        let a = ids.next("obs", 1_000);
        let b = ids.next("obs", 2_000);
        assert!(a < b);
    }
}
