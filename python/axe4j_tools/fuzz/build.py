"""A ``Program`` as a TIRx PrimFunc (TVMScript, built from the program's values) and as runnable source text.

The kernel's arguments are the program's global operands, sources first, the destination last. On the CPU each is a
flat buffer of its layout's span, viewed through ``decl_buffer`` with the layout. On CUDA each is a compact global
tensor; the program's ``tiles`` (shared or register buffers) stage them.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

from .generate import BINARY, REDUCE, UNARY
from .spec import Program

_NAMESPACE = {"warpgroup": "wg"}


def kernel(p: Program):
    return _cuda_kernel(p) if p.cuda else _cpu_kernel(p)


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

def _cpu_views(p, flats):
    operands = (*p.srcs, p.dst)
    return [T.decl_buffer(o.shape, o.dtype, data=f.data, layout=o.layout.tvm()) for o, f in zip(operands, flats)]


def _cpu_body(p, flats):
    views = _cpu_views(p, flats)
    dst_extent = _dst_extent(p)

    def one(t):
        srcs = [_region(v, o.start, p.extent, t, p.repeat > 1) for v, o in zip(views, p.srcs)]
        emit_op(p, _region(views[-1], p.dst.start, dst_extent, t, p.repeat > 1), srcs)

    if p.repeat == 1:
        one(0)
    else:
        with T.serial(p.repeat) as t:
            one(t)


def _cpu_kernel(p: Program):
    sizes = [(o.layout.span(),) for o in (*p.srcs, p.dst)]
    dt = [o.dtype for o in (*p.srcs, p.dst)]
    if len(sizes) == 1:
        @T.prim_func
        def kernel(D: T.Buffer(sizes[0], dt[0])):
            T.evaluate(0)
            _cpu_body(p, [D])
    elif len(sizes) == 2:
        @T.prim_func
        def kernel(A: T.Buffer(sizes[0], dt[0]), D: T.Buffer(sizes[1], dt[1])):
            _cpu_body(p, [A, D])
    elif len(sizes) == 3:
        @T.prim_func
        def kernel(A: T.Buffer(sizes[0], dt[0]), B: T.Buffer(sizes[1], dt[1]), D: T.Buffer(sizes[2], dt[2])):
            _cpu_body(p, [A, B, D])
    else:
        @T.prim_func
        def kernel(A: T.Buffer(sizes[0], dt[0]), B: T.Buffer(sizes[1], dt[1]), C: T.Buffer(sizes[2], dt[2]),
                   D: T.Buffer(sizes[3], dt[3])):
            _cpu_body(p, [A, B, C, D])
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
    T.thread_id([threads])


def _sync():
    T.evaluate(T.cuda.cta_sync())   # a statement: called from Python, not parsed, so the call must be evaluated


def _alloc(tile):
    if tile is None:
        return None
    return T.alloc_buffer(tile.shape, tile.dtype, scope=tile.memory, layout=tile.layout.tvm())


def _cuda_body(p, globals_):
    ns = getattr(Tx, _NAMESPACE.get(p.scope, p.scope))
    tiles = [_alloc(t) for t in p.tiles]
    dst_extent = _dst_extent(p)
    moving = p.repeat > 1

    def staging_ns(tile):
        return ns if tile.memory == "local" else Tx.cta

    def one(t):
        srcs = []
        for glob, operand, buf, tile in zip(globals_, p.srcs, tiles, p.tiles):
            region = _region(glob, operand.start, p.extent, t, moving)
            if buf is None:
                srcs.append(region)
                continue
            staging_ns(tile).copy(_region(buf, tile.start, p.extent), region)
            srcs.append(_region(buf, tile.start, p.extent))
        out_glob = _region(globals_[-1], p.dst.start, dst_extent, t, moving)
        out_tile, out_buf = p.tiles[-1], tiles[-1]
        out = out_glob if out_buf is None else _region(out_buf, out_tile.start, dst_extent)
        if p.accum and out_buf is not None:
            staging_ns(out_tile).copy(out, out_glob)
        _sync()
        emit_op(p, out, srcs, ns)
        _sync()
        if out_buf is not None:
            staging_ns(out_tile).copy(out_glob, out)
            _sync()

    if p.repeat == 1:
        one(0)
    else:
        with T.serial(p.repeat) as t:
            one(t)


def _cuda_kernel(p: Program):
    shapes = [o.shape for o in (*p.srcs, p.dst)]
    dt = [o.dtype for o in (*p.srcs, p.dst)]
    threads = p.threads
    if len(shapes) == 1:
        @T.prim_func
        def kernel(D: T.Buffer(shapes[0], dt[0])):
            _header(threads)
            _cuda_body(p, [D])
    elif len(shapes) == 2:
        @T.prim_func
        def kernel(A: T.Buffer(shapes[0], dt[0]), D: T.Buffer(shapes[1], dt[1])):
            _header(threads)
            _cuda_body(p, [A, D])
    elif len(shapes) == 3:
        @T.prim_func
        def kernel(A: T.Buffer(shapes[0], dt[0]), B: T.Buffer(shapes[1], dt[1]), D: T.Buffer(shapes[2], dt[2])):
            _header(threads)
            _cuda_body(p, [A, B, D])
    else:
        @T.prim_func
        def kernel(A: T.Buffer(shapes[0], dt[0]), B: T.Buffer(shapes[1], dt[1]), C: T.Buffer(shapes[2], dt[2]),
                   D: T.Buffer(shapes[3], dt[3])):
            _header(threads)
            _cuda_body(p, [A, B, C, D])
    return kernel


def target(p: Program):
    if not p.cuda:
        return tvm.target.Target("llvm")
    return tvm.target.Target({"kind": "cuda", "arch": p.target}, host="llvm")
