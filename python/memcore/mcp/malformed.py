"""Messages the MCP SDK cannot read, answered as the JSON-RPC 2.0 spec asks.

The SDK drops a stdio line it cannot read without a reply or a log line, so a client waits
for an answer that never comes (a lone ``\\ud800`` escape, 400 levels of nesting, a
5,000-digit number, plain garbage). Over HTTP it answers, but a well-formed JSON value
that is no JSON-RPC message gets -32602 (invalid params) instead of -32600. Both transports
therefore screen what they read with :func:`screen` before the SDK sees it: text the SDK's
own reader would refuse is answered here with -32700 (parse error) or -32600 (invalid
request) and logged, and everything else goes on to the SDK untouched.

The reply carries the request's ``id`` when one can still be read from the text (a lone
surrogate leaves the rest of the message readable): the client's pending request then ends
with the error instead of waiting. Otherwise the ``id`` is null, as the spec requires.

A lone surrogate (``"\\ud800"``) is valid JSON, but the SDK's parser refuses it. In a
``tools/call``'s arguments it is a bad argument like any other, due ``INVALID_PARAMETER``
naming the field: such a call is handed on with each lone surrogate replaced by U+FFFD
and the fields that held one listed in ``params._meta`` under :data:`UNENCODABLE`, for
``envelope`` to refuse by name before the tool runs. Anywhere else in a message (the
method, an id, another request's parameters) it stays a parse error.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

from memcore.arguments import replace_lone_surrogates

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: Where a repaired ``tools/call`` lists the argument fields that held a lone surrogate.
UNENCODABLE = "memcore/unencodable-fields"

_log = logging.getLogger("memcore.mcp")

_NOT_A_MESSAGE = (
    "Invalid Request: a JSON-RPC 2.0 message is one object with "
    '"jsonrpc": "2.0" and a "method" (request, notification) or a "result" or "error" '
    "(response); batches are not supported."
)


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a message was refused, and whom to tell."""

    code: int
    message: str
    request_id: str | int | None

    def reply(self) -> dict[str, Any]:
        """The JSON-RPC error response."""
        return {
            "jsonrpc": "2.0",
            "id": self.request_id,
            "error": {"code": self.code, "message": self.message},
        }

    def reply_line(self) -> str:
        """The response as one line of the stdio wire."""
        return json.dumps(self.reply(), separators=(",", ":")) + "\n"


@dataclass(frozen=True, slots=True)
class Repaired:
    """A ``tools/call`` the SDK can read once its lone surrogates are replaced: ``text`` is
    what to hand it instead (the fields are listed under :data:`UNENCODABLE`)."""

    text: str


def screen(text: str | bytes) -> Rejection | Repaired | None:
    """None if the SDK can read ``text`` as a JSON-RPC message, a repaired tool call to
    hand it instead, or else the answer to give."""
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        repaired = _repaired(text) if _unreadable(exc) else None
        return repaired if repaired is not None else _rejection(text, exc)
    return None


def log_rejection(rejection: Rejection, transport: str, size: int) -> None:
    """One log line per refused message: its size and the reason, never its content."""
    fields = {
        "transport": transport,
        "code": rejection.code,
        "error": rejection.message,
        "bytes": size,
        "id": rejection.request_id,
    }
    _log.warning("malformed JSON-RPC message", extra={"fields": fields})


def _unreadable(error: ValidationError) -> bool:
    return any(e["type"] == "json_invalid" for e in error.errors())


def _repaired(text: str | bytes) -> Repaired | None:
    """The ``tools/call`` in ``text`` with the lone surrogates of its arguments replaced
    and their fields listed, if that is all that kept the SDK from reading it."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    params = message.get("params") if isinstance(message, dict) else None
    if message.get("method") != "tools/call" or not isinstance(params, dict):
        return None
    arguments, fields = replace_lone_surrogates(params.get("arguments"))
    if not fields:
        return None
    meta = params.get("_meta")
    meta = {**meta, UNENCODABLE: fields} if isinstance(meta, dict) else {UNENCODABLE: fields}
    repaired = json.dumps({**message, "params": {**params, "arguments": arguments, "_meta": meta}})
    try:
        jsonrpc_message_adapter.validate_json(repaired, by_name=False)
    except ValidationError:
        return None  # a lone surrogate elsewhere too, or another fault: the parse error stands
    return Repaired(repaired)


def _rejection(text: str | bytes, error: ValidationError) -> Rejection:
    unreadable = [e for e in error.errors() if e["type"] == "json_invalid"]
    if unreadable:
        # pydantic's message names the position and the fault, not the content.
        reason = str(unreadable[0]["msg"]).removeprefix("Invalid JSON: ")
        return Rejection(PARSE_ERROR, f"Parse error: {reason}", _request_id(text))
    return Rejection(INVALID_REQUEST, _NOT_A_MESSAGE, _request_id(text))


def _request_id(text: str | bytes) -> str | int | None:
    """The message's id if the text still reads as an object carrying a valid one."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # ValueError covers undecodable bytes and digits
        return None
    if not isinstance(value, dict):
        return None
    request_id = value.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id
