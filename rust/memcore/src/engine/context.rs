//! `retrieve_context`: past turns worth showing the agent now.
//!
//! Two discovery paths, as the interaction-log design asks: hybrid search over
//! the user turns of *other* conversations, and hypernode lookup — turns that
//! touched the documents the current conversation touches, however they were
//! worded. Each candidate turn is traversed to its agent text, procedures and
//! document versions, scored as
//!     match × recency decay × staleness penalty × familiarity bonus,
//! packed into the token budget, and rendered as a text block that says why
//! each item surfaced, which procedures were used and what changed since.

use std::collections::HashMap;
use std::fmt::Write as _;

use rusqlite::Connection;

use super::Engine;
use super::query::SearchQuery;
use super::search::{MAX_RESULTS, RecallOptions};
use crate::asking::ASKING_PENALTY;
use crate::conversation::{DocVersion, Procedure, Turn};
use crate::error::{Error, Result};
use crate::fusion::{FusionMode, Weights};
use crate::kind::{Kind, KindSet};
use crate::memory::validate_namespace;
use crate::store::conversations::{self as conv, Turns};
use crate::store::table;
use crate::temporal::{Timestamp, ValidAt, date_label, now_micros};

/// Candidate turns: id → (search score, shared documents).
type Candidates = HashMap<String, (Option<f64>, Vec<String>)>;

/// Largest token budget accepted.
pub const MAX_TOKEN_BUDGET: usize = 1_000_000;
/// Characters per token of the budget estimate (a common figure for English
/// subword tokenizers; the facade can count exactly with the model's).
pub const CHARS_PER_TOKEN: usize = 4;
/// Candidates traversed per result asked for.
const TRAVERSE_FACTOR: usize = 3;
/// Agent text kept per item in the full and the compact rendering.
const AGENT_CHARS: [usize; 2] = [800, 200];

/// How candidates are scored (all factors multiply).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextScoring {
    /// Days after which a turn's weight halves.
    pub recency_half_life_days: f64,
    /// Penalty per version a touched document moved on since: 1 / (1 + w·staleness).
    pub staleness_weight: f64,
    /// Bonus for familiar documents: 1 + w·ln(1 + conversations touching them).
    pub familiarity_weight: f64,
    /// Match score of a turn found only through a shared document.
    pub document_match: f64,
}

impl Default for ContextScoring {
    fn default() -> Self {
        ContextScoring {
            recency_half_life_days: 30.0,
            staleness_weight: 0.15,
            familiarity_weight: 0.1,
            document_match: 0.6,
        }
    }
}

/// A `retrieve_context` request.
#[derive(Debug, Clone)]
pub struct ContextRequest<'a> {
    pub namespace: &'a str,
    pub query: &'a str,
    pub vector: Option<&'a [f32]>,
    /// The current conversation: never returned.
    pub conversation_id: Option<&'a str>,
    /// Canonical ids of documents the current conversation touches.
    pub documents: &'a [String],
    pub token_budget: usize,
    pub limit: usize,
    pub scoring: ContextScoring,
}

/// A touched document version with its signals.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionSignal {
    pub version: DocVersion,
    pub latest_version: i64,
    /// Versions between this one and the latest.
    pub staleness: i64,
    /// Of those, how many were external changes the agent did not make.
    pub external_since: i64,
    pub familiarity: i64,
    pub volatility: f64,
}

/// A procedure of a surfaced turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcedureView {
    pub tool: String,
    pub args: String,
    pub documents: Vec<VersionSignal>,
}

/// One surfaced past turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextItem {
    pub turn: Turn,
    pub score: f64,
    /// Hybrid-search match in 0..1, when the search found it.
    pub search_score: Option<f64>,
    /// Documents of the request this turn also touched.
    pub shared_documents: Vec<String>,
    pub recency: f64,
    pub staleness_penalty: f64,
    pub familiarity_bonus: f64,
    pub procedures: Vec<ProcedureView>,
    pub text: String,
    pub tokens: usize,
}

/// The packed context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextResult {
    pub items: Vec<ContextItem>,
    pub text: String,
    pub token_count: usize,
    /// Candidates left out by the budget or the limit.
    pub omitted: usize,
}

/// Estimated tokens of a text.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

impl Engine {
    /// Past turns relevant to `query` and the current documents, packed into the budget.
    pub fn retrieve_context(&self, request: &ContextRequest<'_>) -> Result<ContextResult> {
        validate_namespace(request.namespace)?;
        super::memories::check_limit(request.limit)?;
        if !(1..=MAX_TOKEN_BUDGET).contains(&request.token_budget) {
            return Err(Error::invalid(
                "token_budget",
                format!("token_budget must be between 1 and {MAX_TOKEN_BUDGET}."),
            ));
        }
        let reader = self.store.reader()?;
        // One read snapshot for every lookup of the request: a consistent view,
        // and the WAL locks taken once instead of once per statement (a request
        // runs hundreds of small queries).
        let conn = reader.unchecked_transaction()?;
        let candidates = self.context_candidates(&conn, request)?;
        let now = now_micros();
        // Rank by match × recency first and traverse only the best few: a
        // popular file can be touched by hundreds of turns.
        let mut ranked = Vec::with_capacity(candidates.len());
        for (turn_id, (search_score, shared)) in candidates {
            if let Some(turn) = conv::turn(&conn, &turn_id)? {
                let pre = base_score(search_score, &shared, &request.scoring)
                    * recency(&turn, &request.scoring, now);
                ranked.push((pre, turn, search_score, shared));
            }
        }
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(b.1.created_at.cmp(&a.1.created_at))
        });
        ranked.truncate(request.limit * TRAVERSE_FACTOR);
        let mut signals = SignalCache::default();
        let mut items = Vec::with_capacity(ranked.len());
        for (_, turn, search_score, shared) in ranked {
            let procedures = conv::procedures_of(&conn, &turn.id)?
                .into_iter()
                .map(|p| signals.view(&conn, p))
                .collect::<Result<Vec<_>>>()?;
            items.push(score_item(
                turn,
                search_score,
                shared,
                procedures,
                &request.scoring,
                now,
            ));
        }
        items.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.turn.created_at.cmp(&a.turn.created_at))
        });
        let result = pack(items, request.token_budget, request.limit, now);
        drop(conn);
        drop(reader);
        self.note_surfaced(request.namespace, &result.items, now);
        Ok(result)
    }

    /// Candidate turns: id → (search score, shared documents).
    fn context_candidates(
        &self,
        conn: &Connection,
        request: &ContextRequest<'_>,
    ) -> Result<Candidates> {
        let query = SearchQuery {
            namespace: request.namespace,
            kinds: KindSet::only(Kind::UserTurn),
            thread_id: None,
            scope: None,
            tag: None,
            exclude_scope: request.conversation_id,
            valid: ValidAt::Now,
            limit: (request.limit * 3).clamp(1, MAX_RESULTS),
        };
        let mut out: Candidates = HashMap::new();
        if !request.query.trim().is_empty() {
            let hits = self.recall(
                &query,
                request.query,
                request.vector,
                &RecallOptions {
                    weights: Weights::TURNS,
                    mode: FusionMode::ZScore,
                    // Turns: a turn's key already holds its neighbours
                    // (the prior only ever reads memories' threads).
                    thread_prior: 0.0,
                    max_per_thread: None,
                    // A question turn without its reply ranks lower
                    // (crate::asking); one holding the reply does not.
                    question_penalty: ASKING_PENALTY,
                },
            )?;
            let n = hits.len() as f64;
            for hit in &hits {
                // Ties share a rank (equal matches score equally).
                let rank = hits
                    .iter()
                    .filter(|h| h.scores.fused > hit.scores.fused)
                    .count();
                if let Some(turn) = table::by_doc_key::<Turns>(conn, hit.key)? {
                    // By rank, 1.0 down to 0.5: a match is a match even when
                    // it is the only one (a lone z-score is 0 and says nothing).
                    let score = 1.0 - 0.5 * rank as f64 / n;
                    out.entry(turn.id).or_default().0 = Some(score);
                }
            }
        }
        if !request.documents.is_empty() {
            let touching = conv::turns_touching(
                conn,
                request.namespace,
                request.documents,
                request.conversation_id,
                MAX_RESULTS * 4,
            )?;
            for (turn_id, canonical) in touching {
                let shared = &mut out.entry(turn_id).or_default().1;
                if !shared.contains(&canonical) {
                    shared.push(canonical);
                }
            }
        }
        Ok(out)
    }
}

/// Per-document facts, fetched once per request through indexed queries.
#[derive(Default)]
struct SignalCache {
    /// document → (latest version, volatility, familiarity)
    documents: HashMap<String, (i64, f64, i64)>,
    /// (document, version) → external versions since
    external: HashMap<(String, i64), i64>,
}

impl SignalCache {
    fn view(&mut self, conn: &Connection, p: Procedure) -> Result<ProcedureView> {
        let mut documents = Vec::with_capacity(p.versions.len());
        for v in p.versions {
            if !self.documents.contains_key(&v.document_id) {
                // Versions are numbered without gaps: the latest is the count.
                let (latest, first, last) = conv::version_summary(conn, &v.document_id)?;
                let days = ((last - first) as f64 / 86_400e6).max(1.0);
                let familiarity = conv::familiarity(conn, &v.document_id)?;
                self.documents.insert(
                    v.document_id.clone(),
                    (latest, latest as f64 / days, familiarity),
                );
            }
            let (latest, volatility, familiarity) = self.documents[&v.document_id];
            let key = (v.document_id.clone(), v.version);
            if !self.external.contains_key(&key) {
                let n = conv::external_since(conn, &v.document_id, v.version)?;
                self.external.insert(key.clone(), n);
            }
            documents.push(VersionSignal {
                latest_version: latest.max(v.version),
                staleness: (latest - v.version).max(0),
                external_since: self.external[&key],
                familiarity,
                volatility,
                version: v,
            });
        }
        Ok(ProcedureView {
            tool: p.tool,
            args: p.args,
            documents,
        })
    }
}

/// The match part of a score: the search score or the shared-document score.
fn base_score(search_score: Option<f64>, shared: &[String], scoring: &ContextScoring) -> f64 {
    let document_score = if shared.is_empty() {
        0.0
    } else {
        (scoring.document_match + 0.1 * (shared.len() - 1) as f64).min(1.0)
    };
    search_score.unwrap_or(0.0).max(document_score)
}

/// Exponential decay by age with the configured half-life.
fn recency(turn: &Turn, scoring: &ContextScoring, now: Timestamp) -> f64 {
    let age_days = ((now - turn.created_at).max(0) as f64) / 86_400e6;
    0.5f64.powf(age_days / scoring.recency_half_life_days.max(1e-9))
}

fn score_item(
    turn: Turn,
    search_score: Option<f64>,
    shared: Vec<String>,
    procedures: Vec<ProcedureView>,
    scoring: &ContextScoring,
    now: Timestamp,
) -> ContextItem {
    let base = base_score(search_score, &shared, scoring);
    let recency = recency(&turn, scoring, now);
    let versions: Vec<&VersionSignal> = procedures.iter().flat_map(|p| &p.documents).collect();
    let mean = |f: &dyn Fn(&VersionSignal) -> f64| {
        if versions.is_empty() {
            0.0
        } else {
            versions.iter().map(|v| f(v)).sum::<f64>() / versions.len() as f64
        }
    };
    let staleness_penalty = 1.0 / (1.0 + scoring.staleness_weight * mean(&|v| v.staleness as f64));
    let familiarity_bonus =
        1.0 + scoring.familiarity_weight * mean(&|v| (1.0 + v.familiarity as f64).ln());
    ContextItem {
        score: base * recency * staleness_penalty * familiarity_bonus,
        search_score,
        shared_documents: shared,
        recency,
        staleness_penalty,
        familiarity_bonus,
        procedures,
        text: String::new(),
        tokens: 0,
        turn,
    }
}

/// Keep the best items that fit the budget (a full rendering, else a compact one).
fn pack(items: Vec<ContextItem>, budget: usize, limit: usize, now: Timestamp) -> ContextResult {
    const HEADER: &str = "## Relevant context from past conversations\n";
    let mut used = estimate_tokens(HEADER);
    let total = items.len();
    let mut kept: Vec<ContextItem> = Vec::new();
    for mut item in items {
        if kept.len() == limit {
            break;
        }
        let number = kept.len() + 1;
        let fitted = AGENT_CHARS.iter().find_map(|&chars| {
            let text = render(&item, number, chars, now);
            let tokens = estimate_tokens(&text);
            (used + tokens <= budget).then_some((text, tokens))
        });
        if let Some((text, tokens)) = fitted {
            used += tokens;
            item.text = text;
            item.tokens = tokens;
            kept.push(item);
        }
    }
    let text = if kept.is_empty() {
        String::new()
    } else {
        let mut t = HEADER.to_owned();
        for item in &kept {
            t.push_str(&item.text);
        }
        t
    };
    ContextResult {
        omitted: total - kept.len(),
        token_count: if kept.is_empty() { 0 } else { used },
        items: kept,
        text,
    }
}

fn render(item: &ContextItem, number: usize, agent_chars: usize, now: Timestamp) -> String {
    let mut reasons = Vec::new();
    if let Some(s) = item.search_score {
        reasons.push(format!("similar request ({s:.2})"));
    }
    if !item.shared_documents.is_empty() {
        reasons.push(format!(
            "shared document {}",
            item.shared_documents.join(", ")
        ));
    }
    // The day as well as the age: "when did …" questions need the date, and
    // an agent reading "400 days ago" would have to compute it.
    let mut out = format!(
        "\n[{number}] conversation {}, {} ({}) — surfaced by {}\nUser: {}\n",
        item.turn.conversation_id,
        date_label(item.turn.created_at),
        age(now - item.turn.created_at),
        reasons.join(" and "),
        one_line(&item.turn.user_text, 600),
    );
    if !item.procedures.is_empty() {
        let steps: Vec<String> = item
            .procedures
            .iter()
            .map(|p| {
                let docs: Vec<String> = p
                    .documents
                    .iter()
                    .map(|d| {
                        let who = if d.version.provenance == "agent" {
                            ", by the agent"
                        } else {
                            ""
                        };
                        format!("{} (v{}{who})", d.version.canonical, d.version.version)
                    })
                    .collect();
                if docs.is_empty() {
                    format!("{} {}", p.tool, one_line(&p.args, 80))
                } else {
                    format!("{} {}", p.tool, docs.join(", "))
                }
            })
            .collect();
        let _ = writeln!(out, "Procedures: {}", steps.join("; "));
    }
    // One line per document: the oldest version this turn saw tells the most.
    let mut oldest: Vec<&VersionSignal> = Vec::new();
    for d in item.procedures.iter().flat_map(|p| &p.documents) {
        match oldest
            .iter_mut()
            .find(|o| o.version.document_id == d.version.document_id)
        {
            Some(o) if d.version.version < o.version.version => *o = d,
            Some(_) => {}
            None => oldest.push(d),
        }
    }
    let changed: Vec<String> = oldest
        .into_iter()
        .filter(|d| d.staleness > 0)
        .map(|d| {
            format!(
                "{} is now v{} ({} newer version{}, {} external)",
                d.version.canonical,
                d.latest_version,
                d.staleness,
                if d.staleness == 1 { "" } else { "s" },
                d.external_since
            )
        })
        .collect();
    if !changed.is_empty() {
        let _ = writeln!(out, "Changed since: {}", changed.join("; "));
    }
    if let Some(agent) = &item.turn.agent_text {
        let _ = writeln!(out, "Agent: {}", one_line(agent, agent_chars));
    }
    out
}

fn one_line(text: &str, max_chars: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        flat
    } else {
        let cut: String = flat.chars().take(max_chars.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn age(micros: i64) -> String {
    let minutes = micros / 60_000_000;
    match minutes {
        i64::MIN..=0 => "just now".to_owned(),
        1..=59 => format!("{minutes} min ago"),
        60..=1439 => format!("{} h ago", minutes / 60),
        _ => format!("{} days ago", minutes / 1440),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_estimate_and_truncation() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(one_line("a  b\n c", 10), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(0), "just now");
        assert_eq!(age(5 * 60_000_000), "5 min ago");
        assert_eq!(age(3 * 86_400_000_000), "3 days ago");
    }
}
