"""Migrating from the reference MCP memory server: its ``memory.json`` (JSON Lines of
entities and relations) imports into memcore's graph, line by line, idempotently, with odd
lines reported by number and skipped without leaving anything half-written."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends import Backend
from embeddings_support.models import MINILM_DIR, require_model
from memcore import Memory
from memcore._facade.reference_import import import_reference_graph
from memcore._facade.transfer import export_store
from memcore.cli import commands as cli

TEXT_ONLY = ["--model", "none"]


def _line(value: Any) -> str:
    return json.dumps(value)


def entity(name: str, kind: str, *observations: str) -> str:
    return _line(
        {"type": "entity", "name": name, "entityType": kind, "observations": list(observations)}
    )


def relation(source: str, target: str, kind: str) -> str:
    return _line({"type": "relation", "from": source, "to": target, "relationType": kind})


#: A reference-server file with every kind of odd line; comments give the line numbers.
ODD_FILE = "\n".join(
    [
        relation("Ada", "Charles", "worked with"),  # 1: before the entities it links
        entity("Ada", "person", "Wrote the first program", "Born in London in 1815"),  # 2
        "",  # 3: blank
        "{not json",  # 4
        _line(["an", "array"]),  # 5: JSON, not an object
        _line({"type": "memory", "content": "x"}),  # 6: unknown type
        _line({"type": "entity", "entityType": "person", "observations": []}),  # 7: no name
        entity("ada", "person", "A duplicate entity line"),  # 8: duplicate (case-insensitive)
        entity("Charles", "person", "Designed the Analytical Engine"),  # 9
        entity("Tooling", "topic", "x" * 200),  # 10: observation breaks the 150-char rule
        relation("Ada", "Charles", "worked with"),  # 11: duplicate relation
        relation("Ada", "Nobody", "knows"),  # 12: unknown target
        _line({"type": "relation", "from": "Ada", "to": "Charles"}),  # 13: no relationType
        _line({"type": "entity", "name": "Eve", "entityType": "person", "observations": "x"}),
        relation("Charles", "Ada", "mentored"),  # 15
    ]
)


@pytest.fixture
def memory(backend: Backend, tmp_path: Path) -> Iterator[Memory]:
    with backend.open(tmp_path / "store", model=None) as mem:
        yield mem


def _records(memory: Memory) -> list[str]:
    """Every record of the store, as exported (the header's export time left out)."""
    out = io.StringIO()
    export_store(memory, out)
    return out.getvalue().splitlines()[1:]


def test_odd_lines_are_reported_and_skipped(memory: Memory) -> None:
    report = import_reference_graph(memory, io.BytesIO(ODD_FILE.encode()))

    reasons = {s.line: s.reason for s in report.skipped}
    assert sorted(reasons) == [3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14]
    assert reasons[3] == "blank line"
    assert reasons[4].startswith("not JSON")
    assert reasons[5] == "not a JSON object"
    assert "unknown type 'memory'" in reasons[6]
    assert "without 'name'" in reasons[7]
    assert "already appears on line 2" in reasons[8]
    assert reasons[10].startswith("VALIDATION_FAILED") and "too long" in reasons[10]
    assert "already appears on line 1" in reasons[11]
    assert (
        reasons[12].startswith("NOT_FOUND")
        and "neither in the file nor in the store" in (reasons[12])
    )
    assert "without 'relationType'" in reasons[13]
    assert "list of strings" in reasons[14]
    assert [s.line for s in report.rejected] == [4, 5, 6, 7, 8, 10, 11, 12, 13, 14]

    assert (report.entities_created, report.observations_added) == (2, 3)
    assert (report.relations_created, report.relations_existing) == (2, 0)
    ada = memory.get_entity("Ada")
    assert [o.content for o in ada.observations] == [
        "Wrote the first program",
        "Born in London in 1815",
    ]
    assert sorted((r.from_name, r.relation_type, r.to_name) for r in ada.relations) == [
        ("Ada", "worked with", "Charles"),
        ("Charles", "mentored", "Ada"),
    ]
    # A rejected line leaves nothing behind: no entity without its observation.
    assert [v.entity.name for v in memory.open_nodes(["Tooling", "Eve"]).entities] == []


def test_importing_twice_changes_nothing(memory: Memory) -> None:
    source = "\n".join(
        [
            entity("Ada", "person", "Wrote the first program"),
            entity("Charles", "person", "Designed the Analytical Engine"),
            relation("Ada", "Charles", "worked with"),
        ]
    )
    first = import_reference_graph(memory, source.splitlines())
    assert (first.entities_created, first.relations_created, first.skipped) == (2, 1, [])
    before = _records(memory)

    again = import_reference_graph(memory, source.splitlines())
    assert (again.entities_created, again.entities_existing) == (0, 2)
    assert (again.observations_added, again.relations_created, again.relations_existing) == (
        0,
        0,
        1,
    )
    assert _records(memory) == before


def test_a_second_import_adds_only_what_is_new(memory: Memory) -> None:
    import_reference_graph(memory, [entity("Ada", "person", "Wrote the first program")])
    report = import_reference_graph(
        memory,
        [
            entity("Ada", "person", "Wrote the first program", "Loved poetry and maths"),
            entity("Byron", "person", "Was a poet"),
            relation("Byron", "Ada", "is father of"),
        ],
    )
    assert (report.entities_created, report.entities_existing) == (1, 1)
    assert (report.observations_added, report.relations_created) == (2, 1)
    assert [o.content for o in memory.get_entity("Ada").observations] == [
        "Wrote the first program",
        "Loved poetry and maths",
    ]


def test_relations_may_point_at_entities_already_stored(memory: Memory) -> None:
    memory.create_entity("Charles", "person", ["Designed the Analytical Engine"])
    report = import_reference_graph(
        memory, [entity("Ada", "person"), relation("Ada", "Charles", "worked with")]
    )
    assert (report.relations_created, report.skipped) == (1, [])


def test_observations_are_counted_as_stored(memory: Memory) -> None:
    line = entity("Ada", "person", "Wrote the first program", "Wrote the first program")
    report = import_reference_graph(memory, [line])
    assert (report.entities_created, report.observations_added) == (1, 1)
    assert memory.get_entity("Ada").observation_count == 1


def test_imported_entities_are_found_by_meaning(backend: Backend, tmp_path: Path) -> None:
    """With the real model, imported entities and observations are embedded like any
    other write, so semantic graph search finds them."""
    with backend.open(tmp_path / "store", model_path=require_model(MINILM_DIR)) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(60)
        source = [
            entity("Ada", "person", "Wrote the first computer program"),
            entity("Lisbon", "city", "Capital of Portugal on the Tagus river"),
            relation("Ada", "Lisbon", "never visited"),
        ]
        assert import_reference_graph(mem, source).skipped == []
        hits = mem.search_nodes("who was the earliest software author?", limit=1)
        assert [h.name for h in hits] == ["Ada"]
        # A re-import embeds nothing new and writes nothing.
        again = import_reference_graph(mem, source)
        assert (again.entities_existing, again.observations_added) == (2, 0)


# -- the command -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """The CLI installs its stderr log handler on the root logger; undo that per test."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.captureWarnings(False)


def test_the_command_imports_into_a_namespace_and_reports_lines(
    backend: Backend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory.json"
    path.write_text(ODD_FILE + "\n", encoding="utf-8")
    store = [*backend.cli_store(tmp_path / "store"), *TEXT_ONLY]
    argv = ["import", "--from-reference-server", str(path), "--namespace", "team", *store]

    assert cli.main(argv) == 1  # some lines need a fix
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["entities"] == {"created": 2, "existing": 0}
    assert report["relations"] == {"created": 2, "existing": 0}
    assert [s["line"] for s in report["skipped"]][:3] == [3, 4, 5]
    assert "namespace 'team': 2 entities created" in captured.err
    assert "see them with `memcore graph search QUERY --namespace team`" in captured.err
    assert "line 10 skipped: VALIDATION_FAILED" in captured.err

    assert cli.main(argv) == 1
    again = json.loads(capsys.readouterr().out)
    assert again["entities"] == {"created": 0, "existing": 2}
    assert again["relations"] == {"created": 0, "existing": 2}
    with backend.open(tmp_path / "store", model=None) as mem:
        assert mem.get_entity("Ada", namespace="team").observation_count == 2
        assert mem.open_nodes(["Ada"]).entities == []  # nothing in the default namespace
    # What the summary says to run shows the imported entities.
    opened = cli.main(["graph", "open", "Ada", "--namespace", "team", *store])
    assert opened == 0
    assert [e["name"] for e in json.loads(capsys.readouterr().out)["entities"]] == ["Ada"]


def test_the_command_refuses_flags_that_do_not_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory.json"
    path.write_text(entity("Ada", "person") + "\n", encoding="utf-8")
    status = cli.main(
        ["import", "--from-reference-server", str(path), "--skip-existing", *TEXT_ONLY]
    )
    assert status == 2
    assert "--skip-existing does not apply to --from-reference-server" in capsys.readouterr().err


def test_a_plain_import_of_such_a_file_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory.json"
    path.write_text(entity("Ada", "person") + "\n", encoding="utf-8")
    status = cli.main(["import", str(path), "--data-dir", str(tmp_path / "s"), *TEXT_ONLY])
    assert status == 1
    err = capsys.readouterr().err
    assert "knowledge-graph file of the reference memory server" in err
    assert err.rstrip().endswith("import it with --from-reference-server")
