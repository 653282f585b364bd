"""A numpy executor for the NKI source TVM's trn pipeline generates: a test harness, not a Trainium simulator.

It runs the generated ``@baremetal`` kernel with ``nl``/``nisa``/``ncc``/``nki`` replaced by the numpy models
below, on the calls that source uses (listed in ``MODELED``), and raises ``NkiLimitError`` on any break of the
hardware limits these calls have: 128 partitions; SBUF 192 KiB per partition (a tensor lives at its
``mod_alloc`` address); PSUM 8 banks of 2 KiB per partition (a tile within one bank; at most 8 banks in use);
``nc_matmul`` with at most 128 contraction partitions, 128 stationary and 512 moving free elements, inputs in SBUF
and the result accumulated (``+=``) into PSUM; an engine tile's partitions a contiguous range on axis 0. PSUM
starts as NaN, so a kernel that accumulates into a bank it did not clear produces NaN. Timing, engine
concurrency, DMA queues and numerics beyond float32 accumulation are not modeled.
"""

from __future__ import annotations

import math
import types

import numpy as np

PARTITIONS = 128
SBUF_BYTES = 192 * 1024
PSUM_BANKS = 8
PSUM_BANK_BYTES = 2048
MATMUL_K, MATMUL_STATIONARY, MATMUL_MOVING = 128, 128, 512

MODELED = ("nl.ndarray (SBUF mod_alloc, PSUM), nl.shared_constant (as device memory), nl.par_dim, nl.arange, nl.sequential_range, nl.load, nl.store, "
           "nisa.nc_matmul (+= into PSUM), nisa.tensor_copy, nisa.tensor_tensor, nisa.tensor_scalar, "
           "nisa.tensor_reduce, nisa.activation (exp), nisa.reciprocal, memset by assignment")


class NkiLimitError(RuntimeError):
    """A generated kernel broke a hardware limit (or used a call outside ``MODELED``)."""


def _fail(message):
    raise NkiLimitError(message)


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

    def __setitem__(self, key, value):
        _fail(f"{self.name}: HBM is written by nl.store only")


class _OnChip:
    def __init__(self, name, space, data):
        self.name, self.space, self.data, self.dtype = name, space, data, data.dtype

    def __getitem__(self, key):
        return _Access(self, key)

    def __setitem__(self, key, value):
        access = _Access(self, key)
        if isinstance(value, _Accumulate):
            if self.space != "psum" or value.target.tensor is not self:
                _fail(f"{self.name}: += accumulates nc_matmul results in PSUM only")
            result = value.value
            current = access.read()
            if result.shape != current.shape:
                _fail(f"{self.name}: nc_matmul result {result.shape} into a tile of shape {current.shape}")
            access.write(current + result)
            return
        if isinstance(value, _Access):
            _fail(f"{self.name}: tile assigned from a tile without an instruction")
        access.write(value)


class _Accumulate:
    def __init__(self, target, value):
        self.target, self.value = target, value


def _as_index(k):
    return np.asarray(k) if not isinstance(k, (int, np.integer)) else int(k)


class _Access:
    """A tile: a tensor indexed by arange grids."""

    def __init__(self, tensor, key):
        self.tensor = tensor
        self.key = tuple(_as_index(k) for k in (key if isinstance(key, tuple) else (key,)))
        if isinstance(tensor, _OnChip):
            self._check_partitions()

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

    def shape(self):
        return np.broadcast_shapes(*[np.shape(k) for k in self.key])

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

    def __iadd__(self, other):
        return _Accumulate(self, np.asarray(other, dtype=np.float32))


class _Memory:
    def __init__(self):
        self.sbuf = np.zeros((PARTITIONS, SBUF_BYTES), dtype=np.uint8)
        self.psum_tensors = []
        self.instructions = {}

    def count(self, name):
        self.instructions[name] = self.instructions.get(name, 0) + 1


def _namespace(memory):
    counter = {"n": 0}

    class _SbufAlloc:
        def __init__(self, base_addr):
            self.base_addr = base_addr

    class _PsumAlloc:
        def __init__(self, base_bank=0, base_addr=0, num_bank_tiles=(1,)):
            self.base_bank, self.banks = base_bank, int(np.prod(num_bank_tiles))

    def ndarray(shape, dtype, buffer):
        dtype = np.dtype(dtype)
        counter["n"] += 1
        name = f"tensor{counter['n']}{list(shape)}"
        if isinstance(buffer, _SbufAlloc):
            # the declared shape is the logical one; a tensor reaches from its address to the end of SBUF, so an
            # access past its allocation aliases the next one (as on the chip) and one past SBUF is an error
            if not 0 <= buffer.base_addr < SBUF_BYTES:
                _fail(f"{name}: SBUF address {buffer.base_addr} outside {SBUF_BYTES} bytes per partition")
            end = buffer.base_addr + (SBUF_BYTES - buffer.base_addr) // dtype.itemsize * dtype.itemsize
            view = memory.sbuf[:, buffer.base_addr:end].view(dtype)
            return _OnChip(name, "sbuf", view)
        banks = buffer.banks if isinstance(buffer, _PsumAlloc) else PSUM_BANKS
        used = sum(t.banks for t in memory.psum_tensors)
        if isinstance(buffer, _PsumAlloc) and used + banks > PSUM_BANKS:
            _fail(f"{name}: {used + banks} PSUM banks in use > {PSUM_BANKS}")
        data = np.full((banks, PARTITIONS, PSUM_BANK_BYTES // dtype.itemsize), np.nan, dtype=dtype)
        t = _OnChip(name, "psum", data)
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

    def load(src):
        memory.count("nl.load")
        if not isinstance(src, _Access) or not isinstance(src.tensor, _Hbm):
            _fail("nl.load reads HBM")
        value = src.read()
        if value.ndim and value.shape[0] > PARTITIONS:
            _fail(f"nl.load of {value.shape}: more than {PARTITIONS} partitions")
        return value

    def store(dst, src):
        memory.count("nl.store")
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

    def nc_matmul(stationary, moving):
        memory.count("nisa.nc_matmul")
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
        return s.astype(np.float32).T @ m.astype(np.float32)

    def engine(name, *tiles):
        memory.count(name)
        for t in tiles:
            if isinstance(t, _Access):
                on_chip(t, name)
        return [t.read() if isinstance(t, _Access) else t for t in tiles]

    def tensor_copy(src):
        return engine("nisa.tensor_copy", src)[0]

    def tensor_tensor(a, b, op):
        x, y = engine("nisa.tensor_tensor", a, b)
        if x.shape != y.shape:
            _fail(f"tensor_tensor of {x.shape} and {y.shape}")
        return op(x.astype(np.float32), y.astype(np.float32))

    def tensor_scalar(data, operand0, op0, reverse0=False):
        x, s = engine("nisa.tensor_scalar", data, operand0)
        s = np.asarray(s, dtype=np.float32)
        if s.ndim and s.shape != (x.shape[0], 1):
            _fail(f"tensor_scalar operand {s.shape}: a constant or one value per partition ({x.shape[0]}, 1)")
        x = x.astype(np.float32)
        return op0(s, x) if reverse0 else op0(x, s)

    def tensor_reduce(data, op, negate=False, axis=(-1,)):
        (x,) = engine("nisa.tensor_reduce", data)
        r = {np.add: np.sum, np.maximum: np.max, np.minimum: np.min}[op](x.astype(np.float32), axis=-1,
                                                                          keepdims=True)
        return -r if negate else r

    def reciprocal(data):
        (x,) = engine("nisa.reciprocal", data)
        return np.float32(1) / x.astype(np.float32)

    def activation(op, data, bias=0.0, scale=1.0):
        x, b = engine("nisa.activation", data, bias)
        b = np.asarray(b, dtype=np.float32)
        if b.ndim and b.shape not in ((x.shape[0], 1), x.shape):
            _fail(f"activation bias {b.shape} for a tile {x.shape}")
        return op(x.astype(np.float32) * np.float32(scale) + b)

    def shared_constant(array, dtype):
        """A constant the compiler places in device memory (the trn pipeline's identity for transposes): HBM."""
        values = np.asarray(array).astype(np.float32 if "bfloat16" in str(dtype) else np.dtype(str(dtype)))
        constant = _Hbm(values.copy(), f"shared_constant{list(values.shape)}")
        constant.data = values.copy()   # indexed with its own shape, not flat like a kernel parameter
        return constant

    language = types.SimpleNamespace(
        ndarray=ndarray, par_dim=lambda n: n, arange=np.arange, psum="psum", load=load, store=store,
        shared_constant=shared_constant, bfloat16="bfloat16", float32="float32", float16="float16",
        sequential_range=lambda n, **_: range(int(n)), affine_range=lambda n, **_: range(int(n)),
        add=np.add, subtract=np.subtract, multiply=np.multiply, maximum=np.maximum, minimum=np.minimum,
        max=np.maximum, min=np.minimum, exp=np.exp, divide=np.divide)
    isa = types.SimpleNamespace(nc_matmul=nc_matmul, tensor_copy=tensor_copy, tensor_tensor=tensor_tensor,
                                tensor_scalar=tensor_scalar, tensor_reduce=tensor_reduce, activation=activation,
                                reciprocal=reciprocal)
    compiler = types.SimpleNamespace(sbuf=types.SimpleNamespace(mod_alloc=_SbufAlloc),
                                     psum=types.SimpleNamespace(mod_alloc=_PsumAlloc))
    nki = types.SimpleNamespace(language=language, isa=isa, compiler=compiler)
    return {"nl": language, "nisa": isa, "ncc": compiler, "nki": nki, "np": np, "math": math,
            "nt": types.SimpleNamespace(mutable_tensor=object)}


def run(source: str, *arrays):
    """Runs the kernel in ``source`` on numpy ``arrays`` (inputs then outputs, in the kernel's order); outputs are
    written in place. Returns the count of each modeled call executed."""
    body = [line for line in source.splitlines()
            if not line.startswith(("import ", "from ", "@", "#"))]
    memory = _Memory()
    scope = _namespace(memory)
    exec("\n".join(body), scope)  # noqa: S102  (generated NKI source, run against the numpy models)
    kernels = [v for k, v in scope.items() if k.endswith("_kernel") and callable(v)]
    if len(kernels) != 1:
        _fail(f"expected one *_kernel function in the source, found {len(kernels)}")
    kernels[0](*[_Hbm(a, f"arg{i}") for i, a in enumerate(arrays)])
    return dict(memory.instructions)
