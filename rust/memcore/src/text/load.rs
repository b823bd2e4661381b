//! Opening the text index folder without trusting it: tantivy trusts its
//! files, and a damaged segment made it panic mid-search or refuse to open
//! for good. Every check here runs before the first search: the files'
//! checksums (tantivy writes one in each footer but never reads it back),
//! the segments' structure, and the covered seq, which carries its own
//! checksum in the commit payload so a damaged one cannot claim documents
//! the index lacks.

use std::path::Path;

use tantivy::Index;
use tantivy::schema::{Field, Schema};
use tantivy::tokenizer::TextAnalyzer;

use super::KEY;
use super::analyzer::ANALYZER_NAME;

/// What the folder held.
pub(super) enum Loaded {
    /// A sound index and the op-log seq its last commit covers.
    Sound(Index, i64),
    /// Nothing (a new store, or the folder was deleted).
    Absent,
    /// An index of an older layout: started over, not a fault.
    OtherLayout,
    /// Files that fail a check, and why.
    Damaged(String),
}

/// Open and check the index in `dir`; never panics.
pub(super) fn load(dir: &Path, schema: &Schema, body: Field, analyzer: &TextAnalyzer) -> Loaded {
    let empty = std::fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none());
    if empty {
        return Loaded::Absent;
    }
    crate::panics::catch(|| check(dir, schema, body, analyzer))
        .unwrap_or_else(|panic| Loaded::Damaged(format!("reading it panicked: {panic}")))
}

fn check(dir: &Path, schema: &Schema, body: Field, analyzer: &TextAnalyzer) -> Loaded {
    let damaged = |what: &str, e: &dyn std::fmt::Display| Loaded::Damaged(format!("{what}: {e}"));
    let index = match Index::open_in_dir(dir) {
        Ok(index) => index,
        Err(e) => return damaged("open", &e),
    };
    if index.schema() != *schema {
        return Loaded::OtherLayout;
    }
    index.tokenizers().register(ANALYZER_NAME, analyzer.clone());
    let metas = match index.load_metas() {
        Ok(metas) => metas,
        Err(e) => return damaged("metadata", &e),
    };
    let seq = match metas.payload.as_deref().map(parse_payload) {
        None => 0,
        Some(Ok(seq)) => seq,
        Some(Err(bad)) => return damaged("covered seq", &bad),
    };
    match index.validate_checksum() {
        Ok(bad) if bad.is_empty() => {}
        Ok(bad) => {
            let mut names: Vec<String> = bad.iter().map(|p| p.display().to_string()).collect();
            names.sort();
            return damaged("checksum mismatch in", &names.join(", "));
        }
        Err(e) => return damaged("checksums", &e),
    }
    let reader = match index.reader() {
        Ok(reader) => reader,
        Err(e) => return damaged("segments", &e),
    };
    for segment in reader.searcher().segment_readers() {
        let keys = match segment.fast_fields().u64(KEY) {
            Ok(keys) => keys,
            Err(e) => return damaged("key column", &e),
        };
        if keys.num_docs() != segment.max_doc() {
            return Loaded::Damaged(format!(
                "a segment lists {} documents but its key column {}",
                segment.max_doc(),
                keys.num_docs()
            ));
        }
        if let Err(e) = segment.inverted_index(body) {
            return damaged("terms", &e);
        }
    }
    Loaded::Sound(index, seq)
}

/// The commit payload recording `seq`: the number and a checksum of it.
pub(super) fn payload(seq: i64) -> String {
    let digits = seq.to_string();
    format!("{digits}:{:08x}", crc32fast::hash(digits.as_bytes()))
}

/// The seq the newest commit on disk covers (0 when none or unreadable): a
/// read-only follower compares it with the commit it loaded last.
pub(super) fn committed_seq(index: &tantivy::Index) -> i64 {
    index
        .load_metas()
        .ok()
        .and_then(|m| m.payload)
        .and_then(|p| parse_payload(&p).ok())
        .unwrap_or(0)
}

/// The seq of a payload written by [`payload`]; a bare number (written
/// before payloads carried a checksum) is taken as it is.
fn parse_payload(payload: &str) -> Result<i64, String> {
    let bad = || format!("unreadable payload {payload:?}");
    match payload.split_once(':') {
        Some((digits, sum)) => {
            let expected = format!("{:08x}", crc32fast::hash(digits.as_bytes()));
            if sum != expected {
                return Err(bad());
            }
            digits.parse().map_err(|_| bad())
        }
        None => payload.parse().map_err(|_| bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_a_damaged_one_is_refused() {
        assert_eq!(parse_payload(&payload(1234)), Ok(1234));
        assert_eq!(parse_payload("77"), Ok(77), "payloads before checksums");
        let mut flipped = payload(1000).into_bytes();
        flipped[3] ^= 1; // "1000" -> "1001"
        assert!(parse_payload(std::str::from_utf8(&flipped).unwrap()).is_err());
        assert!(parse_payload("12x").is_err());
    }
}
