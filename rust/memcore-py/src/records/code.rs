//! Code search: `CodeHit`, a chunk found by `search_code` with the scores
//! that explain its rank and the snippet an agent reads.

use pyo3::prelude::*;

use memcore::Scores as CoreScores;
use memcore::code::CodeChunk;

use super::facts::{Relevance, Scores};
use super::record;

/// A hit's snippet is cut at a line boundary beyond this many characters:
/// enough for a function of about 50 lines, short enough that ten hits fit in
/// an agent's context.
pub const SNIPPET_MAX_CHARS: usize = 2000;

record! {
    /// A code chunk found by `search_code`, with the scores that explain its rank.
    ///
    /// `snippet` is the chunk's code without the indexing header, cut at a line
    /// boundary after `SNIPPET_MAX_CHARS` with a note of the lines left out;
    /// `relevance_score` is 0-1 for display: the fused z-score mapped from its ±3 range.
    CodeHit {
        file_path: String,
        start_line: i64,
        end_line: i64,
        name: Option<String>,
        chunk_type: String,
        language: String,
        parent_scope: Option<String>,
        snippet: String,
        scores: Py<Scores>,
        relevance_score: f64,
        project_id: String,
        id: String,
    }
}

impl CodeHit {
    pub fn from_core(py: Python<'_>, (c, s): (CodeChunk, CoreScores)) -> PyResult<Self> {
        let line_count = usize::try_from(c.end_line - c.start_line + 1).unwrap_or(0);
        Ok(Self {
            snippet: snippet_of(&c.content, line_count, SNIPPET_MAX_CHARS),
            relevance_score: Relevance::Fused.of(&s),
            scores: Py::new(py, Scores::from(s))?,
            file_path: c.file_path,
            start_line: c.start_line,
            end_line: c.end_line,
            name: c.name,
            chunk_type: c.chunk_type,
            language: c.language,
            parent_scope: c.parent_scope,
            project_id: c.project_id,
            id: c.id,
        })
    }
}

/// The code of a stored chunk: its last `line_count` lines, shortened if long.
///
/// The chunker stores `header + "\n" + source` where `source` is exactly the
/// chunk's line range, so the source is the tail of the content whatever the
/// header held. Lines are kept up to the one that crosses `max_chars`
/// characters (counted as Python counts them), then `… (N more lines)`.
pub fn snippet_of(content: &str, line_count: usize, max_chars: usize) -> String {
    let all: Vec<&str> = content.split('\n').collect();
    let lines = &all[all.len().saturating_sub(line_count)..];
    let mut size = 0;
    for (kept, line) in lines.iter().enumerate() {
        let chars = line.chars().count();
        if kept > 0 && size + chars > max_chars {
            let more = lines.len() - kept;
            return format!("{}\n… ({more} more lines)", lines[..kept].join("\n"));
        }
        size += chars + 1;
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::snippet_of;

    #[test]
    fn the_snippet_is_the_tail_cut_at_a_line() {
        assert_eq!(snippet_of("# header\na\nb", 2, 100), "a\nb");
        assert_eq!(snippet_of("a\nb", 5, 100), "a\nb");
        assert_eq!(snippet_of("h\n", 0, 100), "");
        // "ééé" is three characters (not six bytes): "ab\n" and it fit in 6.
        assert_eq!(snippet_of("h\nab\nééé", 2, 6), "ab\nééé");
        assert_eq!(
            snippet_of("h\nabc\ndef\nghi", 3, 5),
            "abc\n… (2 more lines)"
        );
        // The first line is kept however long it is.
        assert_eq!(
            snippet_of("h\nabcdefgh\nx", 2, 3),
            "abcdefgh\n… (1 more lines)"
        );
    }
}
