"""Which emitter turns a plan of each kind into TIR.

An emitter registers itself for the plan kinds it writes (``@emits("cuda-tma")``); ``emitter(kind)`` finds it. The
registry imports no emitter: the first time a plan of a target is seen, it imports that target's package by name
(``axe4j.cuda`` for a ``cuda-*`` kind, ``axe4j.trn`` for ``trn``, ``axe4j.cpu`` for the rest) and the modules its
``EMITTER_MODULES`` names, and those register. So ``axe4j.dispatch`` depends on no target and no target on it.
"""

from __future__ import annotations

import importlib
import threading
from typing import Callable

_EMITTERS: dict[str, Callable] = {}
_lock = threading.Lock()


def emits(*kinds: str):
    """Decorator: ``fn(request, plan) -> PrimFunc`` emits the plans of ``kinds``; a kind has one emitter."""
    def register(fn):
        for kind in kinds:
            other = _EMITTERS.get(kind)
            if other is not None and other is not fn:
                raise ValueError(f"plan kind {kind} has two emitters: {other.__module__}.{other.__qualname__} and "
                                 f"{fn.__module__}.{fn.__qualname__}")
            _EMITTERS[kind] = fn
        return fn
    return register


def target_package(kind: str) -> str:
    """The package whose emitters write plans of ``kind``."""
    if kind.startswith("cuda-"):
        return "axe4j.cuda"
    if kind == "trn" or kind.startswith("trn-"):
        return "axe4j.trn"
    return "axe4j.cpu"


def emitter(kind: str) -> Callable:
    fn = _EMITTERS.get(kind)
    if fn is None:
        with _lock:
            package = importlib.import_module(target_package(kind))
            for name in package.EMITTER_MODULES:
                importlib.import_module(f"{package.__name__}.{name}")
        fn = _EMITTERS.get(kind)
    if fn is None:
        raise ValueError(f"unknown plan kind {kind}")
    return fn


def kinds() -> dict[str, str]:
    """{plan kind: module.function of its emitter} for the kinds registered so far."""
    return {k: f"{f.__module__}.{f.__qualname__}" for k, f in sorted(_EMITTERS.items())}
