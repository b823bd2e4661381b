"""Line-window arithmetic shared by the fallback chunker and the splitting of long nodes."""

from __future__ import annotations


def window_ranges(
    start: int, end: int, *, max_lines: int, window: int, overlap: int
) -> list[tuple[int, int]]:
    """Split the inclusive line range ``start..end`` into overlapping windows.

    A range of at most ``max_lines`` lines stays whole. Otherwise windows of ``window``
    lines advance by ``window - overlap``; a final stub that would repeat almost only
    overlap is folded into the previous window when that stays within ``max_lines``.

    Args:
        start: First line (any base).
        end: Last line, inclusive.
        max_lines: Largest range kept in one piece.
        window: Lines per window.
        overlap: Lines shared by consecutive windows (``0 <= overlap < window``).

    Returns:
        Inclusive ``(first, last)`` pairs in order, covering every line of the range.
    """
    if end - start + 1 <= max_lines:
        return [(start, end)]
    step = window - overlap
    ranges: list[tuple[int, int]] = []
    first = start
    while True:
        last = min(first + window - 1, end)
        if end - last <= overlap and end - first + 1 <= max_lines:
            ranges.append((first, end))
            return ranges
        ranges.append((first, last))
        if last >= end:
            return ranges
        first += step
