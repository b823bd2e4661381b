"""The MCP handshake answered from memcore's own data while the SDK is still loading.

Importing the MCP SDK takes about a second, most of the time to a first ``tools/list`` and,
if clients had to wait for it, to a first tool call. The requests of a handshake-era
(``initialize``) session need nothing from it: ``initialize`` (its answer is fixed: our
identity, instructions and capabilities, plus the negotiated version), ``tools/list`` (our
specs), ``ping``, and ``tools/call``, which memcore's own ``Dispatcher`` runs whatever the
transport (the SDK's handler only wraps its outcome in a ``CallToolResult``).
:class:`EarlyAnswers` answers the first three, hands a well-formed tool call back to the
transport to run (:class:`EarlyCall`, answered with :func:`tool_call_reply`), and tells the
transport what the SDK must still see once it runs (``stdio``): every line except the
stateless requests answered here. ``initialize`` is answered *and* handed
on, so the SDK's session has the state and protocol era it would have had; its own reply to
it is then dropped (see ``stdio``).

Anything not certainly answered the way the SDK would answer it goes to the SDK: a first
request other than ``initialize`` (it decides the protocol era, e.g. a 2026-era
``server/discover``), parameters this module does not fully check, any other method. The
checks are conservative: what passes here passes the SDK's validation (tests compare the
answers with the SDK's for every handshake version and a range of clients).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memcore.mcp.dispatch import Outcome
from memcore.mcp.listing import (
    INSTRUCTIONS,
    SERVER_DESCRIPTION,
    SERVER_NAME,
    SERVER_TITLE,
    SERVER_VERSION,
    tool_listing,
)
from memcore.tools.registry import ToolSpec

#: The versions the SDK negotiates through ``initialize``, oldest first; a client asking for
#: another gets the newest. Must equal ``mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS``
#: (a test compares them, so an SDK upgrade that changes the list fails loudly).
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_PROTOCOL_VERSIONS[-1]

RequestId = int | str

_IMPLEMENTATION_TEXT = frozenset({"name", "version", "title", "description", "websiteUrl"})


@dataclass(frozen=True, slots=True)
class EarlyCall:
    """A ``tools/call`` to run before the SDK has loaded (its envelope already checked)."""

    request_id: RequestId
    name: str
    arguments: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Step:
    """What to do with one line read before the SDK runs.

    Attributes:
        reply: A JSON-RPC line to write now, if this module answers the line.
        replay: Whether the SDK must still read the line once it runs.
        hand_off: Whether to stop answering here: the SDK takes over from this line on.
        call: A tool call for the transport to run and answer (:func:`tool_call_reply`).
    """

    reply: str | None
    replay: bool
    hand_off: bool
    call: EarlyCall | None = None


#: The SDK answers this line and everything after it.
HAND_OFF = Step(reply=None, replay=True, hand_off=True)
#: A notification, a response or a blank line: no answer is due from here, and the SDK
#: reads it in order, so it has the effect the SDK gives it.
_PASS_ON = Step(reply=None, replay=True, hand_off=False)


class EarlyAnswers:
    """Answers ``initialize``, then ``tools/list`` and ``ping``, for one session."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        # Serialized once: the list never changes while the server runs.
        self._tools_json = _dumps({"tools": [tool_listing(spec) for spec in tools]})
        self._initialize_id: RequestId | None = None
        self._initialize_result: dict[str, Any] | None = None

    @property
    def initialize_id(self) -> RequestId | None:
        """The id of the ``initialize`` answered here (the SDK's reply to it is dropped)."""
        return self._initialize_id

    @property
    def initialize_result(self) -> dict[str, Any] | None:
        """The result sent for that ``initialize``."""
        return self._initialize_result

    def step(self, line: str) -> Step:
        """What to do with ``line``, the next line of the client's input."""
        message = _parse(line)
        if message is None:
            # Unreadable, or not an object: due a JSON-RPC error, which the transport gives
            # once the SDK has loaded (``malformed``), so the early answers end here.
            return _PASS_ON if not line.strip() else HAND_OFF
        if "method" not in message:
            is_response = "id" in message and ("result" in message or "error" in message)
            return _PASS_ON if is_response else HAND_OFF
        if "id" not in message:
            return _PASS_ON
        if not _well_formed_request(message):
            return HAND_OFF
        request_id, method, params = message["id"], message["method"], message.get("params")
        if self._initialize_id is None:
            # The first request fixes the SDK's protocol era: answer it only if it is the
            # handshake itself.
            requested = _requested_version(params) if method == "initialize" else None
            if requested is None:
                return HAND_OFF
            result = initialize_result(requested)
            self._initialize_id, self._initialize_result = request_id, result
            return Step(reply=_reply(request_id, _dumps(result)), replay=True, hand_off=False)
        if method == "tools/list" and _plain(params, "cursor"):
            return Step(reply=_reply(request_id, self._tools_json), replay=False, hand_off=False)
        if method == "ping" and _plain(params):
            return Step(reply=_reply(request_id, "{}"), replay=False, hand_off=False)
        if method == "tools/call":
            call = _tool_call(request_id, params)
            if call is not None:
                return Step(reply=None, replay=False, hand_off=False, call=call)
        return HAND_OFF


def tool_call_reply(request_id: RequestId, outcome: Outcome) -> str:
    """The JSON-RPC answer to a tool call, as the SDK writes the ``CallToolResult`` that
    ``server.build_server`` makes of the same outcome."""
    result = {
        "content": [{"type": "text", "text": outcome.text}],
        "structuredContent": outcome.payload,
        "isError": outcome.is_error,
    }
    return _reply(request_id, _dumps(result))


def negotiate(requested: str) -> str:
    """The protocol version the SDK answers a client asking for ``requested``."""
    return requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION


def initialize_result(requested: str) -> dict[str, Any]:
    """The ``initialize`` result for a client asking for protocol version ``requested``.

    The capabilities are what the SDK derives from the handlers ``server.build_server``
    registers: ``tools/list`` and ``tools/call`` only, without change notifications.
    """
    return {
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": INSTRUCTIONS,
        "protocolVersion": negotiate(requested),
        "serverInfo": {
            "description": SERVER_DESCRIPTION,
            "name": SERVER_NAME,
            "title": SERVER_TITLE,
            "version": SERVER_VERSION,
        },
    }


def _dumps(value: Any) -> str:
    # The SDK's framing: compact JSON, UTF-8 as is.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _reply(request_id: RequestId, result_json: str) -> str:
    return f'{{"jsonrpc":"2.0","id":{_dumps(request_id)},"result":{result_json}}}\n'


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON: the SDK's parser rejects the line, so must this one.
    raise ValueError(name)


def _parse(line: str) -> dict[str, Any] | None:
    try:
        message = json.loads(line, parse_constant=_reject_constant)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _is_id(value: Any) -> bool:
    # The SDK's RequestId: a strict int (not a bool, not a float) or a string. Left to the
    # SDK's judgement: an int beyond 64 bits, a string that cannot be written back as UTF-8
    # (a lone surrogate, from a \u escape).
    if isinstance(value, str):
        return value.isascii() or _utf8(value)
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _well_formed_request(message: Mapping[str, Any]) -> bool:
    return (
        set(message) <= {"jsonrpc", "id", "method", "params"}
        and message.get("jsonrpc") == "2.0"
        and _is_id(message["id"])
        and isinstance(message["method"], str)
        and (message.get("params") is None or isinstance(message["params"], dict))
    )


def _plain(params: Any, *optional_strings: str) -> bool:
    """Parameters with nothing to check beyond a progress token and the named strings
    (``tools/list``'s cursor: the listing is one page, so the SDK ignores it too)."""
    if params is None:
        return True
    for key, value in params.items():
        if key == "_meta":
            if not _progress_meta(value):
                return False
        elif key not in optional_strings or not isinstance(value, str):
            return False
    return True


def _tool_call(request_id: RequestId, params: Any) -> EarlyCall | None:
    """The call, if its envelope certainly passes the SDK's validation: a string name and
    an object (or no) ``arguments``, nothing else but a progress token. Malformed envelopes
    go to the SDK, whose middleware (``envelope``) turns them into tool errors."""
    if not isinstance(params, dict) or not set(params) <= {"name", "arguments", "_meta"}:
        return None
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
        return None
    if "_meta" in params and not _progress_meta(params["_meta"]):
        return None
    return EarlyCall(request_id, name, arguments)


def _progress_meta(meta: Any) -> bool:
    # Only a progress token: any reserved key (a 2026-era envelope) is the SDK's to judge.
    return (
        isinstance(meta, dict)
        and set(meta) <= {"progressToken"}
        and all(_is_id(token) for token in meta.values())
    )


def _requested_version(params: Any) -> str | None:
    """The protocol version an ``initialize`` asks for, if its parameters certainly pass
    the SDK's validation (required fields, their types, the capabilities' shapes)."""
    if not isinstance(params, dict) or set(params) != {
        "protocolVersion",
        "capabilities",
        "clientInfo",
    }:
        return None
    version = params["protocolVersion"]
    if not (
        isinstance(version, str)
        and _implementation(params["clientInfo"])
        and _capabilities(params["capabilities"])
    ):
        return None
    return version


def _implementation(info: Any) -> bool:
    # name and version required; the optional text fields; icons are left to the SDK.
    return (
        isinstance(info, dict)
        and {"name", "version"} <= set(info) <= _IMPLEMENTATION_TEXT
        and all(isinstance(value, str) for value in info.values())
    )


def _capabilities(capabilities: Any) -> bool:
    """Client capabilities of shapes both of the SDK's models accept.

    Every known capability is an object of objects, except ``roots.listChanged`` (a bool)
    and the free-form maps ``experimental`` and ``extensions``; unknown capabilities are
    ignored by the SDK, so any value passes.
    """
    if not isinstance(capabilities, dict):
        return False
    for name, value in capabilities.items():
        if name in ("experimental", "extensions"):
            ok = isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())
        elif name == "roots":
            ok = isinstance(value, dict) and isinstance(value.get("listChanged", False), bool)
        elif name in ("sampling", "elicitation", "tasks"):
            ok = _objects_only(value)
        else:
            ok = True
        if not ok:
            return False
    return True


def _objects_only(value: Any) -> bool:
    return isinstance(value, dict) and all(_objects_only(v) for v in value.values())
