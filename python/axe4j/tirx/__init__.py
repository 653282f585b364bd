"""axe4j's generic tile ops on the new TIRx (apache-tvm-tirx, package ``tvm_tirx``): ``copy``, ``copy_async`` (with
``wait_async``), ``fill``, ``cast``, the element-wise maps and the reductions ``sum``/``max``/``min`` (operands
``dst, src, axes, accum``, as on 0.27), each a tile instruction registered through tvm_tirx's ``FTileOpDispatch`` op
attribute (``tirx.cuda.axe4j_<op>``) and written in TVMScript as ``axe4j.tirx.copy(dst, src, scope="cta")``.

Lowering one call (``_lower``): the call is described for the Java rules as the 0.27 lane describes it
(``_describe``), the rules decide in the 0.27 lane's order (``_decide``: the same rule, the same plan), and the plan
is spelled as explicit ``T.cuda.tile.apply(T.ptx[...])`` and ``T.cuda.tile.ewise`` calls. The user names no PTX
instruction: the rule chooses the access width from the layouts. ``LOWERED`` records which rule lowered each call
and its plan's notes. Spelled on this lane so far: ``cuda-affine`` (``_emit_affine``), ``cuda-digits``
(``_emit_digits``), ``cuda-cp-async`` (``_emit_cp_async``), the register plans ``cuda-register``,
``cuda-register-boxes``, ``cuda-register-digits`` and ``cuda-shuffle-reduce`` (``_emit_register``), the reductions of memory tiles ``cuda-reduce`` and
``cuda-tree-reduce`` (``_emit_reduce``), ``cuda-ldstmatrix`` (``_emit_matrix``), the ``mma.sync`` GEMM tiles
``cuda-mma`` (``_emit_mma``, op ``gemm(D, A, B, C, trans_a, trans_b, alpha, beta)``), TMA copies ``cuda-tma``
(``_emit_tma``, ``copy_async(dst, src, mbar, cta_mask, cta_group)``: a load completes on the mbarrier, the CTA
pair's with ``cta_group=2``), and the ``wgmma`` GEMM tiles ``cuda-wgmma`` (``_emit_wgmma``, op ``gemm_async(C, A, B,
trans_a, trans_b, accum, wait, proxy_fence, cta_group)`` at warpgroup scope), and on Blackwell the ``tcgen05`` GEMM
tiles ``cuda-tcgen05`` (``gemm_async`` with C in tensor memory, at thread or warp scope; ``cta_group=2`` over a
cluster's CTA pair) and the tensor-memory copies ``cuda-tcgen05-ldst`` (``copy_async`` between a tensor-memory
tile, declared with ``tmem_tensor``, and a warpgroup's registers) (``_emit_tcgen05``). A
call whose chosen rule makes another plan kind, or a plan the emitter cannot spell, fails with the rule and the kind
named (docs/tvm-versions.md). ``explain`` and strict mode: ``_explain``. A kernel compiled for ``llvm`` that holds
these ops is refused by name (``_host``): tvm_tirx lowers tile instructions only at thread scopes of the target's
backend and has none for ``llvm``, so the CPU rules stay on the 0.27 lane.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _lane

if not _lane.is_tirx():
    raise ImportError("axe4j.tirx is the new TIRx lane's tile ops (package tvm_tirx); this process runs "
                      f"{_lane.name()}: on the 0.27 lane write Tx.copy, Tx.cta.fill, ... (docs/tvm-versions.md)")

from tvm_tirx.script import tirx as T  # noqa: E402
from tvm_tirx.tirx.tile.instruction import Instruction, Operand  # noqa: E402

from . import (_decide, _describe, _emit_affine, _emit_cp_async, _emit_digits, _emit_matrix,  # noqa: E402
               _emit_reduce, _emit_mma, _emit_register, _emit_tcgen05, _emit_tma, _emit_wgmma, _explain, _host)
from ._tmem import tmem_tensor  # noqa: E402
from ._explain import check_strict, compile, explain  # noqa: E402,A004
from ._describe import BINARY, REDUCTIONS  # noqa: E402

SCOPES = ("thread", "warp", "warpgroup", "cta")


@dataclass(frozen=True)
class Lowered:
    """One lowered call: the op, the Java rule that chose its plan (with 0.27's priority), the plan's notes."""

    op: str
    variant: str
    priority: int
    kind: str
    notes: tuple


LOWERED: list[Lowered] = []


def _headline(op, args, scope) -> str:
    """``no dispatch case lowers axe4j.tirx.copy(S[0:16, 0:32], A[...]) (cta scope, cuda): S shared S[(16,32):(32,1)],
    ...`` (the 0.27 lane's refusal headline, axe4j._refusal.headline)."""
    call = f"axe4j.tirx.{op}({', '.join(str(a) for a in args)})"
    return f"no dispatch case lowers {call} ({scope} scope, cuda): {_describe.operands_text(args)}"


_EMITTERS = {"cuda-affine": _emit_affine.emit, "cuda-digits": _emit_digits.emit,
             "cuda-cp-async": _emit_cp_async.emit, "cuda-register": _emit_register.emit,
             "cuda-register-boxes": _emit_register.emit,
             "cuda-register-digits": _emit_register.emit_digits,
             "cuda-shuffle-reduce": _emit_register.emit_shuffle_reduce, "cuda-reduce": _emit_reduce.emit,
             "cuda-tree-reduce": _emit_reduce.emit_tree, "cuda-ldstmatrix": _emit_matrix.emit,
             "cuda-mma": _emit_mma.emit, "cuda-tma": _emit_tma.emit, "cuda-wgmma": _emit_wgmma.emit,
             "cuda-tcgen05": _emit_tcgen05.emit, "cuda-tcgen05-ldst": _emit_tcgen05.emit_ldst}
# copy_async's options, as the 0.27 lane's config keys: the mbarrier a TMA load completes on, the CTAs of the
# cluster a TMA load is multicast to, and cta_group=2 (the mbarrier may be the CTA pair's other CTA's)
ASYNC_OPTIONS = ("mbar", "cta_mask", "cta_group")
# gemm_async's options, as the 0.27 lane's config keys: the wgmma.wait_group depth, the proxy fence before it, and
# cta_group=2 (tcgen05.mma over the CTA pair of a cluster)
GEMM_ASYNC_OPTIONS = ("wait", "proxy_fence", "cta_group")


def _absent(value) -> bool:
    """An optional operand left out (the view gives None; the call holds an empty tuple)."""
    return value is None or (type(value).__name__ == "Tuple" and not value.fields)


def _lower_for(op: str):
    def lower(view, sctx):
        from tvm_tirx.ir import TensorRegion

        args = list(view.args)
        scope = str(sctx.scope_kind)
        regions = [("dst", args[0])]
        scalars, reduction, extra, options, config = {}, None, None, {}, ()
        if op in REDUCTIONS:   # (dst, src, axes, accum)
            reduction = (args[2], args[3])
            args = args[:2]
        if op == "gemm":   # (D, A, B, C, trans_a, trans_b, alpha, beta), as on 0.27
            regions = [("D", args[0]), ("A", args[1]), ("B", args[2]), ("C", args[3])]
            extra = _describe.gemm_params(args[4:])
            scalars = {"alpha": args[6], "beta": args[7]}
            args = []
        if op == "copy_async":   # (dst, src, mbar, cta_mask, cta_group)
            options = {k: v for k, v in zip(ASYNC_OPTIONS, args[2:]) if not _absent(v)}
            args = args[:2]
        if op == "gemm_async":   # (C, A, B, trans_a, trans_b, accum, wait, proxy_fence, cta_group), as on 0.27
            regions = [("C", args[0]), ("A", args[1]), ("B", args[2])]
            given = {k: v for k, v in zip(GEMM_ASYNC_OPTIONS, args[6:]) if not _absent(v)}
            extra = _describe.gemm_async_params(args[3:6], given)
            config = sorted(given)
            args = []
        for i, source in enumerate(args[1:]):
            if isinstance(source, TensorRegion):
                regions.append((f"src{i}", source))
            else:
                scalars[i] = source
        request = _describe.describe(op, regions, scalars, scope, sctx, reduction, extra, sorted(options) or config)
        record = None
        if _explain.RECORDING is not None:
            record = _explain.Record(f"axe4j.tirx.{op}({', '.join(str(a) for a in view.args)})", scope,
                                     _decide.every(request))
            _explain.RECORDING.append(record)
        variant, priority, plan = _decide.decide(request, _headline(op, args, scope))
        emitter = _EMITTERS.get(plan.kind)
        if options and plan.kind != "cuda-tma":   # the rules decline options they do not implement
            raise ValueError(f"{variant} chose a {plan.kind} plan for axe4j.tirx.{op} with {sorted(options)}, which "
                             "only a TMA copy implements")
        if emitter is None:
            raise _emit_affine.NotOnThisLane(
                f"{variant} chose a {plan.kind} plan for axe4j.tirx.{op} ({scope} scope); the new TIRx lane spells "
                f"only {', '.join(sorted(_EMITTERS))} plans so far")
        try:
            body = emitter(request, plan, scope, sctx, **(options if plan.kind == "cuda-tma" else {}))
        except _emit_affine.NotOnThisLane as error:
            raise _emit_affine.NotOnThisLane(f"{variant} chose a {plan.kind} plan for axe4j.tirx.{op} ({scope} scope), "
                                             f"which the new TIRx lane does not spell: {error}") from None
        if record is not None:
            record.emitted = _explain.emitted_calls(body)
        LOWERED.append(Lowered(op, variant, priority, plan.kind, tuple(plan.notes)))
        return body

    lower.__name__ = f"lower_axe4j_{op}"
    return lower


def _register(op: str):
    if op == "fill":
        operands = (Operand("dst", "region"), Operand("value"))
    elif op in BINARY:
        operands = (Operand("dst", "region"), Operand("a"), Operand("b"))
    elif op == "gemm":
        operands = (Operand("D", "region"), Operand("A", "region"), Operand("B", "region"), Operand("C", "region"),
                    Operand("trans_a", default=False), Operand("trans_b", default=False),
                    Operand("alpha", default=1.0), Operand("beta", default=0.0))
    elif op == "copy_async":
        operands = (Operand("dst", "region"), Operand("src"), Operand("mbar", "address", default=None),
                    Operand("cta_mask", default=None), Operand("cta_group", default=None))
    elif op == "gemm_async":
        operands = (Operand("C", "region"), Operand("A", "region"), Operand("B", "region"),
                    Operand("trans_a", default=False), Operand("trans_b", default=False),
                    Operand("accum", default=False), Operand("wait", default=None),
                    Operand("proxy_fence", default=None), Operand("cta_group", default=None))
    elif op in REDUCTIONS:
        operands = (Operand("dst", "region"), Operand("src", "region"), Operand("axes"),
                    Operand("accum", default=False))
    else:
        operands = (Operand("dst", "region"), Operand("src"))
    return Instruction(f"tirx.cuda.axe4j_{op}", "axe4j", operands, SCOPES, lower=_lower_for(op)).register()


# a kernel compiled for llvm that holds axe4j calls is refused by name before tvm_tirx's dispatch (_host)
_host.register()
copy = _register("copy")
copy_async = _register("copy_async")
fill = _register("fill")
cast = _register("cast")
exp = _register("exp")
exp2 = _register("exp2")
log2 = _register("log2")
sqrt = _register("sqrt")
reciprocal = _register("reciprocal")
silu = _register("silu")
gemm = _register("gemm")   # D = alpha * op(A) op(B) + beta * C on a warp's register fragments (mma.sync)
# C (+)= A B^T by a warpgroup: A and B in shared memory, C in registers (wgmma)
gemm_async = _register("gemm_async")
# axe4j.tirx.sum/max/min, as Tx.sum/max/min on 0.27 (they shadow the builtins inside this module, which uses none)
sum = _register("sum")   # noqa: A001
max = _register("max")   # noqa: A001
min = _register("min")   # noqa: A001
add = _register("add")
sub = _register("sub")
mul = _register("mul")
fdiv = _register("fdiv")
maximum = _register("maximum")
minimum = _register("minimum")

def _lower_wait(view, sctx):
    """``cp.async.wait_group n``: this thread's cp.async groups but the newest n are complete (no operand to view, so
    no ``apply`` pattern: a raw ``T.ptx`` call)."""
    from tvm_tirx.ir import Evaluate

    (pending,) = view.args
    return Evaluate(T.ptx["cp.async.wait_group"](pending))


wait_async = Instruction("tirx.cuda.axe4j_wait_async", "axe4j", (Operand("pending", default=0),), SCOPES,
                         lower=_lower_wait).register()
wait_async.__doc__ = "Waits for this thread's copy_async groups but the newest ``pending`` (cp.async.wait_group)."

__all__ = ["LOWERED", "Lowered", "explain", "compile", "check_strict", "copy", "copy_async", "wait_async", "fill",
           "tmem_tensor",
           "cast", "gemm", "gemm_async", *BINARY,
           "exp", "exp2", "log2", "sqrt", "reciprocal", "silu",
           *REDUCTIONS]
