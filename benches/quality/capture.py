"""Fact capture on labelled user messages: what `memcore.capture.capture_facts` keeps.

Each line of a set is `{"text", "facts": [{"content", "tier"}], "style"}`: a user's message,
the facts a careful person would store from it (third person, "User ...", in the message's
own words; clauses that share one subject are one fact, a repeated subject starts another)
and the tier of each, or none. capture.jsonl was written for this project before the rules
(the dev set, tuned on); capture_dev2.jsonl was written by someone else in other styles as a
held-out set, scored once, and is now a second dev set (tuned on too); capture_holdout2.jsonl,
written afterwards by a third engineer in yet other styles, is the held-out set: it is only
ever scored here as one aggregate row, never looked into (no misses, tiers or styles).

Matching. Both texts are normalised to sets of content words: lowercase, punctuation
stripped; i/me/my/mine/myself/i'm/im/i've/we/us/our/ours/we're/user/user's/team all become
"user", and so do their/them/themselves (a label may say "User keeps their venvs" where
another says "User keeps User's venvs": in a fact about the user they are the user);
not/no/never and every n't form become "not" (a negation is content); a short stopword
list goes; a crude stem strips -'s, plural -s/-es/-ies, -ed, -ing and a final -e.
A captured fact C matches an expected fact E when |E∩C| >= 0.75·|E| and |E∩C| >= 0.5·|C|
(it holds most of the expected words and is not mostly other words), and both or neither
hold "not" (stricter than the overlap alone: "User eats pork" is no match for "User doesn't
eat pork", though it holds three of its four words). Pairs are matched
one to one, best overlap first (Jaccard), so an expected fact is matched at most once.

Reported: facts captured (recall: expected facts matched / expected facts), captured
correct (precision: captured facts that match / captured facts), chit-chat captured (lines
with no expected fact that yield any capture / such lines), tier accuracy (matched pairs
whose tier is the expected one) with each tier's precision and recall over the matched
pairs, per style, and the mean time per message (median of RUNS runs; informative only).

    python -m benches.quality.capture [FILE] [--misses]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcore.capture import TIERS, capture_facts

HERE = Path(__file__).resolve().parent
DEV = HERE / "capture.jsonl"
DEV2 = HERE / "capture_dev2.jsonl"
HELDOUT = HERE / "capture_holdout2.jsonl"
# The match rule: share of the expected words a capture must hold, and share of its own
# words that must be expected ones.
COVER_EXPECTED = 0.75
COVER_CAPTURED = 0.5
RUNS = 5


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_USER = _word_set(
    "i me my mine myself i'm im i've ive i'll i'd we us our ours we're we've we'll "
    "user user's users team team's their theirs them themselves"
)
_NOT = _word_set("not no never nothing dont doesnt didnt cant cannot wont isnt arent")
_STOP = _word_set(
    "a an the is are am was were be been being has have had do does did to of in on at for "
    "with and or but so it its that this as by from will would can could should 's s "
    "just really very there then than some any about into"
)
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'\-/.:$@]*")


@dataclass(frozen=True)
class Line:
    text: str
    facts: tuple[tuple[str, str], ...]  # (content, tier)
    style: str


def is_held_out(path: Path) -> bool:
    """A set named *heldout* / *holdout* (holdout2 included) is scored, never looked into."""
    name = path.name.lower().replace("-", "").replace("_", "")
    return "heldout" in name or "holdout" in name


def load(path: Path) -> list[Line]:
    lines = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        if not raw.strip():
            continue
        row = json.loads(raw)
        facts = tuple((f["content"], f["tier"]) for f in row["facts"])
        if any(tier not in TIERS for _, tier in facts):
            raise ValueError(f"{path.name}:{number}: a tier outside {TIERS}")
        lines.append(Line(row["text"], facts, row.get("style", "-")))
    return lines


def words(text: str) -> frozenset[str]:
    """The content-word set of a fact (the matching rule of the module docstring)."""
    out = set()
    for raw in _TOKEN.findall(text.lower().replace("’", "'")):
        token = raw.strip(".:/'-")
        if not token:
            continue
        if token in _USER or (token.endswith("'s") and token[:-2] in _USER):
            out.add("user")
        elif token in _NOT or token.endswith("n't"):
            out.add("not")
        elif token not in _STOP:
            out.add(_stem(token))
    out.discard("")
    return frozenset(out)


def _stem(token: str) -> str:
    if token.endswith("'s"):
        token = token[:-2]
    token = token.replace("'", "")
    if len(token) > 4 and token.endswith("ies"):
        token = token[:-3] + "y"
    elif token.endswith(("ches", "shes")) or (
        len(token) > 3 and token.endswith("es") and token[-3] in "osxz"
    ):
        token = token[:-2]
    elif len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    for suffix in ("ing", "ed"):
        if len(token) > len(suffix) + 2 and token.endswith(suffix):
            token = token[: -len(suffix)]
            if len(token) > 2 and token[-1] == token[-2] and token[-1] not in "aeiousl":
                token = token[:-1]
            break
    if len(token) > 3 and token.endswith("e"):
        token = token[:-1]
    return token


def matches(expected: str, captured: str) -> bool:
    """Does the captured fact match the expected one (the module docstring's rule)?"""
    return _overlap(words(expected), words(captured)) is not None


def _overlap(e: frozenset[str], c: frozenset[str]) -> float | None:
    """Jaccard of the two word sets when they match, None when they do not."""
    if not e or not c:
        return None
    if ("not" in e) != ("not" in c):
        return None
    common = len(e & c)
    if common >= COVER_EXPECTED * len(e) and common >= COVER_CAPTURED * len(c):
        return common / len(e | c)
    return None


def pair(expected: list[str], captured: list[str]) -> list[tuple[int, int]]:
    """Matched (expected index, captured index) pairs, one to one, best overlap first."""
    e_words = [words(t) for t in expected]
    c_words = [words(t) for t in captured]
    scored = []
    for i, e in enumerate(e_words):
        for j, c in enumerate(c_words):
            score = _overlap(e, c)
            if score is not None:
                scored.append((score, i, j))
    taken_e: set[int] = set()
    taken_c: set[int] = set()
    out = []
    for _, i, j in sorted(scored, key=lambda s: (-s[0], s[1], s[2])):
        if i not in taken_e and j not in taken_c:
            taken_e.add(i)
            taken_c.add(j)
            out.append((i, j))
    return out


@dataclass
class _Tally:
    lines: int = 0
    expected: int = 0
    captured: int = 0
    matched: int = 0
    chat_lines: int = 0
    chat_captured: int = 0
    tier_right: int = 0

    def row(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "expected": self.expected,
            "captured": self.captured,
            "recall": _ratio(self.matched, self.expected),
            "precision": _ratio(self.matched, self.captured),
            "chit_chat_lines": self.chat_lines,
            "chit_chat_captured": _ratio(self.chat_captured, self.chat_lines),
            "tier_accuracy": _ratio(self.tier_right, self.matched),
        }


def _ratio(part: int, whole: int) -> float | None:
    return None if whole == 0 else part / whole


def run(path: Path, *, show_misses: bool) -> dict[str, Any]:
    """Score `path`; the misses are in the result only when `show_misses` is True. A held-out
    set (`is_held_out`) gives its aggregate row only: no misses, tiers or styles."""
    held_out = is_held_out(path)
    show_misses = show_misses and not held_out
    lines = load(path)
    total = _Tally()
    styles: dict[str, _Tally] = {}
    tiers = {t: {"expected": 0, "predicted": 0, "right": 0} for t in TIERS}
    misses: dict[str, list[dict[str, Any]]] = {"missed": [], "wrong": [], "chit_chat": []}
    for line in lines:
        capture = capture_facts(line.text)
        captured = [(f.content, f.tier) for f in capture.facts]
        pairs = pair([c for c, _ in line.facts], [c for c, _ in captured])
        for tally in (total, styles.setdefault(line.style, _Tally())):
            tally.lines += 1
            tally.expected += len(line.facts)
            tally.captured += len(captured)
            tally.matched += len(pairs)
            tally.tier_right += sum(line.facts[i][1] == captured[j][1] for i, j in pairs)
            if not line.facts:
                tally.chat_lines += 1
                tally.chat_captured += bool(captured)
        for i, j in pairs:
            want, got = line.facts[i][1], captured[j][1]
            tiers[want]["expected"] += 1
            tiers[got]["predicted"] += 1
            tiers[want]["right"] += want == got
        if show_misses:
            _note_misses(misses, line, captured, pairs, capture.skipped)
    result: dict[str, Any] = {
        "file": path.name,
        "all": total.row(),
        "tiers": {
            t: {
                "n": v["expected"],
                "precision": _ratio(v["right"], v["predicted"]),
                "recall": _ratio(v["right"], v["expected"]),
            }
            for t, v in tiers.items()
        },
        "styles": {name: tally.row() for name, tally in sorted(styles.items())},
        "ms_per_message": _timing([line.text for line in lines]),
    }
    if held_out:
        result["held_out"] = True
        del result["tiers"], result["styles"]
    if show_misses:
        result["misses"] = misses
    return result


def _note_misses(
    misses: dict[str, list[dict[str, Any]]],
    line: Line,
    captured: list[tuple[str, str]],
    pairs: list[tuple[int, int]],
    skipped: Iterable[Any],
) -> None:
    got_e = {i for i, _ in pairs}
    got_c = {j for _, j in pairs}
    why = [f"{s.reason}: {s.text}" for s in skipped]
    for i, (content, tier) in enumerate(line.facts):
        if i not in got_e:
            misses["missed"].append(
                {
                    "text": line.text,
                    "expected": content,
                    "tier": tier,
                    "captured": captured,
                    "skipped": why,
                }
            )
    kind = "wrong" if line.facts else "chit_chat"
    for j, (content, tier) in enumerate(captured):
        if j not in got_c:
            misses[kind].append(
                {"text": line.text, "captured": content, "tier": tier, "expected": list(line.facts)}
            )
    for i, j in pairs:
        if line.facts[i][1] != captured[j][1]:
            misses.setdefault("tier", []).append(
                {
                    "text": line.text,
                    "captured": captured[j][0],
                    "tier": captured[j][1],
                    "expected_tier": line.facts[i][1],
                }
            )


def _timing(texts: list[str]) -> float:
    """Milliseconds per message: the median of RUNS passes over the whole set."""
    passes = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for text in texts:
            capture_facts(text)
        passes.append((time.perf_counter() - start) * 1000 / max(len(texts), 1))
    return statistics.median(passes)


def evaluate(*, log: Any = print) -> dict[str, Any]:
    """The quality runner's section: the two dev sets, and the held-out set when it exists
    (its aggregate row only)."""
    sets = {"dev": DEV, "dev 2": DEV2}
    if HELDOUT.is_file():
        sets["held-out"] = HELDOUT
    out: dict[str, Any] = {}
    for name, path in sets.items():
        log(f"  capture: {name} ({path.name})")
        out[name] = run(path, show_misses=False)
    return out


def markdown(result: dict[str, Any]) -> str:
    """The section as markdown: one row per set, then the tiers and the styles of each."""
    return "\n".join(markdown_lines(result)) + "\n"


def markdown_lines(result: dict[str, Any]) -> list[str]:
    if "all" in result:  # one set scored on its own (the command line)
        result = {"held-out" if result.get("held_out") else "dev": result}
    sets = result
    lines = [
        "### Fact capture (memcore.capture, rules, no model)",
        "",
        "Each labelled user message through `capture_facts`; a capture matches an expected "
        "fact when it holds >= 75% of its content words and they are >= 50% of its own "
        "(benches/quality/capture.py). Targets: facts captured >= 85%, captured correct "
        ">= 90%, chit-chat captured <= 5%.",
        "",
        "| set | lines | facts | captured | facts captured % | captured correct % | "
        "chit-chat captured % | tier accuracy % | ms / message |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, data in sets.items():
        row = data["all"]
        lines.append(
            f"| {name} ({data['file']}) | {row['lines']} | {row['expected']} | "
            f"{row['captured']} | {_pct(row['recall'])} | {_pct(row['precision'])} | "
            f"{_pct(row['chit_chat_captured'])} | {_pct(row['tier_accuracy'])} | "
            f"{data['ms_per_message']:.3f} |"
        )
    lines += ["", "**tiers, over the matched facts** (precision / recall of each label)", ""]
    lines += ["| set | " + " | ".join(TIERS) + " |", "|---|" + "---|" * len(TIERS)]
    looked_into = {name: data for name, data in sets.items() if not data.get("held_out")}
    for name, data in looked_into.items():
        cells = [
            f"{_pct(t['precision'])} / {_pct(t['recall'])} (n {t['n']})"
            for t in (data["tiers"][tier] for tier in TIERS)
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "**per style**",
        "",
        "| set | style | lines | facts | facts captured % | captured correct % | "
        "chit-chat captured % | tier accuracy % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, data in looked_into.items():
        for style, row in data["styles"].items():
            lines.append(
                f"| {name} | {style} | {row['lines']} | {row['expected']} | "
                f"{_pct(row['recall'])} | {_pct(row['precision'])} | "
                f"{_pct(row['chit_chat_captured'])} | {_pct(row['tier_accuracy'])} |"
            )
    return [*lines, ""]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _misses_md(misses: dict[str, list[dict[str, Any]]]) -> str:
    out = []
    for kind, items in misses.items():
        out.append(f"\n## {kind} ({len(items)})\n")
        for item in items:
            out.append(json.dumps(item, ensure_ascii=False))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.quality.capture")
    parser.add_argument("file", type=Path, nargs="?", default=DEV)
    parser.add_argument("--misses", action="store_true", help="list the misses (not held-out)")
    args = parser.parse_args(argv)
    # A held-out set is scored, never looked into: its misses are not printed.
    show = args.misses and not is_held_out(args.file)
    result = run(args.file, show_misses=show)
    print(markdown(result))
    if show:
        print(_misses_md(result["misses"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
