"""search_code: finding functions by what they do (the real MiniLM model), by identifier
words (BM25 alone), project and language filters, and what a hit carries."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import memcore
from backends import Backend, both_backends
from conftest import MINILM_DIR, require_model
from memcore._facade.transfer import export_store, import_store
from memcore.code.chunker import chunk_file
from memcore.code.indexer import EMBED_MAX_TOKENS, passage_text

FILES = {
    "src/numbers.py": (
        "def is_prime(n):\n    if n < 2:\n        return False\n"
        "    for d in range(2, int(n ** 0.5) + 1):\n        if n % d == 0:\n"
        "            return False\n    return True\n"
    ),
    "src/mail.py": (
        "import smtplib\n\n\ndef send_email(to, subject, body):\n"
        "    with smtplib.SMTP('localhost') as server:\n"
        "        server.sendmail('noreply@example.com', [to], f'Subject: {subject}\\n\\n{body}')\n"
    ),
    "src/images.py": (
        "from PIL import Image\n\n\ndef make_thumbnail(path, width, height):\n"
        "    img = Image.open(path)\n    img.thumbnail((width, height))\n"
        "    img.save(path + '.thumb.png')\n"
    ),
    "src/users.py": (
        "class UserService:\n    def getUserName(self, user_id):\n"
        "        return self.db.lookup(user_id).name\n\n"
        "    def deactivate(self, user_id):\n        self.db.update(user_id, active=False)\n"
    ),
    "core/config.rs": (
        "use std::path::Path;\n\npub fn load_settings(path: &Path) -> Result<Settings, Error> {\n"
        "    let text = std::fs::read_to_string(path)?;\n    Ok(toml::from_str(&text)?)\n}\n"
    ),
    "web/timing.ts": (
        "export function debounce(fn: () => void, ms: number): () => void {\n"
        "  let timer: ReturnType<typeof setTimeout> | undefined;\n  return () => {\n"
        "    clearTimeout(timer);\n    timer = setTimeout(fn, ms);\n  };\n}\n"
    ),
    "web/http.ts": (
        "export async function fetchJson<T>(url: string): Promise<T> {\n"
        "  const response = await fetch(url);\n"
        "  if (!response.ok) throw new Error(`HTTP ${response.status}`);\n"
        "  return (await response.json()) as T;\n}\n"
    ),
    "cmd/strings.go": (
        "package strutil\n\nfunc Reverse(s string) string {\n\trunes := []rune(s)\n"
        "\tfor i, j := 0, len(runes)-1; i < j; i, j = i+1, j-1 {\n"
        "\t\trunes[i], runes[j] = runes[j], runes[i]\n\t}\n\treturn string(runes)\n}\n"
    ),
}

# A description of what the code does, sharing (almost) no identifier with it.
DESCRIPTIONS = [
    ("check whether an integer is only divisible by one and itself", "is_prime"),
    ("deliver a message to someone's inbox", "send_email"),
    ("shrink a picture to a small preview", "make_thumbnail"),
    ("wait until the user stops typing before calling the handler", "debounce"),
    ("return the characters of a text in backwards order", "Reverse"),
]


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def minilm(
    module_backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[memcore.Memory]:
    """One store with the real model and the project indexed (loading it once per module)."""
    model = require_model(MINILM_DIR)
    base = tmp_path_factory.mktemp("code-search")
    with module_backend.open(base / "store", model_path=model) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(60)
        report = mem.index_project(write(base / "proj", FILES), project_id="demo")
        assert report.embedded and report.files_indexed == len(FILES)
        yield mem


@pytest.mark.parametrize(("description", "name"), DESCRIPTIONS)
def test_finds_a_function_by_what_it_does(
    minilm: memcore.Memory, description: str, name: str
) -> None:
    hits = minilm.search_code(description, limit=5)
    assert hits[0].name == name, [(h.name, h.scores) for h in hits]
    assert hits[0].scores.vector is not None and hits[0].scores.vector > 0.2
    assert hits[0].relevance_score == max(h.relevance_score for h in hits)


def test_a_hit_carries_location_snippet_and_scores(minilm: memcore.Memory) -> None:
    hit = minilm.search_code("user name of an account", limit=3)[0]
    assert (hit.file_path, hit.name, hit.chunk_type) == ("src/users.py", "getUserName", "method")
    assert (hit.start_line, hit.end_line) == (2, 3)
    assert hit.parent_scope == "class UserService" and hit.language == "python"
    assert hit.snippet == (
        "    def getUserName(self, user_id):\n        return self.db.lookup(user_id).name"
    )
    assert hit.project_id == "demo" and hit.id.startswith("chk")
    assert hit.scores.vector is not None and hit.scores.bm25 is not None
    assert 0.0 <= hit.relevance_score <= 1.0
    data = hit.to_dict()
    assert set(data["scores"]) == {"vector", "bm25", "ppr", "fused"}
    assert "content" not in data and "embedding" not in data
    json.dumps(data)


def test_filters_by_language_and_project(minilm: memcore.Memory, tmp_path: Path) -> None:
    ts = minilm.search_code("function", language="typescript", limit=10)
    assert ts and {h.file_path for h in ts} <= {"web/timing.ts", "web/http.ts"}
    assert {h.language for h in minilm.search_code("function", language="Go")} == {"go"}
    assert minilm.search_code("function", language="cobol") == []
    minilm.index_project(write(tmp_path / "other", {"mail.py": FILES["src/mail.py"]}), "other")
    try:
        assert {h.project_id for h in minilm.search_code("send an email", limit=10)} == {
            "demo",
            "other",
        }
        only = minilm.search_code("send an email", project_id="other", limit=10)
        assert {(h.project_id, h.file_path) for h in only} <= {("other", "mail.py")}
        assert minilm.search_code("send an email", project_id="nope") == []
    finally:
        minilm.delete_project("other")


def test_a_precomputed_query_vector(minilm: memcore.Memory) -> None:
    assert minilm.embeddings is not None
    vector = np.array(minilm.embeddings.embed_query("reverse a string"))
    assert minilm.search_code("reverse a string", vector=vector)[0].name == "Reverse"


# One function of about 400 tokens: what it is for comes first, the rest is detail.
LONG_FUNCTION = (
    "def rotate_logs(directory, keep):\n"
    '    """Delete the oldest log files so that only the newest ones are kept."""\n'
    + "".join(
        f"    stage_{i} = compress_archive(directory, level={i}, suffix='.gz{i}')\n"
        for i in range(30)
    )
)


def _stored_cosine(mem: memcore.Memory, project_id: str, vector: np.ndarray) -> float:
    [hit] = mem.search_code("rotate logs", project_id=project_id, vector=vector, limit=1)
    assert hit.name == "rotate_logs" and hit.scores.vector is not None
    return hit.scores.vector


def test_code_chunks_are_embedded_at_the_models_training_length(
    module_backend: Backend, minilm: memcore.Memory, tmp_path: Path
) -> None:
    assert minilm.embeddings is not None
    project = write(tmp_path / "logs", {"logs.py": LONG_FUNCTION})
    [chunk] = chunk_file(LONG_FUNCTION, "python", "logs.py")
    passage = passage_text(chunk.content)
    assert minilm.embeddings.count_tokens(passage) > 2 * EMBED_MAX_TOKENS
    head, whole = (
        minilm.embeddings.embed_passages([passage], max_tokens=limit)[0]
        for limit in (EMBED_MAX_TOKENS, None)
    )
    assert float(head @ whole) < 0.99
    minilm.index_project(project, "logs")
    try:
        # The stored vector is the passage's first 128 tokens, not the model's 256.
        assert _stored_cosine(minilm, "logs", head) == pytest.approx(1.0, abs=1e-3)
        assert _stored_cosine(minilm, "logs", whole) < 0.99
        # An export without vectors, imported into another store, is embedded the same way.
        out = io.StringIO()
        export_store(minilm, out)
        lines = [line.encode() for line in out.getvalue().splitlines(keepends=True)]
        with module_backend.open(tmp_path / "imported", model_path=MINILM_DIR) as other:
            assert other.embeddings is not None and other.embeddings.wait_ready(60)
            import_store(other, lines)
            assert _stored_cosine(other, "logs", head) == pytest.approx(1.0, abs=1e-3)
    finally:
        minilm.delete_project("logs")


@both_backends
def test_identifier_words_match_with_bm25_alone(mem: memcore.Memory, tmp_path: Path) -> None:
    mem.index_project(write(tmp_path / "p", FILES), project_id="demo")
    hits = mem.search_code("user name")
    assert hits[0].name == "getUserName"
    assert hits[0].scores.vector is None and hits[0].scores.bm25 is not None
    assert mem.search_code("send email")[0].name == "send_email"
    assert mem.search_code("fetch json", language="typescript")[0].name == "fetchJson"


# Each identifier's words appear nowhere else in its file: only the split identifier matches.
IDENTIFIER_FILES = {
    "net.py": "def parseHttpHeader(raw):\n    return raw.partition(b':')\n",
    "profiles.py": "def load_user_profile(uid):\n    return STORE[uid]\n",
    "codec.ts": "export function encodeBase64(s: string): string {\n  return btoa(s);\n}\n",
    "tables.go": "package t\n\nfunc CRC32Table() []uint32 {\n\treturn nil\n}\n",
}


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("http header", "parseHttpHeader"),  # camelCase parts
        ("parseHttpHeader", "parseHttpHeader"),  # the whole identifier is kept
        ("user profile", "load_user_profile"),  # snake_case parts
        ("load_user_profile", "load_user_profile"),
        ("base 64", "encodeBase64"),  # letter/digit boundary
        ("encodeBase64", "encodeBase64"),
        ("crc 32 table", "CRC32Table"),  # an acronym, digits, then a word
    ],
)
@both_backends
def test_a_query_matches_through_split_identifiers(
    mem: memcore.Memory, tmp_path: Path, query: str, name: str
) -> None:
    mem.index_project(write(tmp_path / "ids", IDENTIFIER_FILES), project_id="ids")
    hits = mem.search_code(query, project_id="ids", limit=5)
    assert hits and hits[0].name == name, [(h.name, h.scores) for h in hits]


# Each definition says its name once; the code that calls it says it more often.
CALLER_FILES = {
    "settings.py": "def load_config(path):\n    return json.loads(open(path).read())\n",
    "app.py": (
        "def main():\n    cfg = load_config('a.json')\n"
        "    # load_config again when load_config fails\n"
        "    return load_config('b.json') or cfg\n"
    ),
    "salt.py": "def mksalt():\n    return os.urandom(8)\n",
    "users.py": "def new_user():\n    salt = mksalt()\n    return salt + mksalt() + mksalt()\n",
}


@pytest.mark.parametrize(
    ("query", "definition"),
    [
        ("load_config", "settings.py"),
        ("load_config()", "settings.py"),
        ("settings.load_config", "settings.py"),
        ("where is `load_config` called?", "settings.py"),
        ("mksalt", "salt.py"),  # one plain word is a name too
    ],
)
@both_backends
def test_a_query_naming_a_function_finds_its_definition_first(
    mem: memcore.Memory, tmp_path: Path, query: str, definition: str
) -> None:
    mem.index_project(write(tmp_path / "calls", CALLER_FILES), project_id="calls")
    hits = mem.search_code(query, project_id="calls", limit=5)
    assert hits[0].file_path == definition, [(h.file_path, h.scores) for h in hits]
    assert len(hits) > 1  # the callers follow
    # In a sentence, a plain word is not looked up as a name.
    assert mem.search_code("mksalt calls", project_id="calls")[0].file_path == "users.py"


# A constant is no chunk of its own, and its parts are common words elsewhere.
CONSTANT_FILES = {
    "limits.py": "import os\n\nMAX_TOKENS = 128\nTIMEOUT = 5\n",
    "notes.py": (
        "def summary():\n    # max of the tokens; tokens over the max are cut\n"
        "    return max(len(t) for t in tokens) + max_len(tokens)\n"
    ),
}


@both_backends
def test_a_whole_snake_case_name_is_a_term_of_its_own(mem: memcore.Memory, tmp_path: Path) -> None:
    mem.index_project(write(tmp_path / "consts", CONSTANT_FILES), project_id="consts")
    hits = mem.search_code("MAX_TOKENS", project_id="consts")
    assert hits[0].file_path == "limits.py", [(h.file_path, h.scores) for h in hits]
    # The parts still match apart.
    assert {h.file_path for h in mem.search_code("max tokens", project_id="consts")} == {
        "limits.py",
        "notes.py",
    }


def test_a_chunk_is_embedded_without_its_file_line() -> None:
    [chunk] = chunk_file("def greet():\n    return 'hi'\n", "python", "src/hello.py")
    assert chunk.content.startswith("# file: src/hello.py\n")
    assert passage_text(chunk.content) == "def greet():\n    return 'hi'"
    nested = chunk_file(FILES["src/users.py"], "python", "src/users.py")[1]
    assert passage_text(nested.content).startswith("# scope: class UserService\n")
    [ts] = chunk_file(FILES["web/http.ts"], "typescript", "web/http.ts")
    assert passage_text(ts.content).startswith("export async function fetchJson")
    assert passage_text("x = 1  # file: not a header\n") == "x = 1  # file: not a header\n"


@both_backends
def test_long_chunks_are_cut_in_the_snippet(mem: memcore.Memory, tmp_path: Path) -> None:
    body = "".join(f"    value_{i} = compute_something_long_enough({i})\n" for i in range(100))
    mem.index_project(write(tmp_path / "p", {"big.py": f"def big_function():\n{body}"}))
    hit = mem.search_code("big function")[0]
    assert len(hit.snippet) < 2200 and hit.snippet.endswith("more lines)")
    assert hit.snippet.startswith("def big_function():")


@both_backends
def test_bad_queries(mem: memcore.Memory) -> None:
    for query in ("", "   "):
        with pytest.raises(memcore.InvalidParameterError):
            mem.search_code(query)
    for limit in (0, 51):
        with pytest.raises(memcore.InvalidParameterError):
            mem.search_code("x", limit=limit)
    assert mem.search_code("anything at all") == []
    # The engine call the quality harness sweeps weights through checks them like recall.
    for weights in ((-0.1, 0.5, 0.0), (float("nan"), 0.1, 0.0)):
        with pytest.raises(memcore.InvalidParameterError, match="weight"):
            mem._engine.search_code(mem.namespace, "x", weights=weights)
