#!/usr/bin/env bash
# The new TIRx lane's tests (python/tests_tirx) in .venv-tirx, with the jars of this checkout: axe4j.install() on
# tvm_tirx, the layout globals against enumeration and against the 0.27 lane's answers (which .venv computes in a
# process of its own), and the code blocks of docs/tvm-versions.md. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup-tirx.sh
if [ -z "${AXE4J_CLASSPATH:-}" ] && ! compgen -G "axe-passes/target/axe-passes-*.jar" > /dev/null; then
  echo "[test-tirx] jars missing: building axe-passes and the modules it needs" >&2
  mvn -B --no-transfer-progress -q -DskipTests package -pl axe-passes -am
fi
mkdir -p out/test-reports
PYTHONPATH="$PWD/python" exec .venv-tirx/bin/python -m pytest -p no:cacheprovider \
  --junitxml=out/test-reports/python-tirx.xml "$@" python/tests_tirx
