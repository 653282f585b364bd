"""A program's arguments (flat memory of each global operand's layout span, values drawn for the op) and what the
destination's memory must hold afterwards: the reference's results at every address (and replica) the destination
region covers in every round, every other element's bits unchanged."""

from __future__ import annotations

import numpy as np

from . import reference
from .spec import Program


def _round_region(operand, extent, t, moving):
    first = operand.start[0] + (t * extent[0] if moving else 0)
    lo = (first, *operand.start[1:])
    return tuple(slice(s, s + e) for s, e in zip(lo, extent))


def _dst_extent(p):
    kept = tuple(e for d, e in enumerate(p.extent) if d not in p.axes)
    return kept or (1,)


class Case:
    """A program's argument arrays (as numpy) and what its destination must hold afterwards."""

    def __init__(self, p: Program):
        rng = np.random.default_rng([p.seed, p.index, 1])
        self.program = p
        self.args = []
        logical = []
        for k, operand in enumerate(p.srcs):
            mem, view = self._source(rng, p, operand, k)
            self.args.append(mem)
            logical.append(view)
        d_mem = reference.values(rng, (p.dst.layout.span(),), p.dst.dtype, "copy", 0)
        self.args.append(d_mem)
        self.before = d_mem.copy()
        self.written = np.zeros(d_mem.shape, bool)
        self.want = np.zeros(d_mem.shape, np.float64)
        self.scale = np.zeros(d_mem.shape, np.float64)
        addr = self._addresses(p.dst)
        moving = p.repeat > 1
        for t in range(p.repeat):
            srcs = [v[_round_region(o, p.extent, t, moving)] for v, o in zip(logical, p.srcs)]
            where = addr[_round_region(p.dst, _dst_extent(p), t, moving)]
            out, scale = reference.compute(p, srcs, d_mem[where])
            for r in p.dst.layout.replica_offsets():
                self.want[where + r] = out
                self.scale[where + r] = scale
                self.written[where + r] = True

    @staticmethod
    def _addresses(operand):
        return operand.layout.addresses()

    def _source(self, rng, p, operand, k):
        lay = operand.layout
        mem = reference.values(rng, (lay.span(),), operand.dtype, p.op, k)
        addr = lay.addresses()
        view = mem[addr]
        for r in lay.replica_offsets():   # every replica holds the element's value
            mem[addr + r] = view
        return mem, view

    def arrays(self):
        """Fresh copies of the arguments: flat memory of each global operand's layout span."""
        return [a.copy() for a in self.args]

    def check(self, got) -> tuple:
        """(class, signature, detail) of the destination memory the kernel left."""
        p = self.program
        got = np.asarray(got).reshape(-1)
        before = self.before.reshape(-1)
        stray = ~self.written.reshape(-1) & (got.view(np.uint8).reshape(got.size, -1)
                                             != before.view(np.uint8).reshape(before.size, -1)).any(axis=1)
        bad = reference.mismatches(p, got.reshape(-1)[self.written.reshape(-1)],
                                   self.want.reshape(-1)[self.written.reshape(-1)],
                                   self.scale.reshape(-1)[self.written.reshape(-1)])
        if not stray.any() and not bad.any():
            return "right", "", ""
        where = np.flatnonzero(self.written.reshape(-1))[bad]
        want = reference.rounded(self.want.reshape(-1), p.dst.dtype)
        text = []
        if bad.any():
            text.append(f"{int(bad.sum())} of {int(self.written.sum())} results differ; first at memory element(s) "
                        f"{where[:4].tolist()}: got {got[where[:4]].tolist()}, numpy {want[where[:4]].tolist()}")
        if stray.any():
            text.append(f"{int(stray.sum())} element(s) outside the destination region were written, e.g. "
                        f"{np.flatnonzero(stray)[:4].tolist()}")
        kind = "values" if bad.any() else "stray writes"
        return "wrong", f"wrong: {kind}: {p.target if p.cuda else 'llvm'} {p.op} {p.dtype}->{p.dst.dtype}", \
            "; ".join(text)
