#!/usr/bin/env bash
# Triton (pinned, the version the GPU machine has) in its own venv, out/triton-venv, with numpy and ml_dtypes only: the
# Triton fused-MoE peer's kernels run there in Triton's CPU interpreter (tools/triton_moe_interp.py, no torch, no GPU),
# which test_moe_block_sort.py runs in `make test`. A venv of its own, so that nothing TVM imports sees Triton.
# Idempotent: pip runs only when the pinned triton is not importable there.
set -euo pipefail
cd "$(dirname "$0")/.."
TRITON_VERSION=3.6.0
VENV=out/triton-venv
numpy_version=$(.venv/bin/python -c 'import numpy; print(numpy.__version__)')
ml_dtypes_version=$(.venv/bin/python -c 'import ml_dtypes; print(ml_dtypes.__version__)')
if ! "$VENV/bin/python" -c "import triton, sys; sys.exit(triton.__version__ != '$TRITON_VERSION')" 2>/dev/null; then
  echo "[setup-triton] installing triton==$TRITON_VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --only-binary=:all: "triton==$TRITON_VERSION" "numpy==$numpy_version" \
    "ml_dtypes==$ml_dtypes_version"
fi
