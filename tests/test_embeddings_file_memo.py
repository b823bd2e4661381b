"""The memo of model-file facts (python/memcore/embeddings/file_memo.py): measured once per
file version, remembered across processes, measured again when the file changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memcore.embeddings.file_memo import MEMO_FILE, remembered, sha256_of


class Counting:
    """A measure that counts its calls: the file's length in bytes."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, path: Path) -> int:
        self.calls += 1
        return len(path.read_bytes())


def _graph(folder: Path, name: str = "model.onnx", body: bytes = b"weights") -> Path:
    path = folder / name
    path.write_bytes(body)
    return path


def test_a_fact_is_measured_once_then_read_from_the_memo(tmp_path: Path) -> None:
    graph, memo, size = _graph(tmp_path), tmp_path / "cache", Counting()
    assert remembered(graph, {"size": (int, size)}, folder=memo) == {"size": 7}
    assert remembered(graph, {"size": (int, size)}, folder=memo) == {"size": 7}
    assert size.calls == 1
    # Another fact of the same file joins the entry; the first is not measured again.
    both = {"size": (int, size), "digest": (str, sha256_of)}
    assert remembered(graph, both, folder=memo)["digest"] == sha256_of(graph)
    assert size.calls == 1
    entry = json.loads((memo / MEMO_FILE).read_text())[str(graph.absolute())]
    assert set(entry) == {"stamp", "size", "digest"}


def test_a_file_changed_in_place_is_measured_again(tmp_path: Path) -> None:
    graph, memo, size = _graph(tmp_path), tmp_path / "cache", Counting()
    remembered(graph, {"size": (int, size)}, folder=memo)
    graph.write_bytes(b"other weights")
    stat = graph.stat()
    os.utime(graph, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert remembered(graph, {"size": (int, size)}, folder=memo) == {"size": 13}
    assert size.calls == 2


def test_a_damaged_memo_only_costs_a_measurement(tmp_path: Path) -> None:
    graph, memo, size = _graph(tmp_path), tmp_path / "cache", Counting()
    memo.mkdir()
    (memo / MEMO_FILE).write_text("{not json")
    assert remembered(graph, {"size": (int, size)}, folder=memo) == {"size": 7}
    # A value of the wrong type is measured again, not trusted.
    known = json.loads((memo / MEMO_FILE).read_text())
    known[str(graph.absolute())]["size"] = "seven"
    (memo / MEMO_FILE).write_text(json.dumps(known))
    assert remembered(graph, {"size": (int, size)}, folder=memo) == {"size": 7}
    assert size.calls == 2


def test_nothing_is_written_unless_kept_and_gone_files_are_forgotten(tmp_path: Path) -> None:
    memo, size = tmp_path / "cache", Counting()
    skipped = _graph(tmp_path, "skipped.onnx")
    remembered(skipped, {"size": (int, size)}, folder=memo, keep=lambda _: False)
    assert not memo.exists()
    gone, kept = _graph(tmp_path, "gone.onnx"), _graph(tmp_path, "kept.onnx")
    remembered(gone, {"size": (int, size)}, folder=memo)
    gone.unlink()
    remembered(kept, {"size": (int, size)}, folder=memo)
    assert list(json.loads((memo / MEMO_FILE).read_text())) == [str(kept.absolute())]
