"""The Blackwell plans (axe4j.cuda.emit's and axe4j.cuda.tmem_emit's, the same Java records) as explicit tvm_tirx
tile calls: ``cuda-tcgen05`` (``gemm_async`` into a tensor-memory accumulator) and ``cuda-tcgen05-ldst``
(``copy_async`` between tensor memory and a warpgroup's registers). Both use tvm_tirx's own ``apply`` patterns.

``cuda-tcgen05``: tvm_tirx's ``tcgen05.mma`` pattern takes D (batch, M repeat, N repeat, 128, N) in tensor memory,
A (batch, M repeat, K repeat, 128, 16) and B (batch, N repeat, K repeat, N, 16) in shared memory, and derives the
shared-memory descriptors from A's and B's layouts (checking every element) and the instruction descriptor from the
instruction shape and dtypes. Per N block and K step of the plan, one ``apply`` (repeats of 1, so that the PTX holds
one instruction per block and step, as on 0.27): D is the accumulator from the block's tensor-memory column (the
buffer's address plus the plan's column), A and B are the canonical K-major images the plan describes, from the
element the step names: row r at ``(r / 8) * SBO + (r % 8) * W``, column c at ``c`` (swizzled: W elements a swizzle
row) or ``(c / 8) * LBO + c % 8`` (8x8 core matrices), under the plan's swizzle. ``accum`` is the plan's (0 on the
first K step unless ``accum``: that step overwrites). At warp scope one elected lane issues (``elect.sync``). The
instruction descriptor the pattern encodes must be the plan's (checked here). Completion is the kernel's
(``tcgen05.commit`` to an mbarrier, then its wait), as on 0.27. A plan over a CTA pair (``cta_group`` 2, from
``gemm_async(..., cta_group=2)``) is the same with ``tcgen05.mma.cta_group::2`` and instruction shape (256, N, 16):
D is this CTA's 128 lanes, A its 128 rows and B its N/2 rows, at the same addresses in both CTAs of the pair (the
pattern's per-CTA operands). A ring slot's run-time start moves the A and B views' own start (when it keeps the
tensor's alignment), so that the element starts the pattern checks stay constants.

``cuda-tcgen05-ldst``: tvm_tirx's ``tcgen05.ld``/``st`` pattern takes (warp, row, column) images of the four warps of
a warpgroup, 32 rows each. Per instruction of the plan, the tensor-memory view starts at the buffer's address plus
the instruction's column (lane l of warp w is TLane 32 w + l), and the register view at the instruction's first slot
(thread 32 w + l of the warpgroup holds row 32 w + l). Completion is the kernel's (``tcgen05.wait::ld`` /
``::st``), as on 0.27.
"""

from __future__ import annotations

from tvm_tirx.ir import Bind, Call, Evaluate, If, SeqStmt, Var
from tvm_tirx.script import tirx as T
from tvm_tirx.tirx.layout import S, TileLayout

from ._emit_affine import _bits, _run_time_offset
from ._emit_tma import _run_time_alignment


def _axes():
    from tvm_tirx.backend.cuda.axis import TCol, TLane, laneid, wid_in_wg

    return TLane, TCol, laneid, wid_in_wg


def tmem_address(tensor):
    """The 32-bit tensor-memory address a tmem tensor is declared at (its data pointer's value)."""
    from tvm_tirx.backend.cuda.op import _tmem_address

    return _tmem_address(tensor)


def _tmem_view(name, tensor, column, shape, layout):
    """A view of tensor memory from column ``column`` of ``tensor``'s allocation on (``tirx.cuda.decl_tmem``)."""
    var = Var(name, T.Tensor(shape, str(tensor.ty.dtype.dtype), scope="tmem", layout=layout))
    address = tmem_address(tensor)
    if column:
        address = address + T.uint32(column)
    return var, Bind(var, Call("tirx.cuda.decl_tmem", [address], ty_args=[var.ty]))


def _shared_operand(name, tensor, entry, rows, offset=0):
    """Operand ``entry`` (``PlanParts.SharedOperand``) of ``rows`` x 16 as (start, 1, 1, rows, 16): a leading axis of
    stride 1 over the elements an instruction tile can start at, then the canonical K-major image (see the module
    comment), swizzled as the plan says. ``offset``: a run-time start that keeps the tensor's alignment (a ring's
    slot), which moves the view's own start, so that the starts the pattern checks element by element stay
    constants (checking them under a run-time offset took seconds a descriptor)."""
    ty = tensor.ty
    dtype = str(ty.dtype.dtype)
    unit = 128 // int(ty.dtype.dtype.bits)   # elements of 16 bytes
    size = 1
    for n in ty.shape:
        size *= int(n)
    sbo = int(entry.sbo) * unit
    if entry.swizzle:
        width = unit << int(entry.swizzle)
        atom = ((rows // 8, 8, 16), (sbo, width, 1))
    else:
        atom = ((rows // 8, 8, 2, 8), (sbo, unit, int(entry.lbo) * unit, 1))
    layout = TileLayout(S[(size, 1, 1, *atom[0]):(1, 0, 0, *atom[1])])
    if entry.swizzle:
        layout = T.ComposeLayout((unit).bit_length() - 1, int(entry.swizzle), 3, layout)
    view = Var(name, T.Tensor((size, 1, 1, rows, 16), dtype, scope=str(ty.scope), align=int(ty.data_alignment),
                              layout=layout))
    if isinstance(offset, int) and offset == 0:
        return view, [Bind(view, T.decl_tensor(tensor.data, ty_args=[view.ty]))]
    flat = Var(f"{name}_elements", T.Tensor((2 * size,), dtype, scope=str(ty.scope), align=int(ty.data_alignment),
                                            layout="default"))   # the offset is below size
    return view, [Bind(flat, T.decl_tensor(tensor.data, ty_args=[flat.ty])),
                  Bind(view, T.decl_tensor(flat.ptr_to([offset]), ty_args=[view.ty]))]


def _instruction_n(idesc: int) -> int:
    return ((idesc >> 17) & 0x3F) << 3   # PTX ISA instruction descriptor (kind::f16): N / 8 at bits 17-22


def emit(request, plan, scope: str, sctx):
    """The statement that replaces a tcgen05 ``gemm_async`` call: one ``apply`` of ``tcgen05.mma`` per N block and
    K step, issued by one thread (one elected lane at warp scope)."""
    from tvm_tirx.backend.cuda.cpp.descriptors import encode_instr_descriptor_dense_uint32

    TLane, TCol, _, _ = _axes()
    group = int(plan.cta_group)
    if group not in (1, 2) or f"cta_group::{group}" not in plan.instruction:
        raise ValueError(f"cuda-tcgen05: the plan's cta_group {group} and its instruction {plan.instruction} disagree")
    m, n = 128 * group, _instruction_n(int(plan.idesc))
    b_rows = n // group   # cta_group::2: each CTA of the pair holds N/2 rows of B at the same offset
    dtype = str(request.tensors[plan.A.role].ty.dtype.dtype)
    spelled = encode_instr_descriptor_dense_uint32(M=m, N=n, K=16, d_dtype="float32", a_dtype=dtype, b_dtype=dtype,
                                                   trans_a=False, trans_b=False, cta_group=group)
    if spelled != int(plan.idesc):
        raise ValueError(f"cuda-tcgen05: tvm_tirx encodes the instruction descriptor of m{m}n{n}k16 {dtype} as "
                         f"{spelled:#x}, the plan says {int(plan.idesc):#x}")
    binds, views, offsets = [], {}, {}
    for role, entry, rows in (("A", plan.A, 128), ("B", plan.B, b_rows)):
        tensor = request.tensors[entry.role]
        run_time = _run_time_offset(entry, request.starts[entry.role])
        align = int(tensor.ty.data_alignment)
        moved = not isinstance(run_time, int) and _run_time_alignment(entry, _bits(str(tensor.ty.dtype.dtype)) // 8) \
            % align == 0
        offsets[role] = 0 if moved else run_time
        views[role], bind = _shared_operand(f"axe4j_{role.lower()}_tiles", tensor, entry, rows,
                                            run_time if moved else 0)
        binds.extend(bind)
    c = request.tensors["C"]
    body = []
    if plan.proxy_fence:
        # tcgen05.mma reads shared memory through the async proxy: order the threads' generic stores before it
        # (no operand to view: no apply pattern, a raw T.ptx call)
        body.append(Evaluate(T.ptx["fence.proxy.async.shared::cta"]()))
    # extent-1 repeats (their stride a TCol, so that every coordinate is a TLane or TCol)
    accumulator = TileLayout(S[(1, 1, 1, 128, n):(1 @ TCol, 1 @ TCol, 1 @ TCol, 1 @ TLane, 1 @ TCol)])
    for t, tile in enumerate(plan.tiles):
        d, bind = _tmem_view(f"axe4j_d{t}", c, int(tile.column), (1, 1, 1, 128, n), accumulator)
        binds.append(bind)
        for kk, step in enumerate(tile.steps):
            a_at, b_at = offsets["A"] + int(step.a), offsets["B"] + int(step.b)
            a = views["A"][a_at:a_at + 1, 0:1, 0:1, 0:128, 0:16]
            b = views["B"][b_at:b_at + 1, 0:1, 0:1, 0:b_rows, 0:16]
            body.append(Evaluate(T.cuda.tile.apply(
                T.ptx[plan.instruction], d[0:1, 0:1, 0:1, 0:128, 0:n], a, b, scope="thread",
                instruction_shape=(m, n, 16), accum=T.bool(bool(plan.accum or kk > 0)))))
    issue = SeqStmt(body)
    if plan.elect:
        issue = If(T.cuda.elect_sync() != T.uint32(0), issue, None)
    return SeqStmt([*binds, issue])


def emit_ldst(request, plan, scope: str, sctx):
    """The statement that replaces a tensor-memory ``copy_async``: one ``apply`` of ``tcgen05.ld``/``st``
    ``.32x32b.x<num>`` per instruction of the plan, by the four warps of the warpgroup."""
    TLane, TCol, laneid, wid_in_wg = _axes()
    reg, tmem = request.tensors[plan.register], request.tensors[plan.tmem]
    num = int(plan.num)
    chain = f"tcgen05.{plan.direction}.sync.aligned.32x32b.x{num}.b32"
    shape = (4, 32, num)
    tmem_layout = TileLayout(S[shape:(32 @ TLane, 1 @ TLane, 1 @ TCol)])
    reg_layout = TileLayout(S[shape:(1 @ wid_in_wg, 1 @ laneid, 1)])
    registers = int(plan.registers)
    flat = Var("axe4j_reg_slots", T.Tensor((registers,), str(reg.ty.dtype.dtype), scope="local",
                                           layout=TileLayout(S[registers])))
    binds, body = [Bind(flat, T.decl_tensor(reg.data, ty_args=[flat.ty]))], []
    for i in range(int(plan.count)):
        slot = int(plan.slot) + i * num
        r = Var(f"axe4j_regs{i}", T.Tensor(shape, str(reg.ty.dtype.dtype), scope="local", layout=reg_layout))
        binds.append(Bind(r, T.decl_tensor(flat.ptr_to([slot]) if slot else reg.data, ty_args=[r.ty])))
        m, bind = _tmem_view(f"axe4j_tmem{i}", tmem, int(plan.column) + i * num, shape, tmem_layout)
        binds.append(bind)
        whole = (slice(0, 4), slice(0, 32), slice(0, num))
        operands = (r[whole], m[whole]) if plan.direction == "ld" else (m[whole], r[whole])
        body.append(Evaluate(T.cuda.tile.apply(T.ptx[chain], *operands, scope="warpgroup")))
    return SeqStmt([*binds, *body])
