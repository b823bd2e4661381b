//! `memory_list_dir_with_abstract`: what a store holds, as a small tree of
//! namespaces → threads / conversations, each with counts, its last update
//! and an abstract made without an LLM (the first request and top terms).

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::Engine;
use super::summaries::STOPWORDS;
use crate::error::{Error, Result};
use crate::memory::validate_namespace;
use crate::store::conversations::Turns;
use crate::store::memories::Memories;
use crate::store::table::{self, Table};
use crate::temporal::Timestamp;

/// One entry of the overview.
#[derive(Debug, Clone, PartialEq)]
pub struct DirEntry {
    /// `/namespace`, `/namespace/threads/<id>`, `/namespace/conversations/<id>`.
    pub path: String,
    /// "namespace", "thread" or "conversation".
    pub kind: &'static str,
    /// Records under it (memories, or turns for a conversation).
    pub count: i64,
    pub updated_at: Option<Timestamp>,
    pub summary: String,
}

impl Engine {
    /// The overview of one namespace, or of every namespace when None.
    /// `depth` 1 lists namespaces only; 2 adds threads and conversations.
    pub fn overview(
        &self,
        namespace: Option<&str>,
        depth: usize,
        limit: usize,
    ) -> Result<Vec<DirEntry>> {
        if let Some(ns) = namespace {
            validate_namespace(ns)?;
        }
        if !(1..=8).contains(&depth) {
            return Err(Error::invalid("depth", "depth must be between 1 and 8."));
        }
        super::memories::check_limit(limit)?;
        let conn = self.store.reader()?;
        let mut out = Vec::new();
        for (ns, updated) in namespaces(&conn, namespace)? {
            if out.len() >= limit {
                break;
            }
            out.push(namespace_entry(&conn, &ns, updated)?);
            if depth >= 2 {
                out.extend(thread_entries(&conn, &ns)?);
                out.extend(conversation_entries(&conn, &ns)?);
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}

fn namespaces(conn: &Connection, only: Option<&str>) -> Result<Vec<(String, Option<Timestamp>)>> {
    let mut stmt = conn.prepare(
        "SELECT namespace, max(at) FROM (
             SELECT namespace, updated_at AS at FROM memories
             UNION ALL SELECT namespace, updated_at FROM entities
             UNION ALL SELECT namespace, updated_at FROM conversations)
         WHERE ?1 IS NULL OR namespace = ?1
         GROUP BY namespace ORDER BY max(at) DESC",
    )?;
    let rows = stmt.query_map([only], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn count(conn: &Connection, sql: &str, ns: &str) -> Result<i64> {
    Ok(conn.query_row(sql, [ns], |r| r.get(0))?)
}

fn namespace_entry(conn: &Connection, ns: &str, updated: Option<Timestamp>) -> Result<DirEntry> {
    let memories = count(
        conn,
        "SELECT count(*) FROM memories WHERE namespace = ?1",
        ns,
    )?;
    let entities = count(
        conn,
        "SELECT count(*) FROM entities WHERE namespace = ?1",
        ns,
    )?;
    let conversations = count(
        conn,
        "SELECT count(*) FROM conversations WHERE namespace = ?1",
        ns,
    )?;
    // Whole records, so their checksums are verified (a quoted text is
    // served too): `store::checksum`.
    let recent: Vec<String> = table::all::<Memories>(
        conn,
        &format!(
            "SELECT {} FROM memories WHERE namespace = ?1 ORDER BY created_at DESC LIMIT 200",
            Memories::COLUMNS
        ),
        [ns],
    )?
    .into_iter()
    .map(|m| m.content)
    .collect();
    Ok(DirEntry {
        path: format!("/{ns}"),
        kind: "namespace",
        count: memories,
        updated_at: updated,
        summary: format!(
            "{memories} memories, {entities} entities, {conversations} conversations{}",
            terms_suffix(&recent)
        ),
    })
}

fn thread_entries(conn: &Connection, ns: &str) -> Result<Vec<DirEntry>> {
    let mut stmt = conn.prepare(
        "SELECT thread_id, count(*), max(updated_at) FROM memories
         WHERE namespace = ?1 AND thread_id IS NOT NULL
         GROUP BY thread_id ORDER BY max(updated_at) DESC LIMIT 100",
    )?;
    let threads: Vec<(String, i64, Timestamp)> = stmt
        .query_map([ns], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let texts = format!(
        "SELECT {} FROM memories WHERE namespace = ?1 AND thread_id = ?2
         ORDER BY created_at LIMIT 200",
        Memories::COLUMNS
    );
    threads
        .into_iter()
        .map(|(thread, n, updated)| {
            let contents: Vec<String> = table::all::<Memories>(conn, &texts, params![ns, thread])?
                .into_iter()
                .map(|m| m.content)
                .collect();
            let first = contents.first().map_or(String::new(), |c| quote(c));
            Ok(DirEntry {
                path: format!("/{ns}/threads/{thread}"),
                kind: "thread",
                count: n,
                updated_at: Some(updated),
                summary: format!("{n} memories; first: {first}{}", terms_suffix(&contents)),
            })
        })
        .collect()
}

fn conversation_entries(conn: &Connection, ns: &str) -> Result<Vec<DirEntry>> {
    let mut stmt = conn.prepare(
        "SELECT c.id, c.updated_at, c.archived_at, count(t.id) FROM conversations c
         LEFT JOIN turns t ON t.namespace = c.namespace AND t.conversation_id = c.id
         WHERE c.namespace = ?1 GROUP BY c.id ORDER BY c.updated_at DESC LIMIT 100",
    )?;
    let conversations: Vec<(String, Timestamp, Option<Timestamp>, i64)> = stmt
        .query_map([ns], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let texts = format!(
        "SELECT {} FROM turns WHERE namespace = ?1 AND conversation_id = ?2
         ORDER BY turn_index LIMIT 200",
        Turns::COLUMNS
    );
    conversations
        .into_iter()
        .map(|(id, updated, archived, turns)| {
            let requests: Vec<String> = table::all::<Turns>(conn, &texts, params![ns, id])?
                .into_iter()
                .map(|t| t.user_text)
                .collect();
            let first = requests.first().map_or(String::new(), |c| quote(c));
            let archived = if archived.is_some() {
                " (archived)"
            } else {
                ""
            };
            // Maintenance's summary, when it made one, says more than terms.
            let about = match super::summaries::stored_summary(conn, ns, &id)? {
                Some(summary) if !summary.is_empty() => format!("; summary: {summary}"),
                _ => terms_suffix(&requests),
            };
            Ok(DirEntry {
                path: format!("/{ns}/conversations/{id}"),
                kind: "conversation",
                count: turns,
                updated_at: Some(updated),
                summary: format!("{turns} turns{archived}; first request: {first}{about}"),
            })
        })
        .collect()
}

fn quote(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = flat.chars().take(120).collect();
    if cut.len() < flat.len() {
        format!("\"{cut}…\"")
    } else {
        format!("\"{cut}\"")
    }
}

fn terms_suffix(texts: &[String]) -> String {
    let terms = top_terms(texts, 5);
    if terms.is_empty() {
        String::new()
    } else {
        format!("; top terms: {}", terms.join(", "))
    }
}

/// The most frequent meaningful words of `texts` (stopwords and words under
/// three characters left out), most frequent first.
pub fn top_terms(texts: &[String], n: usize) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for text in texts {
        for word in
            text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_' || c == '.'))
        {
            let word = word
                .trim_matches(|c: char| c == '.' || c == '\'')
                .to_lowercase();
            if word.chars().count() >= 3
                && !STOPWORDS.contains(&word.as_str())
                && !word.chars().all(|c| c.is_ascii_digit())
            {
                *counts.entry(word).or_default() += 1;
            }
        }
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(n).map(|(w, _)| w).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_terms_skip_stopwords_and_rank_by_count() {
        let texts = vec![
            "fix the login bug in auth.py".to_owned(),
            "the login page still fails".to_owned(),
            "login works now".to_owned(),
        ];
        assert_eq!(top_terms(&texts, 2), vec!["login", "auth.py"]);
    }
}
