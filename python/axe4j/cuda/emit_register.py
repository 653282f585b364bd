"""CUDA plans for register tiles partitioned over thread axes (``cuda-register``, ``cuda-shuffle-reduce``).

Both plans come from Java (``CudaRegisterRule``, ``CudaShuffleReduceRule``); nothing is decided here. The scope's
thread index t is read from threadIdx.x (``cuda_emit.thread_index``: lane = tx % 32, warpgroup thread = tx % 128,
CTA thread = tx). A thread digit is ``(t / tau) % mod``; a guard ``lo <= (t / tau) % mod < lo + count`` keeps the
threads that hold region elements; a thread term ``[tau, mod, lo, below, count, stride]`` adds
``((((t / tau) % mod) - lo) / below) % count * stride`` to a global/shared operand's base. A register operand is
the thread's flat array of ``slots`` elements. The slot loops are unrolled (constant register indices keep the
array in registers); the last loop is a vector of ``vec`` elements when ``vec > 1``. A swizzled memory operand
(``swizzle`` [bits, base, shift]) is read or written at ``swz(address)`` per access.

``cuda-shuffle-reduce``: per output, the thread folds its own slots into a one-element buffer, then combines it
with ``tvm_warp_shuffle_xor`` (``shfl.sync.bfly``) for every butterfly mask, then stores (``accum``: combined with
the destination's old value after the shuffles).
"""

from __future__ import annotations

from tvm import tirx
from tvm.script import tirx as T

from .emit import _swizzle, _swizzled_span, thread_index
from .._emit import (_base_last, _combine, _digit_address, _identity, _source_count, _sources, _value, data_of,
                     guarded, operand_bases)
from .._registry import emits

# every lane of a warp takes part in the shuffles: Java declines regions that leave lanes out
FULL_WARP = 0xFFFFFFFF


@emits("cuda-register", "cuda-register-boxes", "cuda-register-digits", "cuda-shuffle-reduce")
def emit(request, plan):
    """The PrimFunc of a typed register plan (``axe4j.plan_types``)."""
    if plan.kind == "cuda-register":
        return _emit_register(request, [plan])
    if plan.kind == "cuda-register-boxes":   # a region cut at digit boundaries: one register plan per box
        return _emit_register(request, plan.boxes)
    if plan.kind == "cuda-register-digits":
        return _emit_register_digits(request, plan)
    return _emit_shuffle_reduce(request, plan)


def _digit(t, tau, mod):
    """``(t / tau) % mod`` (no division when tau is 1)."""
    value = t if tau == 1 else tirx.floordiv(t, tau)
    return tirx.floormod(value, mod)


def _term_value(t, term):
    tau, mod, lo, below, count = (int(x) for x in term[:5])
    value = _digit(t, tau, mod)
    if lo:
        value = value - lo
    if below != 1:
        value = tirx.floordiv(value, below)
    if below * count < mod or lo:
        value = tirx.floormod(value, count)
    return value


def _condition(t, guards, write_once):
    cond = None
    for tau, mod, lo, count in ([int(x) for x in g] for g in guards):
        d = _digit(t, tau, mod)
        part = d == lo if count == 1 else tirx.all(lo <= d, d < lo + count) if lo else d < count
        cond = part if cond is None else tirx.all(cond, part)
    for tau, count in ([int(x) for x in w] for w in write_once):
        part = _digit(t, tau, count) == 0
        cond = part if cond is None else tirx.all(cond, part)
    return cond


def _views(request, plan, bases, loops):
    """Flat views over each operand's reach from its base; a register operand covers at least its ``slots``."""
    views = {}
    for role, buffer in request.buffers.items():
        entry = plan.access[role]
        reach = sum((l.extent - 1) * abs(l.strides[role]) for l in loops)
        reach += sum((term[4] - 1) * abs(term[5]) for term in getattr(entry, "thread_terms", ()))
        span = bases[role].span_base + reach + max([0, *entry.replicas]) + 1
        if entry.slots is not None:
            span = max(span, entry.slots)
        span = _swizzled_span(span, getattr(entry, "swizzle", None))   # a shuffle reduce's slots have none
        views[role] = T.decl_buffer((span,), buffer.dtype, data=buffer.data, scope=buffer.scope(), layout=None)
    return views


def _unrolled(loops, body, counters=()):
    if not loops:
        body(list(counters))
        return
    kind = T.vectorized if loops[0].kind == "vectorized" else T.unroll
    with kind(loops[0].extent) as v:
        _unrolled(loops[1:], body, counters + (v,))


def _emit_register(request, plans):
    """The register plans one after the other (each box of a cut region is one plan)."""
    bodies = [_register_body(request, plan) for plan in plans]

    def every_box():
        for body in bodies:
            body()

    @T.prim_func(check_well_formed=False)
    def impl():
        every_box()

    return impl


def _register_body(request, plan):
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    loops = plan.loops
    access = plan.access
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op))
    threads = plan.threads

    def whole():
        views = _views(request, plan, bases, loops)
        t = thread_index(request.scope, request.sctx, threads)
        thread_bases = {}
        for role, entry in access.items():
            base = bases[role].base_expr
            for term in entry.thread_terms:
                base = base + _term_value(t, term) * term[5]
            thread_bases[role] = T.bind(base) if entry.thread_terms else base

        def address(role, counters, replica=0):
            """base + sum counter * stride (+ a replica); a swizzled operand at swz(access start) + lane, as the
            plan keeps each vector access aligned inside one 2^M-element unit of the swizzle."""
            swizzle = access[role].swizzle
            lane = len(loops) - 1 if swizzle and loops and loops[-1].kind == "vectorized" else None
            addr = thread_bases[role] + replica if replica else thread_bases[role]
            for l, (loop, c) in enumerate(zip(loops, counters)):
                stride = loop.strides[role]
                if stride and l != lane:
                    addr = addr + c * stride
            if not swizzle:
                return addr
            addr = _swizzle(addr, swizzle)
            stride = loops[lane].strides[role] if lane is not None else 0
            return addr + counters[lane] * stride if stride else addr

        def element(counters):
            values = [what if kind == "scalar" else views[what][address(what, counters)] for kind, what in slots]
            value = _value(request.op, str(dst.dtype), values)
            for r in _base_last(access["dst"].replicas):
                T.buffer_store(views["dst"], value, [address("dst", counters, r)])

        guarded(_condition(t, plan.guards, plan.write_once), lambda: _unrolled(loops, element))

    return whole


def _emit_register_digits(request, plan):
    """Each thread visits its slots (register digit counters, unrolled): the partition's flat index
    ``sum c_k below_k + sum ((t / tau_k) % e_k) below_k``, its coordinate in the partition's shape, a guard that it
    lies in the region (and, for a memory destination, that the thread's replica digits are 0); every operand at the
    same offset in its region (memory: ``_digit_address``; registers: the same slot)."""
    part = plan.partition
    shape = [int(n) for n in plan.shape]
    rows = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        rows[d] = rows[d + 1] * shape[d + 1]
    p_start, p_extent = request.regions[part]
    dst = request.buffers["dst"]
    slots = _sources(request, _source_count(request.op))
    digits = [(int(e), int(s), int(b)) for e, s, b in plan.register_digits]

    def views_of():
        views = {}
        for role, buffer in request.buffers.items():
            if role in plan.memory:
                entry = plan.memory[role]
                span = entry.base + sum((e - 1) * abs(st) for e, st, _ in entry.iters) + max([0, *entry.replicas]) + 1
            else:
                span = plan.slots
            views[role] = T.decl_buffer((span,), buffer.dtype, data=data_of(buffer), scope=buffer.scope(),
                                        layout=None)
        return views

    def whole():
        views = views_of()
        t = thread_index(request.scope, request.sctx, plan.threads)
        held = 0
        for extent, tau, below in plan.thread_digits:
            held = held + _digit(t, int(tau), int(extent)) * int(below)
        held = T.bind(held) if plan.thread_digits else held

        def element(counters):
            slot = plan.slot_base + sum(c * s for c, (_, s, _) in zip(counters, digits))
            flat = held + sum(c * b for c, (_, _, b) in zip(counters, digits))
            coord = [tirx.floormod(tirx.floordiv(flat, rows[d]), shape[d]) if rows[d] * shape[d] != 1 else 0
                     for d in range(len(shape))]
            inside = [tirx.all(p_start[d] <= coord[d], coord[d] < p_start[d] + p_extent[d]) if p_extent[d] > 1
                      else coord[d] == p_start[d] for d in range(len(shape)) if p_extent[d] < shape[d]]
            offsets = [coord[d] - p_start[d] for d in plan.dims]

            def address(role):
                if role not in plan.memory:
                    return slot
                entry = plan.memory[role]
                at = list(request.regions[role][0])
                for k, d in enumerate(entry.dims):
                    at[d] = at[d] + offsets[k]
                return _digit_address(entry, at)

            def body():
                values = [what if kind == "scalar" else views[what][address(what)] for kind, what in slots]
                value = _value(request.op, str(dst.dtype), values)
                if "dst" in plan.memory:
                    for r in _base_last(plan.memory["dst"].replicas):
                        T.buffer_store(views["dst"], value, [address("dst") + r if r else address("dst")])
                else:
                    T.buffer_store(views["dst"], value, [slot])

            cond = _condition(t, [], plan.write_once)
            for part_ in inside:
                cond = part_ if cond is None else tirx.all(cond, part_)
            guarded(cond, body)

        _unrolled([_Loop(e) for e, _, _ in digits], element)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


class _Loop:
    """A slot loop of ``_unrolled``: ``extent`` counters, unrolled."""

    kind = "unroll"

    def __init__(self, extent):
        self.extent = extent


def _emit_shuffle_reduce(request, plan):
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    kept = [l for l in plan.loops if not l.reduces]
    folded = [l for l in plan.loops if l.reduces]
    combine, masks = plan.combine, list(plan.masks)
    dst = request.buffers["dst"]
    dtype = str(dst.dtype)
    threads = plan.threads

    def address(role, loops, counters, base):
        addr = base
        for loop, c in zip(loops, counters):
            stride = loop.strides[role]
            if stride:
                addr = addr + c * stride
        return addr

    def whole():
        views = _views(request, plan, bases, plan.loops)
        t = thread_index(request.scope, request.sctx, threads)

        def output(counters):
            d_addr = address("dst", kept, counters, bases["dst"].base_expr)
            s_base = address("src0", kept, counters, bases["src0"].base_expr)
            acc = T.decl_buffer((1,), dtype, scope="local", layout=None)
            T.buffer_store(acc, _identity(combine, dtype), [0])

            def fold(inner):
                value = views["src0"][address("src0", folded, inner, s_base)]
                value = value if str(value.ty) == dtype else tirx.Cast(dtype, value)
                T.buffer_store(acc, _combine(combine, acc[0], value), [0])

            _unrolled(folded, fold)
            for mask in masks:
                other = T.tvm_warp_shuffle_xor(tirx.const(FULL_WARP, "uint32"), acc[0], mask, 32, 32)
                T.buffer_store(acc, _combine(combine, acc[0], other), [0])
            result = acc[0] if plan.init else _combine(combine, acc[0], views["dst"][d_addr])
            T.buffer_store(views["dst"], result, [d_addr])

        guarded(_condition(t, plan.guards, []), lambda: _unrolled(kept, output))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl
