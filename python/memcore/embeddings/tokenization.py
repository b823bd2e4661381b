"""Tokenizer loading with memcore's overrides, and padding of token batches.

Imported only by the loader thread (through :mod:`onnx_model`), so ``tokenizers`` is never
imported on the path that constructs a service.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from tokenizers import Tokenizer

IntMatrix = NDArray[np.int64]

_PAD_TOKENS = ("[PAD]", "<pad>")


class TextTokenizer:
    """A ``tokenizer.json`` set up for embedding.

    The file's own truncation and padding are replaced: upstream files often bake in a fixed
    length (MiniLM's says 128, padded to 128), which truncates too early and wastes compute
    on padding. Truncation is set to the model's ``max_length`` and padding is done here,
    per batch, to the batch's longest row.

    A second instance without truncation counts tokens, so that budgets computed from
    :meth:`count` see a long text's real length rather than the truncated one; it is made at
    the first count (parsing ``tokenizer.json`` again took 20 ms of every model load, and
    only ``Memory.count_tokens`` counts). Callers may
    ask for a shorter truncation per call (:meth:`encode`'s ``max_length``); each shorter
    length gets its own copy of the tokenizer, since changing a shared tokenizer's
    truncation would race with concurrent encodes.
    """

    def __init__(self, path: Path, *, max_length: int, add_special_tokens: bool) -> None:
        """Load the tokenizer.

        Args:
            path: The ``tokenizer.json``.
            max_length: Truncation length in tokens (special tokens included).
            add_special_tokens: Whether to add [CLS]/[SEP]-style tokens when encoding.
        """
        encoder = Tokenizer.from_file(str(path))
        self.pad_id = _pad_id(encoder)
        encoder.no_padding()
        encoder.enable_truncation(max_length)
        self.max_length = max_length
        self._encoder = encoder
        self._counter: Tokenizer | None = None
        self._add_special_tokens = add_special_tokens
        # Below this, the tokenizers library cannot fit the special tokens and silently
        # stops truncating; shorter requests are raised to it.
        self._min_length = encoder.num_special_tokens_to_add(False) + 1 if add_special_tokens else 1
        self._shorter: dict[int, Tokenizer] = {}
        self._copies_lock = threading.Lock()

    def encode(self, texts: Sequence[str], max_length: int | None = None) -> list[list[int]]:
        """Token ids of each text, truncated, unpadded.

        Args:
            texts: The texts.
            max_length: Truncate at this many tokens (special tokens included) instead of
                the model's own length; ignored when not shorter than it, and raised to the
                special tokens plus one when below that.
        """
        encoder = self._encoder_for(max_length)
        # The fast variant skips character offsets, which embedding never needs.
        encodings = encoder.encode_batch_fast(
            list(texts), add_special_tokens=self._add_special_tokens
        )
        return [encoding.ids for encoding in encodings]

    def _encoder_for(self, max_length: int | None) -> Tokenizer:
        if max_length is None or max_length >= self.max_length:
            return self._encoder
        length = max(max_length, self._min_length)
        with self._copies_lock:
            encoder = self._shorter.get(length)
            if encoder is None:
                encoder = Tokenizer.from_str(self._encoder.to_str())
                encoder.no_padding()
                encoder.enable_truncation(length)
                self._shorter[length] = encoder
        return encoder

    def count(self, text: str) -> int:
        """Tokens in ``text`` without special tokens and without truncation."""
        counter = self._counter
        if counter is None:
            with self._copies_lock:
                counter = self._counter
                if counter is None:
                    counter = Tokenizer.from_str(self._encoder.to_str())
                    counter.no_padding()
                    counter.no_truncation()
                    self._counter = counter
        return len(counter.encode(text, add_special_tokens=False).ids)

    def pad(self, rows: Sequence[Sequence[int]]) -> tuple[IntMatrix, IntMatrix]:
        """Pad token rows to the longest one.

        Returns:
            ``(input_ids, attention_mask)``, both ``(len(rows), width)`` int64. The width is
            at least 1, so a batch of empty texts still makes a valid graph input.
        """
        width = max((len(row) for row in rows), default=0) or 1
        input_ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        attention_mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            input_ids[i, : len(row)] = row
            attention_mask[i, : len(row)] = 1
        return input_ids, attention_mask


def _pad_id(tokenizer: Tokenizer) -> int:
    padding = tokenizer.padding
    if padding is not None and isinstance(padding.get("pad_id"), int):
        return int(padding["pad_id"])
    for token in _PAD_TOKENS:
        token_id = tokenizer.token_to_id(token)
        if token_id is not None:
            return token_id
    # Padded positions are masked out, so the id only has to be a valid vocabulary entry.
    return 0
