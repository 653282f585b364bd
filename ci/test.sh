#!/usr/bin/env bash
# All tests, as `make test` and CI run them: the Python environment (idempotent), every Java module's
# JUnit tests (the TVM bridge tests load the venv's TVM) and the install of the artifacts into the local
# Maven repository, the consumer project examples/serve built on them and its service checked, then the
# Python tests of the axe4j package.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash ci/setup-python.sh
# Open MPI, mpi4py and NCCL's headers (the distributed-tensor tests, test_mesh_*.py), JAX on CPU
# (test_mesh_hlo_bytes.py), Triton in out/triton-venv (its interpreter runs the Triton MoE peer,
# test_moe_block_sort.py) and the new TIRx in .venv-tirx (ci/test-tirx.sh) install while Maven builds and tests: downloads and unpacking against a CPU-bound build.
mkdir -p out
extras_log=out/setup-extras.log
( bash ci/setup-mpi.sh && bash ci/setup-jax.sh && bash ci/setup-triton.sh && bash ci/setup-tirx.sh ) > "$extras_log" 2>&1 &
extras=$!
# The property tests draw AXE4J_CASES seeded cases each (5,000 here; `make soak` runs 20,000, `make divergences` 10,000).
mvn -B --no-transfer-progress install -Daxe4j.cases="${AXE4J_CASES:-5000}"
bash ci/test-serve.sh
if ! wait "$extras"; then
  cat "$extras_log" >&2
  echo "[test] setting up MPI, NCCL or JAX failed (log above)" >&2
  exit 1
fi
cat "$extras_log" >&2
if [ -f ci/test-python.sh ]; then
  bash ci/test-python.sh -q
fi
bash ci/test-tirx.sh -q   # the new TIRx lane: python/tests_tirx in .venv-tirx (docs/tvm-versions.md)
bash ci/test-wheel.sh  # the wheel in a fresh venv with no JDK on the machine's PATH (docs/wheel.md)
echo "[test] all tests passed in $(( $(date +%s) - start )) s"
