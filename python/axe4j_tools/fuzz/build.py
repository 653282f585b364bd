"""A ``Program`` as a TIRx PrimFunc (TVMScript, built from the program's values) and as runnable source text.

The kernel's arguments are the program's global operands, sources first, the destination last, each a flat buffer
of its layout's span viewed through ``decl_buffer`` with the layout. On CUDA the program's ``tiles`` (shared or
register buffers, sometimes used through a view) stage them.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

from .generate import BINARY, REDUCE, UNARY
from .spec import Program

_NAMESPACE = {"warpgroup": "wg"}


def kernel(p: Program):
    return _kernel(p, _cuda_body if p.cuda else _cpu_body)


def _const(value, dtype):
    return tvm.tirx.const(int(value) if dtype == "int32" else float(value), dtype)


def _region(buf, start, extent, t=0, moves=False):
    first = start[0] + t * extent[0] if moves else start[0]
    lo = (first, *start[1:])
    return buf[tuple(slice(s, s + e) for s, e in zip(lo, extent))]


def _dst_extent(p: Program):
    kept = tuple(e for d, e in enumerate(p.extent) if d not in p.axes)
    return kept or (1,)


def emit_op(p: Program, dst, srcs, ns=Tx):
    """The program's tile call on regions ``dst`` and ``srcs`` (in the execution-scope namespace ``ns``)."""
    op = p.op
    if op == "copy":
        ns.copy(dst, srcs[0])
    elif op == "cast":
        ns.cast(dst, srcs[0])
    elif op == "fill":
        ns.fill(dst, _const(p.scalar, p.dst.dtype))
    elif op in UNARY:
        getattr(ns, op)(dst, srcs[0])
    elif op in BINARY:
        second = srcs[1] if p.scalar is None else _const(p.scalar, p.dtype)
        getattr(ns, op)(dst, srcs[0], second)
    elif op == "fma":
        if p.scalar is None:
            ns.fma(dst, srcs[0], srcs[1], srcs[2])
        else:
            ns.fma(dst, srcs[0], _const(p.scalar, p.dtype), srcs[1])
    elif op in REDUCE:
        getattr(ns, op)(dst, srcs[0], list(p.axes), p.accum)
    else:
        raise ValueError(f"unknown op {op!r}")


# ---- CPU ------------------------------------------------------------------------------------------------------------

def _views(p, flats):
    """Each global operand: a view with its layout over its flat argument."""
    operands = (*p.srcs, p.dst)
    return [T.decl_buffer(o.shape, o.dtype, data=f.data, layout=o.layout.tvm()) for o, f in zip(operands, flats)]


def _cpu_body(p, flats):
    views = _views(p, flats)
    dst_extent = _dst_extent(p)

    def one(t):
        srcs = [_region(v, o.start, p.extent, t, p.repeat > 1) for v, o in zip(views, p.srcs)]
        emit_op(p, _region(views[-1], p.dst.start, dst_extent, t, p.repeat > 1), srcs)

    if p.scope == "thread":   # thread t's rows [t n, (t + 1) n): the rounds are the threads
        one(tid)
    elif p.repeat == 1:
        one(0)
    else:
        with T.serial(p.repeat) as t:
            one(t)


def _kernel(p: Program, body):
    """The PrimFunc over flat arguments (one per global operand, the layout's span) running ``body(p, args)``."""
    sizes = [(o.layout.span(),) for o in (*p.srcs, p.dst)]
    dt = [o.dtype for o in (*p.srcs, p.dst)]
    if len(sizes) == 1:
        @T.prim_func
        def kernel(D: T.Buffer(sizes[0], dt[0])):
            body(p, [D])
    elif len(sizes) == 2:
        @T.prim_func
        def kernel(A: T.Buffer(sizes[0], dt[0]), D: T.Buffer(sizes[1], dt[1])):
            body(p, [A, D])
    elif len(sizes) == 3:
        @T.prim_func
        def kernel(A: T.Buffer(sizes[0], dt[0]), B: T.Buffer(sizes[1], dt[1]), D: T.Buffer(sizes[2], dt[2])):
            body(p, [A, B, D])
    else:
        @T.prim_func
        def kernel(A: T.Buffer(sizes[0], dt[0]), B: T.Buffer(sizes[1], dt[1]), C: T.Buffer(sizes[2], dt[2]),
                   D: T.Buffer(sizes[3], dt[3])):
            body(p, [A, B, C, D])
    return kernel


# ---- CUDA -----------------------------------------------------------------------------------------------------------

def _header(threads):
    T.device_entry()
    T.cta_id([1])
    T.warpgroup_id([max(1, threads // 128)])
    T.warp_id_in_wg([min(4, threads // 32)])
    T.warp_id([threads // 32])
    T.lane_id([32])
    T.thread_id_in_wg([min(threads, 128)])
    return T.thread_id([threads])


def _sync():
    T.evaluate(T.cuda.cta_sync())   # a statement: called from Python, not parsed, so the call must be evaluated


def _alloc(tile):
    """(the buffer staging copies use, the buffer the op uses): the same tile, or a view of it."""
    if tile is None:
        return None, None
    buf = T.alloc_buffer(tile.shape, tile.dtype, scope=tile.memory, layout=tile.layout.tvm())
    if not tile.view:
        return buf, buf
    return buf, T.decl_buffer(tile.shape, tile.dtype, data=buf.data, scope=tile.memory, layout=tile.layout.tvm())


def _cuda_body(p, flats):
    tid = _header(p.threads)
    globals_ = _views(p, flats)
    ns = getattr(Tx, _NAMESPACE.get(p.scope, p.scope))
    pairs = [_alloc(t) for t in p.tiles]
    tiles = [pair[0] for pair in pairs]
    used = [pair[1] for pair in pairs]
    dst_extent = _dst_extent(p)
    moving = p.repeat > 1

    def staging_ns(tile):
        return ns if tile.memory == "local" else Tx.cta

    def on_chip(buf, tile, extent, t):
        # a tile with room for every round's region below the other moves with the rounds too (rows [s + t n, ...))
        fits = tile.start[0] + p.repeat * extent[0] <= tile.shape[0]
        return _region(buf, tile.start, extent, t, moving and fits and p.scope != "thread")

    def one(t):
        srcs = []
        for glob, operand, buf, view, tile in zip(globals_, p.srcs, tiles, used, p.tiles):
            region = _region(glob, operand.start, p.extent, t, moving)
            if buf is None:
                srcs.append(region)
                continue
            staging_ns(tile).copy(on_chip(buf, tile, p.extent, t), region)
            srcs.append(on_chip(view, tile, p.extent, t))
        out_glob = _region(globals_[-1], p.dst.start, dst_extent, t, moving)
        out_tile, out_buf, out_view = p.tiles[-1], tiles[-1], used[-1]
        if out_buf is not None and p.accum:
            staging_ns(out_tile).copy(on_chip(out_buf, out_tile, dst_extent, t), out_glob)
        _sync()
        emit_op(p, out_glob if out_buf is None else on_chip(out_view, out_tile, dst_extent, t), srcs, ns)
        _sync()
        if out_buf is not None:
            staging_ns(out_tile).copy(out_glob, on_chip(out_buf, out_tile, dst_extent, t))
            _sync()

    if p.repeat == 1:
        one(0)
    else:
        with T.serial(p.repeat) as t:
            one(t)


def target(p: Program):
    if not p.cuda:
        return tvm.target.Target("llvm")
    return tvm.target.Target({"kind": "cuda", "arch": p.target}, host="llvm")
