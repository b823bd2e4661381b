//! Interaction-log operations on `Engine`: recording turns, document
//! histories, retrieve_context, maintenance and the overview.

use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use memcore::conversation::{DocumentObservation, NewTurn, ProcedureRecord, WRITING_TOOLS};
use memcore::engine::{
    ContextRequest, ContextScoring, DirEntry, MaintenanceOptions, TurnClaim, estimate_tokens,
};

use crate::arrays::owned_vector;
use crate::engine::PyEngine;
use crate::errors::{BindResult, InvalidParameterError, run};
use crate::records::conversation::{ContextResult, DocumentHistory, DocumentState, TurnRecord};
use crate::records::store::MaintenanceReport;
use crate::writes::run_write;

/// A document a procedure touched (already canonicalised by the facade).
#[derive(FromPyObject)]
struct DocumentArg {
    #[pyo3(item)]
    canonical: String,
    #[pyo3(item)]
    content_hash: String,
    #[pyo3(item, default)]
    content: Option<String>,
    #[pyo3(item, default)]
    size: Option<i64>,
    #[pyo3(item, default)]
    written: bool,
}

/// A procedure: `{tool, args (JSON text), at?, documents?}`.
#[derive(FromPyObject)]
struct ProcedureArg {
    #[pyo3(item)]
    tool: String,
    #[pyo3(item, default)]
    args: Option<String>,
    #[pyo3(item, default)]
    at: Option<i64>,
    #[pyo3(item, default)]
    documents: Vec<DocumentArg>,
}

fn procedure_records(items: &[Bound<'_, PyAny>]) -> PyResult<Vec<ProcedureRecord>> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let p: ProcedureArg = item.extract().map_err(|e: PyErr| {
                InvalidParameterError::new_err(format!(
                    "procedures[{i}] is malformed: {e}. A procedure is {{tool, args, documents}}."
                ))
            })?;
            Ok(ProcedureRecord {
                tool: p.tool,
                args: p.args.unwrap_or_else(|| "{}".to_owned()),
                at: p.at,
                documents: p
                    .documents
                    .into_iter()
                    .map(|d| DocumentObservation {
                        canonical: d.canonical,
                        content_hash: d.content_hash,
                        content: d.content,
                        size: d.size,
                        written: d.written,
                    })
                    .collect(),
            })
        })
        .collect()
}

fn entry_dict<'py>(py: Python<'py>, e: &DirEntry) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("path", &e.path)?;
    d.set_item("kind", e.kind)?;
    d.set_item("count", e.count)?;
    d.set_item("updated_at", e.updated_at)?;
    d.set_item("abstract", &e.summary)?;
    Ok(d)
}

#[pymethods]
impl PyEngine {
    /// Record a turn: user text (searchable), agent text, procedures with the
    /// documents they touched. The same `turn_id` of a conversation twice
    /// stores it once (`created` is False the second time).
    #[pyo3(signature = (namespace, conversation_id, turn_id, user_text, *, agent_text = None,
        thread_id = None, procedures = None, vector = None, at = None))]
    #[allow(clippy::too_many_arguments)]
    fn record_turn<'py>(
        &self,
        py: Python<'py>,
        namespace: String,
        conversation_id: String,
        turn_id: String,
        user_text: String,
        agent_text: Option<String>,
        thread_id: Option<String>,
        procedures: Option<Vec<Bound<'py, PyAny>>>,
        vector: Option<PyReadonlyArray1<'py, f32>>,
        at: Option<i64>,
    ) -> BindResult<(TurnRecord, bool)> {
        let engine = self.engine()?;
        let turn = NewTurn {
            namespace,
            conversation_id,
            turn_key: turn_id,
            user_text,
            agent_text,
            thread_id,
            procedures: procedure_records(&procedures.unwrap_or_default())?,
            embedding: owned_vector(vector),
            at,
        };
        let outcome = run_write(py, &engine, (), |()| engine.record_turn(&turn))?;
        let record = TurnRecord::from_core(py, outcome.turn, outcome.procedures)?;
        Ok((record, outcome.created))
    }

    /// A turn with its procedures, by the caller's conversation and turn ids.
    fn get_turn(
        &self,
        py: Python<'_>,
        namespace: &str,
        conversation_id: &str,
        turn_id: &str,
    ) -> BindResult<TurnRecord> {
        let engine = self.engine()?;
        let (turn, procedures) = run(py, &engine, || {
            engine.get_turn(namespace, conversation_id, turn_id)
        })?;
        Ok(TurnRecord::from_core(py, turn, procedures)?)
    }

    /// The turns of a conversation in order.
    #[pyo3(signature = (namespace, conversation_id, *, limit = 1000))]
    fn conversation_turns(
        &self,
        py: Python<'_>,
        namespace: &str,
        conversation_id: &str,
        limit: usize,
    ) -> BindResult<Vec<TurnRecord>> {
        let engine = self.engine()?;
        let turns = run(py, &engine, || {
            engine.conversation_turns(namespace, conversation_id, limit)
        })?;
        Ok(turns
            .into_iter()
            .map(|t| TurnRecord::from_core(py, t, Vec::new()))
            .collect::<PyResult<_>>()?)
    }

    /// The latest stored version of a document (`latest` None when never
    /// seen) and how many conversations touched it.
    fn document_state(
        &self,
        py: Python<'_>,
        namespace: &str,
        canonical: &str,
    ) -> BindResult<DocumentState> {
        let engine = self.engine()?;
        let state = run(py, &engine, || engine.document_state(namespace, canonical))?;
        Ok(DocumentState::from_core(py, state)?)
    }

    /// A document's versions oldest first, each with the turns (and tool)
    /// that touched it, plus volatility and familiarity.
    fn document_history(
        &self,
        py: Python<'_>,
        namespace: &str,
        canonical: &str,
    ) -> BindResult<DocumentHistory> {
        let engine = self.engine()?;
        let history = run(py, &engine, || {
            engine.document_history(namespace, canonical)
        })?;
        Ok(DocumentHistory::from_core(py, history)?)
    }

    /// The stored content of a document version, if it was kept.
    fn version_content(&self, py: Python<'_>, version_id: &str) -> BindResult<Option<String>> {
        let engine = self.engine()?;
        run(py, &engine, || engine.version_content(version_id))
    }

    /// Past turns relevant to `query` and `documents`, packed into `token_budget`.
    #[pyo3(signature = (namespace, query, vector = None, *, conversation_id = None, documents = None,
        token_budget = 2000, limit = 10, recency_half_life_days = 30.0, staleness_weight = 0.15,
        familiarity_weight = 0.1, document_match = 0.6))]
    #[allow(clippy::too_many_arguments)]
    fn retrieve_context<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        query: &str,
        vector: Option<PyReadonlyArray1<'py, f32>>,
        conversation_id: Option<&str>,
        documents: Option<Vec<String>>,
        token_budget: usize,
        limit: usize,
        recency_half_life_days: f64,
        staleness_weight: f64,
        familiarity_weight: f64,
        document_match: f64,
    ) -> BindResult<ContextResult> {
        let engine = self.engine()?;
        let q = owned_vector(vector);
        let documents = documents.unwrap_or_default();
        let request = ContextRequest {
            namespace,
            query,
            vector: q.as_deref(),
            conversation_id,
            documents: &documents,
            token_budget,
            limit,
            scoring: ContextScoring {
                recency_half_life_days,
                staleness_weight,
                familiarity_weight,
                document_match,
            },
        };
        let result = run(py, &engine, || engine.retrieve_context(&request))?;
        Ok(ContextResult::from_core(py, result)?)
    }

    /// Expiry to invalidation, retention tier, version dedupe, archiving,
    /// conversation summaries, the idempotency history bounded, op-log
    /// compaction, index compaction and SQLite optimize; returns the counters.
    ///
    /// Args:
    ///     log_min_age_hours: Compact op-log entries older than this (None: keep).
    ///     summary_refresh_minutes: Refresh summaries older than this (None: none).
    ///     max_processed_turns: Finished turn claims kept per session (None: all).
    ///     now: The run's time in microseconds (None: the clock).
    #[pyo3(signature = (namespace, *, episodic_ttl_days = None, archive_after_days = None,
        force_compact = false, log_min_age_hours = None, summary_refresh_minutes = None,
        max_processed_turns = None, now = None))]
    #[allow(clippy::too_many_arguments)]
    fn run_maintenance(
        &self,
        py: Python<'_>,
        namespace: &str,
        episodic_ttl_days: Option<f64>,
        archive_after_days: Option<f64>,
        force_compact: bool,
        log_min_age_hours: Option<f64>,
        summary_refresh_minutes: Option<f64>,
        max_processed_turns: Option<usize>,
        now: Option<i64>,
    ) -> BindResult<MaintenanceReport> {
        let engine = self.engine()?;
        let options = MaintenanceOptions {
            episodic_ttl_days,
            archive_after_days,
            force_compact,
            log_min_age_hours,
            summary_refresh_minutes,
            max_processed_turns,
            now,
        };
        let r = run_write(py, &engine, (), |()| {
            engine.run_maintenance(namespace, &options)
        })?;
        Ok(MaintenanceReport::from(r))
    }

    /// Claim a turn for `memory_after_turn` at `now` (microseconds); a claim
    /// left unfinished for `stale_after` microseconds is taken over.
    ///
    /// Returns:
    ///     `(state, result, claimed_at)`: `("claimed", None, None)`, `("done",
    ///     result JSON or None, None)` or `("busy", None, claimed_at)`.
    fn claim_turn(
        &self,
        py: Python<'_>,
        namespace: &str,
        session_id: &str,
        turn_id: &str,
        now: i64,
        stale_after: i64,
    ) -> BindResult<(&'static str, Option<String>, Option<i64>)> {
        let engine = self.engine()?;
        let claim = run_write(py, &engine, (), |()| {
            engine.claim_turn(namespace, session_id, turn_id, now, stale_after)
        })?;
        Ok(match claim {
            TurnClaim::Claimed => ("claimed", None, None),
            TurnClaim::Done(result) => ("done", result, None),
            TurnClaim::Busy(since) => ("busy", None, Some(since)),
        })
    }

    /// Finish a claimed turn with the result a repeat gets back.
    fn finish_turn(
        &self,
        py: Python<'_>,
        namespace: &str,
        session_id: &str,
        turn_id: &str,
        result: &str,
        now: i64,
    ) -> BindResult<()> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.finish_turn(namespace, session_id, turn_id, result, now)
        })
    }

    /// Give up an unfinished claim (the turn failed): a retry may claim it.
    fn release_turn(
        &self,
        py: Python<'_>,
        namespace: &str,
        session_id: &str,
        turn_id: &str,
    ) -> BindResult<()> {
        let engine = self.engine()?;
        run_write(py, &engine, (), |()| {
            engine.release_turn(namespace, session_id, turn_id)
        })
    }

    /// Namespaces, threads and conversations with counts, last update and
    /// an abstract (first request, top terms).
    #[pyo3(signature = (namespace = None, *, depth = 2, limit = 200))]
    fn overview<'py>(
        &self,
        py: Python<'py>,
        namespace: Option<&str>,
        depth: usize,
        limit: usize,
    ) -> BindResult<Vec<Bound<'py, PyDict>>> {
        let engine = self.engine()?;
        let entries = run(py, &engine, || engine.overview(namespace, depth, limit))?;
        Ok(entries
            .iter()
            .map(|e| entry_dict(py, e))
            .collect::<PyResult<_>>()?)
    }

    /// Tool names whose documents count as written by the agent.
    #[staticmethod]
    fn writing_tools() -> Vec<&'static str> {
        WRITING_TOOLS.to_vec()
    }

    /// A tool name as stored (upper-case, `_` for spaces and dashes).
    #[staticmethod]
    fn normalize_tool(tool: &str) -> String {
        memcore::conversation::normalize_tool(tool)
    }

    /// The token estimate used for budgets (characters / 4, rounded up).
    #[staticmethod]
    fn estimate_tokens(text: &str) -> usize {
        estimate_tokens(text)
    }
}

/// What a turn's vector embeds: its day and its own user text (the BM25 key
/// also holds the turns before it; see `store::conversations`).
#[pyfunction]
pub fn turn_vector_text(at: i64, user_text: &str) -> String {
    memcore::store::conversations::turn_vector_text(at, user_text)
}
