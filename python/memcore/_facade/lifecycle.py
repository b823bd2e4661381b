"""The turn lifecycle for thin clients (`memory_before_turn`, `memory_after_turn`,
`memory_run_maintenance`, `memory_list_dir_with_abstract`): message-item parsing,
prompt-block assembly and the store's claim on a turn being recorded. The facade methods live in
`memcore._facade.turn_lifecycle`; this module holds the parts that need no engine.

Items are the chat/response items clients already have: `{"role", "content"}` where
content is a string or a list of parts with `text` (OpenAI Responses and Chat
Completions, Anthropic messages). Tool calls (`{"type": "function_call", "name",
"arguments"}`, `{"type": "tool_use", "name", "input"}`, or a message's `tool_calls`)
become procedures of the recorded turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

# The core's limits, in UTF-8 bytes: on a user / agent text recorded, and on a
# procedure's argument JSON (rust/memcore/src/memory.rs, conversation.rs).
from memcore._core import MAX_ARGS_BYTES as MAX_ARGS_BYTES
from memcore._core import MAX_TEXT_BYTES as MAX_TEXT_BYTES
from memcore._facade.item_parts import calls, speaker
from memcore._facade.item_parts import item_text as item_text
from memcore._time import from_micros, iso, now_micros
from memcore.errors import ResourceBusyError, invalid

if TYPE_CHECKING:
    from memcore._core import Engine

#: The role of the memory item `memory_before_turn` prepends.
MEMORY_ROLE = "system"
#: Below this many tokens of room, no memory block is injected at all.
MIN_BLOCK_TOKENS = 16
#: Most items accepted per call, and most tool calls recorded per turn.
MAX_ITEMS = 10_000
MAX_TOOL_CALLS = 500
#: Characters of the user message used as the retrieval query (a pasted file would
#: otherwise become a huge, slow and unfocused keyword query).
MAX_QUERY_CHARS = 2_000
#: Characters of one fact in the memory block.
MAX_FACT_CHARS = 500
FACTS_HEADER = "## Relevant facts\n"
#: The recency half-life of the past turns memory_before_turn shows: none to speak of
#: (relevance decides; see `TurnLifecycleAPI._memory_block`).
CONTEXT_HALF_LIFE_DAYS = 36_500.0

_TOOL_CHARS = re.compile(r"[^A-Za-z0-9_]+")


class RecalledTurn(TypedDict):
    """A past turn the memory block shows."""

    session_id: str
    turn_id: str


@dataclass(frozen=True)
class MemoryBlock:
    """What memory_before_turn puts first: its text, and the facts and turns it holds."""

    text: str = ""
    fact_ids: list[str] = field(default_factory=list)
    turns: list[RecalledTurn] = field(default_factory=list)


class BeforeTurnResult(TypedDict):
    """What `memory_before_turn` returns: `context_token_count` is the estimated cost of
    the whole input (instructions, memory block, items), `memory_token_count` the memory
    block's share, `compacted` whether older items became a digest."""

    input_items: list[dict[str, Any]]
    recall_fact_ids: list[str]
    recall_turns: list[RecalledTurn]
    context_token_count: int
    memory_token_count: int
    compacted: bool


class AfterTurnResult(TypedDict):
    """What `memory_after_turn` returns: `created` is False for a repeated turn, which
    gets the first call's facts back; `captured`, `skipped` and `extractor` are the
    capture report (memcore/_facade/fact_capture.py)."""

    ok: bool
    created: bool
    captured: list[Any]
    skipped: list[Any]
    extractor: str


def as_items(value: Any, field: str) -> list[dict[str, Any]]:
    """Items from a string (one user message) or a list of item dicts (copied)."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if isinstance(value, Mapping) or not isinstance(value, Sequence):
        raise invalid(field, f"{field} must be a string or a list of {{role, content}} items.")
    if len(value) > MAX_ITEMS:
        raise invalid(field, f"{field} has {len(value)} items; at most {MAX_ITEMS}.")
    items = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise invalid(field, f"{field}[{i}] must be a dict such as {{role, content}}.")
        items.append(dict(item))
    return items


def user_text(items: Sequence[Mapping[str, Any]]) -> str:
    """The current user message: the last item with role `user` that has text."""
    for item in reversed(items):
        if item.get("role") == "user":
            text = item_text(item)
            if text.strip():
                return text
    return ""


def agent_text(items: Sequence[Mapping[str, Any]]) -> str:
    """The agent's answer: the text of its assistant messages, joined."""
    texts = [item_text(item) for item in items if speaker(item) == "assistant"]
    return "\n\n".join(t for t in texts if t.strip())


def tool_calls(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Procedure specs (`{tool, args}`) for the tool calls among `items`, in every
    client's shape (memcore/_facade/item_parts.py)."""
    found = (call for item in items for call in calls(item))
    return [{"tool": _tool_name(name), "args": _args(args)} for name, args in found][
        :MAX_TOOL_CALLS
    ]


def _tool_name(name: Any) -> str:
    # Client tool names may hold dots or slashes (`functions.read_file`); the core
    # takes letters, digits and `_` only.
    cleaned = _TOOL_CHARS.sub("_", name if isinstance(name, str) else "").strip("_")
    return cleaned[:64] or "TOOL"


def _args(args: Any) -> Any:
    if isinstance(args, str):
        try:
            value = json.loads(args)
        except ValueError:
            value = {"raw": args}
    else:
        value = args
    try:
        size = len(json.dumps(value, ensure_ascii=False, default=str).encode())
    except (TypeError, ValueError):
        return {"unserialisable": True}
    return value if size <= MAX_ARGS_BYTES else {"truncated": True, "bytes": size}


def fit_bytes(text: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """`text` cut to at most `max_bytes` UTF-8 bytes (on a character boundary)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return text
    marker = " …[truncated]"
    return data[: max_bytes - len(marker.encode())].decode("utf-8", "ignore") + marker


def query_text(items: Sequence[Mapping[str, Any]]) -> str:
    """The retrieval query of a turn: its user message, cut to `MAX_QUERY_CHARS`."""
    return user_text(items)[:MAX_QUERY_CHARS]


def pack_facts(
    facts: Sequence[tuple[str, str]], budget: int, estimate: Callable[[str], int]
) -> tuple[str, list[str]]:
    """The facts block (best first) within `budget` tokens, and the ids it holds."""
    used = estimate(FACTS_HEADER)
    lines: list[str] = []
    ids: list[str] = []
    for fact_id, content in facts:
        flat = " ".join(content.split())
        if len(flat) > MAX_FACT_CHARS:
            flat = flat[: MAX_FACT_CHARS - 1] + "…"
        line = f"- {flat}\n"
        cost = estimate(line)
        if used + cost > budget:
            continue  # a shorter fact further down may still fit
        used += cost
        lines.append(line)
        ids.append(fact_id)
    return (FACTS_HEADER + "".join(lines) if lines else ""), ids


def dir_prefix(path: Any) -> str:
    """A listing prefix: "" for everything, else `/segment/...` without a trailing `/`."""
    if not isinstance(path, str):
        raise invalid("path", "path must be a string such as '' or '/default/conversations'.")
    stripped = path.strip().strip("/")
    return f"/{stripped}" if stripped else ""


def under(path: str, prefix: str) -> bool:
    """Whether a listing path is `prefix` or below it (whole segments only)."""
    return not prefix or path == prefix or path.startswith(prefix + "/")


#: Seconds after which a claimed turn whose processing never finished (its process died)
#: may be claimed again; until then a duplicate is told to retry.
CLAIM_STALE_SECONDS = 60.0


def claim(
    engine: Engine, namespace: str, session_id: str, turn_id: str, stale_after: int
) -> AfterTurnResult | None:
    """Claim a turn for memory_after_turn in the store (so a duplicate from any process
    or node sees it): None when it is this call's to process, the first call's result
    when the turn was processed already.

    Raises:
        ResourceBusyError: Another call is processing the same turn right now.
    """
    state, result, since = engine.claim_turn(
        namespace, session_id, turn_id, now_micros(), stale_after
    )
    if state == "claimed":
        return None
    if state == "done":
        first: dict[str, Any] = json.loads(result) if result else {}
        return {
            "ok": True,
            "created": False,
            "captured": first.get("captured", []),
            "skipped": first.get("skipped", []),
            "extractor": first.get("extractor", "rules"),
        }
    err = ResourceBusyError(
        f"Turn {turn_id!r} of session {session_id!r} is being recorded right now (since "
        f"{iso(from_micros(since or 0))}); retry shortly: the retry is answered with the "
        "first call's result once it is stored."
    )
    err.details = {"session_id": session_id, "turn_id": turn_id, "retryable": True}
    raise err
