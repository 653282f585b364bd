#!/usr/bin/env bash
# Python tests of the TVM bridge (python/tests) in .venv; exits non-zero when any test fails.
# Builds the jars first when the tvm-bridge or schedules jar is missing; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup-python.sh
bash ci/setup-triton.sh   # out/triton-venv: Triton's interpreter runs the Triton MoE peer (seconds when present)
if [ -z "${AXE4J_CLASSPATH:-}" ] && { ! compgen -G "tvm-bridge/target/tvm-bridge-*.jar" > /dev/null || ! compgen -G "schedules/target/schedules-*.jar" > /dev/null; }; then
  echo "[test-python] jars missing: building schedules and the modules it needs" >&2
  mvn -B --no-transfer-progress -q -DskipTests package -pl schedules -am
fi
# One xdist worker per core this process may run on (at most 4; AXE4J_TEST_WORKERS overrides, 0 = one process):
# the modules are CPU-bound and single-threaded. conftest.py groups modules that share files and hands the slowest
# group left to each free worker.
workers=${AXE4J_TEST_WORKERS:-$(.venv/bin/python -c 'import os; print(min(4, len(os.sched_getaffinity(0))))')}
parallel=()
if [ "$workers" -gt 1 ]; then
  parallel=(-n "$workers" --dist loadgroup)
fi
# out/test-reports/python.xml: each test's time; tools/test_durations.py turns it into python/tests/durations.json.
mkdir -p out/test-reports
exec .venv/bin/python -m pytest -p no:cacheprovider --junitxml=out/test-reports/python.xml "${parallel[@]}" "$@" \
  python/tests
