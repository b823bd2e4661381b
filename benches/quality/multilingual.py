"""Keyword search beyond English: does `search_text(word)` find the memory that says it?

benches/quality/multilingual.jsonl (written for this project) holds 210 short memories, 30
each in Chinese, Japanese, Korean, German, French, Spanish and Portuguese, each with the
words a user would search it by. A word is asked as it is written ("München", "上海") and,
where it carries diacritics, as a user types it without them ("Munchen", "montreal"): the
second kind is told apart by not occurring in the text as written. A CJK word of one
character (猫, 海, 빵) is a kind of its own: the character pairs CJK text indexes as
(rust/memcore/src/text/analyzer.rs) do not hold it.

All memories go into one store without an embedding model (BM25 alone, what keyword
search and a model-less `recall` rank by). A query's relevant memories are every memory
holding its word: as a substring in CJK text (no spaces between words there), as a whole
word elsewhere, compared without case and diacritics. R@k counts the share of them in the
top k, capped at k (a word several memories hold is not asked to put all of them first).
"""

from __future__ import annotations

import json
import re
import tempfile
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benches.quality.metrics import Scores, table_row

DATA = Path(__file__).resolve().parent / "multilingual.jsonl"
LANGUAGES = ("zh", "ja", "ko", "de", "fr", "es", "pt")
CJK = frozenset({"zh", "ja", "ko"})
KINDS = ("word", "accent-free", "one character")
KS = (1, 5, 10)
METRICS = tuple(f"R@{k}" for k in KS)

Log = Callable[[str], None]


@dataclass(frozen=True)
class Query:
    text: str
    lang: str
    kind: str  # "word" (as written), "accent-free" or "one character" (CJK)
    relevant: frozenset[int]  # indexes of the memories holding the word


def fold(text: str) -> str:
    """Lower case without diacritics, for deciding relevance in Latin script only (the
    decomposition would split Hangul and kana, which are compared as written)."""
    decomposed = unicodedata.normalize("NFD", text.lower().replace("ß", "ss"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def holds(text: str, lang: str, word: str) -> bool:
    if lang in CJK:
        return word in text
    return re.search(rf"(?<!\w){re.escape(fold(word))}(?!\w)", fold(text)) is not None


def load(path: Path = DATA) -> tuple[list[str], list[str], list[Query]]:
    """The memories' texts and languages, and every query with its relevant memories."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    texts = [r["text"] for r in rows]
    langs = [r["lang"] for r in rows]
    queries = []
    for row in rows:
        for word in row["queries"]:
            as_written = word.lower() in row["text"].lower()
            if not holds(row["text"], row["lang"], word):
                raise ValueError(f"{path.name}: {word!r} is not in {row['text']!r}")
            relevant = frozenset(
                i
                for i, (t, lang) in enumerate(zip(texts, langs, strict=True))
                if holds(t, lang, word)
            )
            if row["lang"] in CJK and len(word) == 1:
                kind = "one character"
            else:
                kind = "word" if as_written else "accent-free"
            queries.append(Query(word, row["lang"], kind, relevant))
    return texts, langs, queries


def capped_recall(found: list[int], relevant: frozenset[int], k: int) -> float:
    return len(relevant.intersection(found[:k])) / min(k, len(relevant))


def evaluate(*, log: Log = print, path: Path = DATA) -> dict[str, Any]:
    import memcore

    texts, _, queries = load(path)
    log(f"[multilingual] {len(texts)} memories, {len(queries)} queries")
    buckets: dict[str, Scores] = {}
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        mem = memcore.Memory(Path(tmp) / "store", model=None)
        try:
            ids = [m.id for m in mem.store_memories(texts)]
            index = {memory_id: i for i, memory_id in enumerate(ids)}
            for q in queries:
                hits = mem.search_text(q.text, max(KS))
                found = [index[h.memory.id] for h in hits]
                values: dict[str, float | None] = {
                    f"R@{k}": capped_recall(found, q.relevant, k) for k in KS
                }
                for bucket in ("all", q.lang, q.kind, f"{q.lang}:{q.kind}"):
                    buckets.setdefault(bucket, Scores()).add(values)
                if values["R@5"] != 1.0:
                    misses.append(f"{q.lang} {q.kind} {q.text!r}")
        finally:
            mem.close()
    result: dict[str, Any] = {
        "memories": len(texts),
        "queries": len(queries),
        "buckets": {name: {"n": s.count, **s.means()} for name, s in buckets.items()},
        "misses": misses,
    }
    log(f"[multilingual] R@5 {100 * result['buckets']['all']['R@5']:.1f}, misses {misses}")
    return result


def markdown(data: dict[str, Any]) -> list[str]:
    """The report's section."""
    buckets = data["buckets"]
    lines = [
        f"### Keyword search beyond English ({data['memories']} memories in seven languages, "
        f"{data['queries']} queries; no vectors)",
        "",
        "`search_text(word)` over benches/quality/multilingual.jsonl (written for this "
        "project): Chinese, Japanese and Korean memories asked by a word of theirs, German, "
        "French, Spanish and Portuguese ones by a word as written and without its diacritics "
        '("Munchen" for "München"); one-character CJK words (猫, 海) are a kind of their '
        "own. R@k = the share of the memories holding the word in the top k, capped at k "
        "(benches/quality/multilingual.py).",
        "",
        "| queries | n | " + " | ".join(METRICS) + " |",
        "|---" * (len(METRICS) + 2) + "|",
        f"| all | {table_row(buckets['all'], METRICS)} |",
    ]
    for kind in KINDS:
        if kind in buckets:
            lines.append(f"| {kind} | {table_row(buckets[kind], METRICS)} |")
    for lang in LANGUAGES:
        for kind in KINDS:
            name = f"{lang}:{kind}"
            if name in buckets:
                lines.append(f"| {lang}, {kind} | {table_row(buckets[name], METRICS)} |")
    return [*lines, ""]


if __name__ == "__main__":
    result = evaluate()
    print(json.dumps(result, indent=1, ensure_ascii=False))
    print("\n".join(markdown(result)))
