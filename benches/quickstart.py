"""Run README.md's quick start verbatim, offline, with the memcore of this interpreter.

    python benches/quickstart.py [README.md] [--text-only]

Used by ``benches/wheel_check.sh`` and by the release workflow after installing a wheel
into a clean environment: the first ``python`` block under the README's "## Quick start"
runs in an empty temporary folder (so ``import memcore`` finds the installed package, not
a source tree) with every way to the network closed that a library honours (the Hugging
Face hub's offline switch, proxies on a closed port). Its output must be what the README
says it prints. Exit 0 on success, 1 with the reason otherwise. Standard library only.

``--text-only`` runs a short check without the embedding model instead (store, keyword
search, supersede), for a platform where the model's runtime cannot be installed (musl:
onnxruntime publishes no wheels for it).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: What the quick start prints, line by line (the README quotes it).
EXPECTED = [
    "['User lives in Seattle']",
    "['User moved to Austin']",
    "['User lives in Seattle']",
]

TEXT_ONLY = """\
import memcore

with memcore.Memory("./memcore-demo", model=None) as mem:
    old = mem.store_memory("User lives in Seattle", source="explicit")
    new = mem.store_memory("User moved to Austin", source="explicit")
    mem.supersede_memory(old.id, new.id)
    print([h.memory.content for h in mem.search_text("user")])
    print([m.content for m in mem.get_valid_at(old.created.created_at)])
"""
TEXT_ONLY_EXPECTED = ["['User moved to Austin']", "['User lives in Seattle']"]

_CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection fails at once


def quick_start(readme: Path) -> str:
    """The first ``python`` code block of the README's "## Quick start" section."""
    text = readme.read_text(encoding="utf-8")
    section = re.search(r"^## Quick start\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if section is None:
        raise SystemExit(f"{readme}: no '## Quick start' section")
    block = re.search(r"^```python\n(.*?)^```", section.group(1), re.M | re.S)
    if block is None:
        raise SystemExit(f"{readme}: no python block in '## Quick start'")
    return block.group(1)


def offline_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_HOME=str(home / "hf"),
        MEMCORE_CACHE_DIR=str(home / "cache"),
        MEMCORE_DATA_DIR=str(home / "default-store"),
        HTTP_PROXY=_CLOSED,
        HTTPS_PROXY=_CLOSED,
        ALL_PROXY=_CLOSED,
        http_proxy=_CLOSED,
        https_proxy=_CLOSED,
        NO_PROXY="",
        no_proxy="",
        PYTHONNOUSERSITE="1",
    )
    env.pop("PYTHONPATH", None)
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme", nargs="?", default=str(Path(__file__).parents[1] / "README.md"))
    parser.add_argument("--text-only", action="store_true", help="no embedding model (musl)")
    args = parser.parse_args(argv)
    code, expected = (
        (TEXT_ONLY, TEXT_ONLY_EXPECTED)
        if args.text_only
        else (quick_start(Path(args.readme)), EXPECTED)
    )
    with tempfile.TemporaryDirectory(prefix="memcore-quickstart-") as tmp:
        home = Path(tmp)
        run_dir = home / "run"
        run_dir.mkdir()
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=run_dir,
            env=offline_env(home),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        seconds = time.perf_counter() - started
        printed = done.stdout.strip().splitlines()
        if done.returncode != 0 or printed != expected:
            print(done.stdout, end="")
            print(done.stderr, end="", file=sys.stderr)
            print(f"FAIL: the quick start printed {printed}, expected {expected}", file=sys.stderr)
            return 1
        if not (run_dir / "memcore-demo").is_dir() or (home / "default-store").exists():
            print("FAIL: the quick start did not keep to its own folder", file=sys.stderr)
            return 1
    print(f"quick start ok, offline, in {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
