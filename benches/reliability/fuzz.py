"""Schema-driven fuzzing of the MCP tools: arguments drawn from each tool's own input
schema, and near misses of them (a required field dropped, an unknown field, a wrong type,
a value just out of range), sent to a real server; every reply must be a tool result, an
error result must carry one of the public codes, and a refused call must leave the store
as it was.

With ``hostile=True`` the near misses also hold values no store can take, whatever the
tool (``memcore.arguments``): a lone surrogate in a text, a key or deep inside a value, an
integer past 64 bits, lists nested 100 deep, a key of 1,500 characters. Each such call
must be refused with INVALID_PARAMETER. Only a client that writes raw JSON can send a lone
surrogate (``client.WireClient``; the SDK's client refuses to encode one).

Shared by ``tests/reliability`` (a few hundred cases per tool) and ``python -m
benches.reliability`` (``--long``: 10,000 per tool). Paths are drawn from a sandbox and
from names that cannot exist, never from the whole disk: ``index_project`` on a random
real folder would index it.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from memcore.arguments import check_arguments
from memcore.errors import InvalidParameterError

#: The codes a tool error may carry (memcore.errors, README "Every failure is ...").
CODES = frozenset(
    {
        "MEMORY_NOT_FOUND",
        "NOT_FOUND",
        "INVALID_PARAMETER",
        "VALIDATION_FAILED",
        "STORAGE_ERROR",
        "EMBEDDING_ERROR",
        "DIMENSION_MISMATCH",
        "RESOURCE_BUSY",
        "UNAUTHORIZED",
        "PAYLOAD_TOO_LARGE",
    }
)
#: Longest string drawn for a field without a tighter maxLength (speed, not coverage: the
#: limits themselves are probed by the near misses).
_TEXT_MAX = 40
_LIST_MAX = 4
_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)


@st.composite
def _json_values(draw: st.DrawFn, depth: int = 2) -> Any:
    """Any JSON value: a scalar, or a list or object of up to 3 values, 2 levels deep
    (up to 9 leaves). The same values as ``st.recursive`` would give, drawn about ten
    times faster: the fuzzer draws one for every unknown field and wrong type."""
    if depth == 0 or draw(st.integers(0, 2)):
        return draw(_JSON_SCALARS)
    if draw(st.booleans()):
        return draw(st.lists(_json_values(depth - 1), max_size=3))
    return draw(st.dictionaries(st.text(max_size=6), _json_values(depth - 1), max_size=3))


_ANY_JSON = _json_values()


class ToolClient(Protocol):
    """What the fuzzer needs of a client: one tool call, its MCP result."""

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any: ...


@dataclass
class Tally:
    """What the calls to one tool returned: ``ok`` or the error code, by count."""

    tool: str
    outcomes: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Cases holding a value no store can take (``hostile``; each must be refused).
    hostile: int = 0

    @property
    def cases(self) -> int:
        return sum(self.outcomes.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "cases": self.cases,
            "outcomes": dict(sorted(self.outcomes.items())),
            "violations": self.violations[:20],
            "seconds": round(self.seconds, 2),
            "hostile": self.hostile,
        }


# -- strategies ---------------------------------------------------------------------------


def valid_arguments(schema: Mapping[str, Any], sandbox: Path) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments that satisfy the tool's schema."""
    return _object(schema, sandbox)


def near_misses(
    schema: Mapping[str, Any], sandbox: Path, *, hostile: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments one step outside the schema (with ``hostile``, or holding a value no
    store can take)."""
    return _near_miss(schema, valid_arguments(schema, sandbox), _edges(schema), hostile)


def arguments(
    schema: Mapping[str, Any], sandbox: Path, *, hostile: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """Valid arguments and near misses, about half each."""
    return st.one_of(
        valid_arguments(schema, sandbox), near_misses(schema, sandbox, hostile=hostile)
    )


def breaks_the_rules(args: Mapping[str, Any]) -> bool:
    """Whether ``args`` hold a value no store can take (``memcore.arguments``): such a call
    must be refused with INVALID_PARAMETER, whatever else is wrong with it."""
    try:
        check_arguments(args)
    except InvalidParameterError:
        return True
    return False


def _value(schema: Mapping[str, Any], name: str, sandbox: Path) -> st.SearchStrategy[Any]:
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([_value(option, name, sandbox) for option in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([_value({**schema, "type": k}, name, sandbox) for k in kind])
    if kind == "object":
        return _object(schema, sandbox)
    if kind == "array":
        items = schema.get("items", {})
        return st.lists(
            _value(items, name, sandbox),
            min_size=schema.get("minItems", 0),
            max_size=max(
                schema.get("minItems", 0), min(schema.get("maxItems", _LIST_MAX), _LIST_MAX)
            ),
        )
    if kind == "string":
        return _string(schema, name, sandbox)
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        low, high = schema.get("minimum"), schema.get("maximum")
        if any(word in name for word in ("wait", "timeout")):
            high = min(high if high is not None else 1.0, 1.0)  # a fuzz case must not sleep
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    return _ANY_JSON


def _string(schema: Mapping[str, Any], name: str, sandbox: Path) -> st.SearchStrategy[str]:
    low = schema.get("minLength", 0)
    high = max(low, min(schema.get("maxLength", _TEXT_MAX), _TEXT_MAX))
    if name == "path" or name == "documents":
        return _paths(sandbox, low, schema.get("maxLength"))
    if schema.get("format") == "date-time":
        dates = st.datetimes().map(lambda d: d.isoformat() + "Z")
        return st.one_of(dates, st.text(min_size=max(low, 1), max_size=high))
    return st.text(min_size=low, max_size=high)


def _paths(sandbox: Path, low: int, high: int | None) -> st.SearchStrategy[str]:
    """Folders and files of the sandbox, names that cannot exist, and overlong names."""
    inside = st.sampled_from(
        [str(sandbox), str(sandbox / "src"), str(sandbox / "src" / "app.py"), str(sandbox / "x")]
    )
    missing = st.text(min_size=1, max_size=40).map(lambda t: f"/nonexistent-memcore-fuzz/{t}")
    longest = high if high is not None else 5000
    overlong = st.integers(min_value=256, max_value=longest).map(lambda n: "/" + "d" * (n - 1))
    return st.one_of(inside, missing, overlong).filter(lambda p: len(p) >= low)


def _object(schema: Mapping[str, Any], sandbox: Path) -> st.SearchStrategy[dict[str, Any]]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {name: _value(sub, name, sandbox) for name, sub in properties.items() if name in required},
        optional={
            name: _value(sub, name, sandbox)
            for name, sub in properties.items()
            if name not in required
        },
    )


@st.composite
def _near_miss(
    draw: st.DrawFn,
    schema: Mapping[str, Any],
    valid: st.SearchStrategy[dict[str, Any]],
    edges: list[tuple[str, Any]],
    hostile: bool,
) -> dict[str, Any]:
    """Valid arguments with one change: an unknown field, a required field dropped, a
    field of any JSON type, or a field set to a value just past its limits; with
    ``hostile``, often a field (or a new key) holding a value no store can take. (Drawn in
    one composite rather than through ``flatmap``, which builds a strategy per case.)"""
    args = draw(valid)
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = [name for name in schema.get("required", []) if name in args]
    kinds = ["unknown"]
    if required:
        kinds.append("drop")
    if properties:
        kinds.append("any_type")
    if edges:
        kinds.append("edge")
    if hostile:
        kinds += ["hostile"] * len(kinds)  # half of the near misses
    kind = draw(st.sampled_from(kinds))
    if kind == "hostile":
        return _hostile(draw, args, properties)
    if kind == "unknown":
        key = draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in properties))
        return {**args, key: draw(_ANY_JSON)}
    if kind == "drop":
        return _without(args, draw(st.sampled_from(required)))
    if kind == "any_type":
        return {**args, draw(st.sampled_from(sorted(properties))): draw(_ANY_JSON)}
    key, value = draw(st.sampled_from(edges))
    return {**args, key: value}


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


#: Values no store can take, whatever the field: each must get INVALID_PARAMETER.
_HOSTILE_TEXTS = ["\ud800", "caf\udce9 au lait", "a\udfff" + "b" * 60, "\udc80\udc80"]
_HOSTILE_NUMBERS = [2**64, -(2**63) - 1, 10**40]
_HOSTILE_SHAPES = [
    _nested(100),
    {"\ud800": "x"},
    {"k" * 1500: 1},
    ["fine", "\udcff"],
    [{"deep": {"er": "\ud83d"}}],
    {"a": _nested(80)},
]


def _hostile(
    draw: st.DrawFn, args: dict[str, Any], properties: Mapping[str, Any]
) -> dict[str, Any]:
    """``args`` with one value no store can take: in a field (one of its type, or of any
    shape), or as a new key."""
    if not properties or draw(st.integers(0, 4)) == 0:
        key = draw(st.sampled_from(["\ud800", "x\udfffy", "k" * 1500]))
        return {**args, key: draw(st.sampled_from(_HOSTILE_TEXTS))}
    name = draw(st.sampled_from(sorted(properties)))
    kinds = _kinds(properties[name])
    pool = list(_HOSTILE_SHAPES)
    if "string" in kinds or not kinds:
        pool += _HOSTILE_TEXTS * 3
    if kinds & {"integer", "number"} or not kinds:
        pool += _HOSTILE_NUMBERS * 3
    if "array" in kinds:
        pool += [[text] for text in _HOSTILE_TEXTS]
    return {**args, name: draw(st.sampled_from(pool))}


def _kinds(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a field's schema names (empty: any)."""
    kind = schema.get("type")
    kinds = {kind} if isinstance(kind, str) else set(kind or ())
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, ()):
            kinds |= _kinds(option)
    if "enum" in schema or "const" in schema:
        kinds.add("string")
    return kinds


def _edges(schema: Mapping[str, Any]) -> list[tuple[str, Any]]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    return [(k, v) for k in sorted(properties) for v in _edge_values(properties[k])]


def _without(args: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in args.items() if k != key}


def _edge_values(schema: Mapping[str, Any]) -> list[Any]:
    """Values just outside (or on the edge of) a field's limits."""
    values: list[Any] = []
    if "maximum" in schema:
        values += [schema["maximum"] + 1, 10**30]
    if "minimum" in schema:
        values += [schema["minimum"] - 1, -(10**30)]
    if "maxLength" in schema:
        values.append("m" * (schema["maxLength"] + 1))
    if schema.get("minLength", 0) > 0:
        values.append("")
    if "maxItems" in schema:
        values.append([None] * (schema["maxItems"] + 1))
    if schema.get("type") == "string":
        # (A lone surrogate cannot be sent through the SDK's client: see ``hostile``.)
        values += ["\x00", " ", "é" * 20, "\u202e\ufeff"]
    return values


# -- running ------------------------------------------------------------------------------


def classify(result: Any) -> str:
    """``ok`` or the result's error code; raises AssertionError for any reply that breaks
    the contract (not a single JSON text, structured content that disagrees, an error
    without a public code)."""
    content = result.content
    assert len(content) == 1 and content[0].type == "text", "not one text content"
    payload = json.loads(content[0].text)
    assert result.structured_content == payload, "structured content differs from the text"
    if not result.is_error:
        return "ok"
    error = payload.get("error")
    assert isinstance(error, dict), "an error result without an error object"
    assert error.get("code") in CODES, f"an error without a public code: {error.get('code')!r}"
    assert isinstance(error.get("message"), str) and error["message"], "an empty message"
    assert isinstance(error.get("details"), dict), "details is not an object"
    return str(error["code"])


def memory_count(client: ToolClient) -> int | None:
    """The store's memory count (None while it is not open)."""
    payload = json.loads(client.call("get_status", {}).content[0].text)
    counts = payload.get("counts")
    return None if counts is None else int(counts["memories"])


def fuzz_tool(
    client: ToolClient,
    name: str,
    schema: Mapping[str, Any],
    sandbox: Path,
    *,
    cases: int,
    seconds: float,
    on_case: Callable[[], None] | None = None,
    hostile: bool = False,
) -> Tally:
    """Call ``name`` with up to ``cases`` generated argument sets, for at most about
    ``seconds``; the outcomes, and every contract violation seen. With ``hostile`` (a
    client that writes raw JSON), half the near misses hold values no store can take, and
    each of those calls must be refused with INVALID_PARAMETER."""
    tally = Tally(name)
    started = time.monotonic()
    first: list[float] = []  # the budget runs from the first case: building the strategy
    # The memory count while it is known not to have changed since (refused calls only).
    known: list[int | None] = []
    writes = not name.startswith(("get_", "list_", "search", "read_graph", "recall", "query_"))

    @settings(
        max_examples=cases,
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(arguments(schema, sandbox, hostile=hostile))
    def one(args: dict[str, Any]) -> None:
        now = time.monotonic()
        if not first:
            first.append(now)
        if now - first[0] > seconds:
            raise _OutOfTimeError  # ends the run: drawing the remaining cases costs time too
        if writes and not known:
            known.append(memory_count(client))
        try:
            outcome = classify(client.call(name, args))
            if hostile and breaks_the_rules(args):
                tally.hostile += 1
                if outcome != "INVALID_PARAMETER":
                    raise AssertionError(f"a value no store can take got {outcome}")
        except AssertionError as exc:
            tally.violations.append(f"{exc}: {_short(args)}")
            outcome = "violation"
        except Exception as exc:  # a protocol error, a closed connection: a crash
            tally.violations.append(f"{type(exc).__name__}: {exc}: {_short(args)}")
            outcome = "crash"
        if writes and outcome in ("ok", "violation", "crash"):
            known.clear()  # the count may have changed: read it again before the next call
        elif writes:
            before, after = known[0], memory_count(client)
            if before is not None and after is not None and after != before:
                tally.violations.append(f"refused but wrote ({before} -> {after}): {_short(args)}")
            known[:] = [after]
        tally.outcomes[outcome] += 1
        if on_case is not None:
            on_case()

    with contextlib.suppress(_OutOfTimeError):
        one()
    tally.seconds = time.monotonic() - started
    return tally


class _OutOfTimeError(Exception):
    """The tool's share of the time is spent."""


def _short(args: Any) -> str:
    text = json.dumps(args, default=repr)
    return text if len(text) <= 300 else text[:300] + "…"


def make_sandbox(root: Path) -> Path:
    """A tiny project for the path fields: a folder, a source file, a README."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "app.py").write_text("def main():\n    return 'fuzz'\n")
    (root / "README.md").write_text("# fuzz sandbox\n")
    return root


def per_tool_seconds(total: float, tools: int) -> float:
    """An even share of ``total`` seconds per tool."""
    return max(0.5, total / max(1, tools)) if math.isfinite(total) else math.inf
