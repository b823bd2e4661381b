"""Choosing onnxruntime's intra-op thread count for this machine."""

from __future__ import annotations

import os
from pathlib import Path

MAX_DEFAULT_THREADS = 4
"""Past about four threads a small encoder's matmuls stop scaling and the extra threads only
take cores from the Rust core's search and indexing work running beside it."""

_SYSFS_CPU = Path("/sys/devices/system/cpu")


def usable_cpus() -> list[int]:
    """CPUs this process may run on (its affinity mask where the OS exposes one)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def physical_cores() -> int:
    """Physical cores among the usable CPUs.

    Hyper-threads share one core's execution units, so counting them would oversubscribe
    the matmul kernels. Linux exposes the topology in sysfs; elsewhere (or if it is
    unreadable) the usable CPU count is the best available answer.
    """
    cpus = usable_cpus()
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topology = _SYSFS_CPU / f"cpu{cpu}" / "topology"
        try:
            package = (topology / "physical_package_id").read_text().strip()
            core = (topology / "core_id").read_text().strip()
        except OSError:
            return max(len(cpus), 1)
        cores.add((package, core))
    return max(len(cores), 1)


def default_intra_op_threads() -> int:
    """``min(physical cores, 4)``: see :data:`MAX_DEFAULT_THREADS`."""
    return min(physical_cores(), MAX_DEFAULT_THREADS)
