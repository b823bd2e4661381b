"""Update detection on store: does `store_memory(new)` name the old fact it updates?

The labelled pairs in updates.jsonl (written for this project) are an old fact and a new
one that either updates it ("update"), merely shares its topic ("related") or has nothing to
do with it ("unrelated"). Every pair's old fact is stored first, all in one store, so each
new fact meets a realistic background of other memories; then each new fact goes through
`Memory.store_memory` with the real model, and the pair counts as flagged when its old fact
is in `similar` and `action_required` names the supersede call for it. The new fact is
deleted again before the next pair, so every pair sees the same store.

The pairs split in two halves by a hash of their text: the rule's parameters were chosen on
"dev"; "held-out" is the honest number.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benches.quality import cosqa

if TYPE_CHECKING:
    from memcore import Memory

DATA = Path(__file__).resolve().parent / "updates.jsonl"
LABELS = ("update", "related", "unrelated")
HALVES = ("dev", "held-out", "all")
# The quick subset: this many pairs of each label (in file order), background included.
QUICK_PER_LABEL = 12

Log = Callable[[str], None]


@dataclass(frozen=True)
class Pair:
    old: str
    new: str
    label: str
    kind: str

    @property
    def half(self) -> str:
        """ "dev" or "held-out", fixed by the pair's text (not by its place in the file)."""
        digest = hashlib.sha256(f"{self.old}\n{self.new}".encode()).digest()
        return "dev" if digest[0] % 2 == 0 else "held-out"


def load(path: Path = DATA, *, per_label: int | None = None) -> list[Pair]:
    pairs = [Pair(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
    unknown = {p.label for p in pairs} - set(LABELS)
    if unknown:
        raise ValueError(f"{path}: unknown labels {sorted(unknown)}")
    if per_label is not None:
        pairs = [p for label in LABELS for p in [q for q in pairs if q.label == label][:per_label]]
    return pairs


def flags(mem: Memory, pairs: list[Pair]) -> list[tuple[bool, int]]:
    """Per pair: whether its old fact was flagged with the supersede hint, and how many
    other memories of the background were flagged with it."""
    olds = mem.store_memories([p.old for p in pairs])
    out = []
    for pair, old in zip(pairs, olds, strict=True):
        result = mem.store_memory(pair.new)
        ids = [m.id for m in result.similar]
        hint = result.action_required or ""
        flagged = old.id in ids and old.id in hint and "supersede_memory(" in hint
        out.append((flagged, len(ids) - (old.id in ids)))
        mem.delete_memory(result.id)
    return out


def confusion(pairs: list[Pair], found: list[tuple[bool, int]]) -> dict[str, Any]:
    """Per half, per label: pairs, how many were flagged, and other memories flagged."""
    table: dict[str, Any] = {}
    for half in HALVES:
        rows = {}
        for label in LABELS:
            hits = [
                f
                for p, f in zip(pairs, found, strict=True)
                if p.label == label and half in ("all", p.half)
            ]
            rows[label] = {
                "n": len(hits),
                "flagged": sum(flagged for flagged, _ in hits),
                "others_flagged": sum(others for _, others in hits),
            }
        table[half] = rows
    return table


def evaluate(*, quick: bool = False, path: Path = DATA, log: Log = print) -> dict[str, Any]:
    pairs = load(path, per_label=QUICK_PER_LABEL if quick else None)
    log(f"  updates: {len(pairs)} pairs from {path.name}")
    with tempfile.TemporaryDirectory(prefix="updates-") as tmp:
        mem, vectors = cosqa.open_memory(Path(tmp) / "store")
        with mem:
            if mem.embeddings is None:
                raise RuntimeError(f"update detection needs the embedding model: {vectors}")
            found = flags(mem, pairs)
    kinds = sorted({(p.label, p.kind) for p in pairs})
    by_kind = {
        f"{label}/{kind}": {
            "n": sum(1 for p in pairs if (p.label, p.kind) == (label, kind)),
            "flagged": sum(
                f
                for p, (f, _) in zip(pairs, found, strict=True)
                if (p.label, p.kind) == (label, kind)
            ),
        }
        for label, kind in kinds
    }
    return {
        "file": path.name,
        "pairs": len(pairs),
        "background": len(pairs),
        "vectors": vectors,
        "halves": confusion(pairs, found),
        "kinds": by_kind,
    }


def markdown(data: dict[str, Any]) -> list[str]:
    lines = [
        f"### Update detection on store ({data['pairs']} labelled pairs of "
        f"benches/quality/{data['file']}; vectors: {data['vectors']})",
        "",
        "Each pair's new fact stored with `store_memory` into a store holding every pair's old "
        f"fact ({data['background']} memories); flagged = the old fact is in `similar` with the "
        'supersede call. The rule\'s parameters were chosen on the dev half. "Others" counts '
        "other background memories flagged alongside.",
        "",
        "| half | label | n | flagged | % flagged | others flagged |",
        "|---|---|---|---|---|---|",
    ]
    for half in HALVES:
        for label in LABELS:
            row = data["halves"][half][label]
            share = _share(row["flagged"], row["n"])
            lines.append(
                f"| {half} | {label} | {row['n']} | {row['flagged']} | {share} | "
                f"{row['others_flagged']} |"
            )
    lines += [
        "",
        "**flagged by kind (all pairs)**",
        "",
        "| label / kind | n | flagged |",
        "|---|---|---|",
    ]
    for name, row in data["kinds"].items():
        lines.append(f"| {name} | {row['n']} | {row['flagged']} |")
    return [*lines, ""]


def _share(part: int, whole: int) -> str:
    return "—" if whole == 0 else f"{100 * part / whole:.1f}"
