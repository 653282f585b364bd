#!/usr/bin/env bash
# Open MPI (Debian's packages), mpi4py and NCCL's headers/library (PyPI) in .venv, for the distributed-tensor
# tests (docs/mesh.md). Idempotent: apt runs only when mpirun is missing, pip only when a package is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mpirun >/dev/null 2>&1; then
  echo "[setup-mpi] installing openmpi-bin libopenmpi-dev" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends openmpi-bin libopenmpi-dev >/dev/null
fi
# mpi4py's binary wheel loads the system libmpi at run time (Open MPI 4.1 from Debian here), so nothing is
# compiled; a source build of MPI.c takes minutes on two cores.
if ! .venv/bin/python -c 'import mpi4py' 2>/dev/null; then
  echo "[setup-mpi] installing mpi4py into .venv" >&2
  .venv/bin/python -m pip install -q --only-binary=:all: "mpi4py==4.1.2"
fi
# NCCL for CUDA 13 (nccl.h, libnccl.so.2): the NCCL executor (native/nccl, make nccl) is built against it.
if [ ! -f .venv/lib/python3.11/site-packages/nvidia/nccl/include/nccl.h ]; then
  echo "[setup-mpi] installing nvidia-nccl-cu13 into .venv" >&2
  .venv/bin/python -m pip install -q --no-deps "nvidia-nccl-cu13==2.32.3"
fi
