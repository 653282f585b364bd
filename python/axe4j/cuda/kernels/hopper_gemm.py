"""FP16 GEMM for Hopper (sm_90a) written with Axe layouts and tile ops: D = A B^T, A (M x K) and B (N x K) row-major
FP16, FP32 accumulation, D (M x N) FP16 -- the problem ``native/cublas_gemm_bench`` times with cuBLAS.

One CTA computes a (BM x BN) tile of D with three warpgroups:

* warpgroup 0 is the producer: one thread streams (BM x BK) tiles of A and (BN x BK) tiles of B into a ring of
  ``stages`` shared-memory slots with TMA (``Tx.copy_async`` with an mbarrier; axe4j's TMA rule derives the box,
  the tensor map and the 128-byte swizzle mode from the layouts), waiting for a slot to be released before
  refilling it;
* warpgroups 1 and 2 are consumers: each owns BM/2 rows of the tile, waits for a slot to be full, multiplies
  (``Tx.wg.gemm_async``: wgmma, reading the slot through shared-memory descriptors) into its register
  accumulator, and releases the slot; at the end it casts the accumulator to FP16 and stores its rows.

The layouts carry the hardware contract. Shared tiles are K-major with the 128-byte swizzle (``Swizzle<3,3,3>``
on element addresses, 64-element rows, K blocks of 64 outermost), which is both TMA's SWIZZLE_128B box and a
layout the wgmma descriptor walks; the accumulator is a tile of the wgmma m64nNk16 fragment over
(``wid_in_wg``, ``laneid``, registers). axe4j's Java rules recognise each of them (``axe4j.explain`` shows the
decisions).
"""

from __future__ import annotations

from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout, laneid, wid_in_wg
from tvm.tirx.script import tile as Tx

# the shape checks and layout data are shared with the new TIRx lane's kernel (no TVM import there)
from .hopper_shape import (  # noqa: F401  (the module's API: other kernels import them from here)
    ITEMSIZE, SWIZZLE_ROW, accumulator_shard, alignment_problems, ceil_div, check_shape, divisibility_problems,
    shared_tile_shard, tile_problems)
from .pipeline import PipelineState, release
from .tiles import local_tile


def shared_tile(stages: int, parts: int, rows: int, bk: int, itemsize: int = 2):
    """(stages, parts, rows, bk) elements of ``itemsize`` bytes: per stage ``parts`` row blocks (one per consumer
    warpgroup), K-major rows of 128 bytes (64 FP16, 128 FP8 elements) under the 128-byte swizzle (16-byte units:
    ``Swizzle<3, log2(16 / itemsize), 3>`` on element addresses), K blocks outermost per block; every block is a
    whole number of 1024-byte swizzle atoms, so a run-time stage or block index keeps the swizzle pattern."""
    per_element, swizzle_len, atom_len, extents, strides = shared_tile_shard(stages, parts, rows, bk, itemsize)
    return ComposeLayout(per_element, swizzle_len, atom_len, TileLayout(S[extents:strides]))


def accumulator(rows: int, n: int):
    """(rows, n) registers of one warpgroup: the wgmma m64nNk16 accumulator fragment tiled over rows/64 blocks."""
    axes = {"wid_in_wg": wid_in_wg, "laneid": laneid}
    extents, strides = accumulator_shard(rows, n)
    return TileLayout(S[extents:tuple(s if isinstance(s, int) else s[0] @ axes[s[1]] for s in strides)])


def hopper_gemm(m: int, n: int, k: int, bm: int = 128, bn: int = 128, bk: int = 64, stages: int = 4):
    """The kernel as a TIRx PrimFunc (see the module docstring). Raises ValueError naming any shape it cannot tile,
    and any tile call of the kernel no axe4j rule lowers for sm_90a (the rules are asked: ``axe4j.kernel_rules``), so
    a TMA load is never left to a case without its mbarrier."""
    check_shape(m, n, k, bm, bn, bk, stages)
    kernel = _kernel(m, n, k, bm, bn, bk, stages)
    from ... import kernel_rules as rules

    rules.require(kernel, _target(), f"hopper_gemm(M={m}, N={n}, K={k}, BM={bm}, BN={bn}, BK={bk}, stages={stages})")
    return kernel


def _target():
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")


def _kernel(m, n, k, bm, bn, bk, stages):
    half = bm // 2
    a_layout, b_layout = shared_tile(stages, 2, half, bk), shared_tile(stages, 1, bn, bk)
    acc_layout = accumulator(half, bn)
    k_tiles = k // bk
    stage_bytes = (bm + bn) * bk * 2

    @T.prim_func
    def kernel(A: T.Buffer((m, k), "float16"), B: T.Buffer((n, k), "float16"), D: T.Buffer((m, n), "float16")):
        T.device_entry()
        bx, by = T.cta_id([n // bn, m // bm])
        wg = T.warpgroup_id([3])
        T.warp_id_in_wg([4])
        T.warp_id([12])
        T.lane_id([32])
        tid_in_wg = T.thread_id_in_wg([128])
        tid = T.thread_id([384])
        pool = T.SMEMPool()  # one dynamic shared-memory block, carved in order
        A_smem = pool.alloc((stages, 2, half, bk), "float16", layout=a_layout, align=1024)
        B_smem = pool.alloc((stages, 1, bn, bk), "float16", layout=b_layout, align=1024)
        full = pool.alloc((stages,), "uint64", align=8)
        empty = pool.alloc((stages,), "uint64", align=8)
        pool.commit()
        if tid == 0:
            for s in T.unroll(stages):
                T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(2))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if wg == 0:
            if tid == 0:
                for kt in T.serial(k_tiles):
                    state = T.meta_var(PipelineState(stages, kt, start_phase=1))
                    s = state.index()
                    if kt >= stages:
                        # wait until both consumers released the slot's previous contents
                        T.cuda.mbarrier_wait(empty.ptr_to([s]), state.phase())
                    for h in T.unroll(2):
                        Tx.copy_async(A_smem[s, h, :, :], local_tile(A, (bm, bk), (by, kt), (h * half, None),
                                                                     (half, None)), mbar=full.ptr_to([s]))
                    Tx.copy_async(B_smem[s, 0, :, :], local_tile(B, (bn, bk), (bx, kt)), mbar=full.ptr_to([s]))
                    T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([s]), T.uint32(stage_bytes))
        else:
            acc = T.alloc_buffer((half, bn), "float32", scope="local", layout=acc_layout)
            out = T.alloc_buffer((half, bn), "float16", scope="local", layout=acc_layout)
            Tx.wg.fill(acc[:, :], T.float32(0.0))
            part = wg - 1
            row = part * half
            for kt in T.serial(k_tiles):
                state = T.meta_var(PipelineState(stages, kt))
                s = state.index()
                T.cuda.mbarrier_wait(full.ptr_to([s]), state.phase())
                Tx.wg.gemm_async(acc[:, :], A_smem[s, part, :, :], B_smem[s, 0, :, :], transA=False,
                                 transB=False, accum=True, proxy_fence=False)
                if tid_in_wg == 0:
                    release(empty, s)
            Tx.wg.cast(out[:, :], acc[:, :])
            Tx.wg.copy(local_tile(D, (bm, bn), (by, bx), (row, None), (half, None)), out[:, :])

    return kernel
