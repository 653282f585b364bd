"""CUDA plans for ``copy_async`` as PrimFuncs: ``cuda-cp-async`` (LDGSTS) and ``cuda-tma`` (bulk tensor copies).

``cuda-cp-async``: thread t of T takes chunks ``t, t + T, ...`` of the region's loop nest; chunk c starts at the
flat element ``c * vec`` of a row-major walk of the loops (counter_l = ``(c * vec / below_l) mod extent_l``) and
each operand's element offset is ``base + sum_l counter_l * stride_l`` (the shared one swizzled when its layout
is). One ``cp.async`` of ``bytes`` bytes per chunk and destination replica moves the chunk from global to shared
memory; the kernel commits, waits and syncs.
"""

from __future__ import annotations

from tvm.script import tirx as T

from .emit import _counters, _swizzle, _swizzled_span, thread_index
from .._emit import _base_last, _flat_views, _span, operand_bases
from .._registry import emits


@emits("cuda-cp-async")
def emit(request, plan):
    """The PrimFunc of a typed ``cuda-cp-async`` plan (``axe4j.plan_types``)."""
    return _emit_cp_async(request, plan)


def _offset(base, loops, role, counters):
    """``base + sum_l counter_l * stride_l`` (base: the operand's ``OperandBase``)."""
    addr = base.base_expr
    for loop, c in zip(loops, counters):
        stride = loop.strides[role]
        if stride:
            addr = addr + c * stride
    return addr


def _emit_cp_async(request, plan):
    bases = operand_bases(request, plan)   # run-time starts added to each operand's base
    loops, access = plan.loops, plan.access
    threads, vec, chunks, rounds, size = plan.threads, plan.vec, plan.chunks, plan.rounds, plan.bytes
    instruction = plan.instruction
    swizzle = access["dst"].swizzle

    def chunk(views, c):
        counters = _counters(c * vec, loops) if loops else []
        src = views["src0"].ptr_to([_offset(bases["src0"], loops, "src0", counters)])
        dst = _offset(bases["dst"], loops, "dst", counters)
        for r in _base_last(access["dst"].replicas):
            # the plan keeps chunks within one swizzle unit of 2^M elements: the chunk lands whole at swz(start)
            at = _swizzle(dst + r if r else dst, swizzle)
            T.evaluate(T.ptx[instruction](views["dst"].ptr_to([at]), src, size))

    def whole():
        spans = {role: _swizzled_span(_span(access[role], bases[role].span_base, loops, role), access[role].swizzle)
                 for role in request.buffers}
        views = _flat_views(request, spans)
        tid = thread_index(request.scope, request.sctx, threads)
        with T.serial(rounds) as f:
            c = f * threads + tid
            if chunks % threads == 0:
                chunk(views, c)
            else:
                with T.If(c < chunks):
                    with T.Then():
                        chunk(views, c)

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl
