"""A ``cuda-ldstmatrix`` plan (axe4j.cuda.emit's, the same Java record) as explicit tvm_tirx tile calls.

tvm_tirx's ldmatrix/stmatrix pattern takes canonical views of shape (matrix, row, word) in 32-bit words: lane
``4 * row + word`` owns a register word of each matrix, and row r of matrix m is 16 contiguous bytes of shared
memory. Per group of the plan, the shared view maps (m, r, w) to ``base_m + r * row_stride + w`` (in words, the plan's
element bases and row stride halved) and the register view maps it to the lane's word ``words[m]``
(``S[(.., 8, 4):(.., 4@laneid, 1@laneid)]``). The bases and words of a group's matrices must be affine in the
matrix index's binary digits (``S[(2, 2):(s_hi, s_lo)]``); the first base and the run-time start are the start of
a leading axis of the shared view, and the first register word a leading axis ``(2):(word)`` of the register view.
One ``T.cuda.tile.apply(T.ptx["ldmatrix.sync.aligned.m8n8.x4.shared.b16"], registers, shared)`` (or ``stmatrix``)
per group, at warp scope."""

from __future__ import annotations

from tvm_tirx.ir import Bind, Evaluate, SeqStmt, Var
from tvm_tirx.script import tirx as T
from tvm_tirx.tirx.layout import S, TileLayout

from ._emit_affine import NotOnThisLane, _reach, _run_time_offset


def _digits(values, what):
    """(extents, strides) with ``values[m] = values[0] + sum digit_k(m) * stride_k`` over binary digits of m."""
    count = len(values)
    if count == 1:
        return [1], [0]
    if count not in (2, 4):
        raise NotOnThisLane(f"cuda-ldstmatrix: {count} matrices per instruction")
    if count == 2:
        return [2], [values[1] - values[0]]
    hi, lo = values[2] - values[0], values[1] - values[0]
    if values[3] - values[0] != hi + lo:
        raise NotOnThisLane(f"cuda-ldstmatrix: the {what} {list(values)} are not affine in the matrix index")
    return [2, 2], [hi, lo]


def emit(request, plan, scope: str, sctx):
    word_swizzle = None
    if plan.swizzle is not None:   # Swizzle<B,M,S> of 16-bit elements is Swizzle<B,M-1,S> of their 32-bit words
        bits, base, shift = (int(x) for x in plan.swizzle)
        if base < 1:
            raise NotOnThisLane(f"cuda-ldstmatrix: Swizzle<{bits},{base},{shift}> moves single 16-bit elements")
        word_swizzle = (base - 1, bits, shift)   # T.ComposeLayout's order: (per-element bits M, B, S)
    reg, smem = request.tensors[plan.register], request.tensors[plan.shared]
    num, row_words = plan.num, plan.row_stride // 2
    if plan.row_stride % 2 or plan.warp_stride % 2 or any(b % 2 for g in plan.groups for b in g.bases):
        raise NotOnThisLane("cuda-ldstmatrix: a row that does not start on a 32-bit word")
    offset = _run_time_offset(plan, request.starts[plan.shared])
    if plan.warps > 1:   # warp w of the warpgroup, (tx % 128) / 32, takes its blocks w * warp_stride further
        tx = sctx.launch_params["threadIdx.x"][0]
        offset = offset + T.floordiv(T.floormod(tx, 128), 32) * plan.warp_stride
    instruction = f"{plan.direction}matrix.sync.aligned.m8n8.x{num}.shared.b16"
    # the view reaches the last matrix row at the largest run-time start (a ring slot, a warp's rows) and warp
    reach = _reach(plan, [int(d) for d in smem.ty.shape], request.extents[plan.shared])
    reach += (plan.warps - 1) * plan.warp_stride
    span = (max(b for g in plan.groups for b in g.bases) + reach + 7 * plan.row_stride + 8) // 2
    binds, calls = [], []
    for n, group in enumerate(plan.groups):
        b_ext, b_str = _digits([b // 2 for b in group.bases], "bases")
        w_ext, w_str = _digits(list(group.words), "register words")
        if any(s < 0 for s in b_str + w_str):
            raise NotOnThisLane("cuda-ldstmatrix: matrices in descending order")
        rows = TileLayout(S[(span, *b_ext, 8, 4):(1, *b_str, row_words, 1)])
        shared = Var(f"axe4j_matrices{n}", T.Tensor(
            (span, num, 8, 4), "uint32", scope=str(smem.ty.scope),
            layout=rows if word_swizzle is None else T.ComposeLayout(*word_swizzle, rows)))
        first = int(group.words[0])   # a leading axis (2):(first), index 1 taken (extent 1 when first is 0)
        lead = (2, first) if first else (1, 0)
        words = Var(f"axe4j_words{n}", T.Tensor(
            (lead[0], num, 8, 4), "uint32", scope="local",
            layout=TileLayout(S[(lead[0], *w_ext, 8, 4):(lead[1], *w_str, 4 @ _laneid(), 1 @ _laneid())])))
        binds += [Bind(shared, T.decl_tensor(smem.data, ty_args=[shared.ty])),
                  Bind(words, T.decl_tensor(reg.data, ty_args=[words.ty]))]
        at = group.bases[0] + offset   # elements; the rule keeps rows 16-byte aligned
        start = at // 2 if isinstance(at, int) else T.floordiv(at, 2)
        mem = shared[start:start + 1, 0:num, 0:8, 0:4]
        regs = words[1:2, 0:num, 0:8, 0:4] if first else words[0:1, 0:num, 0:8, 0:4]
        calls.append(Evaluate(T.cuda.tile.apply(T.ptx[instruction], *((regs, mem) if plan.direction == "ld"
                                                                       else (mem, regs)), scope="warp")))
    return SeqStmt([*binds, *calls])


def _laneid():
    from tvm_tirx.backend.cuda.axis import laneid

    return laneid
