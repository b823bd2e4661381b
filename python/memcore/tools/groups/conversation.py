"""The conversation group: the interaction log and the turn lifecycle for thin clients
(docs/guide.md, "Conversations and documents").

Decisions the tools document for the model:

- ``read_document`` records nothing. Document versions belong to the turns that saw them
  (that is how a later conversation finds this one through a shared file), so a read is
  recorded as a procedure of ``record_turn`` (``{tool: "READ", documents: [path]}``);
  ``read_document`` is the preview an agent uses to ask "did this file change since this
  conversation saw it?".
- Reading the server's disk is for admin callers only (stdio, admin tokens): an HTTP
  tenant passes ``{path, content}`` or ``{path, content_hash}`` for its documents, since
  a path alone would have the server read (and return) its own files.
- The lifecycle tools take a ``project`` argument: over stdio (or with an admin token) it
  selects the namespace; a tenant token may only name its own namespace, which is also
  the default. ``user_id`` is accepted and ignored (namespaces are the isolation boundary).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memcore.errors import UnauthorizedError
from memcore.tools import schema
from memcore.tools.groups._conversation_shapes import context_out, history_out, read_out, turn_out
from memcore.tools.groups._shared import HYBRID_WITHOUT_MODEL, optional
from memcore.tools.registry import ToolCall, ToolRegistry, ToolSpec


def _id(description: str) -> schema.Schema:
    return schema.string(description, min_length=1, max_length=200)


def _no_server_reads(field: str) -> UnauthorizedError:
    error = UnauthorizedError(
        f"{field} names a file without its content: only admin callers may have the server "
        "read its own disk. Pass {path, content} (or {path, content_hash}) instead."
    )
    error.details = {"field": field}
    return error


def _check_document(call: ToolCall, document: Any, field: str) -> None:
    """Refuse a document the server would read from its disk, unless the caller is admin."""
    if call.admin:
        return
    from memcore.facade import is_url

    path = document.get("path") if isinstance(document, Mapping) else document
    given = isinstance(document, Mapping) and ("content" in document or "content_hash" in document)
    if not given and not (isinstance(path, str) and is_url(path)):
        raise _no_server_reads(field)


def _namespace(call: ToolCall) -> str:
    """The namespace a lifecycle call acts on: ``project`` if the caller may use it."""
    project = call.arguments.get("project")
    if project is None or project == call.namespace or call.admin:
        return call.namespace if project is None else str(project)
    error = UnauthorizedError(
        f"project {project!r} is not this caller's namespace; its token is bound to "
        f"{call.namespace!r} (omit project to use it)."
    )
    error.details = {"field": "project"}
    raise error


# -- the interaction log -------------------------------------------------------------------


def record_turn(call: ToolCall) -> dict[str, Any]:
    """Record a whole turn atomically, once per turn_id."""
    args = call.arguments
    procedures = args.get("procedures") or []
    for i, procedure in enumerate(procedures):
        for j, document in enumerate(procedure.get("documents", [])):
            _check_document(call, document, f"procedures[{i}].documents[{j}]")
    result = call.memory.record_turn(
        args["conversation_id"],
        args["user_text"],
        args.get("agent_text"),
        procedures,
        args.get("turn_id"),
        args.get("thread_id"),
        at=args.get("at"),
        namespace=call.namespace,
    )
    return turn_out(result)


def read_document(call: ToolCall) -> dict[str, Any]:
    """What reading a document now would record (nothing is recorded)."""
    args = call.arguments
    _check_document(call, args, "path")
    read = call.memory.read_document(
        args["path"],
        args.get("content"),
        namespace=call.namespace,
        **optional(args, "content_hash", "conversation_id"),
    )
    return read_out(read, include_content=args["include_content"])


def get_document_history(call: ToolCall) -> dict[str, Any]:
    """A document's versions and the turns that touched them."""
    history = call.memory.get_document_history(call.arguments["path"], namespace=call.namespace)
    return history_out(history)


_SCORING = ("recency_half_life_days", "staleness_weight", "familiarity_weight", "document_match")


def retrieve_context(call: ToolCall) -> dict[str, Any]:
    """Past turns worth showing now, packed into a token budget."""
    args = call.arguments
    result = call.memory.retrieve_context(
        args["query"],
        args.get("conversation_id"),
        args.get("documents"),
        args["token_budget"],
        args["limit"],
        namespace=call.namespace,
        **optional(args, *_SCORING),
    )
    return context_out(result)


# -- the turn lifecycle ------------------------------------------------------------------------


def memory_before_turn(call: ToolCall) -> dict[str, Any]:
    """Recalled facts and past context prepended to the turn's input, compacted to fit."""
    args = call.arguments
    prepared = call.memory.memory_before_turn(
        args["session_id"],
        args["turn_id"],
        args["current_input"],
        max_input_tok=args["max_input_tok"],
        memory_budget=args["memory_budget"],
        recall_limit=args["recall_limit"],
        namespace=_namespace(call),
        **optional(args, "user_id", "documents", "base_instructions"),
    )
    return dict(prepared)


def memory_after_turn(call: ToolCall) -> dict[str, Any]:
    """Record a finished turn and capture its facts, exactly once per (namespace,
    session_id, turn_id)."""
    args = call.arguments
    done = call.memory.memory_after_turn(
        args["session_id"],
        args["turn_id"],
        args["input_items"],
        args["output_items"],
        namespace=_namespace(call),
        **optional(args, "user_id"),
    )
    return dict(done)


def memory_run_maintenance(call: ToolCall) -> dict[str, Any]:
    """Expiry, retention, dedupe, archive, compaction; counters of what was done."""
    args = call.arguments
    return call.memory.memory_run_maintenance(
        force_compact=args["force_compact"],
        namespace=_namespace(call),
        **optional(args, "episodic_ttl_days", "archive_after_days"),
    )


def memory_list_dir_with_abstract(call: ToolCall) -> dict[str, Any]:
    """Namespaces, threads, conversations and code projects with counts and abstracts."""
    args = call.arguments
    namespace = _namespace(call)
    every = args["all_namespaces"]
    if every and not call.admin:
        raise UnauthorizedError("all_namespaces needs an admin token.")
    path = args["path"]
    if not path and "session_id" in args:
        path = f"/{namespace}/conversations/{args['session_id']}"
    listing = call.memory.memory_list_dir_with_abstract(
        path, args["depth"], args["limit"], namespace=namespace, all_namespaces=every
    )
    return {
        "summaries": [
            {**entry, "has_overview": bool(entry["abstract"])} for entry in listing["summaries"]
        ]
    }


def register(registry: ToolRegistry) -> None:
    """Add the conversation group."""
    for spec in _SPECS:
        registry.add(spec)


# -- schemas ---------------------------------------------------------------------------------

_DOCUMENT = {
    "anyOf": [
        {"type": "string", "minLength": 1, "maxLength": 4096},
        schema.arguments(
            {
                "path": schema.string("A path or URL.", min_length=1, max_length=4096),
                "content": schema.string("The content as you saw (or wrote) it."),
                "content_hash": schema.string(
                    "sha256 hex of the content, when the content is not sent.",
                    min_length=1,
                    max_length=128,
                ),
            },
            required=["path"],
        ),
    ],
    "description": "A path or URL, or {path, content?, content_hash?}.",
}

_PROCEDURE = schema.arguments(
    {
        "tool": schema.string(
            "The tool's name, e.g. READ, EDIT, BASH, WEB_SEARCH (stored upper-case).",
            min_length=1,
            max_length=64,
        ),
        "args": {"description": "The tool's arguments (any JSON value)."},
        "documents": {
            "type": "array",
            "maxItems": 100,
            "items": _DOCUMENT,
            "description": "Files or URLs the call read or wrote.",
        },
        "writes": schema.boolean(
            "Whether the call wrote its documents (default: true for EDIT, WRITE, CREATE, "
            "PATCH and similar tools)."
        ),
        "at": schema.string("When the call happened (ISO 8601).", date_time=True),
    },
    required=["tool"],
)


def _items(description: str) -> schema.Schema:
    return {
        "type": ["string", "array"],
        "items": {"type": "object"},
        "description": description
        + " A string is one user message; otherwise {role, content} items (Responses, Chat "
        "Completions or Anthropic messages).",
    }


def _documents(description: str) -> schema.Schema:
    return {
        "type": "array",
        "maxItems": 100,
        "items": {"type": "string", "minLength": 1, "maxLength": 4096},
        "description": description,
    }


_LIFECYCLE_IDS = {
    "project": schema.string(
        "The tenant/project: selects the namespace over stdio; over HTTP it must be your "
        "token's namespace (the default).",
        min_length=1,
        max_length=128,
    ),
    "user_id": schema.string(
        "Accepted for compatibility; namespaces isolate users.", min_length=1, max_length=200
    ),
}
_SESSION = {
    **_LIFECYCLE_IDS,
    "session_id": _id("The conversation (session) id."),
    "turn_id": _id("The turn's id, unique within the session."),
}


def _weight(description: str, maximum: float) -> schema.Schema:
    return schema.number(description, minimum=0, maximum=maximum)


_SPECS = (
    ToolSpec(
        name="record_turn",
        group="conversation",
        title="Record a turn",
        description=(
            "Log one finished turn of a conversation: the user's message, your answer and the "
            "tool calls you made (procedures) with the files or URLs each read or wrote. "
            "Files are versioned by content hash, so later conversations that touch the same "
            "files find this turn (retrieve_context). Atomic and idempotent: always pass "
            "turn_id; the same turn_id again stores nothing more (created: false). Returns "
            "{created, embedded, conversation_id, turn_id, turn_index, created_at, "
            "procedures: [{tool, documents: [{path, version, provenance}]}]}."
        ),
        input_schema=schema.arguments(
            {
                "conversation_id": _id("The conversation (session) id."),
                "user_text": schema.string("The user's message.", min_length=1),
                "agent_text": schema.string("Your answer."),
                "procedures": {
                    "type": "array",
                    "maxItems": 500,
                    "items": _PROCEDURE,
                    "description": "The tool calls of the turn, in order.",
                },
                "turn_id": _id(
                    "Your id for the turn (generated when absent; pass one so a retry stores "
                    "it once)."
                ),
                "thread_id": _id("A thread tag for the turn."),
                "at": schema.string(
                    "When the turn happened (ISO 8601). Default: now.", date_time=True
                ),
            },
            required=["conversation_id", "user_text"],
        ),
        handler=record_turn,
        idempotent=True,
    ),
    ToolSpec(
        name="read_document",
        group="conversation",
        title="Check a document",
        description=(
            "Preview what reading a file or URL now would record, WITHOUT recording it: its "
            "content hash, which version that is, whether it changed since the latest "
            "version, since this conversation last saw it (versions_since_seen) and how "
            "many conversations touched it (familiarity). To record a read, list the file "
            "in a READ procedure of record_turn. Returns {path, content_hash, size, version, "
            "previous_version, changed, provenance, versions_since_seen, familiarity} (and "
            "content with include_content)."
        ),
        input_schema=schema.arguments(
            {
                "path": schema.string("A path or URL.", min_length=1, max_length=4096),
                "content": schema.string(
                    "The content, when the server should not read it from disk (required for "
                    "URLs and for non-admin HTTP callers, unless content_hash is given)."
                ),
                "content_hash": schema.string(
                    "sha256 hex of the content, instead of the content.",
                    min_length=1,
                    max_length=128,
                ),
                "conversation_id": _id("Your conversation, to fill versions_since_seen."),
                "include_content": schema.boolean(
                    "Also return the content read (up to 200,000 characters).", default=False
                ),
            },
            required=["path"],
        ),
        handler=read_document,
        read_only=True,
    ),
    ToolSpec(
        name="get_document_history",
        group="conversation",
        title="Document history",
        description=(
            "The recorded versions of a file or URL, oldest first: content hash, provenance "
            "(agent: written by a recorded tool call; external: changed outside), and the "
            "turns that read or wrote each version; plus volatility (versions per day) and "
            "familiarity (conversations that touched it). NOT_FOUND if no turn ever touched "
            "it. Returns {path, volatility, familiarity, versions}."
        ),
        input_schema=schema.arguments(
            {"path": schema.string("A path or URL.", min_length=1, max_length=4096)},
            required=["path"],
        ),
        handler=get_document_history,
        read_only=True,
    ),
    ToolSpec(
        name="retrieve_context",
        group="conversation",
        title="Retrieve past context",
        description=(
            "Find what earlier conversations did that matters now: past user requests "
            "similar to the query (meaning and keywords) and past turns that touched the "
            "given documents, however they were worded, each with its answer, tool calls and "
            "which files changed since. Call it at the start of a task. Returns {text (a "
            "prompt-ready block saying why each item surfaced), token_count (within "
            "token_budget), omitted, items (the same turns, structured, best first)}."
            + HYBRID_WITHOUT_MODEL
        ),
        input_schema=schema.arguments(
            {
                "query": schema.string(
                    "The current request (may be empty when documents are given).",
                    max_length=20_000,
                ),
                "conversation_id": _id(
                    "The current conversation: its own turns are never returned."
                ),
                "documents": _documents("Paths or URLs the current task touches."),
                "token_budget": schema.integer(
                    "Most tokens of the text block (estimated at 4 characters per token).",
                    minimum=16,
                    maximum=100_000,
                    default=2000,
                ),
                "limit": schema.integer("Most past turns.", minimum=1, maximum=50, default=10),
                "recency_half_life_days": schema.number(
                    "Age at which a turn's recency weight halves (30).",
                    minimum=0.001,
                    maximum=36_500,
                ),
                "staleness_weight": _weight(
                    "Penalty per document version since a turn saw it (0.15).", 10
                ),
                "familiarity_weight": _weight(
                    "Bonus for documents many conversations touched (0.1).", 10
                ),
                "document_match": _weight("Score of a turn found by a shared document (0.6).", 1),
            },
            required=["query"],
        ),
        handler=retrieve_context,
        read_only=True,
    ),
    ToolSpec(
        name="memory_before_turn",
        namespace_from=_namespace,
        group="conversation",
        title="Prepare a turn",
        description=(
            "Server-side memory for thin clients, before calling the model: recalls facts "
            "relevant to the user's message and context from other sessions, within the "
            "token budget, and returns the input with one memory item (role system) put "
            "first. When the input would exceed the server's compact threshold of "
            "max_input_tok, the latest items stay verbatim and the older ones become one "
            "extractive digest item, so the result fits (the recorded turns stay whole). "
            "Records nothing; call memory_after_turn once the turn is done. Returns "
            "{input_items, recall_fact_ids, recall_turns ([{session_id, turn_id}] shown), "
            "context_token_count (the whole input's estimated tokens), memory_token_count, "
            "compacted}."
        ),
        input_schema=schema.arguments(
            {
                **_SESSION,
                "current_input": _items("The turn's input."),
                "base_instructions": schema.string(
                    "Your system instructions, counted against max_input_tok (not returned)."
                ),
                "max_input_tok": schema.integer(
                    "The model's input budget in tokens.",
                    minimum=1,
                    maximum=10_000_000,
                    default=120_000,
                ),
                "memory_budget": schema.integer(
                    "Most tokens the memory item may take.",
                    minimum=16,
                    maximum=100_000,
                    default=2000,
                ),
                "recall_limit": schema.integer(
                    "Most facts considered.", minimum=1, maximum=50, default=20
                ),
                "documents": _documents("Paths or URLs the session works on."),
            },
            required=["session_id", "turn_id", "current_input"],
        ),
        handler=memory_before_turn,
        read_only=True,
    ),
    ToolSpec(
        name="memory_after_turn",
        namespace_from=_namespace,
        group="conversation",
        title="Commit a turn",
        description=(
            "Server-side memory for thin clients, after the model answered: records the "
            "turn (the last user message of input_items, the assistant messages and tool "
            "calls of output_items) and stores the durable facts the user stated in it "
            "(about themselves, their work, people, places, preferences, plans, tools, "
            "decisions; not questions, greetings, instructions, hypotheticals, quotes or "
            "code), each with its retention tier, superseding a stored fact it updates. "
            "Exactly once per (session_id, turn_id), so retries are safe; RESOURCE_BUSY "
            "means the same turn is being recorded right now (retry). Returns {ok, created, "
            "captured: [{id, content, tier, supersedes, possible_updates, embedding}], "
            "skipped: [{text, reason}], extractor} (created: false when it was already "
            "stored: then the first call's result)."
        ),
        input_schema=schema.arguments(
            {
                **_SESSION,
                "input_items": _items("The turn's input (the memory item is skipped)."),
                "output_items": _items("The model's output."),
            },
            required=["session_id", "turn_id", "input_items", "output_items"],
        ),
        handler=memory_after_turn,
        idempotent=True,
    ),
    ToolSpec(
        name="memory_run_maintenance",
        namespace_from=_namespace,
        group="conversation",
        title="Run maintenance",
        description=(
            "Housekeeping of the namespace: expired memories become invalidated (history "
            "keeps them), episodic memories older than episodic_ttl_days expire, identical "
            "document versions share one copy, conversations idle for archive_after_days are "
            "archived, indexes are compacted. Safe to repeat. Returns {ok, "
            "memories_expired, versions_deduplicated, conversations_archived, and index "
            "counters}."
        ),
        input_schema=schema.arguments(
            {
                **_LIFECYCLE_IDS,
                "session_id": _id("Accepted for compatibility: maintenance covers the namespace."),
                "episodic_ttl_days": schema.number(
                    "Expire episodic memories older than this many days.",
                    minimum=0,
                    maximum=36_500,
                ),
                "archive_after_days": schema.number(
                    "Archive conversations untouched and unretrieved for this many days.",
                    minimum=0,
                    maximum=36_500,
                ),
                "force_compact": schema.boolean(
                    "Compact the indexes even when little changed.", default=False
                ),
            }
        ),
        handler=memory_run_maintenance,
        idempotent=True,
    ),
    ToolSpec(
        name="memory_list_dir_with_abstract",
        namespace_from=_namespace,
        group="conversation",
        title="List memory with abstracts",
        description=(
            "Browse what memory holds as a tree: /<namespace>, its threads, "
            "/<namespace>/conversations/<id> and indexed code projects "
            "/<namespace>/projects/<id>, each with a count (memories, turns or chunks), the "
            "last update and a short abstract (first request and top terms; a project's "
            "files, languages and path terms). Use it to get oriented or to find a past "
            "session or project. Returns {summaries: [{path, kind, count, updated_at, "
            "abstract, has_overview}]}."
        ),
        input_schema=schema.arguments(
            {
                **_LIFECYCLE_IDS,
                "session_id": _id("List only this conversation (when path is empty)."),
                "path": schema.string(
                    "Only entries at or below this path, e.g. /default/conversations.",
                    max_length=1000,
                    default="",
                ),
                "depth": schema.integer(
                    "1 lists namespaces; 2 or more adds threads, conversations and projects.",
                    minimum=1,
                    maximum=8,
                    default=2,
                ),
                "limit": schema.integer("Most entries.", minimum=1, maximum=1000, default=200),
                "all_namespaces": schema.boolean(
                    "List every namespace (admin callers only).", default=False
                ),
            }
        ),
        handler=memory_list_dir_with_abstract,
        read_only=True,
    ),
)
