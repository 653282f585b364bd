"""A ``cuda-tma`` plan (axe4j.cuda.tma_emit's, the same Java record) as explicit tvm_tirx tile calls: one
``T.cuda.tile.apply(T.ptx[<the plan's instruction>], ...)`` per box of the plan, tvm_tirx's TMA pattern (fields
``box`` and ``coords``, outer dim first, ``swizzle``, ``mbar``, ``cta_mask``).

- global: the tensor map the plan describes, encoded on the host as axe4j.cuda.tma_emit encodes it (``_tensor_map``)
  and handed to the pattern as a caller-encoded descriptor. The pattern could encode a map of a global region
  itself, but the plan's map may split a global dim (a 64 x 128 tile as 4-d boxes) or add one (a batch index),
  which no region of the global tensor says. Box i starts at map coordinates ``start_j + issues[i].coords[j]``,
  where start_j is the region start's digit in map dim j (``(start_d // step_j) % extent_j``; a run-time start, in
  the global dim's outermost map dim, ``start_d // step_j``).
- shared: the box (outer dim first, row-major) at element ``base + issues[i].shared`` of the shared tensor, behind a
  leading axis of stride 1 whose index is that offset (a repeat of extent 1 for the pattern), which checks every
  element of it against the box image. With a swizzle mode (1..3: 32, 64, 128 bytes) the view is swizzled as the
  hardware swizzles the bytes it writes: bits [4, 4 + mode) of the byte address XOR bits [7, 7 + mode), in elements
  ``ComposeLayout(log2(16 / bytes), mode, 3, ...)``. A run-time start (a ring's stage) moves the view's start when
  its steps keep the tensor's alignment, so the offsets the pattern checks stay constants.

A load completes on the call's ``mbar`` (the caller initialises it, arms it with ``expect_tx`` and waits on it);
with ``cta_mask`` it is multicast to those CTAs of the cluster. A store joins the bulk group the caller commits
and waits.
"""

from __future__ import annotations

from tvm_tirx.ir import Bind, Evaluate, SeqStmt, Var
from tvm_tirx.script import tirx as T
from tvm_tirx.tirx.layout import S, TileLayout

from ._describe import _constant
from ._emit_affine import NotOnThisLane, _bits, _run_time_offset

# TMA's L2 promotion of 128 bytes, as the 0.27 lane's emitter sets it (axe4j.cuda.tma_emit.L2_PROMOTION_128B)
L2_PROMOTION_128B = 2


def _coordinate(start, dim):
    """Map dim ``dim``'s coordinate of the region start (as axe4j.cuda.tma_emit: a run-time start is read in the
    global dim's outermost map dim, ``start // step``)."""
    if dim.start >= 0:
        return dim.start
    return start if dim.step == 1 else T.floordiv(start, dim.step)


def _tensor_map(sctx, tensor, plan, nbytes):
    """The host's tensor map of ``tensor`` for the plan's dims (as axe4j.cuda.tma_emit encodes it): dim j of extent
    ``dims[j].extent``, byte stride ``dims[j].stride * bytes`` (dims 1..), box ``dims[j].box``, element stride 1;
    one map per distinct (tensor, dims, box, swizzle), shared by the calls that need it."""
    dims = plan.dims
    extents = [int(d.extent) for d in dims]
    strides = [int(d.stride) * nbytes for d in dims[1:]]
    boxes = [int(d.box) for d in dims]
    dtype = str(tensor.ty.dtype.dtype)
    key = f"axe4j-tma:{hash(tensor)}:{extents}:{strides}:{boxes}:{plan.swizzle}:{dtype}"
    cached = sctx.cache_get(key)
    if cached is not None:
        return cached
    tensor_map = Var(f"{tensor.name}_tensor_map", T.handle("tensormap").ty)

    @T.function(check_well_formed=False)
    def encode():
        T.Bind(tensor_map, T.stack_alloca("tensormap", 1))
        T.cuda.tensormap_encode_tiled(tensor_map, tensor.ptr_to([0] * len(tensor.ty.shape)), *extents, *strides,
                                      *boxes, *([1] * len(dims)), descriptor_dtype=dtype, rank=len(dims),
                                      interleave=0, swizzle=int(plan.swizzle), l2_promotion=L2_PROMOTION_128B,
                                      oob_fill=0)
        T.kernel_replace_point()

    sctx.add_init_stmt(encode.body, host=True)
    sctx.cache_set(key, tensor_map)
    return tensor_map


def _run_time_alignment(entry, nbytes) -> int:
    """Bytes every run-time offset of the shared operand is a multiple of: the largest power of two dividing each
    stride of its run-time starts (``start_strides``, ``start_terms``); 0 when it has none."""
    strides = [int(v) for v in (entry.start_strides or {}).values() if int(v)]
    strides += [int(term[2]) for terms in (entry.start_terms or {}).values() for term in terms if int(term[2])]
    if not strides:
        return 0
    align = 1 << 30
    for stride in strides:
        bytes_ = abs(stride) * nbytes
        align = min(align, bytes_ & -bytes_)
    return align


def _shared_view(tensor, box, span, swizzle, nbytes, offset, align):
    """The shared data from element ``offset`` on as (offset, *box): a leading axis of stride 1 over the ``span``
    offsets a box can start at, then the row-major box; swizzled as the hardware writes it when ``swizzle`` (the
    mode) is set. ``align``: the tensor's alignment, which ``offset`` keeps."""
    strides, size = [], 1
    for extent in reversed(box):
        strides.insert(0, size)
        size *= extent
    layout = TileLayout(S[(span, *box):(1, *strides)])
    if swizzle:
        layout = T.ComposeLayout((16 // nbytes).bit_length() - 1, int(swizzle), 3, layout)
    ty = tensor.ty
    var = Var(f"axe4j_{tensor.name}_boxes", T.Tensor((span, *box), str(ty.dtype.dtype), scope=str(ty.scope),
                                                     align=align, layout=layout))
    if isinstance(offset, int) and offset == 0:
        return var, [Bind(var, T.decl_tensor(tensor.data, ty_args=[var.ty]))]
    flat = Var(f"axe4j_{tensor.name}_elements", T.Tensor((span + size - 1,), str(ty.dtype.dtype),   # all of them
                                                          scope=str(ty.scope), align=align, layout="default"))
    return var, [Bind(flat, T.decl_tensor(tensor.data, ty_args=[flat.ty])),
                 Bind(var, T.decl_tensor(flat.ptr_to([offset]), ty_args=[var.ty]))]


def emit(request, plan, scope: str, sctx, mbar=None, cta_mask=None, cta_group=None):
    """The statement that replaces a TMA ``copy_async`` call: one bulk tensor copy per box of the plan; a load with
    ``cta_group`` 2 is the ``.cta_group::2`` form (its mbarrier may be the CTA pair's other CTA's, an address in the
    cluster window), as on 0.27."""
    if plan.global_base:
        raise NotOnThisLane(f"cuda-tma: the global tensor starts {plan.global_base} elements into its data")
    load = plan.direction == "g2s"
    if load and mbar is None:
        raise ValueError("cuda-tma: a TMA load completes on an mbarrier; pass mbar=")
    if load and plan.multicast and cta_mask is None:
        raise ValueError("cuda-tma: a multicast TMA load needs cta_mask=")
    chain = plan.instruction
    if cta_group is not None:
        group = _constant(cta_group)
        if group not in (1.0, 2.0):
            raise ValueError(f"cuda-tma: cta_group={cta_group} must be the constant 1 or 2")
        if group == 2:
            chain += ".cta_group::2"
    g, s = request.tensors[plan.global_], request.tensors[plan.shared]
    dims = plan.dims
    nbytes = _bits(str(g.ty.dtype.dtype)) // 8
    box = tuple(int(d.box) for d in reversed(dims))
    box_elements = 1
    for extent in box:
        box_elements *= extent
    entry = plan.access[plan.shared]
    # the run-time part of the start (a ring's stage, a block index) moves the view's start, when it keeps the
    # tensor's alignment: the box offsets stay constants, which tvm_tirx's pattern checks element by element fast
    run_time = _run_time_offset(entry, request.starts[plan.shared])
    align = int(s.ty.data_alignment)
    if isinstance(run_time, int) or _run_time_alignment(entry, nbytes) % align:
        offset, base = 0, entry.base + run_time
    else:
        offset, base = run_time, entry.base
    shape = [int(n) for n in s.ty.shape]
    size = 1
    for n in shape:
        size *= n
    if box_elements > size:
        raise ValueError(f"cuda-tma: a box of {box_elements} elements does not fit {s.name}'s {size}")
    span = size - box_elements + 1   # the offsets a box can start at
    tensor_map = T.address_of(_tensor_map(sctx, g, plan, nbytes))
    s_view, s_binds = _shared_view(s, box, span, plan.swizzle, nbytes, offset, align)
    starts = [_coordinate(request.starts[plan.global_][int(d.dim)], d) for d in dims]
    fields = {"box": box, "coord_steps": ((0,) * len(dims),), "swizzle": int(plan.swizzle)}
    if load:
        fields["mbar"] = mbar
        if plan.multicast:
            fields["cta_mask"] = cta_mask
    body = []
    for issue in plan.issues:
        at = base + issue.shared
        shared = s_view[(slice(at, at + 1), *(slice(0, n) for n in box))]
        coords = tuple(reversed([start + int(c) for start, c in zip(starts, issue.coords)]))
        operands = (shared, tensor_map) if load else (tensor_map, shared)
        body.append(Evaluate(T.cuda.tile.apply(T.ptx[chain], *operands, scope="thread", coords=coords,
                                               **fields)))
    return SeqStmt([*s_binds, *body])
