"""The CPU plan kinds (``affine``, ``logical``, ``digits``, ``reduce``, ``reduce-digits``, ``gemm-naive``): the plan's
loops, strides, bases and replicas written out as TIR, no decision of the emitter's own."""

from __future__ import annotations

from dataclasses import dataclass

from tvm import tirx
from tvm.script import tirx as T

from .._emit import (_address, _base_last, _combine, _digit_address, _digit_views, _dtype, _flat_views, _identity,
                     _is_zero, _nest, _source_count, _sources, _spans, _store_replicas, _value, operand_bases)
from .._registry import emits
from . import bf16
from .vector_exp import exp_for   # exp in vector registers, not a libm call per lane


@emits("affine")
def _emit_affine(request, plan):
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    loops = plan.loops
    access = plan.access
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op, request.params))

    def body(counters, views, bits):
        values = []
        for kind, what in slots:
            if kind == "scalar":
                values.append(what)
            else:
                values.append(views[what][_address(bases[what], loops, what, counters)])
        value = _value(request.op, str(dst.dtype), values, exp=exp_for(request))
        addr = _address(bases["dst"], loops, "dst", counters)
        for r in _base_last(access["dst"].replicas):
            bf16.store(views["dst"], bits, value, [addr + r if r else addr])

    def whole():
        views = _flat_views(request, _spans(request, access, bases, loops, plan.tail))
        bits = bf16.bits_alias(views["dst"])
        _nest(loops, lambda c: body(c, views, bits), tail=plan.tail)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


@emits("logical")
def _emit_logical(request, plan):
    loops = plan.loops
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op, request.params))

    def index(role, counters):
        start, _ = request.regions[role]
        idx = list(start)
        for loop, c in zip(loops, counters):
            d = loop.dims[role]
            idx[d] = idx[d] + c
        return idx

    def body(counters):
        values = [what if kind == "scalar" else request.buffers[what][tuple(index(what, counters))]
                  for kind, what in slots]
        T.buffer_store(dst, _value(request.op, str(dst.dtype), values, exp=exp_for(request)), index("dst", counters))

    @T.prim_func(check_well_formed=False)
    def impl():
        _nest(loops, body)

    return impl


@emits("digits")
def _emit_digits(request, plan):
    loops = plan.loops
    operands = plan.operands
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op, request.params))

    def coordinate(role, counters):
        start, _ = request.regions[role]
        idx = list(start)
        for loop, c in zip(loops, counters):
            d = loop.dims[role]
            idx[d] = idx[d] + c
        return idx

    def address(role, counters):
        return _digit_address(operands[role], coordinate(role, counters))

    def body(counters, views):
        values = [what if kind == "scalar" else views[what][address(what, counters)] for kind, what in slots]
        value = _value(request.op, str(dst.dtype), values, exp=exp_for(request))
        addr = address("dst", counters)
        for r in _base_last(operands["dst"].replicas):
            T.buffer_store(views["dst"], value, [addr + r if r else addr])

    def whole():
        views = _digit_views(request, operands)
        _nest(loops, lambda c: body(c, views))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


@emits("reduce")
def _emit_reduce(request, plan):
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    loops = plan.loops
    access = plan.access
    dtype = str(request.buffers["dst"].dtype)
    combine = plan.combine
    spatial = [l for l in loops if not l.reduces]
    identity = {"sum": tirx.const(0, dtype), "max": tirx.min_value(dtype), "min": tirx.max_value(dtype)}[combine]

    def init(counters, views, bits):
        bf16.store(views["dst"], bits, identity, [_address(bases["dst"], spatial, "dst", counters)])

    def op(a, b):
        return {"sum": lambda: a + b, "max": lambda: tirx.max(a, b), "min": lambda: tirx.min(a, b)}[combine]()

    def load_src(counters, views):
        x = views["src0"][_address(bases["src0"], loops, "src0", counters)]
        return x if _dtype(x) == dtype else tirx.Cast(dtype, x)

    def body(counters, views, bits):
        addr = _address(bases["dst"], loops, "dst", counters)
        bf16.store(views["dst"], bits, op(views["dst"][addr], load_src(counters, views)), [addr])

    def lanes_tree(acc, lo, hi):
        """combine(acc[lo], ..., acc[hi - 1]) as a balanced tree."""
        if hi - lo == 1:
            return acc[lo]
        mid = (lo + hi) // 2
        return op(lanes_tree(acc, lo, mid), lanes_tree(acc, mid, hi))

    def vector_body(spatial_counters, views, bits, reduced, lanes, tail):
        # partial results over the reduced loops, lane l of the vector loop in accumulator l // width, lane l % width;
        # one buffer per accumulator register, each a stack array (TVM gives a "global" buffer under 1 KiB the stack; a
        # "local" one became a workspace allocated per row, which every step stored to), then the accumulators folded
        # lane-wise and a balanced tree of the lanes into the destination
        width = 16 if lanes > 16 and lanes % 16 == 0 else lanes
        accs = [T.decl_buffer((width,), dtype, scope="global", layout=None) for _ in range(lanes // width)]
        accs_bits = [bf16.bits_alias(a) for a in accs]
        for a, a_bits in zip(accs, accs_bits):
            with T.vectorized(width) as j:
                bf16.store(a, a_bits, identity, [j])

        def chunks(outer_counters, count):
            """The first ``count`` lanes of the vector loop, at the reduced loops' ``outer_counters``."""
            for p, (a, a_bits) in enumerate(zip(accs, accs_bits)):
                n = min(width, count - p * width)
                if n <= 0:
                    break
                with T.vectorized(n) as j:
                    x = load_src(list(spatial_counters) + list(outer_counters) + [p * width + j], views)
                    bf16.store(a, a_bits, op(a[j], x), [j])

        def vector_loop(counters):
            if tail:   # serial(q) vectorized(lanes), then the tail's lanes at q
                with T.serial(reduced[-2].extent) as q:
                    chunks(list(counters) + [q], lanes)
                chunks(list(counters) + [reduced[-2].extent], tail)
            else:
                chunks(counters, lanes)

        _nest(reduced[:-2] if tail else reduced[:-1], vector_loop)
        acc = accs[0]
        if len(accs) > 1:
            acc = T.decl_buffer((width,), dtype, scope="global", layout=None)
            with T.vectorized(width) as j:
                bf16.store(acc, bf16.bits_alias(acc), lanes_tree([a[j] for a in accs], 0, len(accs)), [j])
        addr = _address(bases["dst"], spatial, "dst", spatial_counters)
        bf16.store(views["dst"], bits, op(views["dst"][addr], lanes_tree(acc, 0, width)), [addr])

    def whole():
        tail = plan.tail
        views = _flat_views(request, _spans(request, access, bases, loops, tail))
        bits = bf16.bits_alias(views["dst"])
        if plan.vector_reduce:
            reduced = loops[len(spatial):]
            if plan.init:
                _nest(spatial, lambda c: init(c, views, bits))
            _nest(spatial, lambda c: vector_body(c, views, bits, reduced, reduced[-1].extent, tail))
            return
        if plan.init:
            _nest(spatial, lambda c: init(c, views, bits), tail=tail)
        _nest(loops, lambda c: body(c, views, bits), tail=tail)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


@dataclass(frozen=True)
class _Serial:
    """A serial loop of ``extent`` for ``_nest`` (a plan's dim loop carries no loop kind)."""

    extent: int
    kind: str = "serial"


@emits("reduce-digits")
def _emit_reduce_digits(request, plan):
    operands = plan.operands
    dtype = str(request.buffers["dst"].dtype)
    combine = plan.combine

    def coordinate(role, loops, counters, base=None):
        idx = list(base) if base is not None else list(request.regions[role][0])
        for loop, c in zip(loops, counters):
            if role in loop.dims:
                d = loop.dims[role]
                idx[d] = idx[d] + c
        return idx

    def kept(spatial_counters, views):
        dst_addr = _digit_address(operands["dst"], coordinate("dst", plan.spatial, spatial_counters))
        src_base = coordinate("src0", plan.spatial, spatial_counters)
        if plan.init:
            _store_replicas(views["dst"], operands["dst"], _identity(combine, dtype), dst_addr)

        def reduce(counters):
            x = views["src0"][_digit_address(operands["src0"], coordinate("src0", plan.reduced, counters,
                                                                          src_base))]
            x = x if _dtype(x) == dtype else tirx.Cast(dtype, x)
            _store_replicas(views["dst"], operands["dst"], _combine(combine, views["dst"][dst_addr], x), dst_addr)

        _nest([_Serial(l.extent) for l in plan.reduced], reduce)

    def whole():
        views = _digit_views(request, operands)
        _nest([_Serial(l.extent) for l in plan.spatial], lambda c: kept(c, views))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


@emits("gemm-naive")
def _emit_gemm_naive(request, plan):
    operands = plan.operands
    M, N, K = plan.M, plan.N, plan.K
    dtype = str(request.buffers["D"].dtype)
    alpha, beta = request.scalars["alpha"], request.scalars["beta"]

    def cast(v):
        return v if _dtype(v) == dtype else tirx.Cast(dtype, v)

    def scalar(v):
        return tirx.const(float(v.value), dtype) if hasattr(v, "value") else cast(v)

    def address(role, **index):
        entry = operands[role]
        coord = list(request.regions[role][0])
        for name, value in index.items():
            d = entry.dims[name]
            coord[d] = coord[d] + value
        return _digit_address(entry, coord)

    def whole():
        views = _digit_views(request, operands)
        with T.serial(M) as m:
            with T.serial(N) as n:
                acc = T.decl_buffer((1,), dtype, scope="local", layout=None)
                T.buffer_store(acc, tirx.const(0, dtype), [0])
                with T.serial(K) as k:
                    T.buffer_store(acc, acc[0] + cast(views["A"][address("A", m=m, k=k)])
                                   * cast(views["B"][address("B", k=k, n=n)]), [0])
                value = scalar(alpha) * acc[0]
                if not _is_zero(beta):
                    value = value + scalar(beta) * cast(views["C"][address("C", m=m, n=n)])
                _store_replicas(views["D"], operands["D"], value, address("D", m=m, n=n))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl
