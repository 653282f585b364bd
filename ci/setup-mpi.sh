#!/usr/bin/env bash
# Open MPI (Debian's packages) and mpi4py in .venv, for the distributed-tensor tests (docs/mesh.md).
# Idempotent: apt runs only when mpirun is missing, pip only when mpi4py does not import.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mpirun >/dev/null 2>&1; then
  echo "[setup-mpi] installing openmpi-bin libopenmpi-dev" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends openmpi-bin libopenmpi-dev
fi
if ! .venv/bin/python -c 'import mpi4py' 2>/dev/null; then
  echo "[setup-mpi] installing mpi4py into .venv" >&2
  .venv/bin/python -m pip install -q "mpi4py==4.0.3"
fi
