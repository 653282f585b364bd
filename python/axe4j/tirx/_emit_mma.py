"""A ``cuda-mma`` plan (axe4j.cuda.emit's, the same Java record) as explicit tvm_tirx tile calls.

tvm_tirx's ``mma.sync`` pattern takes fragment images: D and C (M, N, 16, 8) f32, A (M, K, 16, k/2) and B
(N, K, 8, k/2) in 32-bit words, each lane owning the PTX ISA's fragment coordinates (9.7.16.5.6). Per instruction
of the plan (one output block, one K step) each operand's view maps its atom to that lane's registers at the slots
the plan names: D row ``lane / 4 + 8 (r / 2)``, column ``2 (lane % 4) + r % 2`` at slot ``d[r]``; A row
``lane / 4 + 8 (r % 2)``, word ``lane % 4 + 4 (r / 2)`` at word ``a[r]``; B row ``lane / 4``, word
``lane % 4 + 4 r`` at word ``b[r]``. The slots must be affine in the register index's bits (as the rule lays them
out); the first slot is a leading axis ``(2):(first)`` of the view, index 1 taken. Each output block's slots are
first set from C's or zero (``init``), one thread-scope ``ewise`` a slot; each step is one
``T.cuda.tile.apply(T.ptx[<the plan's instruction>], D, A, B, D)``, accumulating in place, at warp scope. m16n8k16
only so far."""

from __future__ import annotations

from tvm_tirx.ir import Bind, Evaluate, LambdaExpr, PrimType, SeqStmt, Var
from tvm_tirx.script import tirx as T
from tvm_tirx.tirx.layout import S, TileLayout

from . import _values as values
from ._emit_affine import NotOnThisLane, _flat_view


def _laneid():
    from tvm_tirx.backend.cuda.axis import laneid

    return laneid


def _strides(slots, what):
    """(first slot, stride of register bit 0, stride of register bit 1) of 2 or 4 slots, affine in the bits."""
    base = slots[0]
    lo = slots[1] - base
    if len(slots) == 2:
        return base, lo, 0
    hi = slots[2] - base
    if len(slots) != 4 or slots[3] - base != lo + hi:
        raise NotOnThisLane(f"cuda-mma: the {what} slots {list(slots)} are not affine in the register index")
    return base, lo, hi


def _view(name, tensor, base, dtype, extents, strides):
    """The fragment image at slot ``base``: a leading axis (2):(base) whose index 1 is taken (extent 1 when base is 0),
    then the M and N (or K) repeats of 1, then the atom."""
    lead = (2, base) if base else (1, 0)
    var = Var(name, T.Tensor((lead[0], 1, 1, *_shape(extents)), dtype, scope="local",
                             layout=TileLayout(S[(lead[0], 1, 1, *extents):(lead[1], 0, 0, *strides)])))
    return var, Bind(var, T.decl_tensor(tensor.data, ty_args=[var.ty]))


def _shape(extents):
    """The atom's (rows, columns) from its digits: rows are the first two digits of a 4-digit atom, else the first."""
    if len(extents) == 4:
        return extents[0] * extents[1], extents[2] * extents[3]
    return extents[0], extents[1] * extents[2]


def emit(request, plan, scope: str, sctx):
    if not plan.instruction.startswith("mma.sync.aligned.m16n8k16."):
        raise NotOnThisLane(f"cuda-mma: {plan.instruction} (this lane spells m16n8k16 so far)")
    lane = _laneid()
    counts = {role: getattr(plan.registers, role) for role in ("D", "A", "B", "C")}
    same_c = request.tensors["C"].same_as(request.tensors["D"])
    binds, body, made = [], [], {}

    def view(role, base, extents, strides, dtype):
        key = (role, base, tuple(extents), tuple(str(s) for s in strides))
        if key not in made:
            made[key], bind = _view(f"axe4j_{role.lower()}{len(made)}", request.tensors[role], base, dtype, extents,
                                    strides)
            binds.append(bind)
        at = 1 if base else 0
        return made[key][at:at + 1, 0:1, 0:1, *(slice(0, n) for n in _shape(extents))]

    def d_view(slots, role="D"):
        base, lo, hi = _strides(slots, role)
        return view(role, base, (2, 8, 4, 2), (hi, 4 @ lane, 1 @ lane, lo), "float32")

    flat = {}
    for role in ("D", "C"):   # each thread's own slots, for the initial values
        flat[role], bind = _flat_view(f"axe4j_{role.lower()}_slots", request.tensors[role], counts[role], "local")
        binds.append(bind)
    zero = LambdaExpr([], lambda: T.float32(0), ret_type=PrimType("float32"))
    for tile in plan.tiles:
        d = d_view(tile.d)
        if plan.init == "zero":
            body += [Evaluate(T.cuda.tile.ewise(zero, flat["D"][s:s + 1], scope="thread")) for s in tile.d]
        elif not (same_c and tuple(tile.d) == tuple(tile.c)):
            body += [Evaluate(T.cuda.tile.ewise(values.function("copy", "float32", ["float32"]), flat["D"][s:s + 1],
                                                flat["C"][c:c + 1], scope="thread")) for s, c in zip(tile.d, tile.c)]
        for step in tile.steps:
            a_base, a_lo, a_hi = _strides(step.a, "A")
            a = view("A", a_base, (2, 8, 2, 4), (a_lo, 4 @ lane, a_hi, 1 @ lane), "uint32")
            b_base, b_lo, _ = _strides(step.b, "B")
            b = view("B", b_base, (8, 2, 4), (4 @ lane, b_lo, 1 @ lane), "uint32")
            body.append(Evaluate(T.cuda.tile.apply(T.ptx[plan.instruction], d, a, b, d, scope="warp")))
    return SeqStmt([*binds, *body])
