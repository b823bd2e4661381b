"""Random damage of a data folder's files, and a PostgreSQL node's replica opened where its
database is not (the ``damage`` and ``replicas`` phases of ``python -m benches.reliability``,
a few trials each, picked rather than drawn so the same files are hit every run): nothing
is served wrong without a word, and nothing crashes.

The picks are the damage a crash leaves most exposed: the write-ahead log of a writer that
died with its last writes in it, deleted or cut short (refused: its shared-memory index
records frames the log no longer has; store/health.rs), its frames flipped (refused: frames
past a damaged one are committed), and each derived index damaged (healed: rebuilt from the
database)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from benches.reliability import damage, replicas
from benches.reliability.results import Recorder, load

PICKS = [
    ("memcore.db-wal", "delete", {"refused"}),
    # A cut inside the log's frames is refused; one inside the frames of an older log left
    # behind a restarted one (the log restarts after a checkpoint) loses nothing.
    ("memcore.db-wal", "truncate", {"refused", "opened_correct"}),
    ("memcore.db-shm", "garbage_block", {"opened_correct"}),
    # An index file is healed, or, when the crash left it outside the index's last commit
    # (a segment being written or merged away), it was never read: opened correct.
    ("index/text", "delete", {"healed", "opened_correct"}),
    ("index/vectors", "garbage_block", {"healed", "opened_correct"}),
]


@pytest.mark.slow
def test_picked_damage_after_a_crash_is_refused_or_healed_never_served(tmp_path: Path) -> None:
    made = damage.templates(tmp_path)
    template, expected = made["crashed"]
    rng = random.Random(43)
    for group, kind, outcomes in PICKS:
        result = damage.trial(template, expected, tmp_path / "trial", rng, pick=(group, kind))
        assert result["outcome"] in outcomes, result
        if result["outcome"] == "refused":
            assert result["code"] == "STORAGE_ERROR", result
            # Refused again on a second open, then made sound by repair --accept-empty.
            assert "repair_failed" not in result, result
    # The index folder of a cleanly closed store deleted outright: rebuilt, all there.
    template, expected = made["closed"]
    result = damage.trial(
        template, expected, tmp_path / "trial", rng, pick=("index/text", "delete")
    )
    assert result["outcome"] in ("healed", "opened_correct"), result


@pytest.mark.slow
def test_a_few_random_trials_are_counted_in_the_report(tmp_path: Path) -> None:
    counts = damage.run(tmp_path / "run", trials=6, seed=7)
    assert sum(counts["outcomes"].values()) == 6, counts
    assert counts["outcomes"]["crash"] == 0, counts
    Recorder(tmp_path / "out", mode="custom").phase("damage", counts)
    assert load(tmp_path / "out" / "reliability.json")["damage"]["trials"] == 6
    report = (tmp_path / "out" / "reliability.md").read_text()
    assert "| random damage of every file | 6 trials" in report
    assert "## Damage by file" in report


@pytest.mark.slow
def test_a_round_of_replica_trials_never_serves_another_database(tmp_path: Path) -> None:
    counts = replicas.run(tmp_path / "replicas", rounds=1)
    if "skipped" in counts:
        # As tests/conftest.py's pg_cluster: under CI a missing PostgreSQL is a failure.
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(counts["skipped"])
        pytest.skip(counts["skipped"])
    assert counts["outcomes"]["served_wrong"] == 0, counts
    assert counts["trials"] == 10, counts
    # The named folder is refused in every scenario; a default folder keyed by the
    # database's identity is another database's own folder, or refused.
    assert all(c.get("refused", 0) >= 1 for c in counts["per_scenario"].values()), counts
