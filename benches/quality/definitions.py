"""Identifier queries on a real project: does ``search_code("parse_args")`` put the chunk
that defines ``parse_args`` first?

CoSQA's identifier rows (:mod:`benches.quality.cosqa`) hold one function per file, so a
name is found wherever it is written. In a real project a name is written at its
definition and at every call site, test and docstring that uses it, and an agent asking
for the name usually wants the definition. This set indexes the top-level modules of the
Python standard library of the interpreter running it (a large, stable, real code base:
168 files, about 4.7 MB in Python 3.11) with ``index_project`` and searches each
definition by its bare name.

The queries are the functions, methods and classes whose name is not a dunder, is defined
once in the project and is used (as a whole word) in at least one other chunk, so the
definition competes with its uses. They are taken in the order of a hash of the name
(spread over the files, the same on every run); gold = the defining chunk (file and first
line), scored at chunk level. Rows are given for all names, for compound ones
(snake_case, camelCase: identifier-shaped in a sentence too) and for one plain word
(``setlocale``, ``mksalt``).

Two more sets ask for what is not a chunk of its own. Constants: module-level
``UPPER_SNAKE`` names assigned once in the project and used elsewhere; gold = the chunk
holding the assignment. Uses: each compound name of the first set whose uses sit in at
most :data:`MAX_USES` other chunks, asked as "where is NAME used"; gold = those chunks
(recall@k = the share of them in the top k; MRR = the first).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sysconfig
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benches.quality import cosqa
from benches.quality.metrics import Scores, per_query, table_row

PROJECT = "stdlib"
QUERIES = 300
QUICK_FILES = 20
QUICK_QUERIES = 30
DEFINITIONS = {"function", "method", "class"}
METRICS = ("MRR", "R@1", "R@5", "R@10", "NDCG@10")
COMPOUND = re.compile(r"[A-Za-z0-9]_+[A-Za-z0-9]|[a-z][A-Z]")
BUCKETS = ("all names", "compound names", "one plain word")
CONSTANTS, USES = "constants", "uses"
CONSTANT = re.compile(r"^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\s*(?::[^=]*)?=[^=]", re.MULTILINE)
MAX_USES = 10
HYBRID, BM25, VECTOR = cosqa.HYBRID, cosqa.BM25, cosqa.VECTOR


def stdlib_files() -> list[Path]:
    """The top-level modules of this interpreter's standard library, by name."""
    return sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))


@dataclass(frozen=True)
class Corpus:
    """A project's files as ``index_project`` cuts them, read once for every query set."""

    chunks: list[Any]
    texts: dict[str, str]  # file name -> text
    written: Counter[str]  # word -> how many chunks it stands in


def read_corpus(project: Path) -> Corpus:
    """The ``*.py`` files under ``project``, chunked as ``index_project`` chunks them."""
    from memcore.code import chunk_file

    chunks, texts = [], {}
    for path in sorted(project.glob("*.py")):
        texts[path.name] = path.read_text(encoding="utf-8", errors="replace")
        chunks += chunk_file(texts[path.name], "python", path.name)
    written = Counter(word for c in chunks for word in set(re.findall(r"\w+", c.content)))
    return Corpus(chunks, texts, written)


def _key(chunk: Any) -> str:
    return f"{chunk.file_path}:{chunk.start_line}"


def constant_queries(corpus: Corpus, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` queries for module-level constants assigned once and used elsewhere;
    gold = the chunk(s) holding the assignment line."""
    assigned: dict[str, list[tuple[str, int]]] = {}
    for name, text in corpus.texts.items():
        for match in CONSTANT.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            assigned.setdefault(match.group(1), []).append((name, line))
    queries = []
    for constant, places in assigned.items():
        if len(places) != 1 or corpus.written[constant] < 2:
            continue
        file, line = places[0]
        gold = {
            _key(c)
            for c in corpus.chunks
            if c.file_path == file and c.start_line <= line <= c.end_line
        }
        if gold:
            queries.append({"doc": constant, "gold": gold})
    queries.sort(key=lambda q: hashlib.sha1(q["doc"].encode()).hexdigest())
    return queries[:limit]


def use_queries(corpus: Corpus, names: list[str], limit: int) -> list[dict[str, Any]]:
    """ "where is NAME used" for each compound name of ``names`` with 1 to
    :data:`MAX_USES` chunks using it besides its definition; gold = those chunks."""
    queries = []
    for name in names:
        if not COMPOUND.search(name):
            continue
        word = re.compile(rf"\b{re.escape(name)}\b")
        uses = {
            _key(c)
            for c in corpus.chunks
            if word.search(c.content) and not (c.name == name and c.chunk_type in DEFINITIONS)
        }
        if 1 <= len(uses) <= MAX_USES:
            queries.append({"doc": f"where is {name} used", "gold": uses})
    return queries[:limit]


def definition_queries(corpus: Corpus, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` queries ``{doc, gold}`` for the definitions of ``corpus``: names
    defined once and written in another chunk too (a use to compete with)."""
    defined = Counter(c.name for c in corpus.chunks if c.chunk_type in DEFINITIONS)
    queries = [
        {"doc": c.name, "gold": {_key(c)}}
        for c in corpus.chunks
        if c.chunk_type in DEFINITIONS
        and defined[c.name] == 1
        and len(c.name or "") >= 2
        and not c.name.startswith("__")
        and corpus.written[c.name] >= 2
    ]
    queries.sort(key=lambda q: hashlib.sha1(q["doc"].encode()).hexdigest())
    return queries[:limit]


def evaluate(*, quick: bool = False, log: cosqa.Log = print) -> dict[str, Any]:
    """MRR@50, recall@1/5/10 and NDCG@10 of the defining chunk per ranking."""
    files = stdlib_files()[:QUICK_FILES] if quick else stdlib_files()
    with tempfile.TemporaryDirectory(prefix="definitions-") as tmp:
        project = Path(tmp) / PROJECT
        project.mkdir()
        for path in files:
            shutil.copyfile(path, project / path.name)
        limit = QUICK_QUERIES if quick else QUERIES
        corpus = read_corpus(project)
        queries = definition_queries(corpus, limit)
        sets = {
            CONSTANTS: constant_queries(corpus, limit),
            USES: use_queries(corpus, [q["doc"] for q in queries], limit),
        }
        mem, vectors = cosqa.open_memory(Path(tmp) / "store")
        with mem:
            log(f"  definitions: indexing {len(files)} standard-library modules")
            report = mem.index_project(project, project_id=PROJECT)
            mem._engine.flush()
            log(f"  definitions: {report.total_chunks:,} chunks, {len(queries)} queries")
            retrievers = definition_scores(mem, queries)
            for label, query_set in sets.items():
                retrievers |= {
                    f"{name}, {label}": scores
                    for name, scores in _ranked(mem, query_set).items()
                    if query_set
                }
    return {
        "source": str(Path(sysconfig.get_paths()["stdlib"])),
        "files": len(files),
        "chunks": report.total_chunks,
        "queries": len(queries),
        "vectors": vectors,
        "mrr_depth": cosqa.DEPTH,
        "retrievers": retrievers,
    }


def definition_scores(mem: Any, queries: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each ranking of the defining chunk, per bucket of names (:data:`BUCKETS`)."""
    per_bucket: dict[str, dict[str, dict[str, float]]] = {}
    for bucket in BUCKETS:
        chosen = [q for q in queries if bucket in (BUCKETS[0], _bucket(q["doc"]))]
        if chosen:
            per_bucket[bucket] = _ranked(mem, chosen)
    rankers = next(iter(per_bucket.values()), {})
    return {
        f"{name}, {bucket}": scores[name]
        for name in rankers
        for bucket, scores in per_bucket.items()
    }


def _bucket(name: str) -> str:
    return BUCKETS[1] if COMPOUND.search(name) else BUCKETS[2]


def _ranked(mem: Any, queries: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each ranking's scores on ``queries``."""
    engine, ns = mem._engine, mem.namespace

    def keys(hits: Any) -> list[str]:
        return [f"{h.file_path}:{h.start_line}" for h in hits]

    rankers: dict[str, cosqa.Ranker] = {
        HYBRID: lambda q, v: keys(mem.search_code(q, PROJECT, limit=cosqa.DEPTH, vector=v)),
        BM25: lambda q, v: keys(
            engine.search_code(ns, q, None, project_id=PROJECT, limit=cosqa.DEPTH)
        ),
    }
    if mem.embeddings is not None:
        rankers[VECTOR] = lambda q, v: keys(
            engine.search_code(ns, cosqa.NO_TERM, v, project_id=PROJECT, limit=cosqa.DEPTH)
        )
    scores = {name: Scores() for name in rankers}
    for q in queries:
        vector = cosqa.query_vector(mem, q)
        for name, rank in rankers.items():
            scores[name].add(per_query(rank(q["doc"], vector), q["gold"], cosqa.KS, cosqa.DEPTH))
    return {name: {"n": s.count, **s.means()} for name, s in scores.items()}


def markdown(data: dict[str, Any]) -> list[str]:
    """The report's section."""
    lines = [
        f"### Identifiers in a real project ({data['queries']} names over {data['files']} "
        f"modules of the Python standard library, {data['chunks']:,} chunks; vectors: "
        f"{data['vectors']})",
        "",
        "Names: each query is a function, method or class name defined once in the project "
        "and used in other chunks too; gold = the chunk that defines it. Constants: a "
        "module-level UPPER_SNAKE name assigned once and used elsewhere; gold = the chunk "
        'that assigns it. Uses: "where is NAME used" for compound names used in 1 to '
        f"{MAX_USES} other chunks; gold = those chunks (R@k = the share of them in the top "
        "k, MRR = the first; the definition comes first by design, so R@1 is 0). "
        "benches/quality/definitions.py; scored per chunk, MRR over the top "
        f"{data['mrr_depth']}; rows as for CoSQA.",
        "",
        "| retriever | n | MRR | R@1 | R@5 | R@10 | NDCG@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in data["retrievers"].items():
        lines.append(f"| {name} | {table_row(s, METRICS)} |")
    return [*lines, ""]


if __name__ == "__main__":
    import json
    import sys

    result = evaluate(quick="--quick" in sys.argv)
    print(json.dumps(result, indent=1))
    print("\n".join(markdown(result)))
