"""Which TVM this process runs on: apache-tvm 0.27 (Python package ``tvm``) or the new TIRx (apache-tvm-tirx, Python
package ``tvm_tirx``). The two cannot share a process, so each process has one lane (docs/tvm-versions.md).

The lane is the TVM package already imported; else the one installed, ``tvm`` first; ``AXE4J_TVM_LANE`` (``tvm`` or
``tvm_tirx``) chooses where both are installed and neither is imported yet.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType

from ._errors import SetupError

TVM = "tvm"
TIRX = "tvm_tirx"
LANES = (TVM, TIRX)
LANE_ENV = "AXE4J_TVM_LANE"


def name() -> str:
    """``"tvm"`` or ``"tvm_tirx"``: the TVM package this process uses."""
    imported = [lane for lane in LANES if lane in sys.modules]
    if len(imported) > 1:
        raise SetupError("this process has imported both tvm and tvm_tirx; they cannot share a process")
    if imported:
        return imported[0]
    chosen = os.environ.get(LANE_ENV, "").strip()
    if chosen:
        if chosen not in LANES:
            raise SetupError(f"{LANE_ENV}={chosen!r}: must be one of {list(LANES)}")
        return chosen
    for lane in LANES:
        if importlib.util.find_spec(lane) is not None:
            return lane
    raise SetupError("neither apache-tvm (package tvm) nor apache-tvm-tirx (package tvm_tirx) is installed in "
                     f"{sys.prefix}: `make python` makes .venv, `make python-tirx` makes .venv-tirx")


def is_tirx() -> bool:
    """Whether this process runs on the new TIRx (tvm_tirx)."""
    return name() == TIRX


def tvm() -> ModuleType:
    """The TVM package of this lane, imported (``tvm`` or ``tvm_tirx``)."""
    return importlib.import_module(name())


def layout_module() -> ModuleType:
    """The module with ``TileLayout``, ``ComposeLayout``, ``Iter``, ``Axis``: ``<lane>.tirx.layout``."""
    return importlib.import_module(name() + ".tirx.layout")
