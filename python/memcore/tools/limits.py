"""Size limits on tool arguments, checked before anything else reads them.

Over HTTP the request body is capped before it is parsed (memcore/mcp/http.py); these hold
for every MCP transport: the encoded arguments may not exceed ``max_request_bytes`` and no list
anywhere in them may hold more than ``max_items`` entries (a model looping on a batch call
should be told to split it, not make the server embed ten thousand texts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memcore.errors import PayloadTooLargeError

# Nesting deeper than this is refused outright; JSON from a model is never this deep and
# walking it would only cost stack.
_MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class Limits:
    """The per-call limits."""

    max_request_bytes: int = 1_048_576
    max_items: int = 1000

    def check(self, arguments: dict[str, Any] | None) -> None:
        """Refuse arguments over a limit.

        Raises:
            PayloadTooLargeError: Too many bytes, too many items in a list, or too deep;
                ``details`` names the field and the limit.
        """
        if not arguments:
            return
        # Shape first: it bounds the depth before the encoder recurses through it.
        self._walk(arguments, "", 0)
        size = len(json.dumps(arguments, ensure_ascii=False).encode())
        if size > self.max_request_bytes:
            raise _too_large(
                "arguments",
                f"The arguments are {size} bytes; the limit is {self.max_request_bytes}. "
                "Send less text per call.",
                limit=self.max_request_bytes,
            )

    def _walk(self, value: Any, where: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _too_large(where, f"{where} is nested too deeply.", limit=_MAX_DEPTH)
        if isinstance(value, list):
            if len(value) > self.max_items:
                raise _too_large(
                    where,
                    f"{where} has {len(value)} items; the limit is {self.max_items}. "
                    "Split it over several calls.",
                    limit=self.max_items,
                )
            for i, item in enumerate(value):
                self._walk(item, f"{where}[{i}]", depth + 1)
        elif isinstance(value, dict):
            for key, item in value.items():
                self._walk(item, f"{where}.{key}" if where else str(key), depth + 1)


def _too_large(field: str, message: str, *, limit: int) -> PayloadTooLargeError:
    err = PayloadTooLargeError(message)
    err.details = {"field": field, "limit": limit}
    return err
