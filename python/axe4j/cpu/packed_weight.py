"""A GEMM weight stored once in the blocked GEMM's panel layout, so that no call packs it again.

The blocked ``Tx.gemm`` on ``llvm`` (``gemm_blocked``) packs the operand that moves along D's stride-1 dim (B for a
row-major D) per K block into K-major panels ``nv`` wide. A B whose layout already is those panels for every K block
is read in place (the plan's ``packed_v``; ``explain`` says "B already packed (layout ...), no packing")::

    logical (k, n), k = kb*kc + k', n = p*nv + j   ->   ((kb*panels + p)*kc + k')*nv + j
    = S[(K/kc, kc, N/nv, nv):(panels*kc*nv, nv, kc*nv, 1)] over the (K, N) buffer

``packed_weight_layout`` asks the Java rules for the target's ``kc`` and ``nv`` (``PackedWeights``), and
``weight_packer`` is the ``Tx.copy`` that writes a row-major B into that layout, run once when the weight is loaded.
A B packed for another target (another ``kc`` or ``nv``) is not read in place: the blocked rule declines it, naming
both layouts, and the digit-addressed naive rule computes the product.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PackedWeight:
    """The blocked GEMM's K block ``kc`` and panel width ``nv`` for a K x N weight on one target, and its layout."""

    K: int
    N: int
    kc: int
    nv: int
    isa: str
    layout: object
    """The ``tvm.tirx.layout.TileLayout`` over the (K, N) weight."""


def packed_weight(K: int, N: int, dtype: str = "float32", target="cpu", *, accumulator_dtype: str | None = None):
    """The :class:`PackedWeight` of a K x N ``dtype`` weight B for ``Tx.gemm(D, A, B, C)`` with a row-major D compiled
    for ``target`` (``"cpu"`` = ``axe4j.host_target()``). ``accumulator_dtype`` (default ``dtype``): D's type; the
    plan's sizes follow the wider of the two. Raises ``ValueError`` naming the shape when K or N do not split into
    whole K blocks and panels (the GEMM then packs B on each call as usual)."""
    import tvm

    from .. import install, target_check
    from . import target as cpu_target

    K, N = int(K), int(N)
    if K < 1 or N < 1:
        raise ValueError(f"packed weight: shape ({K}, {N}) must be positive")
    built = target_check.checked(target)
    if built.kind.name != "llvm":
        raise ValueError(f"packed weight: target {target!r} is not a CPU (llvm) target")
    install()
    widest = max(np.dtype(_numpy_name(dtype)).itemsize, np.dtype(_numpy_name(accumulator_dtype or dtype)).itemsize)
    answer = json.loads(str(tvm.get_global_func("axe4j.schedules.cpu_packed_weight")(
        json.dumps(cpu_target.describe(built)), K, N, widest)))
    if "refusal" in answer:
        raise ValueError(f"packed weight ({K}, {N}) {dtype} for {built}: {answer['refusal']}; pass B row-major and "
                         f"the GEMM packs it per call")
    from .. import layout as axe_layout

    return PackedWeight(K, N, int(answer["kc"]), int(answer["nv"]), answer["isa"], axe_layout.parse(answer["layout"]))


def packed_weight_layout(K: int, N: int, dtype: str = "float32", target="cpu", *,
                         accumulator_dtype: str | None = None):
    """The ``TileLayout`` over the (K, N) weight that the blocked GEMM for ``target`` reads in place (see
    :func:`packed_weight`)."""
    return packed_weight(K, N, dtype, target, accumulator_dtype=accumulator_dtype).layout


def weight_packer(K: int, N: int, dtype: str = "float32", target="cpu", *, accumulator_dtype: str | None = None):
    """A PrimFunc ``pack(B, Bp)``: ``Tx.copy`` of a row-major (K, N) B into the flat K*N buffer Bp in the packed
    layout. Compile it for the same ``target`` and run it once per weight; pass Bp to a GEMM kernel that declares
    ``T.decl_buffer((K, N), dtype, data=Bp.data, layout=packed_weight_layout(...))``."""
    from tvm.script import tirx as T
    from tvm.tirx.script import tile as Tx

    packed = packed_weight_layout(K, N, dtype, target, accumulator_dtype=accumulator_dtype)

    @T.prim_func
    def pack(B: T.Buffer((K, N), dtype), Bp_flat: T.Buffer((K * N,), dtype)):
        Bp = T.decl_buffer((K, N), dtype, data=Bp_flat.data, layout=packed)
        Tx.copy(Bp[:, :], B[:, :])

    return pack


def _numpy_name(dtype: str) -> str:
    return "uint16" if str(dtype) == "bfloat16" else str(dtype)   # numpy has no bfloat16; both are 2 bytes
