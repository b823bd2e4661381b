"""Deterministic synthetic workloads: memory texts, their vectors, queries and an entity graph.

Everything is seeded. Texts are generated as one sequence, so the first n texts are the same
whatever the largest scale is: a smaller scale is a prefix of the larger one, and embedding
the largest corpus once serves every scale (see embedding_cache).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from benches import embedding_cache
from benches.vocabulary import DOCUMENT_TEMPLATES, QUERY_TEMPLATES, RELATION_TYPES, SLOTS

DIM = 384
# Zipf exponent of slot words: about that of word frequencies in English text.
ZIPF_S = 1.07
_SLOT = re.compile(r"\{(\w+)\}")
_CORPUS_SEED, _QUERY_SEED, _EXTRA_SEED, _GRAPH_SEED = 7, 11, 13, 17


@dataclass(frozen=True)
class EntityGraph:
    """Entities and directed relations (about 3 per entity), for the PPR rows."""

    names: list[str]
    types: list[str]
    edges: np.ndarray  # (m, 2) int32: source, target entity index
    relation_types: list[str]


@dataclass(frozen=True)
class Workload:
    """One scale's data. `extra_*` are fresh memories for the store benches."""

    scale: int
    texts: list[str]
    vectors: np.ndarray
    queries: list[str]
    query_vectors: np.ndarray
    extra_texts: list[str]
    extra_vectors: np.ndarray
    vector_source: str

    def graph(self) -> EntityGraph:
        return entity_graph(self.scale // 2)


class _Sampler:
    """Zipf-weighted choices from the slot lists, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        # Cumulative weights as plain lists: bisect on a float is ~20x cheaper per draw than
        # rng.choice(p=...), which re-validates p each call (100k sentences, ~10 draws each).
        self._cdf = {name: np.cumsum(_zipf(len(words))).tolist() for name, words in SLOTS.items()}

    def word(self, slot: str) -> str:
        words = SLOTS[slot]
        index = bisect.bisect_right(self._cdf[slot], self.rng.random())
        return words[min(index, len(words) - 1)]

    def fill(self, template: str) -> str:
        return _SLOT.sub(lambda m: self._value(m.group(1)), template)

    def _value(self, slot: str) -> str:
        if slot == "person":
            return f"{self.word('first')} {self.word('last')}"
        if slot == "project":
            return f"{self.word('adj')}-{self.word('noun')}"
        if slot == "ticket":
            return f"#{int(self.rng.integers(100, 10_000))}"
        if slot == "version":
            major, minor, patch = self.rng.integers(0, [5, 20, 30])
            return f"v{major}.{minor}.{patch}"
        if slot == "day":
            return str(int(self.rng.integers(1, 29)))
        return self.word(slot)


def _zipf(n: int, s: float = ZIPF_S) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** s
    return weights / weights.sum()


def _generate(count: int, templates: tuple[str, ...], seed: int, avoid: set[str]) -> list[str]:
    """`count` distinct sentences; duplicates are redrawn so exact ties do not blur recall."""
    sampler = _Sampler(seed)
    template_p = _zipf(len(templates)) * 0.5 + 0.5 / len(templates)  # skewed, none starved
    seen = set(avoid)
    out: list[str] = []
    while len(out) < count:
        template = templates[int(sampler.rng.choice(len(templates), p=template_p))]
        text = sampler.fill(template)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


@cache
def corpus(count: int) -> list[str]:
    """The first `count` memory texts of the one seeded sequence."""
    return _generate(count, DOCUMENT_TEMPLATES, _CORPUS_SEED, set())


@cache
def queries(count: int) -> list[str]:
    return _generate(count, QUERY_TEMPLATES, _QUERY_SEED, set())


@cache
def extras(count: int, corpus_size: int) -> list[str]:
    """Fresh memories for the store benches, none of them already in the corpus."""
    return _generate(count, DOCUMENT_TEMPLATES, _EXTRA_SEED, set(corpus(corpus_size)))


def _entity_names() -> list[tuple[str, str]]:
    """Names that occur in the memory texts, so stored memories link to them by mention."""
    named = [(f"{f} {last}", "person") for f in SLOTS["first"] for last in SLOTS["last"]]
    named += [(f"{a}-{n}", "project") for a in SLOTS["adj"] for n in SLOTS["noun"]]
    named += [(o, "organization") for o in SLOTS["org"]]
    named += [(c, "city") for c in SLOTS["city"]]
    return named


@cache
def entity_graph(count: int) -> EntityGraph:
    """`count` entities with 3 outgoing relations each, targets drawn with Zipf weights so a
    few hubs collect many edges (the largest about 3% of them at 50k entities), as people and
    projects do in a real memory graph. The first ~10k are the people, projects, organisations
    and cities of the texts; the rest are services that no memory names."""
    rng = np.random.default_rng(_GRAPH_SEED)
    named = _entity_names()[:count]
    named += [(f"service-{i}", "service") for i in range(count - len(named))]
    sources = np.repeat(np.arange(count, dtype=np.int64), 3)
    ranks = rng.choice(count, size=sources.size, p=_zipf(count, 0.8))
    targets = rng.permutation(count)[ranks]
    self_loop = targets == sources
    targets[self_loop] = (targets[self_loop] + 1) % count
    kinds = rng.integers(0, len(RELATION_TYPES), size=sources.size)
    # The store keeps one relation per (source, target, type): drop repeats up front so the
    # peers see exactly the graph memcore holds.
    triples = np.unique(np.stack([sources, targets, kinds], axis=1), axis=0)
    return EntityGraph(
        names=[name for name, _ in named],
        types=[kind for _, kind in named],
        edges=triples[:, :2].astype(np.int32),
        relation_types=[RELATION_TYPES[k] for k in triples[:, 2]],
    )


def hashed_vectors(texts: list[str]) -> np.ndarray:
    """Stand-in vectors when the real model is unavailable: a sum of per-word random unit
    vectors, so texts that share words are near each other (unlike Gaussian noise)."""
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    basis: dict[str, np.ndarray] = {}
    for i, text in enumerate(texts):
        for word in text.lower().split():
            if word not in basis:
                seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest())
                basis[word] = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            out[i] += basis[word]
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out


def build(scale: int, *, max_scale: int, n_queries: int, n_extra: int) -> Workload:
    """The workload of `scale` memories (a prefix of the `max_scale` corpus)."""
    texts = corpus(max_scale)
    query_texts = queries(n_queries)
    extra_texts = extras(n_extra, max_scale)
    if embedding_cache.available() is None:
        vectors = embedding_cache.embed(texts, "passage", label=f"{max_scale:,} memories")
        query_vectors = embedding_cache.embed(query_texts, "query", label="queries")
        extra_vectors = embedding_cache.embed(extra_texts, "passage", label="extra memories")
        source = "all-MiniLM-L6-v2 int8 (real embeddings)"
    else:
        vectors = hashed_vectors(texts)
        query_vectors = hashed_vectors(query_texts)
        extra_vectors = hashed_vectors(extra_texts)
        source = f"hashed bag-of-words stand-in ({embedding_cache.available()})"
    return Workload(
        scale=scale,
        texts=texts[:scale],
        vectors=np.ascontiguousarray(vectors[:scale]),
        queries=query_texts,
        query_vectors=query_vectors,
        extra_texts=extra_texts,
        extra_vectors=extra_vectors,
        vector_source=source,
    )


def exact_top_k(vectors: np.ndarray, query_vectors: np.ndarray, k: int) -> np.ndarray:
    """Exact cosine top-k indices per query (vectors are unit length), best first."""
    out = np.empty((len(query_vectors), k), dtype=np.int64)
    for start in range(0, len(query_vectors), 256):
        sims = query_vectors[start : start + 256] @ vectors.T
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        order = np.take_along_axis(sims, part, axis=1).argsort(axis=1)[:, ::-1]
        out[start : start + 256] = np.take_along_axis(part, order, axis=1)
    return out


def recall_at_k(
    found: list[list[int]], exact: np.ndarray, vectors: np.ndarray, query_vectors: np.ndarray
) -> float:
    """Mean recall@k of `found` against the exact top-k, counting a tie with the k-th exact
    neighbour as correct (two equally distant memories are equally right answers)."""
    k = exact.shape[1]
    total = 0.0
    for qi, ids in enumerate(found):
        kth = float(query_vectors[qi] @ vectors[exact[qi, -1]])
        sims = vectors[np.asarray(ids[:k], dtype=np.int64)] @ query_vectors[qi] if ids else []
        total += sum(1 for s in sims if s >= kth - 1e-6) / k
    return total / max(len(found), 1)
