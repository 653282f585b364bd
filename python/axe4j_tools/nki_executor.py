"""A numpy executor for the NKI source TVM's trn pipeline generates: a test harness, not a Trainium simulator.

It runs the generated ``@baremetal`` kernel with ``nl``/``nisa``/``ncc``/``nki`` replaced by the numpy models
below, on the calls that source uses (listed in ``MODELED``), and raises ``NkiLimitError`` on any break of the
hardware limits these calls have: 128 partitions; SBUF 192 KiB per partition (a tensor lives at its
``mod_alloc`` address); PSUM 8 banks of 2 KiB per partition (a tile within one bank; at most 8 banks in use);
``nc_matmul`` with at most 128 contraction partitions, 128 stationary and 512 moving free elements, inputs in SBUF
and the result accumulated (``+=``) into PSUM; an engine tile's partitions a contiguous range on axis 0. PSUM
starts as NaN, so a kernel that accumulates into a bank it did not clear produces NaN. Timing, engine
concurrency, DMA queues and numerics beyond float32 accumulation are not modeled.

Strict mode (``strict=True``, the default: ``STRICT``) adds the rules in ``STRICT_RULES``: every SBUF/PSUM access
stays within the extent its ``nl.ndarray`` declaration reserves (not merely within SBUF: an access past an
allocation no longer aliases the next one), the declared partition dimension is at most 128, and the engine rules
the NKI ISA documents (each with its source at the check). ``run`` returns a ``Stats``: the count of each call, as
before, plus a rough per-engine cost model (instructions, elements, bytes read and written) printed by
``Stats.table()`` or ``run(..., report=True)``.
"""

from __future__ import annotations

import math
import re
import sys
import types
from dataclasses import dataclass

import numpy as np

from axe4j.trn import allocation as trn_allocation
from axe4j.targets import TRN

# the hardware's figures, from org.axe4j.targets.Trainium (axe4j.targets)
PARTITIONS = TRN["partitions"]
SBUF_BYTES = TRN["sbuf_bytes_per_partition"]
PSUM_BANKS = TRN["psum_banks"]
PSUM_BANK_BYTES = TRN["psum_bank_bytes"]
MATMUL_K, MATMUL_STATIONARY, MATMUL_MOVING = (TRN["matmul_contraction"], TRN["matmul_stationary_free"],
                                              TRN["matmul_moving_free"])

MODELED = ("nl.ndarray (SBUF mod_alloc, PSUM), nl.shared_constant (as device memory), nl.par_dim, nl.arange, nl.sequential_range, nl.load, nl.store, "
           "nisa.nc_matmul (+= into PSUM), nisa.tensor_copy, nisa.tensor_tensor, nisa.tensor_scalar, "
           "nisa.tensor_reduce, nisa.activation (exp), nisa.reciprocal, memset by assignment; in the current nki "
           "namespace (axe4j_tools.nki_namespace): the same instructions with dst first, nisa.memset, nisa.dma_copy, "
           "slices, tensor.ap(pattern, offset), nl.ndarray(buffer=nl.sbuf, address=(0, f)), "
           "nc_matmul(accumulate=...)")


STRICT = True   # the default of run(strict=...); the tests run every Trainium kernel with it

# How a declaration's shape is read (run(declarations=...)):
#  "tvm": as TVM 0.27's trn codegen writes it: the buffer's logical shape. An SBUF tensor [d0, d1, ...] reserves
#         its element count over min(d0, 128) partitions (d0 > 128 must be a multiple of 128: the rows fold onto the
#         128 partitions, as TVM's allocator sizes it); a PSUM tensor [rows, par_dim(cols), min(cols, 512)] has rows
#         partitions and cols free elements (spanning cols / 512 banks of 2 KiB: [128, par_dim(1024), 512] is two).
#  "nki": as NKI reads it: the nl.par_dim dimension, else the first, is the partition dimension and must be at most
#         128; the dimensions after it are the free extent, the ones before it blocks. TVM 0.27's codegen breaks this
#         for every buffer whose logical first dimension exceeds 128 (see docs/trainium.md).
DECLARATIONS = ("tvm", "nki")

STRICT_RULES = {
    "declared-extent": "an SBUF/PSUM access stays within the partitions and free elements its declaration reserves",
    "declared-partitions": "a declaration's partition dimension is at most 128",
    "tensor_tensor-psum": "nisa.tensor_tensor reads at most one of its two inputs from PSUM",
    "activation-bias": "nisa.activation's bias is a (partitions, 1) vector of float32, float16 or bfloat16",
    "load-into-sbuf": "nl.load's tile is written to SBUF, not PSUM",
}

ENGINES = ("TensorEngine", "VectorEngine", "ScalarEngine", "DMA")
# Which engine each modeled call is counted on. tensor_copy/tensor_scalar may run on the Vector, Scalar or GpSimd
# engine and reciprocal on the Scalar or Vector engine (the compiler picks when the call does not say); the generated
# code never says, so the cost model fixes one.
ENGINE_OF = {
    "nisa.nc_matmul": "TensorEngine",
    "nisa.tensor_copy": "VectorEngine", "nisa.tensor_tensor": "VectorEngine", "nisa.tensor_scalar": "VectorEngine",
    "nisa.tensor_reduce": "VectorEngine", "memset": "VectorEngine",
    "nisa.activation": "ScalarEngine", "nisa.reciprocal": "ScalarEngine",
    "nl.load": "DMA", "nl.store": "DMA", "nisa.dma_copy": "DMA",
}


@dataclass
class EngineStats:
    """What one engine did: instructions issued, elements processed (multiply-accumulates for nc_matmul), bytes
    read from and written to SBUF/PSUM/HBM."""

    instructions: int = 0
    elements: int = 0
    bytes_read: int = 0
    bytes_written: int = 0


class Stats(dict):
    """The count of each modeled call executed (a dict, as ``run`` always returned) and, in ``engines``, a rough
    cost model per engine. A test harness figure, not a timing: no latencies, overlap or queueing."""

    def __init__(self):
        super().__init__()
        self.engines = {engine: EngineStats() for engine in ENGINES}

    def record(self, call, elements=0, bytes_read=0, bytes_written=0):
        self[call] = self.get(call, 0) + 1
        engine = self.engines[ENGINE_OF[call]]
        engine.instructions += 1
        engine.elements += int(elements)
        engine.bytes_read += int(bytes_read)
        engine.bytes_written += int(bytes_written)

    def written(self, call, nbytes):
        self.engines[ENGINE_OF[call]].bytes_written += int(nbytes)

    def table(self) -> str:
        """The cost model as a text table: one row per engine, then the calls counted on it."""
        rows = [("engine / call", "instructions", "elements", "bytes read", "bytes written")]
        for engine in ENGINES:
            e = self.engines[engine]
            rows.append((engine, f"{e.instructions:,}", f"{e.elements:,}", f"{e.bytes_read:,}",
                         f"{e.bytes_written:,}"))
            rows += [(f"  {call}", f"{n:,}", "", "", "") for call, n in sorted(self.items())
                     if ENGINE_OF[call] == engine]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


class NkiLimitError(RuntimeError):
    """A generated kernel broke a hardware limit (or used a call outside ``MODELED``)."""


def _fail(message):
    raise NkiLimitError(message)


class _ParDim(int):
    """``nl.par_dim(n)``: marks the partition dimension of a declaration."""


class _Hbm:
    """A kernel parameter (device memory): a flat view of a numpy array."""

    def __init__(self, array, name):
        self.data = array.reshape(-1)
        self.name = name
        self.dtype = array.dtype

    def reshape(self, shape):
        if int(np.prod(shape)) != self.data.size:
            _fail(f"{self.name}: reshape to {shape} of {self.data.size} elements")
        return self

    def __getitem__(self, key):
        return _Access(self, key)

    def ap(self, pattern, offset=0, **unsupported):
        """The current namespace's access pattern: element ``[i0, i1, ...]`` of the view is
        ``flat[offset + sum(stride_k * i_k)]`` for ``pattern = [[stride_0, count_0], ...]`` (NKI 0.2.0 migration
        guide, "Dynamic Access Pattern")."""
        if unsupported:
            _fail(f"{self.name}.ap: {sorted(unsupported)} not modeled")
        index = offset
        for axis, (stride, count) in enumerate(pattern):
            shape = [1] * len(pattern)
            shape[axis] = int(count)
            index = index + int(stride) * np.arange(int(count)).reshape(shape)
        return _Access(self, (index,))

    def __setitem__(self, key, value):
        _fail(f"{self.name}: HBM is written by nl.store (or nisa.dma_copy) only")


class _Result(np.ndarray):
    """An instruction's result, remembering the call that produced it (the cost model counts the bytes it writes)."""

    call = None


def _result(value, call):
    out = np.asarray(value).view(_Result)
    out.call = call
    return out


class _OnChip:
    def __init__(self, name, space, data, memory, declared=None, extent=None):
        self.name, self.space, self.data, self.dtype = name, space, data, data.dtype
        self.memory = memory
        self.declared = declared   # the shape as the declaration wrote it
        self.extent = extent       # (blocks or None, partitions, free elements) the declaration reserves

    def __getitem__(self, key):
        return _Access(self, key)

    def __setitem__(self, key, value):
        self.assign(_Access(self, key), value)

    def assign(self, access, value):
        stats = self.memory.stats
        if isinstance(value, _Accumulate):
            if self.space != "psum" or value.target.tensor is not self:
                _fail(f"{self.name}: += accumulates nc_matmul results in PSUM only")
            result = value.value
            current = access.read()
            if result.shape != current.shape:
                _fail(f"{self.name}: nc_matmul result {result.shape} into a tile of shape {current.shape}")
            access.write(current + result)
            stats.written("nisa.nc_matmul", current.size * self.dtype.itemsize)
            return
        if isinstance(value, _Access):
            _fail(f"{self.name}: tile assigned from a tile without an instruction")
        if isinstance(value, _Result) and value.call:
            # strict rule load-into-sbuf. Source: NKI API reference, nki.language.load: "Load a tensor from device
            # memory (HBM) into on-chip memory (SBUF)", returning "a new tile on SBUF".
            if self.memory.strict and value.call == "nl.load" and self.space != "sbuf":
                _fail(f"{self.name}: nl.load writes its tile to SBUF, not {self.space} [strict rule load-into-sbuf]")
            access.write(value)
            stats.written(value.call, access.size() * self.dtype.itemsize)
            return
        # a constant assigned to a tile: a memset (nki.isa.memset: "using Vector Engine")
        size = access.size()
        stats.record("memset", elements=size, bytes_written=size * self.dtype.itemsize)
        access.write(value)


class _Accumulate:
    def __init__(self, target, value):
        self.target, self.value = target, value


def _as_index(k):
    return np.asarray(k) if not isinstance(k, (int, np.integer)) else int(k)


def _from_slices(tensor, key):
    """A current-namespace tile ``t[p0:p1, f0:f1:step]`` (an integer index is one element) as the index grids the
    executor uses; a PSUM tensor's free index runs on across its 2 KiB banks."""
    if len(key) != 2:
        _fail(f"{tensor.name}: tiles are indexed [P, F], got {len(key)} indices")
    grids = []
    for axis, k in enumerate(key):
        if isinstance(k, slice):
            if k.stop is None:
                _fail(f"{tensor.name}: a slice without an end is not modeled")
            g = np.arange(k.start or 0, k.stop, k.step or 1)
        else:
            g = np.asarray([int(k)])
        grids.append(g[:, None] if axis == 0 else g[None, :])
    p, f = grids
    if tensor.space == "psum":
        per_bank = PSUM_BANK_BYTES // tensor.dtype.itemsize
        return f // per_bank, p, f % per_bank
    return p, f


def _span(values):
    values = np.asarray(values)
    return f"[{int(values.min())}, {int(values.max())}]"


class _Access:
    """A tile: a tensor indexed by arange grids."""

    def __init__(self, tensor, key):
        self.tensor = tensor
        key = key if isinstance(key, tuple) else (key,)
        if isinstance(tensor, _OnChip) and any(isinstance(k, slice) for k in key):
            key = _from_slices(tensor, key)
        self.key = tuple(_as_index(k) for k in key)
        if isinstance(tensor, _OnChip):
            self._check_partitions()
            if tensor.memory.strict:
                self._check_declared_extent()

    def _check_partitions(self):
        t = self.tensor
        pdim = 1 if t.space == "psum" else 0
        if len(self.key) != pdim + 2:
            _fail(f"{t.name}: {t.space} tiles are indexed {'[bank, P, F]' if pdim else '[P, F]'}, "
                  f"got {len(self.key)} indices")
        if pdim and not (np.all(np.asarray(self.key[0]) >= 0) and np.all(np.asarray(self.key[0]) < PSUM_BANKS)):
            _fail(f"{t.name}: PSUM bank {self.key[0]} outside [0, {PSUM_BANKS})")
        p = np.asarray(self.key[pdim])
        values = np.unique(p)
        if p.ndim > 0 and p.shape[0] != p.size:
            _fail(f"{t.name}: the partition index must run along the tile's first axis, got shape {p.shape}")
        if values.min() < 0 or values.max() >= PARTITIONS:
            _fail(f"{t.name}: partitions [{values.min()}, {values.max()}] outside [0, {PARTITIONS})")
        if len(values) > PARTITIONS or (len(values) > 1 and np.any(np.diff(values) != 1)):
            _fail(f"{t.name}: partitions {values.min()}..{values.max()} are not one contiguous range")
        f = np.asarray(self.key[pdim + 1])
        limit = t.data.shape[-1]
        if f.min() < 0 or f.max() >= limit:
            what = f"a PSUM bank of {PSUM_BANK_BYTES} bytes" if pdim else f"SBUF's {SBUF_BYTES} bytes per partition"
            _fail(f"{t.name}: free index up to {f.max()} outside {what}")

    def _check_declared_extent(self):
        """Strict rule declared-extent: the access stays within what the declaration reserves, so an index past
        an allocation is an error here instead of reading or writing the next tensor's bytes."""
        t = self.tensor
        blocks, partitions, free = t.extent
        psum = t.space == "psum"
        p = np.asarray(self.key[1 if psum else 0])
        f = np.asarray(self.key[-1])
        where = f"partitions {_span(p)}"
        bad = p.max() >= partitions
        if psum:
            bank = np.asarray(self.key[0])
            if blocks is None:   # one tensor over consecutive banks: the free index runs on across them
                f = bank * (PSUM_BANK_BYTES // t.dtype.itemsize) + f
                where += f", free elements {_span(f)} (bank {_span(bank)})"
            else:
                where += f", block {_span(bank)}, free elements {_span(f)}"
                bad = bad or bank.max() >= blocks
        else:
            where += f", free elements {_span(f)}"
        bad = bad or f.max() >= free
        if bad:
            reserved = (f"{blocks} blocks x " if psum and blocks is not None else "") + \
                f"{partitions} partitions x {free} elements per partition"
            _fail(f"{t.name}: access at {where} outside its declaration {t.declared} ({reserved}) "
                  f"[strict rule declared-extent]")

    def shape(self):
        return np.broadcast_shapes(*[np.shape(k) for k in self.key])

    def size(self):
        return int(np.prod(self.shape()))

    def partitions(self):
        return self.shape()[0] if self.shape() else 1

    def read(self):
        try:
            return self.tensor.data[self.key]
        except IndexError as error:
            _fail(f"{self.tensor.name}: access out of bounds ({error})")

    def write(self, value):
        target = self.tensor.data[self.key]
        value = np.asarray(value)
        if value.shape not in ((), target.shape):
            _fail(f"{self.tensor.name}: a result of shape {value.shape} written to a tile of shape {target.shape}")
        self.tensor.data[self.key] = value.astype(self.tensor.dtype)
        if getattr(self.tensor, "touched", None) is not None:
            self.tensor.touched[self.key] = True

    def __iadd__(self, other):
        return _Accumulate(self, np.asarray(other, dtype=np.float32))


class _Memory:
    def __init__(self, strict, declarations):
        self.sbuf = np.zeros((PARTITIONS, SBUF_BYTES), dtype=np.uint8)
        self.psum_tensors = []
        self.stats = Stats()
        self.strict = strict
        self.declarations = declarations
        self.current = False   # the source imports the current nki namespace
        self.next_sbuf = 0   # where a current-namespace SBUF tensor without an address goes


_SBUF = "sbuf"   # nl.sbuf in the current namespace

_DECLARED = re.compile(r"^\s*(\w+)\s*=\s*nl\.ndarray\(")


def _extent(name, space, shape, written, declarations):
    """(blocks or None, partitions, free elements) a declaration reserves, read as ``declarations`` says (see
    ``DECLARATIONS``); a partition dimension over 128 breaks strict rule declared-partitions."""
    dims = [int(d) for d in shape]
    marked = [i for i, d in enumerate(shape) if isinstance(d, _ParDim)]
    total = int(np.prod(dims))
    blocks = None
    if declarations == "nki" or (space == "psum" and marked and not (marked == [1] and len(dims) == 3)):
        at = marked[0] if marked else 0
        partitions, free = dims[at], int(np.prod(dims[at + 1:]))
        if at:
            blocks = int(np.prod(dims[:at]))
        how = f"dimension {at} ({'nl.par_dim' if marked else 'the first'}) is the partition dimension"
    elif space == "psum" and marked:   # TVM: [rows, par_dim(cols), min(cols, 512)] for a (rows, cols) buffer
        partitions, free = dims[0], dims[1]
        how = "TVM's [rows, par_dim(cols), bank elements]: rows on partitions, cols free elements over the banks"
    elif dims[0] <= PARTITIONS:
        partitions, free = dims[0], -(-total // dims[0])
        how = "the first dimension is the partition dimension"
    else:
        if dims[0] % PARTITIONS:
            _fail(f"{name}: declared {written}: a first dimension of {dims[0]} neither fits {PARTITIONS} partitions "
                  f"nor folds onto them [strict rule declared-partitions]")
        partitions, free = PARTITIONS, total // PARTITIONS
        how = f"TVM's logical shape: {dims[0]} rows folded onto {PARTITIONS} partitions"
    if partitions > PARTITIONS:
        _fail(f"{name}: declared {written}: partition dimension {partitions} > {PARTITIONS} ({how}) "
              f"[strict rule declared-partitions]")
    return blocks, partitions, free


def _namespace(memory, lines):
    counter = {"n": 0}

    class _SbufAlloc:
        def __init__(self, base_addr):
            self.base_addr = base_addr

    class _PsumAlloc:
        def __init__(self, base_bank=0, base_addr=0, num_bank_tiles=(1,)):
            self.base_bank, self.banks = base_bank, int(np.prod(num_bank_tiles))

    def ndarray(shape, dtype, buffer=None, name="", address=None):
        dtype = np.dtype(dtype)
        if buffer is _SBUF or (buffer is None and address is not None):   # the current namespace: nl.sbuf, address
            if address is not None and int(address[0]) != 0:
                _fail(f"{name or 'tensor'}: SBUF partition offset {address[0]} not modeled")
            free = int(np.prod([int(d) for d in shape[1:]])) * dtype.itemsize
            base = int(address[1]) if address is not None else memory.next_sbuf
            memory.next_sbuf = max(memory.next_sbuf, base + free)
            buffer = _SbufAlloc(base)
        counter["n"] += 1
        caller = sys._getframe(1)
        line = lines[caller.f_lineno - 1] if caller.f_code.co_filename == "<nki>" else ""
        declared = _DECLARED.match(line)
        name = f"{declared.group(1) if declared else 'tensor' + str(counter['n'])}{list(map(int, shape))}"
        written = "[" + ", ".join(f"nl.par_dim({int(d)})" if isinstance(d, _ParDim) else str(int(d))
                                  for d in shape) + "]"
        space = "sbuf" if isinstance(buffer, _SbufAlloc) else "psum"
        extent = None
        if memory.strict:
            by_layout = memory.layout_extents.get(declared.group(1)) if declared else None
            if by_layout is not None and memory.declarations == "tvm":
                if by_layout[0] > PARTITIONS:
                    _fail(f"{name}: its layout spans {by_layout[0]} partitions > {PARTITIONS} "
                          f"[strict rule declared-partitions]")
                extent = (None, int(by_layout[0]), int(by_layout[1]))
                written = f"{written} (its layout: {by_layout[0]} partitions x {by_layout[1]} elements)"
            else:
                extent = _extent(name, space, shape, written, memory.declarations)
        if isinstance(buffer, _SbufAlloc):
            # the whole SBUF from the tensor's address on: in strict mode every access is held to the declared
            # extent; without it an access past the allocation aliases the next one (as on the chip) and one past
            # SBUF is an error
            if not 0 <= buffer.base_addr < SBUF_BYTES:
                _fail(f"{name}: SBUF address {buffer.base_addr} outside {SBUF_BYTES} bytes per partition")
            if extent and buffer.base_addr + extent[2] * dtype.itemsize > SBUF_BYTES:
                _fail(f"{name}: declared {written} at byte {buffer.base_addr} reaches byte "
                      f"{buffer.base_addr + extent[2] * dtype.itemsize} > SBUF's {SBUF_BYTES} per partition "
                      f"[strict rule declared-extent]")
            end = buffer.base_addr + (SBUF_BYTES - buffer.base_addr) // dtype.itemsize * dtype.itemsize
            view = memory.sbuf[:, buffer.base_addr:end].view(dtype)
            return _OnChip(name, "sbuf", view, memory, written, extent)
        banks = buffer.banks if isinstance(buffer, _PsumAlloc) else PSUM_BANKS
        used = sum(t.banks for t in memory.psum_tensors)
        if isinstance(buffer, _PsumAlloc) and used + banks > PSUM_BANKS:
            _fail(f"{name}: {used + banks} PSUM banks in use > {PSUM_BANKS}")
        data = np.full((banks, PARTITIONS, PSUM_BANK_BYTES // dtype.itemsize), np.nan, dtype=dtype)
        t = _OnChip(name, "psum", data, memory, written, extent)
        t.touched = np.zeros(data.shape, bool)   # for nc_matmul(accumulate=None): the first write overwrites
        t.banks = banks if isinstance(buffer, _PsumAlloc) else 1
        memory.psum_tensors.append(t)
        return t

    def on_chip(access, what, space=None):
        if not isinstance(access, _Access) or not isinstance(access.tensor, _OnChip):
            _fail(f"{what}: operand is not an SBUF/PSUM tile")
        if space and access.tensor.space != space:
            _fail(f"{what}: operand {access.tensor.name} is in {access.tensor.space}, not {space}")
        if access.tensor.space == "psum":
            bank = int(np.max(access.key[0]))
            access.tensor.banks = max(getattr(access.tensor, "banks", 1), bank + 1)
            used = sum(t.banks for t in memory.psum_tensors)
            if used > PSUM_BANKS:
                _fail(f"{what}: {used} PSUM banks in use > {PSUM_BANKS}")
        return access

    def load(src, call="nl.load"):
        if not isinstance(src, _Access) or not isinstance(src.tensor, _Hbm):
            _fail("nl.load reads HBM")
        value = src.read()
        if value.ndim and value.shape[0] > PARTITIONS:
            _fail(f"nl.load of {value.shape}: more than {PARTITIONS} partitions")
        memory.stats.record(call, elements=value.size, bytes_read=value.nbytes)
        return _result(value, call)

    def store(dst, src, call="nl.store"):
        on_chip(src, "nl.store", "sbuf")
        if not isinstance(dst, _Access) or not isinstance(dst.tensor, _Hbm):
            _fail("nl.store writes HBM")
        value = src.read()
        if value.dtype != dst.tensor.dtype:
            _fail(f"nl.store of {value.dtype} into {dst.tensor.dtype}: DMA does not convert")
        shape = dst.shape()
        if value.shape != shape:
            _fail(f"nl.store: tile {value.shape} into an access of shape {shape}")
        dst.tensor.data[dst.key] = value
        memory.stats.record(call, elements=value.size, bytes_read=value.nbytes, bytes_written=value.nbytes)

    def nc_matmul(stationary, moving):
        on_chip(stationary, "nc_matmul stationary", "sbuf")
        on_chip(moving, "nc_matmul moving", "sbuf")
        s, m = stationary.read(), moving.read()
        if s.ndim != 2 or m.ndim != 2 or s.shape[0] != m.shape[0]:
            _fail(f"nc_matmul: stationary {s.shape} and moving {m.shape} must be (K, M), (K, N)")
        k, ms, mm = s.shape[0], s.shape[1], m.shape[1]
        if k > MATMUL_K or ms > MATMUL_STATIONARY or mm > MATMUL_MOVING:
            _fail(f"nc_matmul {k} (K) x {ms} (stationary) x {mm} (moving) exceeds "
                  f"{MATMUL_K} x {MATMUL_STATIONARY} x {MATMUL_MOVING}")
        if s.dtype != m.dtype:
            _fail(f"nc_matmul of {s.dtype} and {m.dtype}")
        ps, pm = np.asarray(stationary.key[0]).min(), np.asarray(moving.key[0]).min()
        if ps != pm:
            _fail(f"nc_matmul: stationary from partition {ps}, moving from {pm}; contraction rows must match")
        memory.stats.record("nisa.nc_matmul", elements=k * ms * mm, bytes_read=s.nbytes + m.nbytes)
        return s.astype(np.float32).T @ m.astype(np.float32)

    def engine(name, *tiles):
        for t in tiles:
            if isinstance(t, _Access):
                on_chip(t, name)
        values = [t.read() if isinstance(t, _Access) else t for t in tiles]
        memory.stats.record(name, elements=np.size(values[0]),
                            bytes_read=sum(v.nbytes for v, t in zip(values, tiles) if isinstance(t, _Access)))
        return values

    def tensor_copy(src):
        return _result(engine("nisa.tensor_copy", src)[0], "nisa.tensor_copy")

    def tensor_tensor(a, b, op):
        x, y = engine("nisa.tensor_tensor", a, b)
        # strict rule tensor_tensor-psum. Source: NKI ISA reference, nki.isa.tensor_tensor: "the two input tiles,
        # data1 and data2 cannot both reside in PSUM" (SBUF+SBUF, SBUF+PSUM or PSUM+SBUF are the legal cases).
        if memory.strict and all(isinstance(t, _Access) and t.tensor.space == "psum" for t in (a, b)):
            _fail(f"nisa.tensor_tensor reads both inputs from PSUM ({a.tensor.name}, {b.tensor.name}); at most one "
                  f"may be in PSUM [strict rule tensor_tensor-psum]")
        if x.shape != y.shape:
            _fail(f"tensor_tensor of {x.shape} and {y.shape}")
        return _result(op(x.astype(np.float32), y.astype(np.float32)), "nisa.tensor_tensor")

    def tensor_scalar(data, operand0, op0, reverse0=False):
        x, s = engine("nisa.tensor_scalar", data, operand0)
        s = np.asarray(s, dtype=np.float32)
        if s.ndim and s.shape != (x.shape[0], 1):
            _fail(f"tensor_scalar operand {s.shape}: a constant or one value per partition ({x.shape[0]}, 1)")
        x = x.astype(np.float32)
        return _result(op0(s, x) if reverse0 else op0(x, s), "nisa.tensor_scalar")

    def tensor_reduce(data, op, negate=False, axis=(-1,)):
        (x,) = engine("nisa.tensor_reduce", data)
        r = {np.add: np.sum, np.maximum: np.max, np.minimum: np.min}[op](x.astype(np.float32), axis=-1,
                                                                          keepdims=True)
        return _result(-r if negate else r, "nisa.tensor_reduce")

    def reciprocal(data):
        (x,) = engine("nisa.reciprocal", data)
        return _result(np.float32(1) / x.astype(np.float32), "nisa.reciprocal")

    def activation(op, data, bias=0.0, scale=1.0):
        x, b = engine("nisa.activation", data, bias)
        if memory.strict and isinstance(bias, _Access):
            # strict rule activation-bias. Sources: NKI ISA reference, nki.isa.activation (bias: a vector, one value
            # per partition) and NKI API errors, err_activation_bias_invalid_type ("a vector of type float32,
            # float16, or bfloat16").
            if b.shape != (x.shape[0], 1) or b.dtype not in (np.float32, np.float16):
                _fail(f"nisa.activation bias {bias.tensor.name} {b.shape} {b.dtype}: a ({x.shape[0]}, 1) vector of "
                      f"float32, float16 or bfloat16 [strict rule activation-bias]")
        b = np.asarray(b, dtype=np.float32)
        if b.ndim and b.shape not in ((x.shape[0], 1), x.shape):
            _fail(f"activation bias {b.shape} for a tile {x.shape}")
        return _result(op(x.astype(np.float32) * np.float32(scale) + b), "nisa.activation")

    def shared_constant(array, dtype):
        """A constant the compiler places in device memory (the trn pipeline's identity for transposes): HBM."""
        values = np.asarray(array).astype(np.float32 if "bfloat16" in str(dtype) else np.dtype(str(dtype)))
        constant = _Hbm(values.copy(), f"shared_constant{list(values.shape)}")
        constant.data = values.copy()   # indexed with its own shape, not flat like a kernel parameter
        return constant

    def assign(dst, value, what):
        if not isinstance(dst, _Access) or not isinstance(dst.tensor, _OnChip):
            _fail(f"{what}: dst is not an SBUF/PSUM tile")
        dst.tensor.assign(dst, value)

    # The current namespace (nki.*, NKI 0.3.0): every instruction writes its dst, given first (NKI 0.2.0 migration
    # guide: "Explicit dst parameter is now required for nki.isa instructions and is always the first argument").
    def c_tensor_copy(dst, src, engine=None, name=None):
        assign(dst, tensor_copy(src), "nisa.tensor_copy")

    def c_tensor_tensor(dst, data1, data2, op, engine=None, name=None):
        assign(dst, tensor_tensor(data1, data2, op), "nisa.tensor_tensor")

    def c_tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                        engine=None, name=None):
        if op1 is not None:
            _fail("nisa.tensor_scalar with op1 is not modeled")
        assign(dst, tensor_scalar(data, operand0, op0, reverse0), "nisa.tensor_scalar")

    def c_tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None):
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        if axes != (1,):   # nki.isa.tensor_reduce: the axes must include 1, the most minor free axis of a 2-D tile
            _fail(f"nisa.tensor_reduce axis={axis}: only axis (1,) of a [P, F] tile is modeled")
        assign(dst, tensor_reduce(data, op, negate), "nisa.tensor_reduce")

    def c_activation(dst, op, data, bias=None, scale=1.0, name=None):
        assign(dst, activation(op, data, 0.0 if bias is None else bias, scale), "nisa.activation")

    def c_reciprocal(dst, data, name=None):
        assign(dst, reciprocal(data), "nisa.reciprocal")

    def c_nc_matmul(dst, stationary, moving, accumulate=None, name=None):
        # NKI 0.3.0 update guide, "Matmul Accumulation": accumulate=None overwrites on the first write to a PSUM
        # location and accumulates on later ones; True accumulates, False overwrites
        result = nc_matmul(stationary, moving)
        if not isinstance(dst, _Access) or not isinstance(dst.tensor, _OnChip) or dst.tensor.space != "psum":
            _fail("nisa.nc_matmul: dst must be a PSUM tile")
        current = dst.read()
        if result.shape != current.shape:
            _fail(f"{dst.tensor.name}: nc_matmul result {result.shape} into a tile of shape {current.shape}")
        keep = {True: True, False: False, None: dst.tensor.touched[dst.key]}[accumulate]
        dst.write(np.where(keep, current + result, result))
        memory.stats.written("nisa.nc_matmul", current.size * dst.tensor.dtype.itemsize)

    def c_memset(dst, value, engine=None, name=None):
        assign(dst, value, "nisa.memset")

    def c_dma_copy(dst, src, dge_mode=None, name=None):
        if isinstance(dst, _Access) and isinstance(dst.tensor, _Hbm):
            store(dst, src, "nisa.dma_copy")
        elif isinstance(src, _Access) and isinstance(src.tensor, _Hbm):
            assign(dst, load(src, "nisa.dma_copy"), "nisa.dma_copy")
        else:
            _fail("nisa.dma_copy between on-chip tiles is not modeled")

    language = types.SimpleNamespace(
        ndarray=ndarray, par_dim=_ParDim, arange=np.arange, psum="psum", sbuf=_SBUF, load=load, store=store,
        shared_constant=shared_constant, bfloat16="bfloat16", float32="float32", float16="float16",
        sequential_range=lambda n, **_: range(int(n)), affine_range=lambda n, **_: range(int(n)),
        add=np.add, subtract=np.subtract, multiply=np.multiply, maximum=np.maximum, minimum=np.minimum,
        max=np.maximum, min=np.minimum, exp=np.exp, divide=np.divide)
    if memory.current:
        isa = types.SimpleNamespace(nc_matmul=c_nc_matmul, tensor_copy=c_tensor_copy, tensor_tensor=c_tensor_tensor,
                                    tensor_scalar=c_tensor_scalar, tensor_reduce=c_tensor_reduce,
                                    activation=c_activation, reciprocal=c_reciprocal, memset=c_memset,
                                    dma_copy=c_dma_copy)
    else:
        isa = types.SimpleNamespace(nc_matmul=nc_matmul, tensor_copy=tensor_copy, tensor_tensor=tensor_tensor,
                                    tensor_scalar=tensor_scalar, tensor_reduce=tensor_reduce, activation=activation,
                                    reciprocal=reciprocal)
    compiler = types.SimpleNamespace(sbuf=types.SimpleNamespace(mod_alloc=_SbufAlloc),
                                     psum=types.SimpleNamespace(mod_alloc=_PsumAlloc))
    nki = types.SimpleNamespace(language=language, isa=isa, compiler=compiler)
    return {"nl": language, "nisa": isa, "ncc": compiler, "nki": nki, "np": np, "math": math,
            "nt": types.SimpleNamespace(mutable_tensor=object)}


def is_current_namespace(source: str) -> bool:
    """Whether ``source`` imports the current ``nki`` package (``import nki``, NKI 0.2.0 and later) rather than the
    legacy ``neuronxcc.nki`` one that TVM 0.27 emits."""
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    return any(re.match(r"(import|from) nki\b", line) for line in imports) and not any("neuronxcc" in line
                                                                                        for line in imports)


EXTENTS_LINE = trn_allocation.EXTENTS_LINE


def layout_extents(source: str) -> dict:
    """{tensor name: (partitions, free elements per partition)} from the comment ``axe4j.trn.kernels.gemm.
    nki_source`` puts first: what each buffer's Axe layout spans on P and on F (on Bank x bank elements for a PSUM
    layout with banks). With ``declarations="tvm"`` strict mode holds accesses to these rather than to a reading of
    TVM's logical declaration, which cannot tell a transposed (FP) tile from a PF one."""
    import json

    for line in source.splitlines():
        if line.startswith(EXTENTS_LINE):
            return {name: tuple(extent) for name, extent in json.loads(line[len(EXTENTS_LINE):]).items()}
    return {}


def run(source: str, *arrays, strict: bool | None = None, declarations: str = "tvm", report: bool = False) -> Stats:
    """Runs the kernel in ``source`` on numpy ``arrays`` (inputs then outputs, in the kernel's order); outputs are
    written in place. Returns a ``Stats``: the count of each modeled call executed (a dict) with the per-engine cost
    model in ``.engines``; ``report=True`` also prints ``Stats.table()``.

    ``strict`` (default ``STRICT``, True) enforces ``STRICT_RULES``; ``strict=False`` keeps only the hardware limits
    (an access past an allocation then aliases the next one). ``declarations`` says how strict mode reads a
    declaration's shape: ``"tvm"`` (TVM 0.27's logical shapes) or ``"nki"`` (NKI's own reading); see
    ``DECLARATIONS``."""
    if declarations not in DECLARATIONS:
        raise ValueError(f"declarations={declarations!r}: one of {DECLARATIONS}")
    body = [line for line in source.splitlines()
            if not line.startswith(("import ", "from ", "@", "#"))]
    current = is_current_namespace(source)
    # a current-namespace kernel declares NKI's own (partition, free) shapes: read them as NKI does
    memory = _Memory(STRICT if strict is None else bool(strict), "nki" if current else declarations)
    memory.current = current
    memory.layout_extents = layout_extents(source)
    scope = _namespace(memory, body)
    exec(compile("\n".join(body), "<nki>", "exec"), scope)  # noqa: S102  (generated NKI source, numpy models)
    kernels = [v for k, v in scope.items() if k.endswith("_kernel") and callable(v)]
    if len(kernels) != 1:
        _fail(f"expected one *_kernel function in the source, found {len(kernels)}")
    kernels[0](*[_Hbm(a, f"arg{i}") for i, a in enumerate(arrays)])
    if report:
        print(memory.stats.table())
    return memory.stats
