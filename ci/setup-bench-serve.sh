#!/usr/bin/env bash
# The Python peer of `make bench-serve` (benchmarks/requirements-serve.txt: uvicorn, Starlette, uvloop, httptools,
# orjson) in .venv, beside the TVM stack ci/setup-python.sh put there. Benchmark-only: `make test` does not install
# them. Idempotent: pip runs only when the stamp in .venv differs from the requirements or they do not import.
set -euo pipefail
cd "$(dirname "$0")/.."
REQ=benchmarks/requirements-serve.txt
STAMP=.venv/.bench-serve-stamp
want=$(cat "$REQ" ci/setup-bench-serve.sh | sha256sum | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
   && .venv/bin/python -c 'import uvicorn, starlette, uvloop, httptools, orjson' 2>/dev/null; then
  exit 0
fi
echo "[setup-bench-serve] installing $(grep -v '^#' "$REQ" | tr '\n' ' ')into .venv" >&2
.venv/bin/python -m pip install -q --disable-pip-version-check --only-binary=:all: -r "$REQ"
echo "$want" > "$STAMP"
