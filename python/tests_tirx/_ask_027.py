"""Everything python/tests_tirx asks the 0.27 lane, in one process of .venv (one JVM start): the answers to the seeded
layout cases and the 0.27 code blocks of docs/tvm-versions.md. Prints JSON."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import axe4j  # noqa: E402
from axe4j import _lane  # noqa: E402

import _doc_blocks  # noqa: E402
import _layout_cases  # noqa: E402

axe4j.install()
print(json.dumps({"lane": _lane.name(), "answers": _layout_cases.answers(), "doc_blocks": _doc_blocks.run("tvm")}))
