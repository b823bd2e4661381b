"""An agent's facts about one user: does `recall` put the fact that answers in the top five?

LoCoMo is a conversation; an agent's long-term memory is mostly short facts saved with
`store_memory` ("User is allergic to peanuts", "Deploys go through GitHub Actions to
Fly.io"), in small stores, where most facts name "User" and the questions are short
("food restrictions", "what is the user's job", "can I push my fix directly to main").
agent_facts.json holds 60 such facts and 50 questions, each with the facts that answer it,
written and judged by hand for this project (so its author's wording: a check, not a set to
tune on; nothing was chosen by it). Every retriever of `benches/quality/retrievers.py`
searches one store holding all 60.

Two more stores hold the same facts saved five to a thread, as an agent saves them from its
sessions, and `recall` searches them: once as standing facts (the default `semantic` type,
which the thread prior leaves alone, so the row must equal the plain one) and once saved as
episodes (what the prior would do to facts: quality-experiments section 24).

    python -m benches.quality.facts
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benches import embedding_cache
from benches.quality.metrics import Scores, per_query, table_row
from benches.quality.retrievers import Retriever, usable

DATA = Path(__file__).resolve().parent / "agent_facts.json"
KS = (1, 5, 10)
THREAD_SIZE = 5
IN_THREADS = {
    "recall, facts saved five to a thread": "semantic",
    "recall, the same saved as episodes": "episodic",
}
METRICS = ("MRR", "R@1", "R@5", "R@10", "NDCG@10")


def load(path: Path = DATA) -> tuple[list[str], list[tuple[str, set[str]]]]:
    """The facts, and each question with the facts that answer it."""
    data = json.loads(path.read_text())
    facts: list[str] = data["facts"]
    queries = [(q["q"], set(q["gold"])) for q in data["queries"]]
    unknown = {g for _, gold in queries for g in gold} - set(facts)
    if unknown or len(set(facts)) != len(facts):
        raise ValueError(f"{path}: gold facts not in the store or facts twice: {sorted(unknown)}")
    return facts, queries


def evaluate(log: Callable[[str], None] = print) -> dict[str, Any]:
    """Scores per retriever over every question."""
    facts, queries = load()
    vectors_ok = embedding_cache.available() is None
    fact_v = embedding_cache.embed(facts, "passage", label="agent facts") if vectors_ok else None
    query_v = (
        embedding_cache.embed([q for q, _ in queries], "query", label="agent questions")
        if vectors_ok
        else None
    )
    log(f"  agent facts: {len(facts)} facts, {len(queries)} questions")
    retrievers = usable(vectors_ok)
    scores = _scores(facts, queries, fact_v, query_v, {r.name: r for r in retrievers})
    recall = next(r for r in retrievers if r.name == "recall (hybrid)")
    threads = [f"session-{i // THREAD_SIZE}" for i in range(len(facts))]
    for name, memory_type in IN_THREADS.items():
        scores |= _scores(
            facts,
            queries,
            fact_v,
            query_v,
            {name: recall},
            thread_ids=threads,
            memory_type=memory_type,
        )
    return {
        "facts": len(facts),
        "questions": len(queries),
        "vectors": "all-MiniLM-L6-v2 int8"
        if vectors_ok
        else f"none ({embedding_cache.available()})",
        "retrievers": {name: {"n": s.count, **s.means()} for name, s in scores.items()},
    }


def _scores(
    facts: list[str],
    queries: list[tuple[str, set[str]]],
    fact_v: Any,
    query_v: Any,
    retrievers: dict[str, Retriever],
    **store_options: Any,
) -> dict[str, Scores]:
    """Every question asked of one new store holding the facts (saved with
    ``store_options``), through each retriever, under the name it is given."""
    import memcore

    scores = {name: Scores() for name in retrievers}
    with (
        tempfile.TemporaryDirectory(prefix="facts-") as tmp,
        memcore.Memory(tmp, model=None) as mem,
    ):
        mem.store_memories(facts, vectors=fact_v, **store_options)
        for i, (question, gold) in enumerate(queries):
            vector = None if query_v is None else query_v[i]
            for name, r in retrievers.items():
                found = [h.memory.content for h in r.search(mem, question, vector, max(KS))]
                scores[name].add(per_query(found, gold, KS, r.max_depth))
    return scores


def markdown(data: dict[str, Any]) -> list[str]:
    """The report's section."""
    lines = [
        f"### An agent's facts ({data['facts']} facts about one user, {data['questions']} "
        f"questions; vectors: {data['vectors']})",
        "",
        "Short facts as an agent saves them with `store_memory`, in one small store, and "
        "questions an agent asks of it, each with the facts that answer it "
        "(benches/quality/agent_facts.json, written for this project: a check, nothing is "
        "tuned on it). R@k = the share of a question's facts in the top k; MRR = the first. "
        "The last two rows save the facts five to a thread, as standing facts (the default "
        "type, which the thread prior leaves alone) and as episodes (which it reads in their "
        "thread): a session's facts are not about one thing, so the prior costs facts.",
        "",
        "| retriever | n | " + " | ".join(METRICS) + " |",
        "|---" * (len(METRICS) + 2) + "|",
    ]
    for name, s in data["retrievers"].items():
        lines.append(f"| {name} | {table_row(s, METRICS)} |")
    return [*lines, ""]


if __name__ == "__main__":
    result = evaluate()
    print(json.dumps(result, indent=1))
    print("\n".join(markdown(result)))
