"""Operands and mbarriers that the PTX statements (``_ptx``) and the tensor-core and TMA instructions (``_tensor``)
share: a value uniform over an instruction's threads, a shared-memory address, an output operand, raw bits, an
mbarrier object and the completion of an async copy's bytes on one."""

from __future__ import annotations

import numpy as np

from . import _values as V
from ._errors import KernelFault, NotModelled, thread_name
from ._exec import loaded
from ._memory import Pointer


def _uniform(g, values, what):
    values = np.asarray(values)
    if values.size and not np.all(values == values.reshape(len(values), -1)[0]):
        raise KernelFault(f"kernel '{g.cta.kernel}': {what} differs between the threads of one instruction "
                          f"({thread_name(g.cta.block, g.tids[0])} and others)")
    return values.reshape(len(values), -1)[0] if values.ndim > 1 else values[0]


def shared_address(interp, g, e):
    """Operand that names a shared-memory address: a 32-bit shared address (cvta) or a generic pointer into shared."""
    value = interp.eval(g, e)
    if isinstance(value, Pointer):
        if value.space.kind != "shared":
            raise KernelFault(f"kernel '{g.cta.kernel}': a shared-memory operand points into {value.space}")
        return value.offset
    return np.asarray(value).astype(np.int64)


class LValue:
    """An output operand: a buffer element the instruction writes."""

    def __init__(self, interp, g, e):
        if type(e).__name__ not in ("BufferLoad", "TensorLoad"):
            raise NotModelled(f"output operand {e} is not a buffer element")
        self.interp, self.g, self.e = interp, g, e
        self.dtype = V.numpy_dtype(loaded(e).dtype)

    def read(self):
        return self.interp.eval(self.g, self.e)

    def write(self, values):
        self.interp.store(self.g, loaded(self.e), self.e.indices, np.asarray(values).astype(self.dtype, copy=False))

    def write_bits(self, words):
        """Write raw bits (unsigned integers of the element's width)."""
        words = np.asarray(words).astype({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[self.dtype.itemsize])
        self.write(words.view(self.dtype))


def _as_bits(values, width=4):
    values = np.ascontiguousarray(np.asarray(values))
    if values.dtype.itemsize != width:
        if np.issubdtype(values.dtype, np.integer):
            return values.astype({4: np.uint32, 8: np.uint64, 2: np.uint16}[width])
        raise NotModelled(f"a {values.dtype} operand where a .b{width * 8} register is expected")
    return values.view({4: np.uint32, 8: np.uint64, 2: np.uint16}[width])


class MBarrier:
    """An mbarrier object: expected arrival count, pending arrivals, tx-count and the number of completed phases."""

    def __init__(self, count):
        self.count, self.pending, self.tx, self.phase = count, count, 0, 0

    def settle(self, cta):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count
            cta.shared.publish()


def complete_tx(cta, addr, nbytes):
    bar = cta.mbarriers.get(int(addr))
    if bar is None:
        raise KernelFault(f"kernel '{cta.kernel}': an async copy completes on shared byte {addr}, which holds no "
                          "initialised mbarrier")
    bar.tx -= nbytes
    bar.settle(cta)
