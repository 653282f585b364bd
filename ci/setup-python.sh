#!/usr/bin/env bash
# Creates .venv with the pinned TVM stack (ci/requirements.txt) and the axe4j package from python/
# in development mode. Idempotent: when the stamp matches and axe4j imports from this checkout,
# a second run only checks and exits.
set -euo pipefail
cd "$(dirname "$0")/.."
REQ=ci/requirements.txt
STAMP=.venv/.axe4j-stamp
want=$(cat "$REQ" python/pyproject.toml ci/setup-python.sh | sha256sum | cut -d' ' -f1)
if [ -x .venv/bin/python ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
   && .venv/bin/python -c 'import axe4j, os, sys; sys.exit(not axe4j.__file__.startswith(os.getcwd() + "/python/"))' 2>/dev/null; then
  exit 0
fi
# `venv --clear` on a symlink empties the folder it points to (a virtual environment shared with another checkout):
# refuse, and leave that environment to its own checkout's setup.
if [ -L .venv ]; then
  echo "[setup] .venv is a link to $(readlink .venv) and does not match this checkout (stamp or editable axe4j);" \
       "not clearing a shared environment: run ci/setup-python.sh where it belongs, or replace the link" >&2
  exit 1
fi
echo "[setup] creating .venv with $(grep -v '^#' "$REQ" | tr '\n' ' ')and axe4j (editable)" >&2
python3 -m venv --clear .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r "$REQ"
# setuptools warns about editable installs on every build; show its output only when it fails.
if ! log=$(.venv/bin/python -m pip install -q --no-deps -e python/ 2>&1); then
  echo "$log" >&2
  exit 1
fi
echo "$want" > "$STAMP"
