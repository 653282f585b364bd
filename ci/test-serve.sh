#!/usr/bin/env bash
# The consumer project examples/serve, built against the axe4j artifacts `mvn install` put in the local
# Maven repository, then the functional check of its service on one kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B --no-transfer-progress -q -f examples/serve/pom.xml package
kernel=out/serve-check
rm -rf "$kernel"
.venv/bin/python examples/serve/build_kernel.py "$kernel" --n 64 >/dev/null
.venv/bin/python examples/serve/check_service.py "$kernel" --java examples/serve/target/axe4j-serve-1.0.0.jar
