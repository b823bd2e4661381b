//! Opening the text index folder without trusting it: tantivy trusts its
//! files, and a damaged segment made it panic mid-search or refuse to open
//! for good. Every check here runs before the first search: the files'
//! checksums (tantivy writes one in each footer but never reads it back),
//! the segments' structure, and the covered seq, which carries its own
//! checksum in the commit payload so a damaged one cannot claim documents
//! the index lacks.

use std::path::Path;

use tantivy::directory::error::OpenReadError;
use tantivy::schema::{Field, Schema};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, SegmentReader, TantivyError};

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
    /// Files that fail a check: which file and which check, in one short
    /// clause ([`failed`]), for a warning that stays one short log line.
    Damaged(String),
}

/// Open and check the index in `dir`; never panics.
pub(super) fn load(dir: &Path, schema: &Schema, body: Field, analyzer: &TextAnalyzer) -> Loaded {
    let empty = std::fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none());
    if empty {
        return Loaded::Absent;
    }
    crate::panics::catch(|| check(dir, schema, body, analyzer)).unwrap_or_else(|panic| {
        let first = panic.lines().next().unwrap_or_default();
        Loaded::Damaged(format!("reading it panicked: {}", brief(first)))
    })
}

fn check(dir: &Path, schema: &Schema, body: Field, analyzer: &TextAnalyzer) -> Loaded {
    let index = match Index::open_in_dir(dir) {
        Ok(index) => index,
        Err(e) => return failed(file_of(&e).as_deref().unwrap_or(META), "open"),
    };
    if index.schema() != *schema {
        return Loaded::OtherLayout;
    }
    index.tokenizers().register(ANALYZER_NAME, analyzer.clone());
    let metas = match index.load_metas() {
        Ok(metas) => metas,
        Err(e) => return failed(file_of(&e).as_deref().unwrap_or(META), "metadata"),
    };
    let seq = match metas.payload.as_deref().map(parse_payload) {
        None => 0,
        Some(Ok(seq)) => seq,
        Some(Err(_)) => return failed(META, "covered seq"),
    };
    match index.validate_checksum() {
        Ok(bad) if bad.is_empty() => {}
        Ok(bad) => {
            let mut names: Vec<String> = bad.iter().map(|p| p.display().to_string()).collect();
            names.sort();
            return failed(&listed(&names), "checksum");
        }
        Err(e) => {
            return failed(
                file_of(&e).as_deref().unwrap_or("a segment file"),
                "checksum",
            );
        }
    }
    let reader = match index.reader() {
        Ok(reader) => reader,
        Err(e) => return failed(file_of(&e).as_deref().unwrap_or("a segment"), "segments"),
    };
    for segment in reader.searcher().segment_readers() {
        let fast = segment_file(segment, "fast");
        let Ok(keys) = segment.fast_fields().u64(KEY) else {
            return failed(&fast, "key column");
        };
        if keys.num_docs() != segment.max_doc() {
            return Loaded::Damaged(format!(
                "{fast} failed the key column check ({} keys for {} documents)",
                keys.num_docs(),
                segment.max_doc(),
            ));
        }
        if let Err(e) = segment.inverted_index(body) {
            let file = file_of(&e).unwrap_or_else(|| segment_file(segment, "term"));
            return failed(&file, "terms");
        }
    }
    Loaded::Sound(index, seq)
}

/// The file holding the index's metadata (and the covered seq).
const META: &str = "meta.json";
/// Longest piece of a message quoted from elsewhere (a panic's).
const QUOTED_CHARS: usize = 120;
/// Damaged files named one by one; past that, how many more.
const NAMED_FILES: usize = 3;

/// The folder is damaged: `file` (relative to the index folder) failed
/// `check`. Only that: tantivy's own errors quote whole files (a damaged
/// meta.json's 2 KB of JSON) and nest debug dumps, which made one warning
/// a screenful in the log.
fn failed(file: &str, check: &str) -> Loaded {
    Loaded::Damaged(format!("{file} failed the {check} check"))
}

/// The file a tantivy error is about, when it names one.
fn file_of(error: &TantivyError) -> Option<String> {
    match error {
        TantivyError::OpenReadError(
            OpenReadError::FileDoesNotExist(path) | OpenReadError::IoError { filepath: path, .. },
        ) => Some(path.display().to_string()),
        // The path is private to `DataCorruption`; only its Debug form
        // shows it: "Data corruption (in file `\"meta.json\"`): …".
        TantivyError::DataCorruption(corruption) => {
            let text = format!("{corruption:?}");
            let (_, rest) = text.split_once("(in file `")?;
            let (quoted, _) = rest.split_once("`)")?;
            Some(quoted.trim_matches('"').to_owned())
        }
        _ => None,
    }
}

/// A segment's file of that extension: `<segment id>.<extension>`.
fn segment_file(segment: &SegmentReader, extension: &str) -> String {
    format!("{}.{extension}", segment.segment_id().uuid_string())
}

/// `names` joined, the first few only.
fn listed(names: &[String]) -> String {
    let shown = names
        .iter()
        .take(NAMED_FILES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match names.len().saturating_sub(NAMED_FILES) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// `text` cut to [`QUOTED_CHARS`] characters.
fn brief(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
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
