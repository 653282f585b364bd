#!/usr/bin/env bash
# All tests, as `make test` and CI run them.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B --no-transfer-progress verify
