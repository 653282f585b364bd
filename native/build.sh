#!/usr/bin/env bash
# Builds the native baseline harnesses into native/build with the CUDA 13 nvcc and cuBLAS from the venv's PyPI
# wheels (ci/requirements.txt). Needs no GPU. Usage: bash native/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CU=$(.venv/bin/python -c 'import nvidia.cu13, os; print(list(nvidia.cu13.__path__)[0])')
mkdir -p native/build
"$CU/bin/nvcc" -O2 -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a \
  -gencode arch=compute_100a,code=sm_100a -I"$CU/include" -L"$CU/lib" -Xlinker -rpath -Xlinker "$CU/lib" \
  native/cublas_gemm_bench.cu -o native/build/cublas_gemm_bench -l:libcublas.so.13 -l:libcudart.so.13
echo native/build/cublas_gemm_bench
