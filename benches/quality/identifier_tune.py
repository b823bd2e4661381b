"""Choose BM25's share for queries that name an identifier, on a real project.

    python -m benches.quality.identifier_tune

search_code ranks the chunks that define a name the query gives first
(rust/memcore/src/engine/code_weights.rs, ``defined_names``), so what the weights decide
for such a query is everything else: the code that uses the name, and names that are not
a chunk of their own (constants). Both sets of :mod:`benches.quality.definitions` ask
exactly that, on the Python standard library's top-level modules: "where is NAME used"
(gold = the chunks using it) and a module-level constant's name (gold = the chunk that
assigns it). The store is indexed once; each BM25 share ``b`` of the grid (the vector
gets ``1 - b``) is the same ``search_code`` call with explicit weights. The queries are
split by index parity into two folds; ``b`` is chosen on one fold by the sum of the two
sets' MRR and read on the other, then the other way round. The result, with the grid,
goes to benches/results/quality-experiments.md by hand.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from benches.quality import cosqa, definitions
from benches.quality.metrics import Scores, per_query

GRID = (0.0, 0.15, 0.3, 0.5, 0.7, 0.85, 1.0)
METRICS = ("MRR", "R@1", "R@5", "R@10")


def _scores(mem: Any, queries: list[dict[str, Any]], share: float, fold: int | None) -> Any:
    engine, ns = mem._engine, mem.namespace
    scores = Scores()
    for i, q in enumerate(queries):
        if fold is not None and i % 2 != fold:
            continue
        hits = engine.search_code(
            ns,
            q["doc"],
            q["vector"],
            project_id=definitions.PROJECT,
            limit=cosqa.DEPTH,
            weights=(1.0 - share, share, 0.0),
        )
        found = [f"{h.file_path}:{h.start_line}" for h in hits]
        scores.add(per_query(found, q["gold"], cosqa.KS, cosqa.DEPTH))
    return scores.means()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="identifier-tune-") as tmp:
        project = Path(tmp) / definitions.PROJECT
        project.mkdir()
        for path in definitions.stdlib_files():
            shutil.copyfile(path, project / path.name)
        corpus = definitions.read_corpus(project)
        names = [q["doc"] for q in definitions.definition_queries(corpus, definitions.QUERIES)]
        sets = {
            definitions.CONSTANTS: definitions.constant_queries(corpus, definitions.QUERIES),
            definitions.USES: definitions.use_queries(corpus, names, definitions.QUERIES),
        }
        mem, _ = cosqa.open_memory(Path(tmp) / "store")
        with mem:
            mem.index_project(project, project_id=definitions.PROJECT)
            mem._engine.flush()
            for queries in sets.values():
                for q in queries:
                    q["vector"] = cosqa.query_vector(mem, q)
            grid = {
                (label, share, fold): _scores(mem, queries, share, fold)
                for label, queries in sets.items()
                for share in GRID
                for fold in (0, 1, None)
            }
    print("| set | BM25 share | even MRR | odd MRR | even R@10 | odd R@10 |")
    print("|---|---|---|---|---|---|")
    for label in sets:
        for share in GRID:
            cells = [
                f"{100 * grid[label, share, fold][m]:.1f}"
                for m in ("MRR", "R@10")
                for fold in (0, 1)
            ]
            print(f"| {label} | {share:.2f} | " + " | ".join(cells) + " |")
    for held_out in (0, 1):
        tuned_on = 1 - held_out
        best = max(GRID, key=lambda b: sum(grid[label, b, tuned_on]["MRR"] for label in sets))
        read = ", ".join(
            f"{label} " + " ".join(f"{100 * grid[label, best, held_out][m]:.1f}" for m in METRICS)
            for label in sets
        )
        print(f"held-out fold {held_out}: share {best:.2f} chosen on the other; {read}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
