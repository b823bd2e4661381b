"""What the numbers were measured on: hardware, versions and the code's commit."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

# Distribution names whose versions matter to a reader of the table.
_PACKAGES = (
    "memcore",
    "numpy",
    "onnxruntime",
    "lancedb",
    "pylance",
    "chromadb",
    "tantivy",
    "bm25s",
    "usearch",
    "python-igraph",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _git(repo: Path, *args: str) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _versions() -> dict[str, str]:
    found = {}
    for name in _PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def describe() -> dict[str, Any]:
    """A flat description of the machine, the build and the versions."""
    import memcore

    package_dir = Path(memcore.__file__).resolve().parent
    repo = package_dir.parent.parent
    commit = _git(repo, "rev-parse", "--short", "HEAD")
    dirty = bool(_git(repo, "status", "--porcelain", "--untracked-files=no"))
    native = next(package_dir.glob("_core*.so"), None)
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory": _memory_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "memcore_from": str(package_dir),
        "memcore_commit": (commit + (" + uncommitted changes" if dirty else "")) or "unknown",
        "memcore_build": os.environ.get("MEMCORE_BENCH_BUILD", "unknown (set MEMCORE_BENCH_BUILD)"),
        "native_module": native.name if native else "unknown",
        "versions": ", ".join(f"{k} {v}" for k, v in _versions().items()),
    }
