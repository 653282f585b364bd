"""Which of TVM's own CUDA dispatch cases may lower a call that every axe4j rule declined, in the default mode.

TVM's dispatch table holds, next to axe4j's cases, TVM's own (``vec_auto``, ``ldgsts``, ``fallback``, ``reg``, ...).
Some compute wrong values for calls they accept: the scalar ``copy/fallback`` reads a register tile laid over the
lanes as if one thread held it (``[28, nan, nan, ...]`` where ``[32, 40, 48, ...]`` is right), the vector copy
cases read out of bounds for register layouts they were not written for, and the shared-memory reductions name an
undefined thread variable. So in ``axe4j.compile``'s default mode a case of TVM's runs only where it is **proven
right for the call**: the call is in the class that the CUDA corpus (``axe4j_tools.cuda_corpus``, run by
``python/tests/test_cuda_corpus.py`` through TVM's own dispatch and compared with numpy) and the first-hour kernels
check for that case, as written in ``PROOFS``. Any other case declines the call naming why; when every case
declines, the compilation fails with axe4j's rules' reasons (``axe4j._refusal``).

A call that names its case (``dispatch="vec_auto"``) runs it: the choice is written in the kernel. Strict mode
(``strict=True``) lets every case run and then refuses any call one of TVM's cases lowered. Other target kinds are
not guarded (TVM has no ``llvm`` cases; its Trainium cases are what ``tir_pipeline="trn"`` is made of).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

KIND = "cuda"
MAP_OPS = ("cast", "fill", "zero", "exp", "exp2", "log2", "sqrt", "reciprocal", "silu", "add", "sub", "mul", "fdiv",
           "maximum", "fma")   # the maps TVM has reg/smem cases for
REDUCE_OPS = ("sum", "max", "min")


@dataclass(frozen=True)
class Call:
    """What a proof looks at: the scope kind, whether every thread of the scope is active, and per tensor operand
    its storage scope and whether its layout is plain memory (no thread axis, no swizzle)."""

    scope: str
    full: bool
    storage: tuple          # storage scope per tensor operand, destination first
    plain: tuple            # per tensor operand: its layout maps to memory only, unswizzled
    config: tuple           # the call's config keys

    def all_in(self, *scopes) -> bool:
        return all(any(s.startswith(x) for x in scopes) for s in self.storage)


@dataclass(frozen=True)
class Proof:
    """TVM's case ``variant`` of ``ops`` is right for the calls ``holds`` accepts (``what`` says which, in words;
    ``evidence``, which kernels check it)."""

    ops: tuple
    variant: str
    what: str
    holds: Callable[[Call], bool]
    evidence: str


def _memory_copy(c: Call) -> bool:
    return c.full and c.all_in("global", "shared") and all(c.plain)


PROOFS = (
    Proof(("copy_async",), "ldgsts", "global -> shared, plain memory layouts, no mbar",
          lambda c: c.storage[0].startswith("shared") and c.storage[1] == "global" and all(c.plain)
          and "mbar" not in c.config,
          "corpus copy_async_cp_async_cta_f16, copy_async_cp_async_warp_f32; test_first_hour's prefetched copy"),
    *(Proof(("copy",), v, "global/shared <-> global/shared, plain memory layouts, every thread of the scope active",
            _memory_copy, "corpus copy_g2s_s2g_{warp,wg,cta}, copy_window_thread")
      for v in ("vec_auto", "vec_16b", "vec_32b", "vec_64b", "vec_128b", "vec_256b")),
    Proof(("copy_async",), "tmem<->local", "tensor memory <-> local at warpgroup scope, every thread active",
          lambda c: c.full and c.scope == "warpgroup" and sorted(c.storage) == ["local", "tmem"],
          "the tcgen05 kernel of test_cuda_run_time_offsets.py, run against numpy by its interpreted twin"),
    Proof(MAP_OPS, "smem", "shared operands with plain memory layouts, every thread of the scope active",
          lambda c: c.full and c.all_in("shared") and all(c.plain),
          "corpus exp_shared_cta, sqrt_shared_warp, add_shared_cta, cast/fill shared cta"),
    Proof(MAP_OPS, "reg", "thread scope, local operands", lambda c: c.scope == "thread" and c.all_in("local"),
          "corpus sqrt_reg_thread_f32"),
    *(Proof(ops, v, "thread scope, local operands", lambda c: c.scope == "thread" and c.all_in("local"),
            "corpus sum_rows_local_thread_f32, max_local_thread_f32, sum_local_thread_packed_f32")
      for ops, v in ((REDUCE_OPS, "local"), (("max", "min"), "3input_maxmin"), (("sum",), "packed_add_sum"))),
)


def proof_for(op: str, variant: str):
    """The proof of TVM's case ``variant`` for ``op``, None when there is none."""
    return next((p for p in PROOFS if op in p.ops and p.variant == variant), None)


def describe(call, scope: str, full: bool) -> Call:
    """The ``Call`` of a ``TilePrimitiveCall`` (downcast) at ``scope``; ``full``: every thread of it active."""
    from tvm.ir import TensorRegion

    regions = [a for a in call.args if isinstance(a, TensorRegion)]
    return Call(scope=scope, full=full, storage=tuple(str(r.source.scope()) for r in regions),
                plain=tuple(_plain(r.source.layout) for r in regions),
                config=tuple(sorted(str(k) for k in call.config.keys())))


def _plain(layout) -> bool:
    if layout is None:
        return True
    if type(layout).__name__ != "TileLayout":   # a ComposeLayout (swizzle) or another kind
        return False
    try:
        return all(str(it.axis.name) == "m" for it in list(layout.shard) + list(layout.replica))
    except AttributeError:
        return False


def verdict(op: str, variant: str, c: Call) -> tuple[bool, str]:
    """(runs, why): whether TVM's case may lower the call in the default mode, and the reason in words."""
    proof = proof_for(op, variant)
    if proof is None:
        return False, f"TVM's {op}/{variant} is not proven right for any call"
    if proof.holds(c):
        return True, f"TVM's {op}/{variant} is proven right for {proof.what} ({proof.evidence})"
    return False, f"TVM's {op}/{variant} is proven right only for {proof.what}"


def operands_text(c: Call) -> str:
    return ", ".join(f"{s}{'' if p else ' (thread axes or swizzle)'}" for s, p in zip(c.storage, c.plain))


# ---- the guard the lowering wrapper runs (axe4j.lowering) ----------------------------------------

def guard(op_call, sctx, op: str, kind: str, variant: str) -> None:
    """Declines the call (``DispatchFail``) unless TVM's case ``variant`` is proven right for it or it names
    the case; see the module comment."""
    from tvm.tirx.operator.tile_primitive.dispatcher import DispatchFail
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    if kind != KIND:
        return
    call = TilePrimitiveCall.downcast(op_call)
    if call.dispatch is not None:
        return
    from ._scope import threads_of

    _, full = threads_of(sctx)
    runs, why = verdict(op, variant, describe(call, str(sctx.scope_kind), full))
    if not runs:
        raise DispatchFail(f"{variant}: not run in axe4j's default mode: {why}; this call is at {sctx.scope_kind} "
                           f"scope on {operands_text(describe(call, str(sctx.scope_kind), full))}. Name the case "
                           f"(dispatch=\"{variant}\") to run it anyway")
