//! The interaction log: `TurnRecord`, `ProcedureRecord`, `DocumentVersion`
//! (with the turns that touched it, `VersionTouch`), `DocumentHistory`, and
//! `retrieve_context`'s `ContextResult` (`ContextItem`, `ContextProcedure`,
//! `DocumentSignal`). Field names and order are the public ones
//! (docs/guide.md, "Conversations and documents"). Procedure arguments are
//! stored as JSON text and read parsed.

use pyo3::prelude::*;
use pyo3::types::PyList;

use memcore::conversation::{DocVersion, Procedure, Turn};
use memcore::engine::{
    ContextItem as CoreItem, ContextResult as CoreResult, DocumentHistory as CoreHistory,
    DocumentState as CoreState, ProcedureView, VersionSignal,
};

use super::{Json, Records, Stamp, Strings, record};

record! {
    /// One version of a document (a hypernode's version node).
    ///
    /// `created_in_turn` is the internal id of the turn whose procedure created the
    /// version; `touched_by` lists every turn that read or wrote it (filled by
    /// `get_document_history` only).
    DocumentVersion {
        id: String,
        document_id: String,
        path: String,
        version: i64,
        content_hash: String,
        size: Option<i64>,
        provenance: String,
        created_in_turn: Option<String>,
        created_at: Stamp,
        has_content: bool,
        touched_by: Records<VersionTouch>,
    }
}

impl DocumentVersion {
    /// A version with the turns (and their tools) that touched it.
    pub fn from_core(
        py: Python<'_>,
        v: DocVersion,
        touches: Vec<(Turn, String)>,
    ) -> PyResult<Self> {
        Ok(Self {
            id: v.id,
            document_id: v.document_id,
            path: v.canonical,
            version: v.version,
            content_hash: v.content_hash,
            size: v.size,
            provenance: v.provenance,
            created_in_turn: v.turn_id,
            created_at: Stamp(v.created_at),
            has_content: v.has_content,
            touched_by: Records::new(py, touches.into_iter().map(VersionTouch::from))?,
        })
    }
}

record! {
    /// A turn that touched a document version, and the tool it used.
    VersionTouch {
        conversation_id: String,
        turn_id: String,
        turn_index: i64,
        tool: String,
        user_text: String,
        created_at: Stamp,
    }
}

impl From<(Turn, String)> for VersionTouch {
    fn from((t, tool): (Turn, String)) -> Self {
        Self {
            conversation_id: t.conversation_id,
            turn_id: t.turn_key,
            turn_index: t.turn_index,
            tool,
            user_text: t.user_text,
            created_at: Stamp(t.created_at),
        }
    }
}

record! {
    /// A recorded tool call: its tool (the relationship type), arguments and the
    /// document versions it touched, in order within its turn.
    ProcedureRecord {
        id: String,
        position: i64,
        tool: String,
        args: Json,
        created_at: Stamp,
        documents: Records<DocumentVersion>,
    }
}

impl ProcedureRecord {
    pub fn from_core(py: Python<'_>, p: Procedure) -> PyResult<Self> {
        Ok(Self {
            id: p.id,
            position: p.position,
            tool: p.tool,
            args: Json::lenient(p.args),
            created_at: Stamp(p.created_at),
            documents: versions(py, p.versions)?,
        })
    }
}

/// Versions without their touching turns (a procedure's, a signal's).
fn versions(py: Python<'_>, all: Vec<DocVersion>) -> PyResult<Records<DocumentVersion>> {
    Records::try_new(
        py,
        all.into_iter()
            .map(|v| DocumentVersion::from_core(py, v, Vec::new())),
    )
}

record! {
    /// A recorded turn. `turn_id` is the caller's id (unique per conversation), `id`
    /// the internal one. `procedures` is empty where the source had none loaded.
    TurnRecord {
        id: String,
        namespace: String,
        conversation_id: String,
        turn_id: String,
        turn_index: i64,
        user_text: String,
        agent_text: Option<String>,
        thread_id: Option<String>,
        created_at: Stamp,
        procedures: Records<ProcedureRecord>,
    }
}

impl TurnRecord {
    /// A turn with its procedures (none for a listing or a context item).
    pub fn from_core(py: Python<'_>, t: Turn, procedures: Vec<Procedure>) -> PyResult<Self> {
        Ok(Self {
            id: t.id,
            namespace: t.namespace,
            conversation_id: t.conversation_id,
            turn_id: t.turn_key,
            turn_index: t.turn_index,
            user_text: t.user_text,
            agent_text: t.agent_text,
            thread_id: t.thread_id,
            created_at: Stamp(t.created_at),
            procedures: Records::try_new(
                py,
                procedures
                    .into_iter()
                    .map(|p| ProcedureRecord::from_core(py, p)),
            )?,
        })
    }
}

record! {
    /// A document's versions oldest first, with the turns that touched each.
    ///
    /// `volatility` is versions per day between the first and the latest version;
    /// `familiarity` the number of conversations that touched the document.
    DocumentHistory {
        path: String,
        versions: Records<DocumentVersion>,
        volatility: f64,
        familiarity: i64,
    }
}

impl DocumentHistory {
    pub fn from_core(py: Python<'_>, h: CoreHistory) -> PyResult<Self> {
        Ok(Self {
            path: h.canonical,
            versions: Records::try_new(
                py,
                h.versions
                    .into_iter()
                    .map(|(v, touches)| DocumentVersion::from_core(py, v, touches)),
            )?,
            volatility: h.volatility,
            familiarity: h.familiarity,
        })
    }
}

#[pymethods]
impl DocumentHistory {
    /// The newest version.
    #[getter]
    fn latest(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        // As `versions[-1]`: an IndexError for a history without versions.
        self.versions
            .list(py)
            .as_any()
            .get_item(-1)
            .map(Bound::unbind)
    }
}

record! {
    /// A document version a past turn touched, with what happened to it since.
    ///
    /// `staleness` counts the versions after this one; `external_since` those of them
    /// that no agent procedure made.
    DocumentSignal {
        version: Py<DocumentVersion>,
        latest_version: i64,
        staleness: i64,
        external_since: i64,
        familiarity: i64,
        volatility: f64,
    }
}

impl DocumentSignal {
    pub fn from_core(py: Python<'_>, s: VersionSignal) -> PyResult<Self> {
        Ok(Self {
            version: Py::new(py, DocumentVersion::from_core(py, s.version, Vec::new())?)?,
            latest_version: s.latest_version,
            staleness: s.staleness,
            external_since: s.external_since,
            familiarity: s.familiarity,
            volatility: s.volatility,
        })
    }
}

#[pymethods]
impl DocumentSignal {
    /// Whether the document moved on after the past turn saw it.
    #[getter]
    fn changed_since(&self) -> bool {
        self.staleness > 0
    }
}

record! {
    /// A procedure of a surfaced turn with its documents' signals.
    ContextProcedure {
        tool: String,
        args: Json,
        documents: Records<DocumentSignal>,
    }
}

impl ContextProcedure {
    pub fn from_core(py: Python<'_>, p: ProcedureView) -> PyResult<Self> {
        Ok(Self {
            tool: p.tool,
            args: Json::lenient(p.args),
            documents: Records::try_new(
                py,
                p.documents
                    .into_iter()
                    .map(|s| DocumentSignal::from_core(py, s)),
            )?,
        })
    }
}

record! {
    /// One past turn surfaced by `retrieve_context`, with why it ranked where it did.
    ///
    /// `score` = max(search_score, document match) × recency × staleness_penalty ×
    /// familiarity_bonus. `text` is its rendering in the prompt block and `tokens` the
    /// estimate of that text the budget was charged.
    ContextItem {
        turn: Py<TurnRecord>,
        score: f64,
        search_score: Option<f64>,
        shared_documents: Strings,
        recency: f64,
        staleness_penalty: f64,
        familiarity_bonus: f64,
        procedures: Records<ContextProcedure>,
        text: String,
        tokens: usize,
    }
}

impl ContextItem {
    pub fn from_core(py: Python<'_>, i: CoreItem) -> PyResult<Self> {
        Ok(Self {
            turn: Py::new(py, TurnRecord::from_core(py, i.turn, Vec::new())?)?,
            score: i.score,
            search_score: i.search_score,
            shared_documents: Strings(i.shared_documents),
            recency: i.recency,
            staleness_penalty: i.staleness_penalty,
            familiarity_bonus: i.familiarity_bonus,
            procedures: Records::try_new(
                py,
                i.procedures
                    .into_iter()
                    .map(|p| ContextProcedure::from_core(py, p)),
            )?,
            text: i.text,
            tokens: i.tokens,
        })
    }
}

#[pymethods]
impl ContextItem {
    /// The documents of this turn that changed after it saw them.
    #[getter]
    fn changed_documents<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for procedure in self.procedures.list(py).iter() {
            let procedure = procedure.cast::<ContextProcedure>()?.get();
            for signal in procedure.documents.list(py).iter() {
                if signal.cast::<DocumentSignal>()?.get().changed_since() {
                    out.append(signal)?;
                }
            }
        }
        Ok(out)
    }
}

record! {
    /// The packed context: `items` best first, `text` ready for the prompt (empty
    /// when nothing fits), `token_count` its estimated tokens (never above the budget)
    /// and `omitted` the candidates left out by the budget or the limit.
    ContextResult {
        items: Records<ContextItem>,
        text: String,
        token_count: usize,
        omitted: usize,
    }
}

impl ContextResult {
    pub fn from_core(py: Python<'_>, r: CoreResult) -> PyResult<Self> {
        Ok(Self {
            items: Records::try_new(
                py,
                r.items.into_iter().map(|i| ContextItem::from_core(py, i)),
            )?,
            text: r.text,
            token_count: r.token_count,
            omitted: r.omitted,
        })
    }
}

record! {
    /// What a read would see now: the latest stored version of a document (None when
    /// never seen) and how many conversations touched it.
    DocumentState {
        latest: Option<Py<DocumentVersion>>,
        familiarity: i64,
    }
}

impl DocumentState {
    pub fn from_core(py: Python<'_>, s: CoreState) -> PyResult<Self> {
        Ok(Self {
            latest: s
                .latest
                .map(|v| Py::new(py, DocumentVersion::from_core(py, v, Vec::new())?))
                .transpose()?,
            familiarity: s.familiarity,
        })
    }
}
