#!/usr/bin/env bash
# All tests, as `make test` and CI run them: the Python environment (idempotent), every Java module's
# JUnit tests (the TVM bridge tests load the venv's TVM) and the install of the artifacts into the local
# Maven repository, the consumer project examples/serve built on them and its service checked, then the
# Python tests of the axe4j package.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash ci/setup-python.sh
mvn -B --no-transfer-progress install
bash ci/test-serve.sh
bash ci/setup-mpi.sh  # Open MPI, mpi4py, NCCL headers for the distributed-tensor tests (test_mesh_*.py)
bash ci/setup-jax.sh  # JAX on CPU: test_mesh_hlo_bytes.py compiles one module for 8 host devices
if [ -f ci/test-python.sh ]; then
  bash ci/test-python.sh -q
fi
bash ci/test-wheel.sh  # the wheel in a fresh venv with no JDK on the machine's PATH (docs/wheel.md)
echo "[test] all tests passed in $(( $(date +%s) - start )) s"
