"""Structured logs on stderr: one JSON object per line, memory content never included.

stdout belongs to the MCP protocol, so every handler writes to stderr. memcore's own log
calls pass their data as ``extra={"fields": {...}}``; any field that can carry what a user
said (content, query, metadata, arguments, tokens) is replaced by its size before it is
written. Third-party loggers (the SDK, uvicorn) stay at WARNING, or INFO at ``trace``: their
debug output can echo whole protocol messages.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any

#: Field names whose values are user content or secrets.
REDACTED_FIELDS = frozenset(
    {
        "agent_text",
        "arguments",
        "authorization",
        "base_instructions",
        "content",
        "contents",
        "current_input",
        "input_items",
        "metadata",
        "observations",
        "output_items",
        "query",
        "reason",
        "text",
        "token",
        "user_text",
    }
)
_THIRD_PARTY = (
    "mcp",
    "uvicorn",
    "uvicorn.access",
    "uvicorn.error",
    "starlette",
    "httpx2",
    "sse_starlette",
)
_LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def redact(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` with every content-bearing value replaced by a size note."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key.lower() in REDACTED_FIELDS:
            size = len(value) if isinstance(value, str | bytes | list | dict) else None
            out[key] = "<redacted>" if size is None else f"<redacted {size}>"
        elif isinstance(value, Mapping):
            out[key] = redact(value)
        else:
            out[key] = value
    return out


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", ...fields, "exc"?}`` per line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, Mapping):
            entry.update(redact(fields))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure(level: str) -> None:
    """Send every log record to stderr as JSON at the given level (see ``--log-level``)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("memcore").setLevel(_LEVELS[level])
    library_level = logging.INFO if level == "trace" else max(_LEVELS[level], logging.WARNING)
    for name in _THIRD_PARTY:
        logging.getLogger(name).setLevel(library_level)
    # Python warnings would otherwise be printed by the warnings module, bypassing this format.
    logging.captureWarnings(True)


def _timestamp(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created % 1 * 1000):03d}Z"
