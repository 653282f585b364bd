"""A faster ``inspect.stack()`` for TVMScript's ``@T.prim_func`` while fuzzing (the same frames, built on demand).

The decorator takes ``inspect.stack()`` on every call, which reads the source context of every frame on the stack;
axe4j's emitters parse a PrimFunc per tile call deep inside ``tvm.compile``, so about half of a CUDA compile went
there. TVMScript reads only the third frame's context and walks frames for closure variables until it finds them:
``LazyStack`` computes each ``FrameInfo`` (``inspect.getframeinfo``, the same call ``inspect.stack`` makes) when it
is first indexed, so what the parser sees is unchanged.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Sequence


class LazyStack(Sequence):
    """The first ``EAGER`` entries are built at once (those frames run on after the call); the rest wait in calls,
    so their line does not change before TVMScript reads them."""

    EAGER = 3

    def __init__(self, frame, context=1):
        self._frames = []
        while frame is not None:
            self._frames.append(frame)
            frame = frame.f_back
        self._context = context
        self._infos = {}
        for k in range(min(self.EAGER, len(self._frames))):
            self[k]

    def __len__(self):
        return len(self._frames)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        k = range(len(self))[k]
        if k not in self._infos:
            frame = self._frames[k]
            info = inspect.getframeinfo(frame, self._context)   # as inspect.getouterframes builds each entry
            self._infos[k] = inspect.FrameInfo(frame, *info, positions=info.positions)
        return self._infos[k]


def _stack(context=1):
    return LazyStack(sys._getframe(1), context)


def install():
    """TVMScript's tirx and ir entry points take a ``LazyStack`` (idempotent)."""
    from tvm.script.parser.ir import entry as ir_entry
    from tvm.tirx.script.parser import entry as tirx_entry

    for module in (tirx_entry, ir_entry):
        if isinstance(module.inspect, types.ModuleType):
            proxy = types.SimpleNamespace(**{n: getattr(inspect, n) for n in dir(inspect) if not n.startswith("__")})
            proxy.stack = _stack
            module.inspect = proxy
