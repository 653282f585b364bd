#!/usr/bin/env bash
# The JVM GPU bundle's one command: ./run.sh --out DIR [driver.py options]. Checks every carried case from Java,
# times the GEMMs from Java against cuBLAS, runs the MoE kernels from Java, load-tests the JVM service against the
# Python one, and runs the Python runner on the same kernels for comparison; writes DIR/summary.json and summary.md.
# Without a GPU it says so and exits 0. Needs python3 with numpy (torch for the MoE and launch peers, optional).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
exec python3 "$HERE/driver.py" "$@"
