"""SQLite → PostgreSQL → SQLite through the export/import path keeps every record as it
was: ids, times, links and vectors (docs/scale-out.md).

A PostgreSQL node refuses a write spanning several namespaces (the log orders each
namespace alone) and an import batch is one write, so the SQLite store is exported one
namespace at a time and each file imported into PostgreSQL on its own. Coming back, one
export of the whole PostgreSQL store goes into a fresh SQLite store in one import.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from filled_store import _letters, fill_store
from memcore._facade.transfer import TransferError, export_store, import_store

NAMESPACES = ("default", "other")


def _open(path: str | Path, **node: Any) -> memcore.Memory:
    mem = memcore.Memory(path, embedder=_letters, **node)
    assert mem.embeddings is not None and mem.embeddings.wait_ready(30)
    return mem


def _export(mem: memcore.Memory, namespace: str | None = None) -> list[dict[str, Any]]:
    """The store's records as the export writes them, header and end line left out."""
    out = io.StringIO()
    export_store(mem, out, namespace=namespace, with_vectors=True)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "end"
    return lines[1:-1]


def _import(mem: memcore.Memory, records: list[dict[str, Any]], header: dict[str, Any]) -> None:
    lines = [json.dumps(header), *map(json.dumps, records)]
    counts: dict[str, int] = {}
    for record in records:
        counts[record["type"]] = counts.get(record["type"], 0) + 1
    lines.append(json.dumps({"type": "end", "counts": counts}))
    report = import_store(mem, [line.encode() + b"\n" for line in lines], embed=False)
    assert report.restored == len(records), report


def _header(mem: memcore.Memory, namespace: str | None) -> dict[str, Any]:
    out = io.StringIO()
    export_store(mem, out, namespace=namespace, with_vectors=True)
    header: dict[str, Any] = json.loads(out.getvalue().splitlines()[0])
    return header


def _comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without the one field a restore cannot keep: a project's status row says
    when it was last written, and restoring writes it (as in tests/test_cli.py)."""
    return [
        {k: v for k, v in r.items() if (r["type"], k) != ("project", "updated_at")} for r in records
    ]


def _vector(encoded: str) -> npt.NDArray[np.float32]:
    return np.frombuffer(base64.b64decode(encoded), dtype="<f4")


def _close_vectors(got: Any, want: Any) -> bool:
    if not isinstance(got, str) or not isinstance(want, str):
        return False
    return bool(np.allclose(_vector(got), _vector(want), rtol=0, atol=1e-6))


def _differences(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> list[str]:
    """Field by field: every (record, field) whose value differs, and missing records."""
    found = []
    if len(got) != len(want):
        found.append(f"{len(got)} records, expected {len(want)}")
    for a, b in zip(_comparable(got), _comparable(want), strict=False):
        for key in sorted(set(a) | set(b)):
            # The core normalises a vector as it stores it; doing it again may move the
            # last bit (as between two SQLite stores, tests/test_cli.py).
            if key == "vector_b64" and _close_vectors(a.get(key), b.get(key)):
                continue
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                where = f"{b['type']} {b.get('id') or b.get('memory_id')}"
                found.append(f"{where}: {key} = {a.get(key, '<absent>')!r}, was {b.get(key)!r}")
    return found


def test_sqlite_to_postgresql_to_sqlite_keeps_every_record(
    pg_database: str, tmp_path: Path
) -> None:
    (tmp_path / "project").mkdir()
    with _open(tmp_path / "source") as source:
        fill_store(source, tmp_path / "project")
        original = _export(source)
        per_namespace = {ns: (_header(source, ns), _export(source, ns)) for ns in NAMESPACES}
    kinds = {r["type"] for r in original}
    assert {"memory", "entity", "relation"} <= kinds
    assert {"code_chunk", "project", "observation", "mention", "turn"} <= kinds
    assert {r["type"] for r in original if "vector_b64" in r} >= {"memory", "code_chunk"}
    assert {r["namespace"] for r in original if "namespace" in r} == set(NAMESPACES)
    assert sum(len(records) for _, records in per_namespace.values()) == len(original)

    with _open(pg_database, replica_dir=tmp_path / "node") as node:
        whole = _header(node, None) | {"embedding": per_namespace["default"][0]["embedding"]}
        with pytest.raises(TransferError) as refused:
            _import(node, original, whole)
        assert "Write each namespace on its own" in str(refused.value)
        assert _export(node) == [], "the refused batch wrote nothing"
        for header, records in per_namespace.values():
            _import(node, records, header)
        through_postgres = _export(node)
        header = _header(node, None)
    assert _differences(through_postgres, original) == []

    # A second node built from PostgreSQL's tables holds the same records.
    with _open(pg_database, replica_dir=tmp_path / "second") as second:
        assert _differences(_export(second), original) == []

    with _open(tmp_path / "back") as back:
        _import(back, through_postgres, header)
        assert _differences(_export(back), original) == []
        assert [h.memory.content for h in back.search_text("user")] == ["User moved to Austin"]
        assert back.search_code("login", project_id="proj")[0].file_path == "auth.py"
