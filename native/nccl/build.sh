#!/usr/bin/env bash
# Builds native/build/libaxe4j_nccl.so (axe4j's NCCL executor, native/nccl/axe4j_nccl.h) with the CUDA 13 nvcc
# and NCCL's header from the venv's PyPI wheels (nvidia-cuda-nvcc, nvidia-nccl-cu13: ci/setup-mpi.sh). No GPU
# needed. The CUDA runtime is linked statically and libnccl.so.2 dynamically, by soname and without an rpath, so
# the library runs against whichever NCCL the process loads first (axe4j.mesh.nccl_runtime preloads one: the
# AXE4J_NCCL_LIB file, else the nvidia/nccl wheel's, else the system's). Usage: bash native/nccl/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
CU=$($PY -c 'import nvidia.cu13, os; print(list(nvidia.cu13.__path__)[0])')
NCCL=$($PY -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null) || {
  echo "nvidia-nccl-cu13 is not installed in .venv: run bash ci/setup-mpi.sh" >&2; exit 1; }
mkdir -p native/build
# sm_80 (with PTX for later GPUs to JIT), sm_90 (Hopper), sm_100 (Blackwell): the kernels are plain copies.
"$CU/bin/nvcc" -O2 -std=c++17 -shared -Xcompiler -fPIC -Xcompiler -fvisibility=hidden --cudart static \
  -gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_100,code=sm_100 -I"$CU/include" -I"$NCCL/include" \
  native/nccl/axe4j_nccl.cu -o native/build/libaxe4j_nccl.so -L"$CU/lib" -L"$NCCL/lib" -l:libnccl.so.2
echo native/build/libaxe4j_nccl.so
