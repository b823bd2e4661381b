"""The code tool group over stdio: index a small project, search it, follow its status,
see it in the memory overview, watch it change, delete it; a long pass answered as
"indexing" and followed to the end; and, with the real MiniLM model, a search by what
the code does. One text-only server serves the module."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from test_mcp_support import MINILM_DIR, SyncClient, server_env, stdio_server

AUTH = '''"""Session handling."""


def refresh_token(session):
    """Exchange the refresh token for a new OAuth access token."""
    return session.client.post("/oauth/token", data={"grant": "refresh"})


class RateLimiter:
    def allow(self, user_id):
        return self.buckets[user_id].take()
'''
MATH = "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"


def _project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "auth.py").write_text(AUTH)
    (root / "src" / "math.rs").write_text(MATH)
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "junk.py").write_text("def ignored(): pass\n")
    return root


def _until(check: Callable[[], Any], seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncClient]:
    home = tmp_path_factory.mktemp("mcp-code")
    tools = "code,get_status,memory_list_dir_with_abstract"
    args = ["--data-dir", str(home / "store"), "--model", "none", "--tools", tools]
    with stdio_server(args, server_env(home), home / "server.log") as client:
        yield client


def test_index_search_status_delete(server: SyncClient, tmp_path: Path) -> None:
    root = _project(tmp_path / "proj")
    report = server.ok("index_project", {"path": str(root), "project_id": "demo"})
    assert (report["status"], report["project_id"]) == ("idle", "demo")
    assert (report["files_scanned"], report["files_indexed"]) == (2, 2)
    assert report["embedded"] is False and report["chunks"] >= 3

    hits = server.ok("search_code", {"query": "refresh token", "project_id": "demo"})["results"]
    top = hits[0]
    assert (top["file_path"], top["name"], top["chunk_type"]) == (
        "src/auth.py",
        "refresh_token",
        "function",
    )
    assert top["start_line"] == 4 and "def refresh_token" in top["snippet"]
    rust = server.ok("search_code", {"query": "add", "language": "rust"})["results"]
    assert [h["file_path"] for h in rust] == ["src/math.rs"]

    status = server.ok("get_index_status", {"project_id": "demo"})
    assert (status["status"], status["total_files"], status["indexed_files"]) == ("idle", 2, 2)
    again = server.ok("index_project", {"path": str(root), "project_id": "demo"})
    assert (again["files_unchanged"], again["files_indexed"]) == (2, 0)
    listed = server.ok("list_projects")["projects"]
    assert [p["project_id"] for p in listed] == ["demo"]
    tree = server.ok("memory_list_dir_with_abstract", {"path": "/default/projects"})["summaries"]
    assert [(e["path"], e["kind"], e["count"]) for e in tree] == [
        ("/default/projects/demo", "project", status["total_chunks"])
    ]
    assert tree[0]["has_overview"] and "languages: python 1, rust 1" in tree[0]["abstract"]

    deleted = server.ok("delete_project", {"project_id": "demo"})
    assert deleted["success"] and deleted["chunks_removed"] == status["total_chunks"]
    assert server.error("get_index_status", {"project_id": "demo"})["code"] == "NOT_FOUND"
    assert server.error("delete_project", {"project_id": "demo"})["code"] == "NOT_FOUND"
    assert server.ok("search_code", {"query": "refresh token"})["results"] == []
    missing = server.error("index_project", {"path": str(tmp_path / "nowhere")})
    assert missing["code"] == "INVALID_PARAMETER" and "does not exist" in missing["message"]


def test_a_pass_continues_in_the_background_and_a_watcher_follows_edits(
    server: SyncClient, tmp_path: Path
) -> None:
    root = _project(tmp_path / "bg")
    for i in range(40):
        (root / "src" / f"mod_{i}.py").write_text(f"def handler_{i}(event):\n    return {i}\n")
    started = server.ok(
        "index_project", {"path": str(root), "project_id": "bg", "watch": True, "wait_seconds": 0}
    )
    # Either still running (the usual case) or already done on a fast machine.
    assert started["status"] in ("indexing", "watching") and started["project_id"] == "bg"
    done = _until(
        lambda: (
            (s := server.ok("get_index_status", {"project_id": "bg"}))["status"] == "watching" and s
        )
    )
    assert done["indexed_files"] == done["total_files"] == 42

    (root / "src" / "math.rs").write_text(MATH + "fn multiply_numbers(a: i32) -> i32 { a }\n")
    _until(
        lambda: server.ok("search_code", {"query": "multiply numbers", "project_id": "bg"})[
            "results"
        ]
    )
    server.ok("delete_project", {"project_id": "bg"})
    assert server.ok("list_projects")["projects"] == []


def test_search_by_meaning_with_minilm(tmp_path: Path) -> None:
    if not (MINILM_DIR / "model.onnx").is_file():
        pytest.skip(f"test model not found at {MINILM_DIR}")
    root = _project(tmp_path / "proj")
    args = ["--data-dir", str(tmp_path / "store"), "--model-path", str(MINILM_DIR)]
    with stdio_server(
        [*args, "--tools", "code"], server_env(tmp_path), tmp_path / "server.log"
    ) as client:
        report = client.ok("index_project", {"path": str(root), "wait_seconds": 120})
        assert report["embedded"] is True and report["project_id"].startswith("proj-")
        hits = client.ok("search_code", {"query": "limit how often a user may call the API"})
        top = hits["results"][0]
        # The class, or its one method (whose scope header names the class).
        assert "RateLimiter" in f"{top['name']} {top['parent_scope']}", top
        assert top["scores"]["vector"] is not None
