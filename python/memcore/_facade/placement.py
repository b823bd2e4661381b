"""Which node serves a namespace: memcore's fixed namespace hash and the
``--namespace-range`` form, from the core (rust/memcore/src/pg/placement.rs), so the
command line, a node and an operator's proxy map place a namespace alike."""

from __future__ import annotations

from memcore import _core


def namespace_bucket(namespace: str, buckets: int) -> int:
    """The bucket of ``namespace`` among ``buckets``: the first 8 bytes of the SHA-256
    of its UTF-8 bytes, big-endian, modulo ``buckets``. Fixed forever.

    Raises:
        ValueError: ``buckets`` below 1.
    """
    if buckets < 1:
        raise ValueError("buckets must be at least 1")
    return _core.namespace_bucket(namespace, buckets)


def parse_namespace_range(text: str) -> tuple[int, int, int]:
    """``(lo, hi, buckets)`` of ``LO-HI/BUCKETS``, e.g. ``0-49/100``.

    Raises:
        InvalidParameterError: Not of that form, or LO > HI, HI >= BUCKETS, BUCKETS out
            of bounds; the message shows the form.
    """
    return _core.parse_namespace_range(text)
