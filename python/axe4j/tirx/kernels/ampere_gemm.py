"""The Ampere-style FP16 GEMM (``axe4j.cuda.kernels.ampere_gemm``) on the new TIRx lane: D = A B^T, A (M x K) and B
(N x K) row-major FP16, FP32 accumulation, D (M x N) FP16; the same layouts, tiles and ring as on 0.27.

One CTA of four warps computes a (64 x 64) tile of D; warp (wm, wn) owns its (32 x 32) quarter. K advances in tiles
of 32 through a ring of ``stages`` shared-memory slots filled with ``cp.async`` (``copy_async``); per 16-wide K step
each warp loads its A and B rows into mma fragments (``copy`` into register tiles: the rules choose ``ldmatrix``) and
multiplies them (``gemm``: ``mma.sync.m16n8k16``). The accumulator is cast to FP16 and stored by each warp.

Differences of spelling only: ``axe4j.tirx.copy_async`` commits its own group, so a stage is two groups (A's and B's)
and the wait for tile kt lets the newest ``2 (stages - 2)`` be pending; near the end, where 0.27 commits empty groups
to keep that count, this lane has none to commit and waits for all (``wait_async(0)``). Offsets are written out (a
``T.meta_var`` on tvm_tirx binds a variable the rules see as any integer), and the K tile loaded ahead is written
``min(kt + stages - 1, k_tiles - 1)``, the same tile inside its guard: tvm_tirx proves every region in bounds from
the loops' ranges alone, without the enclosing ``if``.
"""

from __future__ import annotations

from ...cuda.kernels.ampere_shape import BK, BM, BN, WARP_M, WARP_N, check_shape


def _fragments():
    from tvm_tirx.backend.cuda.axis import laneid
    from tvm_tirx.script import tirx as T

    def a_fragment(rows, k):
        bm, bk = rows // 16, k // 16
        return T.TileLayout(T.S[(bm, 2, 8, bk, 2, 4, 2):(8 * bk, 2, 4 @ laneid, 8, 4, 1 @ laneid, 1)])

    def b_fragment(cols, k):
        bn, bk = cols // 8, k // 16
        return T.TileLayout(T.S[(bn, 8, bk, 2, 4, 2):(4 * bk, 4 @ laneid, 4, 2, 1 @ laneid, 1)])

    def c_fragment(rows, cols):
        bm, bn = rows // 16, cols // 8
        return T.TileLayout(T.S[(bm, 2, 8, bn, 4, 2):(4 * bn, 2, 4 @ laneid, 4, 1 @ laneid, 1)])

    return a_fragment(WARP_M, 16), b_fragment(WARP_N, 16), c_fragment(WARP_M, WARP_N)


def ampere_gemm(m: int, n: int, k: int, stages: int = 3):
    """The kernel as a tvm_tirx function. Raises ValueError naming a shape it cannot tile."""
    check_shape(m, n, k, stages)
    from tvm_tirx.backend.cuda.launch import LaunchConfig
    from tvm_tirx.script import tirx as T

    from ... import tirx as Ax

    k_tiles = k // BK
    a_reg_layout, b_reg_layout, acc_layout = _fragments()
    pending = 2 * (stages - 2)   # groups of the newest stages - 2 tiles, two a tile

    @T.function
    def kernel(A: T.Tensor((m, k), "float16"), B: T.Tensor((n, k), "float16"), D: T.Tensor((m, n), "float16")):
        with T.device_entry(launch=LaunchConfig(grid=(n // BN) * (m // BM), block=128)):
            bid = T.cuda.block_idx("x")
            tid = T.cuda.thread_idx("x")
            A_smem = T.alloc_shared((stages, BM, BK), "float16", layout=T.TileLayout(T.S[stages, BM, BK]))
            B_smem = T.alloc_shared((stages, BN, BK), "float16", layout=T.TileLayout(T.S[stages, BN, BK]))
            A_reg = T.alloc_local((WARP_M, 16), "float16", layout=a_reg_layout)
            B_reg = T.alloc_local((WARP_N, 16), "float16", layout=b_reg_layout)
            acc = T.alloc_local((WARP_M, WARP_N), "float32", layout=acc_layout)
            out = T.alloc_local((WARP_M, WARP_N), "float16", layout=acc_layout)
            Ax.fill(acc[:, :], T.float32(0.0), scope="warp")
            for p in T.unroll(stages - 1):   # prologue: the first stages - 1 tiles in flight
                if p < k_tiles:
                    Ax.copy_async(A_smem[p, :, :], A[bid // (n // BN) * BM:bid // (n // BN) * BM + BM,
                                                     p * BK:p * BK + BK], scope="cta")
                    Ax.copy_async(B_smem[p, :, :], B[bid % (n // BN) * BN:bid % (n // BN) * BN + BN,
                                                     p * BK:p * BK + BK], scope="cta")
            for kt in T.serial(k_tiles):
                if kt + (stages - 2) < k_tiles:
                    Ax.wait_async(pending, scope="thread")   # tile kt has landed (this thread's part) ...
                else:
                    Ax.wait_async(0, scope="thread")
                T.cuda.cta_sync()   # ... and every thread's; every warp is done with the slot refilled below
                for kk in T.unroll(BK // 16):
                    Ax.copy(A_reg[:, :], A_smem[kt % stages, tid // 64 * WARP_M:tid // 64 * WARP_M + WARP_M,
                                                kk * 16:kk * 16 + 16], scope="warp")
                    Ax.copy(B_reg[:, :], B_smem[kt % stages, tid // 32 % 2 * WARP_N:tid // 32 % 2 * WARP_N + WARP_N,
                                                kk * 16:kk * 16 + 16], scope="warp")
                    Ax.gemm(acc[:, :], A_reg[:, :], B_reg[:, :], acc[:, :], False, True, 1.0, 1.0, scope="warp")
                if kt + stages - 1 < k_tiles:   # tile kt + stages - 1, written min(.., k_tiles - 1): see above
                    Ax.copy_async(A_smem[(kt + stages - 1) % stages, :, :],
                                  A[bid // (n // BN) * BM:bid // (n // BN) * BM + BM,
                                    T.min(kt + stages - 1, k_tiles - 1) * BK:
                                    T.min(kt + stages - 1, k_tiles - 1) * BK + BK], scope="cta")
                    Ax.copy_async(B_smem[(kt + stages - 1) % stages, :, :],
                                  B[bid % (n // BN) * BN:bid % (n // BN) * BN + BN,
                                    T.min(kt + stages - 1, k_tiles - 1) * BK:
                                    T.min(kt + stages - 1, k_tiles - 1) * BK + BK], scope="cta")
            Ax.cast(out[:, :], acc[:, :], scope="warp")
            Ax.copy(D[bid // (n // BN) * BM + tid // 64 * WARP_M:bid // (n // BN) * BM + tid // 64 * WARP_M + WARP_M,
                      bid % (n // BN) * BN + tid // 32 % 2 * WARP_N:
                      bid % (n // BN) * BN + tid // 32 % 2 * WARP_N + WARP_N], out[:, :], scope="warp")

    return kernel
