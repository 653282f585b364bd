"""Hardware facts Python needs, read from ``targets.json``: generated from Java's ``org.axe4j.targets`` (``make
targets-json``), where each fact is written once; ``TargetFactsTest`` fails when the two disagree.

``TRN``: Trainium (partitions, SBUF bytes per partition, PSUM banks and bank bytes, nc_matmul limits); ``CUDA``:
lanes of a warp.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

_FACTS = json.loads((Path(__file__).with_name("targets.json")).read_text())

TRN = MappingProxyType(_FACTS["trn"])
CUDA = MappingProxyType(_FACTS["cuda"])
