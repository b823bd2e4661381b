"""benches.pg without PostgreSQL: the run says so and exits 0, writing no results (so a
machine without PostgreSQL never overwrites benches/results/pg.md with nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from benches.pg.__main__ import main


def test_the_pg_bench_skips_cleanly_without_postgresql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMCORE_PG_BINDIR", str(tmp_path / "no-postgres-here"))
    out = tmp_path / "results"
    assert main(["--quick", "--out", str(out)]) == 0
    assert "PostgreSQL is not installed" in capsys.readouterr().out
    assert not out.exists()
