"""FP16 GEMM in the Ampere style (sm_80+), written with Axe layouts and tile ops: D = A B^T, A (M x K) and B (N x K)
row-major FP16, FP32 accumulation, D (M x N) FP16.

One CTA of four warps computes a (64 x 64) tile of D; warp (wm, wn) owns its (32 x 32) quarter. K advances in
tiles of 32 through a ring of ``stages`` shared-memory slots filled with ``cp.async`` (``Tx.cta.copy_async``,
16-byte chunks; ``stages - 1`` tiles in flight). Per 16-wide K step each warp loads its A rows and B rows with
``ldmatrix`` (``Tx.warp.copy`` into register tiles whose layouts are tiles of the ldmatrix fragment) and multiplies
with ``mma.sync.m16n8k16`` (``Tx.warp.gemm``: the register layouts are tiles of the mma fragments, 2 x 4 blocks
per warp). The accumulator is cast to FP16 and stored by each warp.
"""

from __future__ import annotations

from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

from .ampere_shape import BK, BM, BN, WARP_M, WARP_N, check_shape  # noqa: F401  (check_shape: the module's API)


def a_fragment(rows: int, k: int):
    """mma A fragments (16 x 16, 8 registers each) tiled over (rows/16, k/16) blocks, row-major block order."""
    bm, bk = rows // 16, k // 16
    return TileLayout(S[(bm, 2, 8, bk, 2, 4, 2):(8 * bk, 2, 4 @ laneid, 8, 4, 1 @ laneid, 1)])


def b_fragment(cols: int, k: int):
    """mma B fragments of B stored N x K (8 x 16, 4 registers each) over (cols/8, k/16) blocks, row-major."""
    bn, bk = cols // 8, k // 16
    return TileLayout(S[(bn, 8, bk, 2, 4, 2):(4 * bk, 4 @ laneid, 4, 2, 1 @ laneid, 1)])


def c_fragment(rows: int, cols: int):
    """mma C/D fragments (16 x 8, 4 registers each) over (rows/16, cols/8) blocks, row-major."""
    bm, bn = rows // 16, cols // 8
    return TileLayout(S[(bm, 2, 8, bn, 4, 2):(4 * bn, 2, 4 @ laneid, 4, 1 @ laneid, 1)])


def ampere_gemm(m: int, n: int, k: int, stages: int = 3):
    """The kernel as a TIRx PrimFunc (see the module docstring). Raises ValueError naming a shape it cannot tile, and
    any tile call of the kernel no axe4j rule lowers for sm_80 (the rules are asked: ``axe4j.kernel_rules``)."""
    check_shape(m, n, k, stages)
    kernel = _kernel(m, n, k, stages)
    import tvm

    from ... import kernel_rules as rules

    rules.require(kernel, tvm.target.Target({"kind": "cuda", "arch": "sm_80"}, host="llvm"),
                  f"ampere_gemm(M={m}, N={n}, K={k}, stages={stages})")
    return kernel


def _kernel(m, n, k, stages):
    k_tiles = k // BK
    a_reg_layout, b_reg_layout = a_fragment(WARP_M, 16), b_fragment(WARP_N, 16)
    acc_layout = c_fragment(WARP_M, WARP_N)
    smem_layout_a = TileLayout(S[(stages, BM, BK)])
    smem_layout_b = TileLayout(S[(stages, BN, BK)])

    @T.prim_func
    def kernel(A: T.Buffer((m, k), "float16"), B: T.Buffer((n, k), "float16"), D: T.Buffer((m, n), "float16")):
        T.device_entry()
        bx, by = T.cta_id([n // BN, m // BM])
        warp = T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        A_smem = T.alloc_buffer((stages, BM, BK), "float16", scope="shared", layout=smem_layout_a, align=128)
        B_smem = T.alloc_buffer((stages, BN, BK), "float16", scope="shared", layout=smem_layout_b, align=128)
        A_reg = T.alloc_buffer((WARP_M, 16), "float16", scope="local", layout=a_reg_layout)
        B_reg = T.alloc_buffer((WARP_N, 16), "float16", scope="local", layout=b_reg_layout)
        acc = T.alloc_buffer((WARP_M, WARP_N), "float32", scope="local", layout=acc_layout)
        out = T.alloc_buffer((WARP_M, WARP_N), "float16", scope="local", layout=acc_layout)
        wm = warp // 2
        wn = warp % 2
        Tx.warp.fill(acc[:, :], T.float32(0.0))
        for p in T.unroll(stages - 1):  # prologue: the first stages - 1 tiles in flight
            if p < k_tiles:
                Tx.cta.copy_async(A_smem[p, :, :], A[by * BM:by * BM + BM, p * BK:p * BK + BK])
                Tx.cta.copy_async(B_smem[p, :, :], B[bx * BN:bx * BN + BN, p * BK:p * BK + BK])
            T.ptx["cp.async.commit_group"]()
        for kt in T.serial(k_tiles):
            T.ptx["cp.async.wait_group"](stages - 2)  # tile kt has landed (this thread's part) ...
            T.cuda.cta_sync()  # ... and every thread's; every warp is done with the slot refilled below
            s = kt % stages
            for kk in T.unroll(BK // 16):
                Tx.warp.copy(A_reg[:, :], A_smem[s, wm * WARP_M:wm * WARP_M + WARP_M, kk * 16:kk * 16 + 16])
                Tx.warp.copy(B_reg[:, :], B_smem[s, wn * WARP_N:wn * WARP_N + WARP_N, kk * 16:kk * 16 + 16])
                Tx.warp.gemm(acc[:, :], A_reg[:, :], B_reg[:, :], acc[:, :], False, True, 1.0, 1.0)
            nk = kt + stages - 1
            if nk < k_tiles:
                Tx.cta.copy_async(A_smem[nk % stages, :, :], A[by * BM:by * BM + BM, nk * BK:nk * BK + BK])
                Tx.cta.copy_async(B_smem[nk % stages, :, :], B[bx * BN:bx * BN + BN, nk * BK:nk * BK + BK])
            T.ptx["cp.async.commit_group"]()  # an empty group at the tail keeps the wait count uniform
        Tx.warp.cast(out[:, :], acc[:, :])
        Tx.warp.copy(D[by * BM + wm * WARP_M:by * BM + wm * WARP_M + WARP_M,
                       bx * BN + wn * WARP_N:bx * BN + wn * WARP_N + WARP_N], out[:, :])

    return kernel
