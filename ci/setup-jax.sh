#!/usr/bin/env bash
# JAX on CPU (jax + jaxlib from PyPI, pinned) in .venv, for the GSPMD peer of `make bench-mesh` and its test
# (docs/mesh.md). Idempotent: pip runs only when the pinned jaxlib is not importable. 0.10.2 is the newest
# release with CPython 3.11 wheels; its other requirements (scipy, opt_einsum) are pinned too, and the venv's
# numpy and ml_dtypes already satisfy it, so nothing TVM uses changes.
set -euo pipefail
cd "$(dirname "$0")/.."
JAX_VERSION=0.10.2
if ! .venv/bin/python -c "import jaxlib, sys; sys.exit(jaxlib.__version__ != '$JAX_VERSION')" 2>/dev/null; then
  echo "[setup-jax] installing jax==$JAX_VERSION (CPU) into .venv" >&2
  .venv/bin/python -m pip install -q --only-binary=:all: "jax==$JAX_VERSION" "jaxlib==$JAX_VERSION" \
    "scipy==1.17.1" "opt_einsum==3.4.0"
fi
