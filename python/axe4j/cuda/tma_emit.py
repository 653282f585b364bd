"""``cuda-tma`` plans as PrimFuncs: TMA bulk tensor copies between a global tensor and a shared tile.

The host builds the tensor map once per (buffer, dims, strides, box, swizzle) before the kernel starts
(``cuTensorMapEncodeTiled`` through ``T.tensormap_encode_tiled``, added with ``sctx.add_init_stmt(host=True)``):
dim j has extent ``dims[j].extent``, byte stride ``dims[j].stride * bytes`` (dims 1..), box ``dims[j].box`` and
element stride 1. The one issuing thread then runs one instruction per box of the plan: box i starts at shared
element ``base + issues[i].shared`` and at tensor coordinates ``start_j + issues[i].coords[j]``, where start_j is
the region start's digit in map dim j (``(start_d // step_j) % extent_j``; for a run-time start, in the global dim's
outermost map dim, ``start_d // step_j`` read at run time).
A load completes on the caller's mbarrier (``mbar`` in the call's config); with ``cta_mask`` it is multicast
(``.multicast::cluster``): the box lands at the same shared offset in every CTA of the mask and completes on each
one's mbarrier at the same offset. A store joins the bulk group the caller commits and waits.
"""

from __future__ import annotations

import tvm
from tvm import tirx
from tvm.script import tirx as T

from .emit import _swizzled_span
from .._emit import operand_bases
from .._registry import emits

# TMA's L2 promotion of 128 bytes, as TVM's own TMA case sets by default
L2_PROMOTION_128B = 2


@emits("cuda-tma")
def emit(request, plan):
    """The PrimFunc of a typed ``cuda-tma`` plan (``axe4j.plan_types``)."""
    g = request.buffers[plan.global_]
    s = request.buffers[plan.shared]
    dims = plan.dims
    nbytes = tvm.DataType(str(g.dtype)).bits // 8
    tensor_map = _tensor_map(request.sctx, plan, g, nbytes)
    g_starts = request.regions[plan.global_][0]
    starts = [d.start if d.start >= 0 else _run_time_coordinate(g_starts[d.dim], d.step) for d in dims]
    shared_base = operand_bases(request, plan)[plan.shared]
    load = plan.direction == "g2s"
    mbar = request.call.config.get("mbar") if load else None
    cta_mask = request.call.config.get("cta_mask") if load else None
    box_elements = 1
    for d in dims:
        box_elements *= d.box
    span = shared_base.span_base + max(i.shared for i in plan.issues) + box_elements
    # Swizzle<B,M,3> with 2^M elements = 16 bytes: the hardware permutes addresses within blocks of 2^(M+3+B)
    unit = (16 // nbytes).bit_length() - 1
    span = _swizzled_span(span, [plan.swizzle, unit, 3] if plan.swizzle else None)
    chain = plan.instruction
    if load and int(request.call.config.get("cta_group", 1)) == 2:   # the mbarrier may be the pair's other CTA's
        chain += ".cta_group::2"

    def coordinate(start, inc):
        value = start + int(inc)
        return value if isinstance(value, int) else T.cast(value, "int32")

    def whole():
        view = T.decl_buffer((span,), s.dtype, data=s.data, scope=s.scope(), layout=None)
        for issue in plan.issues:
            ptr = view.ptr_to([shared_base.base_expr + issue.shared])
            coords = [coordinate(start, inc) for start, inc in zip(starts, issue.coords)]
            if load and plan.multicast:   # .multicast::cluster takes the 16-bit CTA mask last
                T.evaluate(T.ptx[chain](ptr, T.address_of(tensor_map), *coords, mbar, T.cast(cta_mask, "uint16")))
            elif load:
                T.evaluate(T.ptx[chain](ptr, T.address_of(tensor_map), *coords, mbar))
            else:
                T.evaluate(T.ptx[chain](T.address_of(tensor_map), *coords, ptr))

    @T.prim_func(check_well_formed=False)
    def impl():
        whole()

    return impl


def _run_time_coordinate(start, step):
    """A run-time start's coordinate in the outermost map dim of its global dim: ``floor(start / step)``."""
    return start if step == 1 else tirx.floordiv(start, step)


def _tensor_map(sctx, plan, g, nbytes):
    """The host-side tensor map of ``g`` for the plan's dims, shared by every call that needs the same one."""
    dims = plan.dims
    extents = [d.extent for d in dims]
    strides = [d.stride * nbytes for d in dims[1:]]
    boxes = [d.box for d in dims]
    mode = plan.swizzle
    base_bytes = plan.global_base * nbytes
    key = f"axe4j-tma:{hash(g.data)}:{base_bytes}:{extents}:{strides}:{boxes}:{mode}:{g.dtype}"
    cached = sctx.cache_get(key)
    if cached is not None:
        return cached
    tensor_map = T.Var(f"{g.name}_tensor_map", ty=T.handle("tensormap").ty)
    base = g.data if base_bytes == 0 else tirx.handle_add_byte_offset(g.data, base_bytes)

    @T.prim_func(check_well_formed=False)
    def create_tensor_map():
        T.Bind(T.tvm_stack_alloca("tensormap", 1), var=tensor_map)
        T.tensormap_encode_tiled(tensor_map, base, *extents, *strides, *boxes, *([1] * len(dims)),
                                 descriptor_dtype=str(g.dtype), rank=len(dims), interleave=0, swizzle=mode,
                                 l2_promotion=L2_PROMOTION_128B, oob_fill=0)
        T.tvm_kernel_replace_point()

    sctx.add_init_stmt(create_tensor_map.body, host=True)
    sctx.cache_set(key, tensor_map)
    return tensor_map
