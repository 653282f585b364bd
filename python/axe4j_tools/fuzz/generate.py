"""Random legal tile programs, each reproducible from ``(seed, index)`` alone (``program(seed, index, targets)``).

CPU (``llvm``): every operand is a view (``decl_buffer``) with a random layout over a flat argument: dimensions kept
whole or split in two iters, iters in a random order, strides padded, an offset, sometimes a stride-0 (broadcast)
iter or a replica in a source; regions at random starts, or at a start that moves in a loop (run-time start).

CUDA (``sm_80``/``sm_90a``/``sm_100a``, run by ``axe4j.cuda.interp``): compact global arguments staged through
shared tiles (compact, padded, permuted, split, swizzled) or register tiles (iters on ``laneid``/``warpid``/
``wid_in_wg``/``tid_in_wg`` at warp, warpgroup or CTA scope); the op runs on the tiles at the scope, and the result
is copied back to global memory.
"""

from __future__ import annotations

import numpy as np

from .spec import Layout, Operand, Program, compact

TARGETS = ("llvm", "sm_80", "sm_90a", "sm_100a")
DTYPES = ("float32", "float16", "bfloat16", "int32")
UNARY = ("exp", "exp2", "log2", "sqrt", "reciprocal", "silu")
BINARY = ("add", "sub", "mul", "fdiv", "maximum", "minimum")
REDUCE = ("sum", "max", "min")
FLOAT_ONLY = set(UNARY) | {"fdiv", "fma"}
OPS = ("copy", "cast", "fill", *UNARY, *BINARY, "fma", *REDUCE)
NOT_CLAIMED = {"llvm": {"fma"}}    # ops no rule of the target claims (TVM's dispatch report refuses them)


def program(seed: int, index: int, targets=TARGETS, ops=OPS, dtypes=DTYPES) -> Program:
    """The ``index``-th program of ``seed``: the same arguments give the same program on every host."""
    rng = np.random.default_rng([seed, index])
    target = targets[int(rng.integers(len(targets)))]
    dtype = dtypes[int(rng.integers(len(dtypes)))]
    legal = [op for op in ops if (dtype != "int32" or op not in FLOAT_ONLY) and op not in NOT_CLAIMED.get(target, ())]
    op = legal[int(rng.integers(len(legal)))]
    make = _cpu if target == "llvm" else _cuda
    return make(rng, seed, index, target, op, dtype)


def _out_dtype(rng, op, dtype):
    if op != "cast":
        return dtype
    others = [d for d in DTYPES if d != dtype]
    return others[int(rng.integers(len(others)))]


def _arity(op):
    if op == "fill":
        return 0
    if op in BINARY:
        return 2
    if op == "fma":
        return 3
    return 1


def _scalar(rng, op, dtype):
    """A fill value, or (sometimes) a scalar second operand of a binary op; exact in every dtype."""
    if op == "fill" or (op in BINARY and rng.random() < 0.2):
        value = float(rng.integers(-8, 9)) / (1 if dtype == "int32" else 4)
        if op == "fdiv" and value == 0:
            value = 2.0
        return value
    return None


def _reduced(extent, rng, op):
    if op not in REDUCE:
        return extent, ()
    axes = (int(rng.integers(len(extent))),)
    kept = tuple(e for d, e in enumerate(extent) if d not in axes) or (1,)
    return kept, axes


# ---- CPU ------------------------------------------------------------------------------------------------------------

def _cpu_layout(rng, shape, source, workers=False):
    """Each dimension whole or split in two; iters get compact strides in a random order, each padded by 0 or 1; an
    offset; sometimes a replica; in a source, sometimes a stride-0 iter (every index of it reads the same memory); with
    ``workers``, sometimes one iter on the CPU worker axis (``1@cpu``: one slab of memory per worker)."""
    dims = []
    for n in shape:
        divisors = [d for d in range(2, n) if n % d == 0]
        if divisors and rng.random() < 0.4:
            d = int(rng.choice(divisors))
            dims.append((n // d, d))
        else:
            dims.append((n,))
    extents = [e for d in dims for e in d]
    order = rng.permutation(len(extents)) if rng.random() < 0.4 else np.arange(len(extents))[::-1]
    broadcast = int(rng.integers(len(extents))) if source and rng.random() < 0.15 else -1
    worker = int(rng.integers(len(extents))) if workers and rng.random() < 0.15 else -1
    strides = [0] * len(extents)
    step = 1
    for k in order:
        if k == broadcast:
            continue
        if k == worker:
            strides[k] = (1, "cpu")
            continue
        strides[k] = step
        step *= extents[k] + (int(rng.integers(2)) if rng.random() < 0.4 else 0)
    replica = ((2, step),) if rng.random() < 0.1 else ()   # a destination stores every replica
    offset = int(rng.integers(1, 5)) if rng.random() < 0.3 else 0
    return Layout(tuple(dims), tuple(strides), offset, replica)


def _cpu_operand(rng, extent, dtype, repeat, source, workers=False):
    starts, shape = [], []
    for d, e in enumerate(extent):
        pad = int(rng.integers(0, 4)) if rng.random() < 0.5 else 0
        start = int(rng.integers(0, pad + 1))
        rounds = repeat if d == 0 else 1
        starts.append(start)
        shape.append(start + e * rounds + (pad - start))
    return Operand(_cpu_layout(rng, tuple(shape), source, workers), dtype, tuple(starts))


LARGE_SHARE = 0.04
"""Share of CPU programs with large extents (up to 3,000; 160 x 160; 28 x 28 x 28): LLVM unrolls and vectorizes those
differently, and one such nest crashed a process whose JVM had left its thread 1 MiB of stack."""
LARGE_BOUND = {1: 3000, 2: 160, 3: 28}


def _cpu(rng, seed, index, target, op, dtype):
    rank = int(rng.integers(1, 4))
    extent = tuple(int(rng.integers(1, 9)) if rng.random() < 0.8 else int(rng.integers(9, 20)) for _ in range(rank))
    large = np.random.default_rng([seed, index, 1])   # its own stream: the other programs of a seed stay as they were
    if large.random() < LARGE_SHARE:
        extent = tuple(int(large.integers(1, LARGE_BOUND[rank] + 1)) for _ in range(rank))
    repeat = int(rng.integers(2, 4)) if rng.random() < 0.2 else 1
    scalar = _scalar(rng, op, dtype)
    n_src = _arity(op) - (1 if scalar is not None and op != "fill" else 0)
    srcs = tuple(_cpu_operand(rng, extent, dtype, repeat, True, True) for _ in range(n_src))
    kept, axes = _reduced(extent, rng, op)
    dst = _cpu_operand(rng, kept, _out_dtype(rng, op, dtype), repeat if not axes or axes[0] != 0 else 1, False, True)
    if axes and axes[0] == 0:   # the moving dimension is reduced away: the loop rewrites one destination region
        repeat = 1
        srcs = tuple(_cpu_operand(rng, extent, dtype, 1, True, True) for _ in range(n_src))
    accum = bool(axes) and rng.random() < 0.3
    return Program(seed, index, target, op, extent, dst, srcs, repeat=repeat, axes=axes, accum=accum, scalar=scalar)


# ---- CUDA -----------------------------------------------------------------------------------------------------------

_SCOPES = (("cta", 128), ("cta", 64), ("cta", 256), ("warpgroup", 128), ("warp", 32))


def _register_families(dtype):
    """(scope, threads, shape, layout) of register tiles, and for reductions over dimension 1 the reduced layout."""
    fams = []
    for c in (1, 2, 4, 8):
        fams.append(("warp", 32, Layout(((32,), (c,)), (("1", "laneid"), 1)), None))
    for g in (1, 2, 4, 8, 32):
        rows = 32 // g
        for c in (1, 2, 4):
            src = Layout(((rows,), (g, c)), ((g, "laneid"), (1, "laneid"), 1))
            red = Layout(((rows,),), ((g, "laneid"),), replica=((g, (1, "laneid")),) if g > 1 else ())
            fams.append(("warp", 32, src, red))
    for r in (1, 2, 4):
        c = 2
        src = Layout(((r,), (32, c)), (c, (1, "laneid"), 1))
        fams.append(("warp", 32, src, Layout(((r,),), (1,), replica=((32, (1, "laneid")),))))
    for c in (1, 2, 4, 8):
        fams.append(("warpgroup", 128, Layout(((128,), (c,)), ((1, "tid_in_wg"), 1)), None))
        fams.append(("cta", 128, Layout(((4, 32), (c,)), ((1, "warpid"), (1, "laneid"), 1)), None))
    fams.append(("warpgroup", 128, Layout(((4, 16), (4, 2, 2)),
                                          ((1, "wid_in_wg"), (2, "laneid"), 2, (1, "laneid"), 1)), None))
    fams.append(("cta", 128, Layout(((4, 8), (4, 4)), ((1, "warpid"), (4, "laneid"), (1, "laneid"), 1)),
                 Layout(((4, 8),), ((1, "warpid"), (4, "laneid")), replica=((4, (1, "laneid")),))))
    return [(s, t, _normal(l), _normal(r) if r else None) for s, t, l, r in fams]


def _normal(layout):
    """Thread strides as (int, axis); per-thread iters compact (local memory)."""
    strides = tuple(s if isinstance(s, int) else (int(s[0]), s[1]) for s in layout.strides)
    return Layout(layout.dims, strides, layout.offset, layout.replica, layout.swizzle)


def _shared_layout(rng, shape, dtype):
    """Compact, padded (rows a few elements apart), column-major, split, or swizzled (16-byte units, 8 of them)."""
    kind = rng.choice(["compact", "padded", "permuted", "split", "swizzled"], p=[0.3, 0.2, 0.15, 0.15, 0.2])
    rows, cols = shape
    bits = {"float32": 2, "int32": 2}.get(dtype, 3)         # log2 of the elements in 16 bytes
    if kind == "swizzled" and cols == 8 << bits and rows % 8 == 0:
        return Layout(((rows,), (cols,)), (cols, 1), swizzle=(bits, 3, 3))
    if kind == "padded":
        return Layout(((rows,), (cols,)), (cols + int(rng.choice([1, 4, 8])), 1))
    if kind == "permuted":
        return Layout(((rows,), (cols,)), (1, rows))
    if kind == "split" and cols % 2 == 0 and cols > 2:
        half = cols // 2
        return Layout(((rows,), (2, half)), (half, rows * half, 1))
    return compact(shape)


def _cuda(rng, seed, index, target, op, dtype):
    if rng.random() < 0.4:
        return _cuda_registers(rng, seed, index, target, op, dtype)
    if rng.random() < 0.12:
        return _cuda_threads(rng, seed, index, target, op, dtype)
    scope, threads = _SCOPES[int(rng.integers(len(_SCOPES)))]
    bits = {"float32": 2, "int32": 2}.get(dtype, 3)
    swizzle_cols = 8 << bits
    if rng.random() < 0.25:   # a shape a 128-byte swizzle fits: rows of 8 16-byte units, 8 rows an atom
        rows, cols = int(rng.choice([8, 16])), swizzle_cols
    else:
        rows = int(rng.choice([1, 2, 4, 8, 16]))
        cols = int(rng.choice([1, 4, 8, 16, 32, swizzle_cols, 7, 12]))
    extent = (rows, cols)
    repeat = int(rng.integers(2, 4)) if rng.random() < 0.2 else 1
    scalar = _scalar(rng, op, dtype)
    n_src = _arity(op) - (1 if scalar is not None and op != "fill" else 0)
    kept, axes = _reduced(extent, rng, op)
    if axes:
        repeat = 1
    out = _out_dtype(rng, op, dtype)
    srcs, tiles = [], []
    rounds = repeat if repeat > 1 and rng.random() < 0.5 else 1   # tiles whose regions move too
    for _ in range(n_src):
        srcs.append(_global(rng, extent, dtype, repeat, True))
        tiles.append(_shared_tile(rng, extent, dtype, rounds) if rng.random() < 0.85 else None)
    glob = _global(rng, kept, out, repeat, False)
    dst_tile = _shared_tile(rng, kept, out, rounds) if len(kept) == 2 else Operand(compact(kept), out, (0,), "shared")
    tiles.append(dst_tile)
    accum = bool(axes) and rng.random() < 0.3
    return Program(seed, index, target, op, extent, glob, tuple(srcs), scope, threads, repeat, axes, accum, scalar,
                   tuple(tiles))


def _global(rng, extent, dtype, repeat, source):
    """A global operand: compact, or a view with a CPU-style random layout (padded, split, permuted, offset,
    broadcast or replicated in a source)."""
    if rng.random() < 0.5:
        return Operand(compact((extent[0] * repeat,) + tuple(extent[1:])), dtype, (0,) * len(extent))
    return _cpu_operand(rng, extent, dtype, repeat, source)


def _shared_tile(rng, extent, dtype, rounds=1):
    """A shared tile holding the region ``extent`` (``rounds`` of them, one below the other: the region moves with
    the rounds), sometimes inside a larger tile at a nonzero start, sometimes used through a view (``decl_buffer``)
    with the tile's own layout."""
    pad = (0, 0) if rng.random() < 0.7 else (int(rng.integers(0, 3)), int(rng.integers(0, 5)))
    shape = (extent[0] * rounds + pad[0], extent[1] + pad[1])
    start = (int(rng.integers(0, pad[0] + 1)), int(rng.integers(0, pad[1] + 1)))
    return Operand(_shared_layout(rng, shape, dtype), dtype, start, "shared", view=bool(rng.random() < 0.1))


def _cuda_registers(rng, seed, index, target, op, dtype):
    fams = _register_families(dtype)
    if op in REDUCE:
        fams = [f for f in fams if f[3] is not None]
    scope, threads, layout, reduced = fams[int(rng.integers(len(fams)))]
    full = layout.shape
    extent, start = full, (0,) * len(full)
    repeat = 1
    if rng.random() < 0.25 and full[0] > 1:   # a part of the register tile: rows [s, s + n)
        n = int(rng.integers(1, full[0]))
        first = int(rng.integers(0, full[0] - n + 1))
        extent, start = (n, *full[1:]), (first, *start[1:])
        rounds = (full[0] - first) // n
        if rounds > 1 and rng.random() < 0.4:   # rows [s + t n, s + (t + 1) n) in round t: a run-time start
            repeat = int(rng.integers(2, rounds + 1))
    scalar = _scalar(rng, op, dtype)
    n_src = _arity(op) - (1 if scalar is not None and op != "fill" else 0)
    out = _out_dtype(rng, op, dtype)
    axes, kept = (), extent
    if op in REDUCE:
        axes, kept = (1,), (extent[0],)
    srcs, tiles = [], []
    for _ in range(n_src):
        srcs.append(_global(rng, extent, dtype, repeat, True))
        staged = rng.random()
        if staged < 0.7 or repeat > 1:
            tiles.append(Operand(layout, dtype, start, "local"))
        elif staged < 0.9:
            tiles.append(_shared_tile(rng, extent, dtype))
        else:
            tiles.append(None)
    dst_layout = reduced if axes else layout
    if not axes and op == "copy" and repeat == 1 and rng.random() < 0.3:   # registers -> shared/global: the op
        tiles.append(_shared_tile(rng, extent, out) if rng.random() < 0.5 else None)
    else:
        tiles.append(Operand(dst_layout, out, start[:len(kept)], "local"))
    accum = bool(axes) and rng.random() < 0.3
    return Program(seed, index, target, op, extent, _global(rng, kept, out, repeat, False), tuple(srcs),
                   scope, threads, repeat, axes, accum, scalar, tuple(tiles))


def _cuda_threads(rng, seed, index, target, op, dtype):
    """Thread scope: thread t applies the op to its own rows [t n, (t + 1) n) of the global operands (a start known
    only at run time), staged through its own local tiles; the program's rounds are its threads."""
    threads = int(rng.choice([32, 64]))
    extent = (1, int(rng.choice([1, 2, 3, 4, 8, 16])))
    scalar = _scalar(rng, op, dtype)
    n_src = _arity(op) - (1 if scalar is not None and op != "fill" else 0)
    kept, axes = _reduced(extent, rng, op)
    if axes == (0,):   # reduce the row's elements, not the rows of different threads
        axes, kept = (1,), (1,)
    out = _out_dtype(rng, op, dtype)
    srcs, tiles = [], []
    for _ in range(n_src):
        srcs.append(_global(rng, extent, dtype, threads, True))
        tiles.append(Operand(compact(extent), dtype, (0, 0), "local") if rng.random() < 0.7 else None)
    tiles.append(Operand(compact(kept), out, (0,) * len(kept), "local") if rng.random() < 0.7 else None)
    accum = bool(axes) and rng.random() < 0.3
    return Program(seed, index, target, op, extent, _global(rng, kept, out, threads, False), tuple(srcs),
                   "thread", threads, threads, axes, accum, scalar, tuple(tiles))
