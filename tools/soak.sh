#!/usr/bin/env bash
# make soak: the long runs behind the robustness guarantees (hostile input, threads), beyond what `make test` has time for.
#   1. the batch fuzz test with SOAK_FUZZ_CASES generated requests (default 100,000; make test runs 3,000);
#   2. bin/axe as a separate process: the hostile requests one by one (time, peak memory) and a batch of
#      SOAK_LINES lines (default 100,000) with hostile lines mixed in, every answer checked; a closed reader;
#   3. the axe4j.layout.* TVM functions from 8 threads for SOAK_SECONDS (default 30), hostile and ordinary
#      calls mixed, every answer checked.
#   4. the Java property tests with SOAK_PROPERTY_CASES seeded cases each (default 20,000; make test draws 5,000).
#   5. the differential fuzzer: SOAK_PROGRAMS random tile programs (default 100,000) of seed SOAK_FUZZ_SEED (default:
#      the time) against numpy, in watched worker processes; no internal error, wrong answer or hang may remain
#      outside the classes in SOAK_FUZZ_KNOWN_OPEN (docs/fuzzing.md). Shrunk reproducers land in out/soak-fuzz/.
# Core dumps are enabled (ulimit -c unlimited): a crash of the JVM or of TVM leaves a core and fails the soak.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
ulimit -c unlimited
echo "[soak] core dumps enabled (ulimit -c $(ulimit -c)); kernel core_pattern: $(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo unknown)"
bash ci/setup-python.sh
mvn -B --no-transfer-progress -q -DskipTests install

mvn -B --no-transfer-progress -q verify -pl examples -Dtest=BatchFuzzTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Daxe4j.fuzz.cases="${SOAK_FUZZ_CASES:-100000}"
echo "[soak] batch fuzz test: ${SOAK_FUZZ_CASES:-100000} generated requests, all answered exactly or with their kind"

python3 tools/soak_cli.py --lines "${SOAK_LINES:-100000}"

scratch="$(mktemp -d)"
status=0
(cd "$scratch" && PYTHONPATH="$OLDPWD/python" "$OLDPWD/.venv/bin/python" "$OLDPWD/tools/soak_tvm.py" --threads 8 \
  --seconds "${SOAK_SECONDS:-30}") || status=$?
cores=$(find "$scratch" . -maxdepth 1 -name 'core*' -newer tools/soak.sh -type f 2>/dev/null | wc -l)
rm -rf "$scratch"
if [ "$status" -ne 0 ] || [ "$cores" -ne 0 ]; then
  echo "[soak] FAILED: TVM soak exit status $status ($([ "$status" -gt 128 ] && echo "signal $((status - 128))" || echo "no signal")), $cores core file(s)"
  exit 1
fi
mvn -B --no-transfer-progress -q test -pl tvm-bridge,axe-layout,axe-passes,schedules \
  -Daxe4j.cases="${SOAK_PROPERTY_CASES:-20000}"
echo "[soak] Java property tests: ${SOAK_PROPERTY_CASES:-20000} seeded cases per property, all passed"

PYTHONPATH=python .venv/bin/python -m axe4j_tools.fuzz --seed "${SOAK_FUZZ_SEED:-$(date +%s)}" \
  --count "${SOAK_PROGRAMS:-100000}" --out out/soak-fuzz --known-open "${SOAK_FUZZ_KNOWN_OPEN:-none}"
echo "[soak] differential fuzzer: ${SOAK_PROGRAMS:-100000} random tile programs, none wrong, stopped or hung"

echo "[soak] all soak runs passed in $(( $(date +%s) - start )) s (no crash, no core)"
