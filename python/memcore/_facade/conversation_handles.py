"""Recording the interaction log: `Conversation` and `Turn` context managers.

    with mem.conversation("conv-1") as conv:
        with conv.turn(user="fix the login bug") as turn:
            doc = turn.read_document("src/auth.py")          # versioned read
            ...                                               # the agent edits the file
            turn.procedure("EDIT", args={"path": "src/auth.py"}, documents=["src/auth.py"])
            turn.agent("Fixed the token check")
    # the whole turn is recorded here, atomically, in one native call

A turn collects its procedures in memory and commits them with one `record_turn` when
its block exits cleanly; if the block raises, nothing is recorded. Reads are previewed
against the store as they happen (`DocumentRead.version` is the version the content
will be), and procedures re-read their documents when called, that is after the tool
ran, so a write's new content is what gets hashed.

A `Turn` belongs to one thread; different turns may run in different threads.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from memcore import _core
from memcore._facade.documents import DocumentResolver, Snapshot, snapshot
from memcore._time import TimeLike, now_micros, optional_micros
from memcore.arguments import checked_api
from memcore.errors import invalid
from memcore.records.conversation import ContextResult, DocumentRead, TurnRecord, TurnResult

if TYPE_CHECKING:
    from memcore._core import Engine
    from memcore._facade.base import VectorLike

# Tools whose documents the agent writes (provenance "agent"): the core's list, which
# decides provenance when a turn is recorded.
WRITING_TOOLS = frozenset(_core.Engine.writing_tools())
#: Stored turns whose documents a reopened conversation loads as "touched".
STORED_TURNS_SCANNED = 50
_PROCEDURE_KEYS = frozenset({"tool", "args", "documents", "writes", "at"})

DocumentRef = str | os.PathLike[str] | DocumentRead | Mapping[str, Any]


def normalize_tool(tool: Any, field: str = "tool") -> str:
    """A tool name as the core stores it: trimmed, upper-case, spaces and dashes as `_`."""
    if not isinstance(tool, str) or not tool.strip():
        raise invalid(field, f"A tool name must be a non-empty string, got {tool!r}.")
    return _core.Engine.normalize_tool(tool)


def args_json(args: Any, field: str = "args") -> str:
    """Procedure arguments as JSON text. Any JSON value is accepted; a string is a
    JSON string (a command line, a query), never pre-serialised JSON."""
    if args is None:
        return "{}"
    try:
        return json.dumps(args, ensure_ascii=False, allow_nan=False, default=_fspath)
    except (TypeError, ValueError) as exc:
        raise invalid(field, f"args is not JSON-serialisable: {exc}") from None


def _fspath(value: Any) -> str:
    if isinstance(value, os.PathLike):
        return str(os.fspath(value))
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def snapshot_of(resolver: DocumentResolver, ref: Any, *, missing_ok: bool) -> Snapshot:
    """The snapshot of a document reference: a path or URL (read now), a `DocumentRead`
    (as it was read), or `{path, content?, content_hash?}`."""
    if isinstance(ref, DocumentRead):
        return Snapshot(ref.path, ref.content_hash, ref.content, ref.size)
    if isinstance(ref, Mapping):
        unknown = set(ref) - {"path", "content", "content_hash"}
        if unknown or "path" not in ref:
            raise invalid(
                "documents",
                f"A document is a path, a DocumentRead or {{path, content?, content_hash?}}; "
                f"got keys {sorted(ref)}.",
            )
        return snapshot(
            resolver,
            ref["path"],
            ref.get("content"),
            known_hash=ref.get("content_hash"),
            missing_ok=missing_ok,
        )
    return snapshot(resolver, ref, missing_ok=missing_ok)


def _refs(documents: Any, field: str) -> list[Any]:
    if documents is None:
        return []
    if isinstance(documents, str | os.PathLike | DocumentRead | Mapping):
        return [documents]  # one document given bare
    if not isinstance(documents, Iterable):
        raise invalid(field, "documents must be a list of paths, URLs or DocumentRead values.")
    return list(documents)


def build_procedures(
    resolver: DocumentResolver, specs: Sequence[Any] | None, content_limit: int
) -> list[dict[str, Any]]:
    """Native procedure dicts from `{tool, args?, documents?, writes?, at?}` specs,
    reading documents given as bare paths now.

    Content any procedure of the turn wrote counts as the agent's ("agent"
    provenance), also for a read listed before the write: reading files after the
    fact, a READ sees the content the EDIT left.
    """
    if specs is None:
        return []
    if isinstance(specs, str | Mapping) or not isinstance(specs, Sequence):
        raise invalid("procedures", "procedures must be a list of {tool, args, documents}.")
    drafts: list[tuple[str, str, int | None, bool, list[Snapshot]]] = []
    written: set[tuple[str, str]] = set()
    for i, spec in enumerate(specs):
        field = f"procedures[{i}]"
        if not isinstance(spec, Mapping) or "tool" not in spec or set(spec) - _PROCEDURE_KEYS:
            raise invalid(field, f"{field} must be {{tool, args?, documents?, writes?, at?}}.")
        tool = normalize_tool(spec["tool"], f"{field}.tool")
        writes = _writes(spec.get("writes"), tool, f"{field}.writes")
        snaps = [
            snapshot_of(resolver, ref, missing_ok=writes)
            for ref in _refs(spec.get("documents"), f"{field}.documents")
        ]
        if writes:
            written.update((s.path, s.content_hash) for s in snaps)
        at = optional_micros(spec.get("at"), f"{field}.at")
        drafts.append((tool, args_json(spec.get("args"), f"{field}.args"), at, writes, snaps))
    return [
        {
            "tool": tool,
            "args": args,
            "at": at,
            "documents": [
                s.observation(writes or (s.path, s.content_hash) in written, content_limit)
                for s in snaps
            ],
        }
        for tool, args, at, writes, snaps in drafts
    ]


def _writes(value: Any, tool: str, field: str) -> bool:
    if value is None:
        return tool in WRITING_TOOLS
    if not isinstance(value, bool):
        raise invalid(field, f"writes must be True, False or None, got {value!r}.")
    return value


@dataclass(slots=True)
class _Head:
    """The latest version of a document as far as a turn knows."""

    version: int
    content_hash: str
    provenance: str


class DocumentLedger:
    """Versions as the current turn will leave them: the store's latest version of each
    document, advanced by the turn's own observations (not committed yet), so that
    `DocumentRead` can say which version a read is before the turn is recorded.

    Args:
        engine: The native engine (read side only).
        namespace: The turn's namespace.
        conversation_id: The conversation, for `versions_since_seen` (None: no turn).
    """

    def __init__(self, engine: Engine, namespace: str, conversation_id: str | None) -> None:
        self._engine = engine
        self._namespace = namespace
        self._conversation_id = conversation_id
        self._heads: dict[str, _Head | None] = {}
        self._familiarity: dict[str, int] = {}
        self._seen: dict[str, int | None] = {}
        self._written: dict[str, set[str]] = {}

    def observe(self, snap: Snapshot, writes: bool) -> tuple[DocumentRead, bool]:
        """The read as it will be recorded, and whether the content counts as written
        by this turn (so that a new version is the agent's)."""
        path = snap.path
        head = self._head(path)
        if writes:
            self._written.setdefault(path, set()).add(snap.content_hash)
        written = snap.content_hash in self._written.get(path, ())
        if head is not None and head.content_hash == snap.content_hash:
            version, provenance = head.version, head.provenance
        else:
            version = head.version + 1 if head is not None else 1
            provenance = "agent" if written else "external"
            self._heads[path] = _Head(version, snap.content_hash, provenance)
        seen = self._seen.get(path)
        self._seen[path] = version
        read = DocumentRead(
            path=path,
            content=snap.text,
            content_hash=snap.content_hash,
            size=snap.size,
            version=version,
            previous_version=head.version if head is not None else None,
            changed=head is not None and head.content_hash != snap.content_hash,
            provenance=provenance,
            versions_since_seen=None if seen is None else version - seen,
            familiarity=self._familiarity[path],
        )
        return read, written

    def _head(self, path: str) -> _Head | None:
        if path not in self._heads:
            state = self._engine.document_state(self._namespace, path)
            latest = state.latest
            self._familiarity[path] = state.familiarity
            self._heads[path] = (
                None
                if latest is None
                else _Head(latest.version, latest.content_hash, latest.provenance)
            )
            self._seen[path] = self._stored_seen(path) if latest is not None else None
        return self._heads[path]

    def _stored_seen(self, path: str) -> int | None:
        """The newest version a recorded turn of this conversation touched."""
        if self._conversation_id is None:
            return None
        history = self._engine.document_history(self._namespace, path)
        seen = [
            v.version
            for v in history.versions
            if any(t.conversation_id == self._conversation_id for t in v.touched_by)
        ]
        return max(seen, default=None)


class RecordTurn(Protocol):
    """The facade's one native `record_turn` (`ConversationAPI._record`)."""

    def __call__(
        self,
        namespace: str,
        conversation_id: str,
        turn_id: str,
        user_text: str,
        *,
        agent_text: str | None,
        thread_id: str | None,
        procedures: list[dict[str, Any]],
        vector: VectorLike | None,
        at: int | None,
    ) -> TurnResult: ...


class ConversationStore:
    """What `Conversation` and `Turn` need from the facade beyond its public methods,
    handed to them by `ConversationAPI.conversation`, so they never read its internals.

    Args:
        engine: The native engine, read side (document heads, stored turns).
        resolver: The store's document-id resolver.
        content_limit: The content limit of a version now (it may change between turns).
        record: Records one turn.
    """

    def __init__(
        self,
        engine: Engine,
        resolver: Callable[[], DocumentResolver],
        content_limit: Callable[[], int],
        record: RecordTurn,
    ) -> None:
        self._engine = engine
        self._resolver = resolver
        self._content_limit = content_limit
        self.record = record

    def document_resolver(self) -> DocumentResolver:
        """Canonicalises document ids (the store's mode and project root)."""
        return self._resolver()

    def content_limit(self) -> int:
        """Bytes of content stored with a document version.

        Raises:
            InvalidParameterError: `Memory.document_content_limit` is not a valid size.
        """
        return self._content_limit()

    def ledger(self, namespace: str, conversation_id: str) -> DocumentLedger:
        """Document versions as a new turn of the conversation will leave them."""
        return DocumentLedger(self._engine, namespace, conversation_id)

    def stored_documents(self, namespace: str, conversation_id: str) -> list[str]:
        """Documents the conversation's latest recorded turns touched, first seen first."""
        engine = self._engine
        # The core lists turns from the first one (no offset, no newest-first): past 1000
        # turns these are the last of the first 1000, an accepted gap for now.
        turns = engine.conversation_turns(namespace, conversation_id, limit=1000)
        paths: list[str] = []
        for t in turns[-STORED_TURNS_SCANNED:]:
            full = engine.get_turn(namespace, conversation_id, t.turn_id)
            paths.extend(v.path for p in full.procedures for v in p.documents)
        return list(dict.fromkeys(paths))


class ConversationCalls(Protocol):
    """What a `Conversation` asks of the facade: `ConversationAPI` provides it. Named here,
    not imported from memcore/_facade/conversation.py, which imports this module to make
    the handles (tests/test_layers.py refuses the circle)."""

    def record_turn(
        self,
        conversation_id: str,
        user_text: str,
        agent_text: str | None,
        procedures: Sequence[Mapping[str, Any]] | None,
        turn_id: str | None,
        thread_id: str | None,
        /,
        *,
        vector: VectorLike | None,
        at: TimeLike | None,
        namespace: str,
    ) -> TurnResult: ...

    def read_document(
        self,
        path: Any,
        content: str | bytes | None,
        /,
        *,
        content_hash: str | None,
        conversation_id: str,
        namespace: str,
    ) -> DocumentRead: ...

    def retrieve_context(
        self,
        query: str,
        *,
        conversation_id: str,
        documents: Sequence[Any],
        token_budget: int,
        limit: int,
        namespace: str,
        **scoring: float,
    ) -> ContextResult: ...

    def list_turns(
        self, conversation_id: str, /, *, limit: int, namespace: str
    ) -> list[TurnRecord]: ...


@checked_api
class Conversation:
    """A conversation of the interaction log; `mem.conversation(id)` makes one.

    Entering and leaving it does nothing by itself: it scopes turns, and remembers the
    documents they touched so that `retrieve_context` can find other conversations
    through them (hypernode lookup).
    """

    def __init__(
        self,
        api: ConversationCalls,
        conversation_id: str,
        *,
        thread_id: str | None,
        namespace: str,
        store: ConversationStore,
    ) -> None:
        if not isinstance(conversation_id, str) or not conversation_id.strip():
            raise invalid("conversation_id", "conversation_id must be a non-empty string.")
        self._api = api
        self._store = store
        self.id = conversation_id
        self.thread_id = thread_id
        self.namespace = namespace
        self._stored: list[str] | None = None
        self._touched: dict[str, None] = {}

    def __enter__(self) -> Conversation:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def __repr__(self) -> str:
        return f"Conversation({self.id!r}, namespace={self.namespace!r})"

    def turn(
        self,
        user: str,
        turn_id: str | None = None,
        thread_id: str | None = None,
        *,
        at: TimeLike | None = None,
        vector: VectorLike | None = None,
    ) -> Turn:
        """Start a turn; use it as a context manager (it commits on a clean exit).

        Args:
            user: The user's message (searchable).
            turn_id: Your id of the turn; recording the same id twice stores it once.
                Generated when None.
            thread_id: Overrides the conversation's thread tag.
            at: When the turn happened (default: now).
            vector: A precomputed embedding of `user`.
        """
        return Turn(
            self,
            user,
            turn_id,
            self.thread_id if thread_id is None else thread_id,
            at=at,
            vector=vector,
        )

    def record_turn(
        self,
        user_text: str,
        agent_text: str | None = None,
        procedures: Sequence[Mapping[str, Any]] | None = None,
        turn_id: str | None = None,
        thread_id: str | None = None,
        *,
        vector: VectorLike | None = None,
        at: TimeLike | None = None,
    ) -> TurnResult:
        """`Memory.record_turn` in this conversation."""
        result = self._api.record_turn(
            self.id,
            user_text,
            agent_text,
            procedures,
            turn_id,
            self.thread_id if thread_id is None else thread_id,
            vector=vector,
            at=at,
            namespace=self.namespace,
        )
        self._note(result.turn)
        return result

    def read_document(
        self, path: Any, content: str | bytes | None = None, *, content_hash: str | None = None
    ) -> DocumentRead:
        """Preview a read outside a turn (nothing is recorded; see `Memory.read_document`)."""
        read = self._api.read_document(
            path,
            content,
            content_hash=content_hash,
            conversation_id=self.id,
            namespace=self.namespace,
        )
        self._touch(read.path)
        return read

    def retrieve_context(
        self,
        query: str,
        documents: Sequence[Any] | None = None,
        token_budget: int = 2000,
        limit: int = 10,
        **scoring: float,
    ) -> ContextResult:
        """`Memory.retrieve_context` for this conversation: its own turns are never
        returned, and `documents` defaults to the documents it touched."""
        return self._api.retrieve_context(
            query,
            conversation_id=self.id,
            documents=self.documents if documents is None else documents,
            token_budget=token_budget,
            limit=limit,
            namespace=self.namespace,
            **scoring,
        )

    def turns(self, limit: int = 1000) -> list[TurnRecord]:
        """The recorded turns of this conversation in order (without procedures)."""
        return self._api.list_turns(self.id, limit=limit, namespace=self.namespace)

    @property
    def documents(self) -> list[str]:
        """Canonical ids of the documents this conversation touched: those of its
        latest recorded turns, and every read or procedure of this object's turns."""
        if self._stored is None:
            self._stored = self._store.stored_documents(self.namespace, self.id)
        return list(dict.fromkeys([*self._stored, *self._touched]))

    def _touch(self, path: str) -> None:
        self._touched[path] = None

    def _note(self, turn: TurnRecord) -> None:
        for p in turn.procedures:
            for v in p.documents:
                self._touch(v.path)


@checked_api
class Turn:
    """One turn being recorded: collects reads, procedures and the agent's answer, and
    records them with one native call when its `with` block exits without an error."""

    def __init__(
        self,
        conversation: Conversation,
        user: str,
        turn_id: str | None,
        thread_id: str | None,
        *,
        at: TimeLike | None,
        vector: VectorLike | None,
    ) -> None:
        if not isinstance(user, str) or not user.strip():
            raise invalid("user", "user must be the non-empty text of the user's message.")
        if turn_id is not None and (not isinstance(turn_id, str) or not turn_id.strip()):
            raise invalid("turn_id", "turn_id must be a non-empty string or None.")
        store = conversation._store
        self._conversation = conversation
        self._store = store
        self._resolver = store.document_resolver()
        self._content_limit = store.content_limit()
        self.turn_id = turn_id if turn_id is not None else uuid.uuid4().hex
        self.user_text = user
        self.thread_id = thread_id
        # A turn happened when the user asked, not when its record was written.
        self._at = optional_micros(at, "at") if at is not None else now_micros()
        self._vector = vector
        self._ledger = store.ledger(conversation.namespace, conversation.id)
        self._procedures: list[dict[str, Any]] = []
        self._agent: list[str] = []
        self._result: TurnResult | None = None
        self._closed = False

    def __enter__(self) -> Turn:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._closed:
            return
        if exc_type is None:
            self.commit()
        else:
            self.discard()

    def __repr__(self) -> str:
        return f"Turn({self.turn_id!r}, conversation={self._conversation.id!r})"

    def read_document(
        self, path: Any, content: str | bytes | None = None, *, content_hash: str | None = None
    ) -> DocumentRead:
        """The read wrapper: read (or take) a document's content, hash it, and record a
        READ of the version it is (the latest when unchanged, else a new one).

        Args:
            path: A path (see `Memory.document_id` for how it is canonicalised) or URL.
            content: The content the agent saw; the file is read from disk when None
                (required for URLs).
            content_hash: Only the hash, when the content is elsewhere.

        Raises:
            InvalidParameterError: A path outside the project root (local mode), a URL
                without content, a directory.
            NotFoundError: The file does not exist.
        """
        self._check_open()
        if content is not None:
            snap = snapshot(self._resolver, path, content)
        else:
            snap = snapshot(self._resolver, path, known_hash=content_hash)
        read, written = self._ledger.observe(snap, writes=False)
        self._add("READ", args_json({"path": snap.path}), None, [(snap, written)])
        return read

    def procedure(
        self,
        tool: str,
        args: Any = None,
        documents: Sequence[DocumentRef] | DocumentRef | None = None,
        writes: bool | None = None,
        *,
        at: TimeLike | None = None,
    ) -> list[DocumentRead]:
        """Record a tool call. Call it after the tool ran: documents given as paths are
        read now, so a write's new content is what gets hashed.

        Args:
            tool: Tool name, the relationship type (READ, EDIT, BASH, WEB_SEARCH, …).
            args: The tool's arguments, any JSON value.
            documents: Paths/URLs, `DocumentRead` values or `{path, content?,
                content_hash?}` dicts the tool touched.
            writes: Whether the tool wrote them; None means True for writing tools
                (EDIT, WRITE, CREATE, PATCH, MULTIEDIT, STR_REPLACE, DELETE, …). A
                written file that no longer exists is recorded as deleted.
            at: When the tool ran (default: now).

        Returns:
            The documents as observed, in order.
        """
        self._check_open()
        name = normalize_tool(tool)
        does_write = _writes(writes, name, "writes")
        observed = []
        for ref in _refs(documents, "documents"):
            snap = snapshot_of(self._resolver, ref, missing_ok=does_write)
            observed.append((snap, *self._ledger.observe(snap, writes=does_write)))
        when = optional_micros(at, "at")
        self._add(name, args_json(args), when, [(s, w) for s, _, w in observed])
        return [read for _, read, _ in observed]

    def agent(self, text: str) -> None:
        """Add the agent's answer (several calls are joined by blank lines)."""
        self._check_open()
        if not isinstance(text, str):
            raise invalid("text", "The agent's text must be a string.")
        if text.strip():
            self._agent.append(text)

    def retrieve_context(
        self,
        query: str | None = None,
        documents: Sequence[Any] | None = None,
        token_budget: int = 2000,
        limit: int = 10,
        **scoring: float,
    ) -> ContextResult:
        """Past context for this turn: `query` defaults to the user's message and
        `documents` to those the conversation touched so far, this turn's included."""
        return self._conversation.retrieve_context(
            self.user_text if query is None else query,
            documents,
            token_budget,
            limit,
            **scoring,
        )

    def commit(self) -> TurnResult:
        """Record the turn now (the `with` block does this on a clean exit)."""
        self._check_open()
        conversation = self._conversation
        result = self._store.record(
            conversation.namespace,
            conversation.id,
            self.turn_id,
            self.user_text,
            agent_text="\n\n".join(self._agent) or None,
            thread_id=self.thread_id,
            procedures=self._procedures,
            vector=self._vector,
            at=self._at,
        )
        self._closed = True
        self._result = result
        conversation._note(result.turn)
        return result

    def discard(self) -> None:
        """Drop everything collected; nothing is recorded."""
        self._closed = True
        self._procedures.clear()
        self._agent.clear()

    @property
    def result(self) -> TurnResult:
        """What was recorded, once the turn committed."""
        if self._result is None:
            raise invalid("turn", f"Turn {self.turn_id!r} has not been committed.")
        return self._result

    def _add(self, tool: str, args: str, at: int | None, docs: list[tuple[Snapshot, bool]]) -> None:
        for snap, _ in docs:
            self._conversation._touch(snap.path)
        self._procedures.append(
            {
                "tool": tool,
                "args": args,
                "at": now_micros() if at is None else at,
                "documents": [s.observation(w, self._content_limit) for s, w in docs],
            }
        )

    def _check_open(self) -> None:
        if self._closed:
            state = "committed" if self._result is not None else "discarded"
            raise invalid("turn", f"Turn {self.turn_id!r} is already {state}.")
