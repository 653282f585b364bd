"""Corpus of TIRx CUDA kernels written with tile ops on Axe layouts (see ``_base.CorpusKernel``).

How such kernels are written for TVM 0.27 (the facts the entries rely on):

* Launch: parameters are global buffers (``T.Buffer`` or ``T.match_buffer``); ``T.device_entry()`` starts the
  device code; scope ids declare the launch, e.g. ``T.cta_id([1])`` (grid), ``T.thread_id([n])`` (threads per
  CTA), plus ``T.warp_id([n/32])``, ``T.lane_id([32])`` or, for warpgroups, ``T.warpgroup_id``,
  ``T.warp_id_in_wg([4])``, ``T.thread_id_in_wg([128])``. Declare every level the tile calls use.
* Exec scope of a tile call: ``Tx.copy`` is thread scope; ``Tx.warp.copy``, ``Tx.wg.copy``, ``Tx.cta.copy`` run
  it with all threads of a warp, warpgroup or CTA (dispatch sees ``sctx.scope_kind``). Forced variants:
  ``dispatch="name"``; extra config as keywords (``mbar=`` for TMA).
* Register tiles: ``T.alloc_buffer(shape, dtype, scope="local", layout=...)`` with a thread axis in the layout:
  ``S[(n, k):(1@laneid, 1)]`` (warp), ``1@tid_in_wg`` (warpgroup), ``1@tx`` (CTA); a layout without a thread
  axis is one thread's private tile. ``R.local()`` is the per-thread flat view; ``buf.view(shape, layout=...)``
  re-describes registers, and a replicated destination ``S[...] + R[32:1@laneid]`` makes a reduction across lanes.
* Shared tiles: ``scope="shared"`` with a ``TileLayout`` or a swizzle ``ComposeLayout(per_element, swizzle_len,
  atom_len, tile)`` (``ComposeLayout(3, 3, 3, ...)`` is the 128-byte swizzle of fp16).
* Compile without a GPU: ``tvm.compile(mod, target=Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm"),
  tir_pipeline="tirx")`` lowers and emits CUDA C; nvcc runs only on ``tvm_callback_cuda_compile`` (or when the
  executable is loaded). fp16/bf16 kernels need the CCCL headers (``nvidia-cuda-cccl``).
"""

from . import copy_async, copy_matrix, copy_sync, elementwise, reduction  # noqa: F401  (each module registers its entries)
from ._base import BLACKWELL, HOPPER, REGISTRY, CorpusKernel, Tensor


def kernels() -> list[CorpusKernel]:
    return list(REGISTRY.values())


def get(name: str) -> CorpusKernel:
    if name not in REGISTRY:
        raise KeyError(f"no corpus kernel named {name}; known: {', '.join(REGISTRY)}")
    return REGISTRY[name]


__all__ = ["BLACKWELL", "HOPPER", "CorpusKernel", "Tensor", "get", "kernels"]
