"""Starts ``n`` local MPI ranks of a Python module with Open MPI's ``mpirun``.

As root (CI), ``mpirun`` needs ``--allow-run-as-root``; ``--oversubscribe`` lets 8 ranks share 2 cores.
Shared-memory transport without kernel single-copy support (containers) is selected explicitly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys


def mpirun_command(n: int, module: str, *args: str) -> list[str]:
    """``mpirun`` of ``python -m module args`` on n ranks, or of ``python module args`` when it is a .py path."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise RuntimeError("mpirun not found: run `bash ci/setup-mpi.sh` (Open MPI from Debian's packages)")
    cmd = [mpirun, "-n", str(n), "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    target = [module] if module.endswith(".py") else ["-m", module]
    return cmd + [sys.executable, *target, *args]


def run(n: int, module: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs the module on ``n`` ranks; raises with the ranks' output when mpirun fails."""
    env = dict(os.environ)
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    env.setdefault("OMPI_MCA_btl", "self,vader")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    env.setdefault("PMIX_MCA_gds", "hash")
    # More ranks than cores: a rank waiting in MPI yields its core instead of spinning on it.
    env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    # Ranks only run numpy + mpi4py: keep them off TVM's and BLAS's thread pools (2 cores, up to 8 ranks).
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("TVM_NUM_THREADS", "1")
    done = subprocess.run(mpirun_command(n, module, *args), env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"mpirun -n {n} {module} {' '.join(args)} failed ({done.returncode}):\n"
                           f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done
