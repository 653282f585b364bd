#!/usr/bin/env bash
# Creates .venv-tirx: the new TIRx (apache-tvm-tirx, Python package tvm_tirx) with the pins of ci/requirements-tirx.txt,
# and this checkout's python/ on its path (a .pth file: the axe4j package itself requires apache-tvm 0.27, which must
# not go in this venv). A venv of its own because tvm_tirx and apache-tvm 0.27 abort when imported into one process.
# Idempotent: when the stamp matches and axe4j imports from this checkout, a second run only checks and exits.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-tirx
REQ=ci/requirements-tirx.txt
STAMP=$VENV/.axe4j-stamp
want=$(cat "$REQ" ci/setup-tirx.sh | sha256sum | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
   && "$VENV/bin/python" -c 'import axe4j, os, sys; sys.exit(not axe4j.__file__.startswith(os.getcwd() + "/python/"))' 2>/dev/null; then
  exit 0
fi
if [ -L "$VENV" ]; then
  echo "[setup-tirx] $VENV is a link to $(readlink "$VENV") and does not match this checkout;" \
       "not clearing a shared environment: run ci/setup-tirx.sh where it belongs, or replace the link" >&2
  exit 1
fi
echo "[setup-tirx] creating $VENV with $(grep -v '^#' "$REQ" | tr '\n' ' ')" >&2
python3 -m venv --clear "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: --no-deps -r "$REQ"
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/python" > "$site/axe4j-checkout.pth"
echo "$want" > "$STAMP"
