#!/usr/bin/env bash
# Python tests of the TVM bridge (python/tests) in .venv; exits non-zero when any test fails.
# Builds the jars first when the tvm-bridge or schedules jar is missing; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup-python.sh
if [ -z "${AXE4J_CLASSPATH:-}" ] && { ! compgen -G "tvm-bridge/target/tvm-bridge-*.jar" > /dev/null || ! compgen -G "schedules/target/schedules-*.jar" > /dev/null; }; then
  echo "[test-python] jars missing: building schedules and the modules it needs" >&2
  mvn -B --no-transfer-progress -q -DskipTests package -pl schedules -am
fi
exec .venv/bin/python -m pytest -p no:cacheprovider "$@" python/tests
