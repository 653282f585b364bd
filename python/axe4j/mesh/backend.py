"""Which executor runs a plan: NCCL for device buffers when libaxe4j_nccl.so loads, the MPI executor for host
buffers, and whether the MPI library could take CUDA pointers itself (GPU-aware MPI; docs/mesh.md)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass


def mpi_cuda_support() -> bool | None:
    """Whether Open MPI was built with CUDA buffer support (``ompi_info``'s ``mpi_built_with_cuda_support``);
    None when that cannot be told (no ``ompi_info``: another MPI, or none)."""
    ompi_info = shutil.which("ompi_info")
    if ompi_info is None:
        return None
    try:
        out = subprocess.run([ompi_info, "--parsable", "--all"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        if line.startswith("mca:mpi:base:param:mpi_built_with_cuda_support:value:"):
            return line.rsplit(":", 1)[1] == "true"
    return None


@dataclass(frozen=True)
class Choice:
    executor: str  # "nccl", "mpi" or "mpi-staged"
    reason: str


def choose(buffers_on_gpu: bool) -> Choice:
    """The executor for buffers in host or device memory on this machine."""
    if not buffers_on_gpu:
        return Choice("mpi", "host buffers: axe4j.mesh.mpi_exec (mpi4py + numpy)")
    try:
        from .nccl_runtime import library

        version = library().nccl_version()
        return Choice("nccl", f"device buffers: libaxe4j_nccl.so with NCCL {version}")
    except (OSError, RuntimeError) as e:
        cuda_mpi = mpi_cuda_support()
        if cuda_mpi:
            why = "this Open MPI takes CUDA pointers, but axe4j's MPI executor packs with numpy on the host"
        else:
            why = "no NCCL executor (" + str(e).splitlines()[0] + ") and no CUDA-aware MPI"
        return Choice("mpi-staged", f"device buffers: copy to host, run axe4j.mesh.mpi_exec, copy back ({why})")
