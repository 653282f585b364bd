"""FP16/BF16 GEMM for Blackwell (sm_100a) with tcgen05, written with Axe layouts and tile ops: D = A B^T, A (M x K)
and B (N x K) row-major, FP32 accumulation in tensor memory, D (M x N) in the input type.

One CTA computes a (128 x BN) tile of D with one warpgroup in three roles:

* **producer** (thread 0): streams (128 x BK) tiles of A and (BN x BK) tiles of B into a ring of ``stages`` shared
  slots with TMA (``Tx.copy_async`` with an mbarrier; axe4j's TMA rule derives the box and the 128-byte swizzle from
  the layouts), refilling a slot once the MMAs that read it have completed (its ``empty`` mbarrier);
* **MMA issuer** (one elected lane of warp 1): per K tile waits for the slot's ``full`` mbarrier, issues the tile's
  ``tcgen05.mma.cta_group::1.kind::f16`` instructions (``Tx.gemm_async`` on the tensor-memory accumulator; axe4j's
  rule derives the shared-memory descriptors and the instruction descriptor from the layouts) and commits them to the
  slot's ``empty`` mbarrier (``tcgen05.commit``), so the slot is released when the MMAs have read it, without waiting;
  after the last K tile a commit to ``done`` signals the accumulator is final;
* **epilogue** (all four warps): wait for ``done``, read the accumulator with ``tcgen05.ld`` (warp w reads tensor-memory
  lanes 32w..32w+31, one row per thread), convert and store D.

Layouts: the shared tiles are K-major rows of 64 elements under ``Swizzle<3,3,3>`` (the TMA box and the tcgen05
descriptor walk of the same layout); the accumulator lives in tensor memory (``TMEMPool``, 128 lanes x BN columns)
and is read into registers laid out one row per thread (``wg_local_layout``).
"""

from __future__ import annotations

from tvm.script import tirx as T
from tvm.tirx.layout import wg_local_layout
from tvm.tirx.script import tile as Tx

from .hopper_gemm import SWIZZLE_ROW, shared_tile

SHARED_BYTES = 227 * 1024
MAX_STAGES = 8


def stages_for(bn: int, bk: int, itemsize: int = 2) -> int:
    per = (128 + bn) * bk * itemsize + 16
    return max(1, min(MAX_STAGES, (SHARED_BYTES - 64) // per))


def check(m, n, k, bn, bk, stages, dtype):
    problems = []
    for name, value, tile in (("M", m, 128), ("N", n, bn), ("K", k, bk)):
        if value % tile:
            problems.append(f"{name}={value} is not a multiple of the tile {tile}")
    if bk % SWIZZLE_ROW:
        problems.append(f"BK={bk} is not a multiple of the 128-byte swizzle row ({SWIZZLE_ROW} elements)")
    if bn % 16 or not 16 <= bn <= 256:
        problems.append(f"BN={bn}: tcgen05.mma with M = 128 takes N in [16, 256], a multiple of 16")
    if bn > 128:
        problems.append(f"BN={bn}: the epilogue holds one accumulator row per thread; at most 128 columns")
    smem = stages * ((128 + bn) * bk * 2 + 16) + 64
    if smem > SHARED_BYTES:
        problems.append(f"{stages} stages of (128 + {bn}) x {bk} need {smem} bytes of shared memory; a B200 CTA has "
                        f"{SHARED_BYTES}")
    if dtype not in ("float16", "bfloat16"):
        problems.append(f"dtype {dtype}: tcgen05 .kind::f16 here multiplies float16 or bfloat16")
    if problems:
        raise ValueError(f"blackwell_gemm(M={m}, N={n}, K={k}, BN={bn}, BK={bk}, stages={stages}): "
                         + "; ".join(problems))


def blackwell_gemm(m: int, n: int, k: int, bn: int = 128, bk: int = 64, stages: int | None = None,
                   dtype: str = "float16"):
    """The kernel as a TIRx PrimFunc (see the module docstring); raises ValueError naming what it cannot lower."""
    stages = stages or stages_for(bn, bk)
    check(m, n, k, bn, bk, stages, dtype)
    a_layout, b_layout = shared_tile(stages, 1, 128, bk), shared_tile(stages, 1, bn, bk)
    k_tiles = k // bk
    stage_bytes = (128 + bn) * bk * 2

    @T.prim_func
    def kernel(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype), D: T.Buffer((m, n), dtype)):
        T.device_entry()
        bx, by = T.cta_id([n // bn, m // 128])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        warp = T.warp_id([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        tid = T.thread_id([128])
        pool = T.SMEMPool()
        A_smem = pool.alloc((stages, 1, 128, bk), dtype, layout=a_layout, align=1024)
        B_smem = pool.alloc((stages, 1, bn, bk), dtype, layout=b_layout, align=1024)
        full = pool.alloc((stages,), "uint64", align=8)
        empty = pool.alloc((stages,), "uint64", align=8)
        done = pool.alloc((1,), "uint64", align=8)
        tmem = T.TMEMPool(pool, total_cols=512)
        C_tmem = tmem.alloc((128, bn), "float32")
        pool.commit()
        tmem.commit()
        C_reg = T.alloc_buffer((128, bn), "float32", scope="local", layout=wg_local_layout(bn))
        out = T.alloc_buffer((128, bn), dtype, scope="local", layout=wg_local_layout(bn))
        if tid == 0:
            for s in T.unroll(stages):
                T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(1))
            T.ptx.mbarrier.init.shared.b64(done.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if warp == 0:
            if tid == 0:
                for kt in T.serial(k_tiles):
                    s = kt % stages
                    if kt >= stages:
                        # the MMAs that read the slot's previous contents have completed (tcgen05.commit)
                        T.cuda.mbarrier_wait(empty.ptr_to([s]), ((kt // stages) + 1) % 2)
                    Tx.copy_async(A_smem[s, 0, :, :], A[by * 128:by * 128 + 128, kt * bk:kt * bk + bk],
                                  mbar=full.ptr_to([s]))
                    Tx.copy_async(B_smem[s, 0, :, :], B[bx * bn:bx * bn + bn, kt * bk:kt * bk + bk],
                                  mbar=full.ptr_to([s]))
                    T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([s]), T.uint32(stage_bytes))
        if warp == 1:
            for kt in T.serial(k_tiles):
                s = kt % stages
                T.cuda.mbarrier_wait(full.ptr_to([s]), (kt // stages) % 2)
                if kt == 0:
                    Tx.warp.gemm_async(C_tmem[:, :], A_smem[s, 0, :, :], B_smem[s, 0, :, :], transA=False,
                                       transB=False, accum=False, proxy_fence=False)
                else:
                    Tx.warp.gemm_async(C_tmem[:, :], A_smem[s, 0, :, :], B_smem[s, 0, :, :], transA=False,
                                       transB=False, accum=True, proxy_fence=False)
                if tid == 32:
                    T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](
                        empty.ptr_to([s]))
            if tid == 32:
                T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](done.ptr_to([0]))
        T.cuda.mbarrier_wait(done.ptr_to([0]), 0)
        Tx.wg.copy_async(C_reg[:, :], C_tmem[:, :])
        T.ptx["tcgen05.wait::ld.sync.aligned"]()
        Tx.wg.cast(out[:, :], C_reg[:, :])
        Tx.wg.copy(D[by * 128:by * 128 + 128, bx * bn:bx * bn + bn], out[:, :])
        T.cuda.cta_sync()
        tmem.dealloc()

    return kernel
