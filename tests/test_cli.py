"""The ``memcore`` command: quick store/search/recall/status from a shell with the same JSON
the MCP tools return, the model listing, bearer-token management, and JSON Lines export
and import that round-trip every record type with its ids, times, links and vectors."""

from __future__ import annotations

import argparse
import base64
import json
import logging
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import memcore
from backends import Backend, sqlite_only
from embeddings_support.models import MINILM_DIR
from filled_store import _letters, fill_store
from memcore import Memory
from memcore.cli import commands as cli
from memcore.cli import main as memcore_command
from memcore.settings.tokens import digest, load

REPO_ROOT = Path(__file__).resolve().parents[1]
TEXT_ONLY = ["--model", "none"]


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """The CLI installs its stderr log handler on the root logger; undo that per test."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.captureWarnings(False)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "store"
    monkeypatch.setenv("MEMCORE_DATA_DIR", str(path))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    return json.loads(out)


def test_store_search_recall_and_status(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    made = run_json(capsys, "store", "User prefers TypeScript", "--source", "explicit", *TEXT_ONLY)
    assert set(made) == {"id", "created", "similar", "action_required", "embedding"}
    assert made["created"]["source"] == "explicit" and made["embedding"] == "none"
    run_json(capsys, "store", "User lives in Lisbon", "--thread-id", "t1", *TEXT_ONLY)
    week = run_json(capsys, "store", "User is in Oslo this week", "--tier", "L2", *TEXT_ONLY)
    assert week["created"]["tier"] == "L2" and week["created"]["expires_at"]

    found = run_json(capsys, "search", "typescript", "--text", *TEXT_ONLY)
    assert [r["id"] for r in found["results"]] == [made["id"]]
    recalled = run_json(capsys, "recall", "where does the user live", "--limit", "1", *TEXT_ONLY)
    assert recalled["results"][0]["content"] == "User lives in Lisbon"
    scoped = run_json(capsys, "recall", "user", "--thread-id", "t1", *TEXT_ONLY)
    assert [r["content"] for r in scoped["results"]] == ["User lives in Lisbon"]

    status = run_json(capsys, "status", *TEXT_ONLY)
    assert status["counts"] == {"memories": 3}
    assert status["store"]["path"] == str(store)


def test_recall_spreads_across_threads(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for text, thread in (("plum plum plum jam", "a"), ("plum plum tart", "a"), ("a plum", "b")):
        run_json(capsys, "store", text, "--thread-id", thread, *TEXT_ONLY)

    def threads(*extra: str) -> list[str]:
        found = run_json(capsys, "recall", "plum", *extra, *TEXT_ONLY)["results"]
        return [r["thread_id"] for r in found]

    assert threads() == ["a", "a", "b"]
    assert threads("--max-per-thread", "1") == ["a", "b", "a"]


def test_semantic_search_with_the_real_model(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not (MINILM_DIR / "model.onnx").is_file():
        pytest.skip(f"test model not found at {MINILM_DIR}")
    model = ["--model-path", str(MINILM_DIR)]
    run_json(capsys, "store", "The cat sleeps on the sofa", *model)
    run_json(capsys, "store", "Quarterly taxes are due in April", *model)
    found = run_json(capsys, "search", "where does the kitten nap?", "--limit", "1", *model)
    assert found["results"][0]["content"] == "The cat sleeps on the sofa"
    assert run_json(capsys, "status", *model)["embedding"]["status"] == "ready"


def test_errors_are_reported_with_their_code(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "recall", "x", "--limit", "99", *TEXT_ONLY)
    assert (status, out) == (1, "")
    assert "INVALID_PARAMETER: limit must be from 1 to 50" in err
    status, _, err = run(capsys, "store", "x", "--cache-size", "many")
    assert status == 2 and "Invalid --cache-size 'many'" in err


def test_the_cli_reads_and_writes_beside_a_running_server(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Memory(store, model=None) as server:
        server.store_memory("Written by the server")
        status, out, err = run(capsys, "search", "server", "--text", *TEXT_ONLY)
        assert status == 0 and err == ""
        assert json.loads(out)["results"][0]["content"] == "Written by the server"
        made = run_json(capsys, "store", "Written by the CLI", *TEXT_ONLY)
        assert server.get_memory(made["id"]).content == "Written by the CLI"


def test_reads_fall_back_to_read_only_beside_a_sole_writer(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Memory(store, model=None) as writer:
        writer.store_memory("Written by the server")
    sole = memcore._core.Engine(str(store), shared=False)  # a PostgreSQL replica's way
    try:
        status, out, err = run(capsys, "search", "server", "--text", *TEXT_ONLY)
        assert json.loads(out)["results"][0]["content"] == "Written by the server"
        assert err == "memcore: the store is in use by another process; reading it read-only\n"
        status, _, err = run(capsys, "store", "x", *TEXT_ONLY)
        assert status == 1 and err.startswith("memcore: error: RESOURCE_BUSY")
    finally:
        sole.close()


def test_models_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    models = run_json(capsys, "models", "--json")
    assert [m["name"] for m in models] == ["minilm", "e5_small", "e5_multi", "nomic", "bge_m3"]
    assert next(m for m in models if m["default"])["name"] == "minilm"
    status, out, _ = run(capsys, "models")
    assert status == 0 and "minilm" in out


# -- export / import ---------------------------------------------------------------------------


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines[0], lines[1:-1], lines[-1]


def _comparable(
    records: list[dict[str, Any]], drop: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """Records without the fields a round trip cannot keep: a project's status row says
    when it was last written, and restoring writes it."""
    return [
        {
            k: v
            for k, v in r.items()
            if k not in drop and (r["type"], k) != ("project", "updated_at")
        }
        for r in records
    ]


def _vector(record: dict[str, Any]) -> npt.NDArray[np.float32]:
    return np.frombuffer(base64.b64decode(record["vector_b64"]), dtype="<f4")


@pytest.fixture
def filled(backend: Backend, tmp_path: Path) -> Path:
    """A store holding every record type."""
    (tmp_path / "project").mkdir()
    with backend.open(tmp_path / "a", model=None) as mem:
        fill_store(mem, tmp_path / "project")
    return tmp_path / "a"


def test_export_writes_every_record_type(
    backend: Backend, filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "export.jsonl"
    status, _, err = run(capsys, "export", str(out), *backend.cli_store(filled))
    assert status == 0 and "from every namespace" in err
    header, records, end = _read(out)
    assert (header["type"], header["format"], header["version"]) == ("header", "memcore-export", 2)
    assert header["namespace"] is None and header["with_vectors"] is False
    kinds = [r["type"] for r in records]
    assert kinds == sorted(kinds, key=header["kinds"].index)  # replay order
    assert set(kinds) == set(header["kinds"])  # every record type is there
    assert end == {"type": "end", "counts": {k: kinds.count(k) for k in header["kinds"]}}

    first = next(r for r in records if r.get("content") == "User lives in Seattle")
    assert first["event_time"] == "2024-01-01T10:00:00.123456Z"
    assert first["valid_from"] == "2024-01-01T00:00:00.000000Z"
    assert json.loads(first["metadata"]) == {"k": [1, "two"], "nested": {"x": 1.5}}
    assert first["superseded_by"] and first["valid_until"]
    turn = next(r for r in records if r["type"] == "turn" and r["turn_id"] == "t-1")
    assert turn["created_at"] == "2025-06-01T12:00:00.500000Z"
    assert [p["tool"] for p in turn["procedures"]] == ["READ", "EDIT"]
    assert turn["procedures"][1]["documents"][0]["content"] == "x"
    observations = [
        r for r in records if r["type"] == "observation" and r["entity_name"] == "Alice"
    ]
    assert sorted(o["version"] for o in observations) == [1, 1, 2]
    assert {r["type"] for r in records if "vector_b64" in r} == set()

    status, text, _ = run(capsys, "export", "-", "--namespace", "other", *backend.cli_store(filled))
    lines = [json.loads(line) for line in text.splitlines()]
    assert status == 0 and lines[0]["namespace"] == "other"
    assert [r.get("content") for r in lines[1:-1]] == ["Somebody else's fact"]


@sqlite_only("an import of several namespaces is one write spanning them, refused by name")
def test_export_import_round_trip_is_exact(
    backend: Backend, filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run(capsys, "export", str(first), *backend.cli_store(filled))[0] == 0
    status, _, err = run(
        capsys, "import", str(first), *backend.cli_store(tmp_path / "b"), *TEXT_ONLY
    )
    assert status == 0, err
    restored = len(_read(first)[1])
    assert f"imported {restored} records, skipped 0" in err
    assert run(capsys, "export", str(second), *backend.cli_store(tmp_path / "b"))[0] == 0
    assert _comparable(_read(second)[1]) == _comparable(_read(first)[1])

    with backend.open(tmp_path / "b", model=None) as mem:
        assert [h.memory.content for h in mem.search_text("user")] == ["User moved to Austin"]
        assert [r.name for r in mem.get_related("Alice", depth=1)] == ["Bob"]
        alice = mem.get_entity("Alice")
        current = next(o for o in alice.observations if o.version == 2)
        assert len(mem.get_observation_history("Alice", current.id)) == 2
        assert mem.get_turn("c1", "t-1").procedures[1].documents[0].provenance == "agent"
        assert mem.search_code("login", project_id="proj")[0].file_path == "auth.py"
        assert [p.project_id for p in mem.list_projects()] == ["proj"]
        assert mem.count_memories(namespace="other") == 1


def test_a_node_refuses_an_import_of_several_namespaces_by_name(
    pg_database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "two.jsonl"
    with Memory(tmp_path / "sqlite", model=None) as mem:
        mem.store_memory("a default fact")
        mem.store_memory("another tenant's fact", namespace="other")
    assert run(capsys, "export", str(source), "--data-dir", str(tmp_path / "sqlite"))[0] == 0
    node = ["--database-url", pg_database, "--data-dir", str(tmp_path / "node"), *TEXT_ONLY]
    status, _, err = run(capsys, "import", str(source), *node)
    assert status == 1
    assert 'changes "default", "other" and maybe more. Write each namespace on its own' in err
    with Memory(pg_database, replica_dir=tmp_path / "node", model=None) as mem:
        assert mem.count_memories() == 0, "nothing half-written"


def test_import_into_a_store_holding_the_ids(
    backend: Backend, filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "export.jsonl"
    assert run(capsys, "export", str(out), *backend.cli_store(filled))[0] == 0
    store = [*backend.cli_store(filled), *TEXT_ONLY]
    status, _, err = run(capsys, "import", str(out), *store)
    assert status == 1 and "already exists" in err and "lines 2-" in err
    # The advice is spelt as the command line spells it.
    assert "import with --skip-existing" in err and " skip_existing" not in err
    status, _, err = run(capsys, "import", str(out), "--skip-existing", *store)
    assert status == 0, err
    skipped = len(_read(out)[1])
    assert f"imported 0 records, skipped {skipped} already present" in err


def test_skipped_records_are_not_embedded(backend: Backend, tmp_path: Path) -> None:
    """With skip_existing, records the store holds are neither embedded nor counted as
    embedded: the report counts each record once, as restored or as skipped."""
    from memcore._facade.transfer import export_store, import_store

    with backend.open(tmp_path / "a", embedder=_letters) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(30)
        for text in ("User lives in Lisbon", "User likes tea", "User plays chess"):
            mem.store_memory(text)
        with (tmp_path / "t.jsonl").open("w") as out:
            export_store(mem, out)  # no vectors: an import embeds
        mem.delete_memory(mem.list_memories(limit=1)[0].id)
        with (tmp_path / "t.jsonl").open("rb") as source:
            report = import_store(mem, source, skip_existing=True)
        assert (report.restored, report.skipped, report.embedded) == (1, 2, 1)
        assert mem.count_memories() == 3


def test_status_fails_when_the_model_fails(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken-model"
    broken.mkdir()
    for name in ("model.onnx", "tokenizer.json", "config.json"):
        (broken / name).write_text("{}")
    status, out, err = run(capsys, "status", "--model-path", str(broken))
    assert status == 1
    assert json.loads(out)["embedding"]["status"] == "error"
    assert "memcore: the embedding model failed to load:" in err
    assert run(capsys, "status", *TEXT_ONLY)[0] == 0  # a text-only store is fine


def _parsers(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, Any]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                assert helps.get(name), f"{path} {name} has no help in the command list"
                yield from _parsers(sub, f"{path} {name}")


def test_every_command_option_and_argument_has_help() -> None:
    missing = []
    for path, parser in _parsers(cli._parser(), "memcore"):
        assert parser.description, f"{path} has no description"
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []
    top = cli._parser().format_help()
    assert "The ``memcore`` command" not in top
    assert "examples:" in top and "memcore import --from-reference-server" in top


@sqlite_only("an import of several namespaces is one write spanning them, refused by name")
def test_vectors_round_trip_or_are_recomputed(backend: Backend, tmp_path: Path) -> None:
    """In process, with a stand-in embedding function (the CLI only loads ONNX models)."""
    from memcore._facade.transfer import export_store, import_store

    (tmp_path / "project").mkdir()
    with backend.open(tmp_path / "a", embedder=_letters) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(30)
        fill_store(mem, tmp_path / "project")
        with (tmp_path / "v.jsonl").open("w") as out:
            export_store(mem, out, with_vectors=True)
        with (tmp_path / "t.jsonl").open("w") as out:
            export_store(mem, out)
    header, records, _ = _read(tmp_path / "v.jsonl")
    assert header["embedding"] == {"model": "custom:_letters", "dim": 26}
    assert header["vector_encoding"] == "f32le-base64"
    carried = {r["type"] for r in records if "vector_b64" in r}
    assert carried == {"memory", "entity", "observation", "turn", "code_chunk"}
    sample = next(r for r in records if r.get("content") == "User moved to Austin")
    np.testing.assert_allclose(_vector(sample), _letters(["User moved to Austin"])[0], atol=1e-6)

    # The same model: the file's vectors are kept (none computed).
    with backend.open(tmp_path / "b", embedder=_letters) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(30)
        with (tmp_path / "v.jsonl").open("rb") as source:
            report = import_store(mem, source)
        assert report.embedded == 0 and report.notes == []
        with (tmp_path / "b.jsonl").open("w") as out:
            export_store(mem, out, with_vectors=True)
        hits = mem.search("Austin moved user", limit=1)
        assert hits[0].memory.content == "User moved to Austin"
    again = _read(tmp_path / "b.jsonl")[1]
    vectors = frozenset({"vector_b64"})
    assert _comparable(again, vectors) == _comparable(records, vectors)
    for before, after in zip(records, again, strict=True):
        # The core normalises a vector as it stores it; doing it again may move the last bit.
        assert ("vector_b64" in before) == ("vector_b64" in after)
        if "vector_b64" in before:
            np.testing.assert_allclose(_vector(after), _vector(before), rtol=0, atol=1e-6)

    # No vectors in the file: the target's model embeds every record that has a text.
    with backend.open(tmp_path / "c", embedder=_letters) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(30)
        with (tmp_path / "t.jsonl").open("rb") as source:
            report = import_store(mem, source)
        texts = {"memory", "entity", "observation", "turn", "code_chunk"}
        # Every record with a text, also those the source had none for (an entity that
        # store_memory(entities=...) created is stored without a vector).
        assert report.embedded == sum(1 for r in records if r["type"] in texts)
        assert mem.search("Austin moved user", limit=1)[0].memory.content == "User moved to Austin"
        assert mem.search_nodes("works at initech", limit=1)[0].name == "Alice"

    # A text-only store without a model yet takes the file's model, so the vectors fit.
    with backend.open(tmp_path / "d", model=None) as mem:
        with (tmp_path / "v.jsonl").open("rb") as source:
            assert import_store(mem, source).embedded == 0
        hits = mem.search(vector=_letters(["Austin moved user"])[0], limit=1)
        assert hits[0].memory.content == "User moved to Austin"


def test_import_refuses_what_it_cannot_restore(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "bad.jsonl"
    header = {"type": "header", "format": "memcore-export", "version": 2}
    cases = [
        ([{"type": "header", "format": "something-else", "version": 1}], "not a memcore-export"),
        ([header, {"type": "spaceship"}], "line 2: record type 'spaceship' is not supported"),
        ([header, {"type": "memory", "id": "mem_x"}], "lines 2-2: record 0 is malformed"),
        ([header, {"type": "memory", "created_at": "last tuesday"}], "line 2: time is not"),
        ([header], "ends without its end line (truncated?)"),
        ([header, {"type": "end", "counts": {"memory": 2}}], "the end line counts"),
    ]
    for lines, message in cases:
        source.write_text("".join(json.dumps(line) + "\n" for line in lines))
        status, _, err = run(capsys, "import", str(source), *TEXT_ONLY)
        assert status == 1 and message in err, (message, err)
    source.write_text("{not json\n")
    assert "line 1 is not JSON" in run(capsys, "import", str(source), *TEXT_ONLY)[2]


def test_a_version_1_file_still_imports(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {
        "type": "memory",
        "id": "mem_01M80X9RRT1YT7PW6TQXC27SQC",
        "namespace": "default",
        "content": "Imported from version 1",
        "memory_type": "semantic",
        "source": "explicit",
        "confidence": 1.0,
        "importance": 0.5,
        "metadata": {"from": "v1"},
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "accessed_at": "2026-01-01T00:00:00Z",
        "valid_from": "2026-01-01T00:00:00Z",
    }
    source = tmp_path / "v1.jsonl"
    header = {"type": "header", "format": "memcore-export", "version": 1}
    source.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n")
    status, _, err = run(capsys, "import", str(source), *TEXT_ONLY)
    assert status == 0 and "imported 1 records" in err
    with Memory(store, model=None) as mem:
        stored = mem.get_memory(record["id"])
        assert stored.metadata == {"from": "v1"} and stored.source == "explicit"


# -- tokens, serve, the console script ----------------------------------------------------------


def test_auth_tokens_are_shown_once_and_stored_hashed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = tmp_path / "tokens.json"
    status, out, err = run(
        capsys, "auth", "add-token", "--namespace", "alice", "--auth-file", str(tokens)
    )
    token = out.strip()
    assert status == 0 and token.startswith("mct_") and "shown once" in err
    assert token not in tokens.read_text()
    (entry,) = load(tokens)
    assert (entry.sha256, entry.namespace, entry.admin) == (digest(token), "alice", False)
    assert tokens.stat().st_mode & 0o777 == 0o600

    status, out, _ = run(capsys, "auth", "list", "--auth-file", str(tokens))
    assert status == 0 and out.startswith(f"{entry.id}  alice")
    assert run(capsys, "auth", "revoke", entry.id, "--auth-file", str(tokens))[0] == 0
    assert load(tokens) == []
    assert run(capsys, "auth", "revoke", entry.id, "--auth-file", str(tokens))[0] == 1
    status, _, err = run(capsys, "auth", "list")
    assert status == 2 and "--auth-file" in err


def test_serve_is_the_server(capsys: pytest.CaptureFixture[str]) -> None:
    """The console script's entry point hands `serve` to the server's own parser."""
    with pytest.raises(SystemExit) as done:
        memcore_command(["serve", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: memcore serve") and "--transport" in out
    assert memcore_command(["serve", "--port", "0"]) == 2
    # The command line itself never runs the server (it does not import it).
    assert cli.main(["serve"]) == 2
    assert "memcore serve" in capsys.readouterr().err


def test_the_console_script(tmp_path: Path) -> None:
    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["memcore"] == "memcore.cli:main"
    result = subprocess.run(
        [sys.executable, "-m", "memcore.cli", "store", "from a shell", "--model", "none"],
        env={"MEMCORE_DATA_DIR": str(tmp_path / "s"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["created"]["content"] == "from a shell"
    assert result.stderr == ""


# -- index ---------------------------------------------------------------------------------

SOURCES = {
    "app/auth.py": "class Auth:\n    def login(self, user):\n        return user.token\n",
    "app/util.py": "def slugify(text):\n    return text.lower().replace(' ', '-')\n",
    "lib/parse.rs": "pub fn parse_header(line: &str) -> &str {\n    line\n}\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for rel, text in SOURCES.items():
        (tmp_path / "proj" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "proj" / rel).write_text(text, encoding="utf-8")
    return tmp_path / "proj"


def test_index_is_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["index", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: memcore index") and "--project-id" in out and "--watch" in out


def test_index_a_project_then_search_it(
    store: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run_json(capsys, "index", str(project), "--project-id", "cli", *TEXT_ONLY)
    assert (report["project_id"], report["root"]) == ("cli", str(project.resolve()))
    assert (report["files_scanned"], report["files_indexed"], report["embedded"]) == (3, 3, False)
    assert report["total_chunks"] >= 3  # one chunk per definition at least
    status, out, err = run(capsys, "index", str(project), "--project-id", "cli", *TEXT_ONLY)
    assert status == 0 and "cli: 0 file(s) indexed, 3 unchanged, 0 removed" in err
    assert json.loads(out)["files_unchanged"] == 3

    with Memory(store, model=None) as mem:
        assert [h.name for h in mem.search_code("slugify", project_id="cli")] == ["slugify"]
        assert mem.get_index_status("cli").status == "idle"


def test_code_search_by_folder_or_id_and_list(
    store: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_json(capsys, "index", str(project), "--project-id", "cli", *TEXT_ONLY)
    by_folder = run_json(capsys, "code", "search", str(project), "slugify", *TEXT_ONLY)
    assert [r["name"] for r in by_folder["results"]][:1] == ["slugify"]
    assert by_folder["results"][0]["project_id"] == "cli"
    by_id = run_json(capsys, "code", "search", "cli", "slugify", "--limit", "1", *TEXT_ONLY)
    assert [r["name"] for r in by_id["results"]] == ["slugify"]
    everywhere = run_json(capsys, "code", "search", "all", "slugify", *TEXT_ONLY)
    assert everywhere["results"][0]["name"] == "slugify"
    listed = run_json(capsys, "code", "list", *TEXT_ONLY)
    assert [(p["project_id"], p["root"]) for p in listed["projects"]] == [
        ("cli", str(project.resolve()))
    ]
    status, out, err = run(capsys, "code", "search", "nowhere", "slugify", *TEXT_ONLY)
    assert (status, out) == (1, "")
    assert "no indexed project 'nowhere'" in err and f"cli ({project.resolve()})" in err


def test_graph_search_open_and_related(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Memory(store, model=None) as mem:
        mem.save_memory(
            [
                {
                    "name": "Alice",
                    "entityType": "Person",
                    "observations": ["Leads the payments team"],
                    "relations": [{"targetEntity": "ACME", "relationType": "works at"}],
                },
                {
                    "name": "ACME",
                    "entityType": "Company",
                    "observations": ["Makes anvils"],
                    "relations": [{"targetEntity": "Alice", "relationType": "employs"}],
                },
            ],
            "cli-thread",
        )
    found = run_json(capsys, "graph", "search", "payments team", *TEXT_ONLY)
    assert found["entities"][0]["name"] == "Alice"
    assert found["entities"][0]["observations"] == ["Leads the payments team"]
    opened = run_json(capsys, "graph", "open", "alice", "acme", *TEXT_ONLY)
    assert sorted(e["name"] for e in opened["entities"]) == ["ACME", "Alice"]
    assert {(r["from"], r["relationType"], r["to"]) for r in opened["relations"]} == {
        ("Alice", "works at", "ACME"),
        ("ACME", "employs", "Alice"),
    }
    related = run_json(capsys, "graph", "related", "Alice", "--direction", "out", *TEXT_ONLY)
    assert [(r["name"], r["depth"]) for r in related["related"]] == [("ACME", 1)]
    status, _, err = run(capsys, "graph", "related", "Nobody", *TEXT_ONLY)
    assert status == 1 and "NOT_FOUND" in err


def test_index_with_the_real_model(
    store: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not (MINILM_DIR / "model.onnx").is_file():
        pytest.skip(f"test model not found at {MINILM_DIR}")
    model = ["--model-path", str(MINILM_DIR)]
    report = run_json(capsys, "index", str(project), "--project-id", "p", *model)
    assert report["embedded"] is True and report["note"] is None
    with Memory(store, model_path=MINILM_DIR) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(60)
        hits = mem.search_code("turn a title into a url fragment", project_id="p", limit=1)
        assert hits[0].name == "slugify" and hits[0].scores.vector is not None


def test_index_reports_a_bad_path(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "index", str(tmp_path / "missing"), *TEXT_ONLY)
    assert (status, out) == (1, "")
    assert err.startswith("memcore: error: INVALID_PARAMETER:")


def test_parsing_loads_no_heavy_package() -> None:
    """`memcore --help` and usage errors answer without numpy, onnxruntime, the MCP SDK,
    tree-sitter, rich or the store: commands import what they need when they run (their
    start is timed in benches/bench_cli.py)."""
    script = (
        "import contextlib, io, sys\n"
        "from memcore.cli.commands import main\n"
        "for argv in (['--help'], ['store', '--help'], ['recall']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(\n"
        "        io.StringIO()\n"
        "    ), contextlib.suppress(SystemExit):\n"
        "        main(argv)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(done.stdout.split())
    heavy = ("numpy", "onnxruntime", "mcp", "tree_sitter", "rich", "jsonschema", "pathspec")
    assert sorted(m for m in loaded if m.split(".")[0] in heavy) == []
    assert {"memcore.memory", "memcore.code.chunker", "memcore.tools.host"} & loaded == set()
