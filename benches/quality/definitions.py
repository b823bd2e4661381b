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
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sysconfig
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benches.quality import cosqa
from benches.quality.metrics import Scores, per_query

PROJECT = "stdlib"
QUERIES = 300
QUICK_FILES = 20
QUICK_QUERIES = 30
DEFINITIONS = {"function", "method", "class"}
METRICS = ("MRR", "R@1", "R@5", "R@10", "NDCG@10")
COMPOUND = re.compile(r"[A-Za-z0-9]_+[A-Za-z0-9]|[a-z][A-Z]")
BUCKETS = ("all names", "compound names", "one plain word")
HYBRID, BM25, VECTOR = cosqa.HYBRID, cosqa.BM25, cosqa.VECTOR


def stdlib_files() -> list[Path]:
    """The top-level modules of this interpreter's standard library, by name."""
    return sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))


def definition_queries(project: Path, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` queries ``{doc, gold}`` for the definitions under ``project``."""
    from memcore.code import chunk_file

    chunks = []
    for path in sorted(project.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        chunks += chunk_file(text, "python", path.name)
    defined = Counter(c.name for c in chunks if c.chunk_type in DEFINITIONS)
    written = Counter(word for c in chunks for word in set(re.findall(r"\w+", c.content)))
    queries = []
    for c in chunks:
        name = c.name or ""
        if (
            c.chunk_type not in DEFINITIONS
            or defined[name] != 1
            or name.startswith("__")
            or len(name) < 2
        ):
            continue
        if written[name] < 2:
            continue  # no use besides the definition: nothing to compete with
        queries.append({"doc": name, "gold": {f"{c.file_path}:{c.start_line}"}})
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
        queries = definition_queries(project, QUICK_QUERIES if quick else QUERIES)
        mem, vectors = cosqa.open_memory(Path(tmp) / "store")
        with mem:
            log(f"  definitions: indexing {len(files)} standard-library modules")
            report = mem.index_project(project, project_id=PROJECT)
            mem._engine.flush()
            log(f"  definitions: {report.total_chunks:,} chunks, {len(queries)} queries")
            retrievers = definition_scores(mem, queries)
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
    scores = {(name, bucket): Scores() for name in rankers for bucket in BUCKETS}
    for q in queries:
        vector = cosqa.query_vector(mem, q)
        bucket = BUCKETS[1] if COMPOUND.search(q["doc"]) else BUCKETS[2]
        for name, rank in rankers.items():
            found = per_query(rank(q["doc"], vector), q["gold"], cosqa.KS, cosqa.DEPTH)
            scores[name, BUCKETS[0]].add(found)
            scores[name, bucket].add(found)
    return {
        f"{name}, {bucket}": {"n": s.count, **s.means()}
        for (name, bucket), s in scores.items()
        if s.count
    }


def markdown(data: dict[str, Any]) -> list[str]:
    """The report's section."""
    lines = [
        f"### Identifier → definition ({data['queries']} names over {data['files']} modules "
        f"of the Python standard library, {data['chunks']:,} chunks; vectors: "
        f"{data['vectors']})",
        "",
        "Each query is a function, method or class name defined once in the project and used "
        "in other chunks too (benches/quality/definitions.py); gold = the chunk that defines "
        f"it, scored per chunk. MRR over the top {data['mrr_depth']}; rows as for CoSQA.",
        "",
        "| retriever | n | MRR | R@1 | R@5 | R@10 | NDCG@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in data["retrievers"].items():
        cells = [str(s.get("n", 0))] + [f"{100 * s[m]:.1f}" for m in METRICS]
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return [*lines, ""]


if __name__ == "__main__":
    import json
    import sys

    result = evaluate(quick="--quick" in sys.argv)
    print(json.dumps(result, indent=1))
    print("\n".join(markdown(result)))
