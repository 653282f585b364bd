"""TVM's CPU thread pool sized from the cores this process may run on.

TVM 0.27 starts its pool with ``TVM_NUM_THREADS`` threads, else with half the hardware threads on x86 (to skip
hyperthread siblings, whether or not there are any): on a 2-vCPU VM with one thread per core that is 1 of the 2
cores, and a parallel GEMM runs at half speed. The pool starts at the first parallel launch, so setting the variable
when axe4j is imported is in time. ``size_thread_pool`` sets it, unless the user did, to

    min(physical cores among the CPUs of this process's affinity mask, the cgroup's CPU quota rounded up)

(cores from ``/sys/devices/system/cpu/cpuN/topology``: one per distinct (package, core id); the quota from cgroup v2's
``cpu.max`` or v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

ENV = "TVM_NUM_THREADS"
SYSFS_CPU = Path("/sys/devices/system/cpu")
CGROUP = Path("/sys/fs/cgroup")


def physical_cores(cpus: set[int], sysfs: Path = SYSFS_CPU) -> int:
    """Distinct (package, core) pairs among ``cpus``; a CPU whose topology sysfs does not show counts as a core."""
    cores = set()
    for cpu in cpus:
        topology = sysfs / f"cpu{cpu}" / "topology"
        try:
            core = (topology / "physical_package_id").read_text().strip(), (topology / "core_id").read_text().strip()
        except OSError:
            core = ("cpu", str(cpu))
        cores.add(core)
    return max(1, len(cores))


def cgroup_quota(root: Path = CGROUP) -> float | None:
    """The CPUs the cgroup's quota allows (e.g. 1.5), or None without a quota."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return None if quota <= 0 else quota / period
    except (OSError, ValueError):
        return None


def usable_cores() -> int:
    """The threads a compute-bound parallel loop should get: physical cores of the affinity mask, within the quota."""
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    cores = physical_cores(set(cpus))
    quota = cgroup_quota()
    return max(1, min(cores, math.ceil(quota)) if quota else cores)


def size_thread_pool() -> tuple[int, str]:
    """Sets ``TVM_NUM_THREADS`` to ``usable_cores()`` unless it is set; returns (threads, where the number came from)."""
    given = os.environ.get(ENV, "").strip()
    if given:
        return int(given) if given.isdigit() else 0, f"{ENV}={given} (set by the caller)"
    threads = usable_cores()
    os.environ[ENV] = str(threads)
    return threads, "axe4j: physical cores of the affinity mask, within the cgroup quota"
