"""What a fuzzed program is: plain immutable values (ints, strings, tuples) that print as a runnable description.

A ``Program`` is one tile call (or a tile copy chain around it on CUDA) over ``Operand``s; each operand is a region
``start + extent`` of a buffer whose memory map is a ``Layout``. The reference reads memory through ``Layout.address``,
written here from the iters alone (not through axe4j's or TVM's layout algebra), so a wrong address in either shows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

THREAD_AXES = ("laneid", "warpid", "wid_in_wg", "tid_in_wg")
WORKER_AXIS = "cpu"   # CPU worker w's slab of span_m memory elements follows workers 0..w-1's


@dataclass(frozen=True)
class Layout:
    """Iters grouped by buffer dimension (row-major inside a dimension), each with a stride: an int (memory elements)
    or ``(k, axis)`` (k on a thread axis, registers only). ``replica``: ``(extent, stride)`` pairs, each element stored
    at every replica (a destination replica is written, a source replica only read). ``swizzle``: TIRx's
    ``ComposeLayout(per_element, swizzle_len, atom_len, ...)`` over the tile (shared tiles only)."""

    dims: tuple            # per dimension: the extents of its iters, outer first
    strides: tuple         # one per iter, flattened in the order of ``dims``
    offset: int = 0
    replica: tuple = ()
    swizzle: tuple | None = None

    @property
    def shape(self):
        return tuple(int(np.prod(d)) for d in self.dims)

    @property
    def extents(self):
        return tuple(e for d in self.dims for e in d)

    def slab(self):
        """span_m: the elements one CPU worker's slab spans (1 + the reach of the memory iters and replicas)."""
        return 1 + sum((e - 1) * abs(s) for e, s in (*zip(self.extents, self.strides), *self.replica)
                       if isinstance(s, int))

    def memory_strides(self):
        """Per iter, its stride in memory elements: a thread axis none, the worker axis k * span_m."""
        slab = self.slab()
        return [s if isinstance(s, int) else s[0] * slab if s[1] == WORKER_AXIS else 0 for s in self.strides]

    def on_threads(self):
        return any(not isinstance(s, int) and s[1] != WORKER_AXIS for s in self.strides) or any(
            not isinstance(s, int) for _, s in self.replica)

    def on_workers(self):
        return any(not isinstance(s, int) and s[1] == WORKER_AXIS for s in self.strides)

    def span(self):
        """Elements of memory the layout reaches: 1 + the largest address (swizzles permute inside their atom)."""
        top = self.offset + sum((e - 1) * s for e, s in zip(self.extents, self.memory_strides()))
        top += sum((e - 1) * s for e, s in self.replica if isinstance(s, int))
        return top + 1

    def addresses(self):
        """int64 array of the buffer's shape: the memory element of each logical element (first replica)."""
        shape = self.shape
        index = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
        addr = np.full(index.shape[1], self.offset, np.int64)
        strides = iter(self.memory_strides())
        for dim, extents in enumerate(self.dims):
            rest = index[dim].copy()
            digit_strides = [next(strides) for _ in extents]
            for e, s in reversed(list(zip(extents, digit_strides))):
                addr += (rest % e) * s
                rest //= e
        if self.swizzle is not None:
            raise ValueError(f"{self.describe()}: a swizzled layout stays on chip; the reference reads only global "
                             "memory")
        return addr.reshape(shape)

    def replica_offsets(self):
        offsets = [0]
        for e, s in self.replica:
            offsets = [o + k * (s if isinstance(s, int) else 0) for o in offsets for k in range(e)]
        return sorted(set(offsets))

    def describe(self) -> str:
        """The layout as TVMScript source (``TileLayout(S[...])``/``ComposeLayout``)."""
        ext = ", ".join(str(e) for e in self.extents)
        st = ", ".join(_stride_src(s) for s in self.strides)
        one = "," if len(self.extents) == 1 else ""
        text = f"S[({ext}{one}):({st}{one})]"
        for e, s in self.replica:
            text += f" + R[{e}:{_stride_src(s)}]"
        if self.offset:
            text += f" + {self.offset}"
        text = f"TileLayout({text})"
        if self.swizzle is not None:
            text = f"ComposeLayout({self.swizzle[0]}, {self.swizzle[1]}, {self.swizzle[2]}, {text})"
        return text

    def tvm(self):
        from tvm.tirx import layout as L

        axes = {a: getattr(L, a) for a in THREAD_AXES}
        axes[WORKER_AXIS] = L.Axis.get(WORKER_AXIS)

        def term(s):
            return s if isinstance(s, int) else s[0] @ axes[s[1]]

        spec = L.S[tuple(self.extents):tuple(term(s) for s in self.strides)]
        for e, s in self.replica:
            spec = spec + L.R[e:term(s)]
        if self.offset:
            spec = spec + self.offset
        tile = L.TileLayout(spec)
        if self.swizzle is not None:
            return L.ComposeLayout(*self.swizzle, tile)
        return tile


def _stride_src(s):
    return str(s) if isinstance(s, int) else f"{s[0]} @ {s[1]}"


def compact(shape) -> Layout:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return Layout(tuple((n,) for n in shape), tuple(reversed(strides)))


@dataclass(frozen=True)
class Operand:
    """A region ``start:start+extent`` of a buffer of ``layout.shape`` elements of ``dtype`` in ``memory``
    (``global`` | ``shared`` | ``local``). ``moving``: the region's start along dimension 0 also advances by the
    extent in each of the program's ``repeat`` rounds (a start known only at run time)."""

    layout: Layout
    dtype: str
    start: tuple
    memory: str = "global"
    view: bool = False     # an on-chip tile used through a decl_buffer view with the same layout

    @property
    def shape(self):
        return self.layout.shape


@dataclass(frozen=True)
class Program:
    """One tile op ``op`` on ``dst`` from ``srcs`` over the region ``extent`` (a reduction: over ``extent`` of the
    sources, ``axes`` removed for ``dst``), at ``scope`` on ``target`` (``llvm`` or a CUDA arch run by the CPU
    interpreter). ``repeat`` > 1: the op runs in a loop, the global regions' start advancing by the extent along
    dimension 0 each round (starts known only at run time). ``scalar``: a fill value, or the scalar operand of a
    binary op (``srcs`` then has one region)."""

    seed: int
    index: int
    target: str
    op: str
    extent: tuple
    dst: Operand
    srcs: tuple
    scope: str = ""
    threads: int = 0
    repeat: int = 1
    axes: tuple = ()
    accum: bool = False
    scalar: float | None = None
    tiles: tuple = ()      # CUDA: the on-chip Operand each global operand is staged through (dst last)
    notes: tuple = ()      # what the shrinker simplified, in order (a shrunk program is not (seed, index)'s)

    @property
    def dtype(self):
        return self.srcs[0].dtype if self.srcs else self.dst.dtype

    @property
    def cuda(self):
        return self.target != "llvm"

    def family(self) -> str:
        """The layout families the program uses, for the summary table."""
        kinds = set()
        for operand in (*self.srcs, self.dst, *(t for t in self.tiles if t is not None)):
            lay = operand.layout
            if lay.swizzle:
                kinds.add("swizzled")
            if lay.on_threads():
                kinds.add("register")
            if lay.on_workers():
                kinds.add("cpu-workers")
            if any(s == 0 for s in lay.strides):
                kinds.add("broadcast")
            if lay.replica:
                kinds.add("replica")
            if lay.offset:
                kinds.add("offset")
            if len(lay.extents) > len(lay.dims):
                kinds.add("tiled")
            if lay.span() > int(np.prod(lay.shape)) and not lay.replica:
                kinds.add("padded")
            if _permuted(lay):
                kinds.add("permuted")
        if self.repeat > 1:
            kinds.add("run-time-start")
        if self.scope == "thread":
            kinds.add("thread-local")
        return "+".join(sorted(kinds)) or "compact"

    def with_(self, **changes) -> "Program":
        return replace(self, **changes)


def _permuted(lay: Layout) -> bool:
    mem = [s for s in lay.strides if isinstance(s, int) and s != 0]
    return mem != sorted(mem, reverse=True)



def parse(text: str) -> Program:
    """The program a ``repr(program)`` printed (programs travel between processes, and into reproducers, as that)."""
    value = eval(text, {"__builtins__": {}}, {"Program": Program, "Operand": Operand, "Layout": Layout})  # noqa: S307
    if not isinstance(value, Program):
        raise ValueError(f"not a Program: {text[:80]}")
    return value
