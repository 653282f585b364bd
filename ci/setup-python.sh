#!/usr/bin/env bash
# Creates .venv with the pinned TVM stack. Idempotent: a second run only checks a stamp.
set -euo pipefail
cd "$(dirname "$0")/.."
REQ=ci/requirements.txt
STAMP=.venv/.axe4j-stamp
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ -x .venv/bin/python ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  exit 0
fi
echo "[setup] creating .venv with $(tr '\n' ' ' < "$REQ")" >&2
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r "$REQ"
echo "$want" > "$STAMP"
