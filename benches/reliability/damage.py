"""Random damage of every file of a data folder, one trial at a time (docs/reliability.md).

Two templates are made once by a writer process that stores memories (each with a vector and
a word of its own), invalidates and deletes some, flushes now and then, and prints what it
was acknowledged: one closed cleanly (one file), one that died with ``os._exit`` after its
last writes (the write-ahead log holds them, the indexes lag behind: what kill -9 leaves).

Each trial copies a template, picks a file of it (first one of its groups at even odds: the
database, its log, the shared-memory index, the lock files, the text index, the vector
index; then a file of the group) and a damage (bit flips, a 4 KiB block of garbage or of
zeros, truncation, deletion), and opens the copy in a subprocess that checks every
acknowledged memory: its content by id, found first by its own word and by its own vector,
a deleted one gone; then ``check()``. The outcome is one of:

- ``refused``: the open raised a memcore error with its code (the store was not served),
  and a second open was refused too (a refusal that the first attempt "used up" would let
  the next open serve the damage). The probe then runs ``repair --accept-empty`` and opens
  what it kept: every memory there must be the one acknowledged and findable, ``check``
  clean (``repaired``; a memory deleted after the damage may be back, as the store was
  then), or the repair is counted as ``repair_failed`` with what went wrong;
- ``healed``: it opened, said so (a warning: an index set aside and rebuilt), and every
  memory is right and ``check`` finds nothing;
- ``opened_correct``: it opened without a word, and every memory is right, ``check`` clean
  (the damage hit something unused, or something rebuilt anyway);
- ``silent_wrong``: it opened and a memory is missing, altered or unfindable, or ``check``
  finds damage the open did not report; must be 0;
- ``crash``: the subprocess died (a signal, an uncaught exception); must be 0.

What a single damaged file cannot show, and this does not try: damage of two files at once
that agree with each other (a log deleted together with its shared-memory index after a
crash leaves no record of the writes it held; docs/reliability.md says why).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

N = 300
DIM = 8
KINDS = ("bitflips", "garbage_block", "zero_block", "truncate", "delete")
BLOCK = 4096

WRITER = textwrap.dedent(
    """
    import json, os, sys
    import numpy as np
    import memcore

    path, crash = sys.argv[1], sys.argv[2] == "crash"
    mem = memcore.Memory(path, model=None)
    state = {{}}
    for i in range({n}):
        v = np.random.default_rng(i).standard_normal({dim}).astype("float32")
        record = mem.store_memory(f"fact number {{i}} marker zq{{i}}x", vector=v)
        state[record.id] = i
        if i % 40 == 39:
            mem.invalidate(record.id, "churn")
        if i % 60 == 59:
            mem.delete_memory(record.id)
            state[record.id] = None
        if i % 100 == 99 and i < {n} - 100:
            mem._engine.flush()
    print(json.dumps(state), flush=True)
    if crash:
        os._exit(0)
    mem.close()
    """
).format(n=N, dim=DIM)

PROBE = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import memcore

    path, expected = sys.argv[1], json.loads(sys.argv[2])

    def verify(mem, kept_only):
        # What is wrong with the memories; with `kept_only` (after a repair that dropped
        # writes on purpose) a missing memory is fine, an altered or unfindable one is not,
        # and a deleted one may be back (its deletion was among the writes dropped: the
        # store is as it was at the damage).
        wrong, kept = [], 0
        for memory_id, i in expected.items():
            if i is None and kept_only:
                continue
            if i is None:
                try:
                    mem.get_memory(memory_id)
                    wrong.append(f"deleted {{memory_id}} is back")
                except memcore.MemoryNotFoundError:
                    pass
                continue
            content = f"fact number {{i}} marker zq{{i}}x"
            try:
                if mem.get_memory(memory_id).content != content:
                    wrong.append(f"{{memory_id}} altered")
                    continue
            except memcore.MemoryNotFoundError:
                if not kept_only:
                    wrong.append(f"{{memory_id}}: MEMORY_NOT_FOUND")
                continue
            except memcore.MemcoreError as exc:
                wrong.append(f"{{memory_id}}: {{exc.code}}")
                continue
            kept += 1
            by_word = mem.search_text(f"zq{{i}}x marker {{i}}", limit=1, include_invalid=True)
            v = np.random.default_rng(i).standard_normal({dim}).astype("float32")
            by_vector = mem.search(vector=v, limit=1, include_invalid=True)
            if [h.memory.id for h in by_word] != [memory_id]:
                wrong.append(f"{{memory_id}} not found by its word")
            if [h.memory.id for h in by_vector] != [memory_id]:
                wrong.append(f"{{memory_id}} not found by its vector")
        try:
            check = mem.check()
            problems = [f"{{p.area}}: {{p.message}}"[:200] for p in check.problems]
        except memcore.MemcoreError as exc:
            problems = [f"check failed: {{exc.code}}"]
        return wrong, problems, kept

    try:
        mem = memcore.Memory(path, model=None)
    except memcore.MemcoreError as exc:
        out = {{"opened": False, "code": exc.code, "message": str(exc)[:300]}}
        try:
            memcore.Memory(path, model=None).close()
            out["second_open"] = "opened"
        except memcore.MemcoreError as again:
            out["second_open"] = again.code
        try:
            memcore.Memory.repair_store(path, accept_empty=True)
            with memcore.Memory(path, model=None) as mem:
                wrong, problems, kept = verify(mem, kept_only=True)
            out["repair"] = {{"wrong": wrong[:3], "wrong_count": len(wrong),
                             "problems": problems[:3], "kept": kept}}
        except memcore.MemcoreError as exc:
            out["repair"] = {{"error": f"{{exc.code}}: {{str(exc)[:200]}}"}}
        print(json.dumps(out))
        sys.exit(0)
    with mem:
        warnings = list(mem._engine.index_status().warnings)
        wrong, problems, _ = verify(mem, kept_only=False)
    print(json.dumps({{"opened": True, "warnings": warnings, "wrong": wrong[:5],
                       "wrong_count": len(wrong), "problems": problems[:3]}}))
    """
).format(dim=DIM)


def templates(home: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    """The two templates, each with what its writer was acknowledged."""
    made = {}
    for kind in ("closed", "crashed"):
        path = home / f"template-{kind}"
        done = subprocess.run(
            [sys.executable, "-c", WRITER, str(path), "crash" if kind == "crashed" else "close"],
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        made[kind] = (path, json.loads(done.stdout.strip().splitlines()[-1]))
    return made


def damage(path: Path, kind: str, rng: random.Random) -> str:
    """Damage the file at `path`; what was done, in words."""
    size = path.stat().st_size
    if kind == "delete" or size == 0:
        path.unlink()
        return "deleted"
    if kind == "truncate":
        keep = rng.randrange(size)
        with path.open("r+b") as f:
            f.truncate(keep)
        return f"truncated to {keep} of {size} bytes"
    data = bytearray(path.read_bytes())
    if kind == "bitflips":
        flips = rng.choice((1, 8, 64))
        for _ in range(flips):
            at = rng.randrange(size)
            data[at] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        return f"{flips} bit flips"
    start = rng.randrange(max(1, size // BLOCK)) * BLOCK if size > BLOCK else 0
    end = min(size, start + BLOCK)
    fill = bytes(end - start) if kind == "zero_block" else rng.randbytes(end - start)
    data[start:end] = fill
    path.write_bytes(bytes(data))
    return f"{kind.replace('_', ' ')} at {start}"


def trial(
    template: Path,
    expected: dict[str, Any],
    work: Path,
    rng: random.Random,
    pick: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """One trial: copy, damage one file, open and check in a subprocess. `pick`: the
    file group and the damage, instead of drawing them (a file of the group is drawn)."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work)
    groups: dict[str, list[Path]] = {}
    for p in sorted(p for p in work.rglob("*") if p.is_file()):
        groups.setdefault(_file_group(str(p.relative_to(work))), []).append(p)
    group, kind = pick or (rng.choice(sorted(groups)), rng.choice(KINDS))
    target = rng.choice(groups[group])
    what = damage(target, kind, rng)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(work), json.dumps(expected)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    record: dict[str, Any] = {"file": str(target.relative_to(work)), "damage": what}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {**record, "outcome": "crash", "detail": done.stderr[-500:]}
    seen = json.loads(lines[-1])
    if not seen["opened"]:
        refused = {**record, "code": seen["code"], "detail": seen["message"]}
        if seen["second_open"] == "opened":
            # The first open's refusal was all: the next one served the damage.
            return {
                **refused,
                "outcome": "silent_wrong",
                "silent": "opened on a second try",
                "detail": "opened on a second try",
            }
        repair = seen["repair"]
        if "error" in repair or repair["wrong_count"] or repair["problems"]:
            refused["repair_failed"] = repair
        else:
            refused["repaired_kept"] = repair["kept"]
        return {**refused, "outcome": "refused"}
    if seen["wrong_count"] or seen["problems"]:
        detail = {"wrong": seen["wrong"], "problems": seen["problems"]}
        # Served wrong: a memory missing, altered or unfindable. Otherwise every memory
        # was right and only `check` saw the damage (pages the open does not read).
        silent = "served wrong" if seen["wrong_count"] else "found only by check"
        return {**record, "outcome": "silent_wrong", "silent": silent, "detail": detail}
    outcome = "healed" if seen["warnings"] else "opened_correct"
    return {**record, "outcome": outcome, "detail": seen["warnings"][:2]}


def run(home: Path, *, trials: int, seed: int = 43) -> dict[str, Any]:
    """`trials` random damages over both templates; the counts, and every bad trial."""
    home.mkdir(parents=True, exist_ok=True)
    made = templates(home)
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    by_file: dict[str, Counter[str]] = {}
    bad = []
    repaired = 0
    repair_failed = []
    silent: Counter[str] = Counter()
    for n in range(trials):
        kind = ("closed", "crashed")[n % 2]
        template, expected = made[kind]
        result = trial(template, expected, home / "trial", rng)
        result["template"] = kind
        outcomes[result["outcome"]] += 1
        group = _file_group(result["file"])
        by_file.setdefault(group, Counter())[result["outcome"]] += 1
        if result["outcome"] in ("silent_wrong", "crash"):
            bad.append(result)
        if "silent" in result:
            silent[result["silent"]] += 1
        if "repair_failed" in result:
            repair_failed.append(result)
        elif result["outcome"] == "refused":
            repaired += 1
        print(
            f"  damage {n + 1}/{trials}: {kind} {result['file']} ({result['damage']}): "
            f"{result['outcome']}",
            flush=True,
        )
    return {
        "trials": trials,
        "memories": N,
        "outcomes": {k: outcomes.get(k, 0) for k in _OUTCOMES},
        "by_file": {g: dict(c) for g, c in sorted(by_file.items())},
        "bad": bad,
        "silent": dict(silent),
        # Of the refused stores: those `repair --accept-empty` turned into a sound store
        # of acknowledged memories only, and those it did not.
        "repaired": repaired,
        "repair_failed": repair_failed,
    }


_OUTCOMES = ("refused", "healed", "opened_correct", "silent_wrong", "crash")


def _file_group(name: str) -> str:
    """The file's group: the database, its log, its shared-memory index, a lock file, or
    an index (``index/text``, ``index/vectors``: any of their files)."""
    parts = Path(name).parts
    if parts[-1].endswith(".lock"):
        return "lock files"
    return "/".join(parts[:2]) if parts[0] == "index" else name
