"""A ``cuda-digits`` plan (axe4j.cuda.emit's, the same Java record) as explicit tvm_tirx tile calls.

The rule of last resort for memory tiles whose addresses no loop nest gives (a region that crosses a layout digit
part way, a run-time start inside a digit): thread t of the scope's T threads takes elements ``f = t, t + T, ...``
(``rounds`` of them, guarded by ``f < elements`` when T does not divide them). Element f's offset in the region is
the digits of f in the loops' extents (innermost last); each operand's address is ``base + sum_k ((x / below_k) %
e_k) * s_k`` of the row-major index x of its absolute coordinate (its region's start plus that offset). One element
an access: each memory source is loaded into a one-element register tile (``ld``), the op maps them with ``ewise``
(a copy too: one element moves through a register either way), and the destination is stored at each replica
(``st``)."""

from __future__ import annotations

from tvm_tirx.ir import For, ForKind, If, IntImm, SeqStmt, Var

from . import _values as values
from ._emit_affine import MEMORY, NotOnThisLane, _base_last, _flat_view, _register_tile, _thread_index
from ._emit_register import _chunk, _digit_address


def emit(request, plan, scope: str, sctx):
    extents = [int(e) for e in plan.extents]
    elements = 1
    for e in extents:
        elements *= e
    threads, rounds = int(plan.threads), int(plan.rounds)
    sources = values.sources(request.op, request.scalars)
    binds, views, stage = [], {}, {}
    for role, tensor in request.tensors.items():
        entry = plan.operands[role]
        if request.storage[role] not in MEMORY:
            raise NotOnThisLane(f"{role}: storage {request.storage[role]} is not spelled on the new TIRx lane")
        if any(stride < 0 for _, stride, _ in entry.iters):
            raise NotOnThisLane(f"cuda-digits: {role}'s layout has a negative stride")
        span = entry.base + sum((e - 1) * stride for e, stride, _ in entry.iters) + max([0, *entry.replicas]) + 1
        views[role], bind = _flat_view(f"axe4j_{role}", tensor, span, request.storage[role])
        binds.append(bind)
    for role in [what for kind, what in sources if kind == "tensor"] + ["dst"]:
        if role not in stage:
            stage[role], bind = _register_tile(f"axe4j_{role}_regs", 1, str(request.tensors[role].ty.dtype.dtype))
            binds.append(bind)
    f = Var("axe4j_round", "int32")
    flat = f * threads + _thread_index(scope, sctx, threads)

    def address(role, replica=0):
        entry = plan.operands[role]
        at, below = list(request.starts[role]), 1
        for dim, extent in reversed(list(zip(entry.dims, extents))):
            at[dim] = at[dim] + (flat // below) % extent
            below *= extent
        return _digit_address(entry, at) + replica

    targets = [address("dst", r) for r in _base_last(plan.operands["dst"].replicas)]
    body = _chunk(request, views, {}, stage, sources, True, False, 1, address, targets)
    step = body if elements % threads == 0 else If(flat < elements, body, None)
    return SeqStmt([*binds, For(f, 0, rounds, IntImm("int32", 1), ForKind.DEFAULT, step)])
