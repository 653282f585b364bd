"""The old import paths of modules that moved into ``axe4j.cpu``, ``axe4j.cuda`` and ``axe4j.trn``.

Each old module is a shim of two lines: it calls ``moved(__name__, "new.path")``, which warns once
(``DeprecationWarning`` naming the new path) and puts the new module in ``sys.modules`` under the old name, so
``import axe4j.cuda_emit``, its private names and monkeypatching it all reach the one module that the product uses.
A package's already-loaded submodules get the old names too (``axe4j.cuda_interp._ptx`` is ``axe4j.cuda.interp._ptx``).
The shims go in the release after this one. No module of the product imports a shim
(``python/tests/test_import_graph.py`` checks it); they are found by their ``MOVED_TO`` assignment.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings


def moved(old: str, new: str):
    """Warns that ``old`` is now ``new``, aliases ``new`` (and its submodules) under ``old``; returns ``new``."""
    warnings.warn(f"{old} moved to {new}: import {new} instead ({old} goes in the next release)",
                  DeprecationWarning, stacklevel=3)
    module = importlib.import_module(new)
    if hasattr(module, "__path__"):
        for info in pkgutil.iter_modules(module.__path__):
            sub = importlib.import_module(f"{new}.{info.name}")
            sys.modules.setdefault(f"{old}.{info.name}", sub)
    sys.modules[old] = module
    return module
