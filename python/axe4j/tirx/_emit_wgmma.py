"""A ``cuda-wgmma`` plan (axe4j.cuda.emit's, the same Java record) as explicit tvm_tirx calls.

tvm_tirx's ``T.cuda.tile.apply`` has no pattern for ``wgmma`` (its patterns are ld/st, ldmatrix/stmatrix,
``mma.sync``, TMA, cp.async and tcgen05), so the plan is spelled, as on 0.27, by raw ``T.ptx`` calls with the
operands the plan names:

- ``fence.proxy.async.shared::cta`` first when the plan asks (operands written by the threads' generic stores), then
  ``wgmma.fence.sync.aligned``;
- per output block and K step: A's and B's 64-bit shared-memory matrix descriptors, each encoded
  (``T.cuda.wgmma.encode_matrix_descriptor``) from the element ``start + run-time offset`` of the operand (its
  region's run-time starts: a pipeline stage, a warpgroup's rows) with the plan's LBO, SBO and swizzle mode; then
  one ``wgmma.mma_async`` of the plan's instruction on the block's accumulator registers (the plan's slots ``d`` of
  C's registers), the two descriptors, scale-d (0 on the first K step unless ``accum``: that step overwrites), scale
  a and b 1 and, for 16-bit types, the transpose immediates 0 (K-major);
- ``wgmma.commit_group.sync.aligned`` and ``wgmma.wait_group.sync.aligned wait``; with ``wait`` 0 the accumulators
  are final, and an empty asm on each (``axe4j.cuda.register_fence``, by reference) keeps the compiler from reading
  one before the wait.
"""

from __future__ import annotations

from tvm_tirx.ir import Bind, Evaluate, SeqStmt, Var
from tvm_tirx.script import tirx as T

from ..cuda import register_fence
from ._emit_affine import _flat_view, _register_tile, _run_time_offset


def _shared_view(name, tensor):
    """A flat view of a shared operand's elements (the descriptors' start addresses)."""
    span = 1
    for n in tensor.ty.shape:
        span *= int(n)
    ty = tensor.ty
    var = Var(name, T.Tensor((span,), str(ty.dtype.dtype), scope=str(ty.scope), align=int(ty.data_alignment),
                             layout="default"))
    return var, Bind(var, T.decl_tensor(tensor.data, ty_args=[var.ty]))


def emit(request, plan, scope: str, sctx):
    """The statement that replaces a ``gemm_async`` call: fenced wgmma instructions, one group, its wait."""
    count = int(plan.registers)
    acc, acc_bind = _flat_view("axe4j_c_slots", request.tensors["C"], count, "local")
    desc, desc_bind = _register_tile("axe4j_descriptors", 2, "uint64")
    binds = [acc_bind, desc_bind]
    views, offsets = {}, {}
    for role, entry in (("A", plan.A), ("B", plan.B)):
        views[role], bind = _shared_view(f"axe4j_{role.lower()}_elements", request.tensors[entry.role])
        binds.append(bind)
        offsets[role] = _run_time_offset(entry, request.starts[entry.role])
    body = []
    if plan.proxy_fence:
        # wgmma reads shared memory through the async proxy: order the threads' generic stores before it
        body.append(Evaluate(T.ptx["fence.proxy.async.shared::cta"]()))
    body.append(Evaluate(T.ptx["wgmma.fence.sync.aligned"]()))
    # scale-a, scale-b 1; the transpose immediates (0: K-major) exist for 16-bit types only
    immediates = (1, 1) if ".e4m3" in plan.instruction or ".e5m2" in plan.instruction else (1, 1, 0, 0)
    for tile in plan.tiles:
        registers = [acc[int(x)] for x in tile.d]
        for kk, step in enumerate(tile.steps):
            for slot, (role, entry, start) in enumerate((("A", plan.A, step.a), ("B", plan.B, step.b))):
                body.append(Evaluate(T.cuda.wgmma.encode_matrix_descriptor(
                    T.address_of(desc[slot]), views[role].ptr_to([offsets[role] + int(start)]), int(entry.lbo),
                    int(entry.sbo), int(entry.swizzle))))
            scale_d = T.bool(bool(plan.accum or kk > 0))
            body.append(Evaluate(T.ptx[plan.instruction](*registers, desc[0], desc[1], scale_d, *immediates)))
    body.append(Evaluate(T.ptx["wgmma.commit_group.sync.aligned"]()))
    body.append(Evaluate(T.ptx["wgmma.wait_group.sync.aligned"](int(plan.wait))))
    if plan.wait == 0:
        # the accumulators are final: keep the compiler from reading them before the wait
        body += [Evaluate(T.cuda.func_call(register_fence.HELPER, acc[x], register_fence.SOURCE))
                 for x in range(count)]
    return SeqStmt([*binds, *body])
