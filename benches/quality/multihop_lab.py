"""Multi-hop directions on LoCoMo, measured outside the engine.

    python -m benches.quality.multihop_lab [--locomo FILE]

LoCoMo's multi-hop questions name a category ("What activities does Melanie partake in?")
whose evidence names members ("I signed up for a pottery class", "I'm off to go swimming"),
said in different sessions. Each conversation is stored twice as the harness stores it
(episodic memories searched with ``recall``; turns through ``record_turn`` searched with
``retrieve_context``), each question's top 50 is taken from the engine, and each direction
is scored on both paths:

- ``spread``: the list dealt out per session at ``cap`` hits a session, after a head of
  ``m`` hits kept in score order (the engine spreads list questions only, section 31);
- ``soft``: greedy re-selection, each hit's score (z-scored over the list) less ``lam``
  times the hits of its session already chosen, after a head of ``m``;
- ``cooc``: query expansion from the store itself: for each content word of the question
  held by at most 5% of the turns, the words of the turns that hold it, weighted by
  co-occurrence times idf (``tfidf``) or by the share of its turns times idf (``pmi``);
  the best ``m`` appended to the query (the engine's BM25 weighs every term the same);
- ``sessions``: a second view of what each session is about: its ``n`` most salient words
  (count times idf over sessions), a session scored by the question words among them, its
  z-score added at weight ``w`` to each hit's;
- ``hop``: a second hop: the first ``h`` hits, one per session, each give their ``nw``
  rarest words not in the question (``names``: only capitalised words, places and people),
  the question plus those words is searched again, and the two lists are interleaved after
  the first list's head of ``m``; ``what/which``: only for a question that starts so.

Words here are lower-cased letters, a small stop list out, a plural ``s`` cut: cruder than
the engine's analyser, which is enough to tell whether a direction is worth building.
Scores are R@1 R@5 R@10 over all questions, R@10 per category and per conversation (the
leave-one-conversation-out folds), and multi-hop R@10 per conversation. Section 37 of
benches/results/quality-experiments.md is this script's output.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from benches import embedding_cache
from benches.quality import locomo
from benches.quality.harness import DEFAULT_LOCOMO
from benches.quality.metrics import recall_at

DEPTH = 50
_STOP_WORDS = """a about above after again against all am an and any are as at be because been
    before being below between both but by can did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with you your yours yourself yeah yes
    wow hey thanks thank really got get like also gonna been lot great awesome amazing"""
STOP = frozenset(_STOP_WORDS.split())
Ranked = list[tuple[str, float]]  # (dia_id, score), best first
Lists = dict[tuple[int, int], list[str]]


def words(text: str) -> list[str]:
    out = []
    for w in re.findall(r"[a-z]+", text.lower()):
        if w in STOP or len(w) < 3:
            continue
        out.append(w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def session(dia_id: str) -> int:
    return int(dia_id.split(":")[0][1:])


def z(values: list[float]) -> Any:
    v = np.array(values, dtype=float)
    spread = v.std()
    return (v - v.mean()) / spread if spread > 0 else v * 0


class Stores:
    """One conversation stored both ways, with its questions' vectors."""

    def __init__(self, conv: locomo.Conversation, stack: ExitStack) -> None:
        import memcore
        from memcore import _core

        self.conv = conv
        self.turn = {t.dia_id: t for t in conv.turns}
        self.names = {t.speaker.lower() for t in conv.turns}
        self.docs = [set(words(t.text)) for t in conv.turns]
        self.df = Counter(w for d in self.docs for w in d)
        texts = [t.content for t in conv.turns]
        passage_v = embedding_cache.embed(texts, "passage", label=conv.sample_id)
        self.query_v = embedding_cache.embed(
            [q.text for q in conv.questions], "query", label="questions"
        )
        self.mem = stack.enter_context(
            memcore.Memory(stack.enter_context(tempfile.TemporaryDirectory()), model=None)
        )
        self.mem.store_memories(
            texts,
            vectors=passage_v,
            metadatas=[{"dia_id": t.dia_id} for t in conv.turns],
            thread_ids=[f"session-{t.session}" for t in conv.turns],
            memory_type="episodic",
        )
        ats, position = [], {}
        for t in conv.turns:
            position[t.session] = position.get(t.session, -1) + 1
            ats.append(t.at(position[t.session]))
        keys = [
            _core.turn_vector_text(int(at.timestamp() * 1_000_000), t.content)
            for t, at in zip(conv.turns, ats, strict=True)
        ]
        turn_v = embedding_cache.embed(keys, "passage", label=f"{conv.sample_id} turns")
        self.log = stack.enter_context(
            memcore.Memory(stack.enter_context(tempfile.TemporaryDirectory()), model=None)
        )
        for i, (t, at) in enumerate(zip(conv.turns, ats, strict=True)):
            self.log.record_turn(
                f"{conv.sample_id}-session-{t.session}",
                t.content,
                turn_id=t.dia_id,
                at=at,
                vector=turn_v[i],
            )

    def search(self, path: str, qi: int, text: str | None = None) -> Ranked:
        q = self.conv.questions[qi]
        if path == "recall":
            hits = self.mem.recall(text or q.text, limit=DEPTH, vector=self.query_v[qi])
            return [(h.memory.metadata["dia_id"], h.scores.fused) for h in hits]  # type: ignore[index]
        result = self.log.retrieve_context(
            text or q.text,
            limit=DEPTH,
            token_budget=1_000_000,
            vector=self.query_v[qi],
            recency_half_life_days=36_500.0,
        )
        return [(item.turn.turn_id, item.score) for item in result.items]


def spread(ranked: Ranked, m: int, cap: int) -> list[str]:
    head = [d for d, _ in ranked[:m]]
    taken = Counter(session(d) for d in head)
    rounds = []
    for d, _ in ranked[m:]:
        rounds.append((taken[session(d)] // cap, d))
        taken[session(d)] += 1
    return head + [d for _, d in sorted(rounds, key=lambda r: r[0])]


def soft(ranked: Ranked, m: int, lam: float) -> list[str]:
    scored = list(zip([d for d, _ in ranked], z([s for _, s in ranked]), strict=True))
    chosen, rest = scored[:m], scored[m:]
    taken = Counter(session(d) for d, _ in chosen)
    while rest:
        best = max(range(len(rest)), key=lambda j: rest[j][1] - lam * taken[session(rest[j][0])])
        d = rest.pop(best)
        chosen.append(d)
        taken[session(d[0])] += 1
    return [d for d, _ in chosen]


def cooc_terms(s: Stores, text: str, m: int, mode: str) -> list[str]:
    n = len(s.docs)
    asked = [w for w in words(text) if s.df[w] > 0 and w not in s.names]
    scores: Counter[str] = Counter()
    for w in asked:
        holding = [d for d in s.docs if w in d]
        if len(holding) > 0.05 * n:
            continue
        co = Counter(t for d in holding for t in d if t != w)
        for t, c in co.items():
            if t in s.names or t in asked or s.df[t] < 2:
                continue
            idf = math.log(n / s.df[t])
            scores[t] += (c / len(holding)) * idf if mode == "pmi" else c * idf
    return [t for t, _ in sorted(scores.items(), key=lambda p: (-p[1], p[0]))[:m]]


def session_view(s: Stores, ranked: Ranked, text: str, n: int, w: float) -> list[str]:
    counts: dict[int, Counter[str]] = {}
    for t in s.conv.turns:
        counts.setdefault(t.session, Counter()).update(x for x in words(t.text) if x not in s.names)
    df = Counter(x for c in counts.values() for x in c)
    asked = set(words(text))
    about = {}
    for sid, c in counts.items():
        salient = sorted(
            ((x, k * math.log(1 + len(counts) / df[x])) for x, k in c.items()),
            key=lambda p: (-p[1], p[0]),
        )[:n]
        about[sid] = sum(v for x, v in salient if x in asked)
    fused = z([sc for _, sc in ranked]) + w * z([about.get(session(d), 0.0) for d, _ in ranked])
    return [ranked[i][0] for i in np.argsort(-fused, kind="stable")]


def hop(
    s: Stores, path: str, qi: int, ranked: Ranked, h: int, nw: int, m: int, names_only: bool
) -> list[str]:
    text = s.conv.questions[qi].text
    asked = set(words(text))
    seen: set[int] = set()
    terms: list[str] = []
    for d, _ in ranked[:h]:
        turn = s.turn[d]
        if turn.session in seen:
            continue
        seen.add(turn.session)
        capitals = {c.lower() for c in re.findall(r"(?<![.!?] )(?<!^)\b[A-Z][a-z]{2,}", turn.text)}
        candidates = [
            w
            for w in set(words(turn.text))
            if w not in asked
            and w not in s.names
            and s.df[w] >= 2
            and (not names_only or w in capitals or w + "s" in capitals)
        ]
        terms += sorted(candidates, key=lambda w: (s.df[w], w))[:nw]
    second = [d for d, _ in s.search(path, qi, f"{text} {' '.join(terms)}")]
    out = [d for d, _ in ranked[:m]]
    a, b = [d for d, _ in ranked[m:]], second
    while (a or b) and len(out) < DEPTH:
        for source in (a, b):
            while source:
                d = source.pop(0)
                if d not in out:
                    out.append(d)
                    break
    return out


def asks_what(text: str) -> bool:
    """The question starts with "what" or "which" (it asks for things, not a time or a
    yes/no): the gate of the ``hop what/which`` cells."""
    return re.match(r"\s*(what|which)\b", text, re.IGNORECASE) is not None


def score(stores: list[Stores], lists: Lists) -> dict[str, float]:
    def mean(values: list[float]) -> float:
        return round(100 * sum(values) / len(values), 1)

    by: dict[str, list[float]] = {}
    for (ci, qi), found in lists.items():
        q = stores[ci].conv.questions[qi]
        conv = stores[ci].conv.sample_id
        for k in (1, 5, 10):
            by.setdefault(f"R@{k}", []).append(recall_at(found, q.gold, k))
        r10 = recall_at(found, q.gold, 10)
        by.setdefault(locomo.CATEGORIES[q.category], []).append(r10)
        by.setdefault(conv, []).append(r10)
        if q.category == 1:
            by.setdefault(f"mh {conv}", []).append(r10)
    return {name: mean(v) for name, v in by.items()}


def cells() -> Iterator[tuple[str, Callable[[Stores, str, int, Ranked], list[str]]]]:
    yield "today", lambda s, p, qi, r: [d for d, _ in r]
    for m in (0, 3, 5, 7):
        for cap in (1, 2, 3, 4):
            yield f"spread m {m} cap {cap}", lambda s, p, qi, r, m=m, c=cap: spread(r, m, c)
    for lam in (0.1, 0.25, 0.5, 1.0):
        for m in (0, 5):
            yield f"soft m {m} lam {lam}", lambda s, p, qi, r, m=m, lam=lam: soft(r, m, lam)
    for mode in ("pmi", "tfidf"):
        for m in (2, 4, 8):

            def expand(
                s: Stores, p: str, qi: int, r: Ranked, mode: str = mode, m: int = m
            ) -> list[str]:
                text = s.conv.questions[qi].text
                extra = " ".join(cooc_terms(s, text, m, mode))
                return [d for d, _ in s.search(p, qi, f"{text} {extra}")]

            yield f"cooc {mode} m {m}", expand
    for n in (10, 20, 40):
        for w in (0.25, 0.5, 1.0):
            yield (
                f"sessions n {n} w {w}",
                lambda s, p, qi, r, n=n, w=w: session_view(s, r, s.conv.questions[qi].text, n, w),
            )
    for names_only in (False, True):
        for h, nw, m in (
            (3, 1, 3),
            (3, 3, 3),
            (3, 3, 5),
            (5, 1, 5),
            (5, 2, 5),
            (5, 3, 3),
            (5, 3, 5),
            (5, 3, 7),
            (10, 5, 5),
        ):
            label = f"hop{' names' if names_only else ''} h {h} nw {nw} m {m}"
            yield (
                label,
                lambda s, p, qi, r, h=h, nw=nw, m=m, o=names_only: hop(s, p, qi, r, h, nw, m, o),
            )
    for h, nw, m in ((3, 3, 5), (5, 3, 5), (10, 5, 5)):

        def gated(
            s: Stores, p: str, qi: int, r: Ranked, h: int = h, nw: int = nw, m: int = m
        ) -> list[str]:
            if asks_what(s.conv.questions[qi].text):
                return hop(s, p, qi, r, h, nw, m, False)
            return [d for d, _ in r]

        yield f"hop what/which h {h} nw {nw} m {m}", gated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.quality.multihop_lab")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    args = parser.parse_args(argv)
    reason = embedding_cache.available()
    if reason is not None:
        print(f"needs the embedding model: {reason}", file=sys.stderr)
        return 1
    columns = (
        "R@1",
        "R@5",
        "R@10",
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    )
    with ExitStack() as stack:
        stores = [Stores(c, stack) for c in locomo.load(args.locomo)]
        convs = [s.conv.sample_id for s in stores]
        heads = [*columns, *convs, *(f"mh {c}" for c in convs)]
        print("| path | cell | " + " | ".join(heads) + " |")
        print("|---" * (len(heads) + 2) + "|")
        for path in ("recall", "turns"):
            first = {
                (ci, qi): s.search(path, qi)
                for ci, s in enumerate(stores)
                for qi in range(len(s.conv.questions))
            }
            for label, rerank in cells():
                lists = {(ci, qi): rerank(stores[ci], path, qi, r) for (ci, qi), r in first.items()}
                row = score(stores, lists)
                print(
                    f"| {path} | {label} | " + " | ".join(f"{row[h]:.1f}" for h in heads) + " |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
