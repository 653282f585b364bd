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

# the shape checks and ring sizing are shared with the new TIRx lane's kernel (no TVM import there)
from .blackwell_shape import MAX_STAGES, SHARED_BYTES, check, stages_for  # noqa: F401  (the module's API)
from .hopper_gemm import shared_tile
from .pipeline import PipelineState
from .tiles import local_tile


def blackwell_gemm(m: int, n: int, k: int, bn: int = 128, bk: int = 64, stages: int | None = None,
                   dtype: str = "float16", cta_group: int = 1):
    """The kernel as a TIRx PrimFunc (see the module docstring); ``cta_group=2`` gives the 2-CTA form
    (``blackwell_gemm_pair``). Raises ValueError naming what it cannot lower."""
    if cta_group == 2:
        return blackwell_gemm_pair(m, n, k, bn, bk, stages, dtype)
    stages = stages or stages_for(bn, bk)
    check(m, n, k, bn, bk, stages, dtype, cta_group)
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
                    state = T.meta_var(PipelineState(stages, kt, start_phase=1))
                    s = state.index()
                    if kt >= stages:
                        # the MMAs that read the slot's previous contents have completed (tcgen05.commit)
                        T.cuda.mbarrier_wait(empty.ptr_to([s]), state.phase())
                    Tx.copy_async(A_smem[s, 0, :, :], local_tile(A, (128, bk), (by, kt)), mbar=full.ptr_to([s]))
                    Tx.copy_async(B_smem[s, 0, :, :], local_tile(B, (bn, bk), (bx, kt)), mbar=full.ptr_to([s]))
                    T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([s]), T.uint32(stage_bytes))
        if warp == 1:
            for kt in T.serial(k_tiles):
                state = T.meta_var(PipelineState(stages, kt))
                s = state.index()
                T.cuda.mbarrier_wait(full.ptr_to([s]), state.phase())
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
        Tx.wg.copy(local_tile(D, (128, bn), (by, bx)), out[:, :])
        T.cuda.cta_sync()
        tmem.dealloc()

    return kernel


def blackwell_gemm_pair(m: int, n: int, k: int, bn: int = 128, bk: int = 64, stages: int | None = None,
                        dtype: str = "float16"):
    """The 2-CTA form: clusters of two CTAs, each pair computing a (256 x BN) tile of D with
    ``tcgen05.mma.cta_group::2`` (M = 256) issued by the even CTA.

    * **Operands split over the pair.** CTA r (rank in the cluster) loads rows ``256 i + 128 r`` .. + 128 of A and
      rows ``BN j + BN/2 r`` .. + BN/2 of B into its own ring, at the same shared offsets in both CTAs; one MMA reads
      both CTAs' slots (the even CTA's half of B gives columns 0 .. BN/2 - 1) and writes each CTA's 128 tensor-memory
      lanes of the accumulator (``TMEMPool(cta_group=2)``, ``Tx.warp.gemm_async(..., cta_group=2)``: C is this CTA's
      128 x BN, B its BN/2 x BK).
    * **Barriers.** Both CTAs' TMA loads complete on the even CTA's ``full[s]`` (``.cta_group::2``: the odd CTA maps
      its address with ``mapa``), armed by the even CTA with the pair's bytes; the MMA issuer's ``tcgen05.commit``
      is multicast to ``empty[s]`` (and finally ``done``) in both CTAs, so each producer refills its slot only when
      the pair's MMAs have read it. Cluster barriers after initialisation and before the tensor memory is freed.
    """
    stages = stages or stages_for(bn // 2, bk)
    check(m, n, k, bn, bk, stages, dtype, cta_group=2)
    half_n = bn // 2
    a_layout, b_layout = shared_tile(stages, 1, 128, bk), shared_tile(stages, 1, half_n, bk)
    k_tiles = k // bk
    pair_bytes = 2 * (128 + half_n) * bk * 2   # what lands in the pair per stage
    tiles_n = n // bn
    clusters = (m // 256) * tiles_n

    @T.prim_func
    def kernel(A: T.Buffer((m, k), dtype), B: T.Buffer((n, k), dtype), D: T.Buffer((m, n), dtype)):
        T.device_entry()
        cl = T.cluster_id([clusters])
        rank = T.cta_id_in_cluster([2])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        warp = T.warp_id([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        tid = T.thread_id([128])
        pool = T.SMEMPool()
        A_smem = pool.alloc((stages, 1, 128, bk), dtype, layout=a_layout, align=1024)
        B_smem = pool.alloc((stages, 1, half_n, bk), dtype, layout=b_layout, align=1024)
        full = pool.alloc((stages,), "uint64", align=8)
        empty = pool.alloc((stages,), "uint64", align=8)
        done = pool.alloc((1,), "uint64", align=8)
        tmem = T.TMEMPool(pool, total_cols=512, cta_group=2)
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
        T.cuda.cluster_sync()   # the pair's barriers and tensor memory exist before either CTA uses the other's
        tm = cl // tiles_n
        tn = cl % tiles_n
        if warp == 0:
            if tid == 0:
                leader_full = T.alloc_local([1], "uint32")
                for kt in T.serial(k_tiles):
                    state = T.meta_var(PipelineState(stages, kt, start_phase=1))
                    s = state.index()
                    if kt >= stages:
                        # the pair's MMAs that read this slot have completed (the leader's multicast commit)
                        T.cuda.mbarrier_wait(empty.ptr_to([s]), state.phase())
                    # the even CTA's full[s], as this CTA addresses it in the cluster window
                    T.ptx.mapa.shared__cluster.u32(leader_full[0], T.cuda.cvta_generic_to_shared(full.ptr_to([s])),
                                                   T.uint32(0))
                    if rank == 0:
                        T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([s]), T.uint32(pair_bytes))
                    Tx.copy_async(A_smem[s, 0, :, :], local_tile(A, (256, bk), (tm, kt), (rank * 128, None),
                                                                 (128, None)), mbar=leader_full[0], cta_group=2)
                    Tx.copy_async(B_smem[s, 0, :, :], local_tile(B, (bn, bk), (tn, kt), (rank * half_n, None),
                                                                 (half_n, None)), mbar=leader_full[0], cta_group=2)
        if warp == 1:
            if rank == 0:
                for kt in T.serial(k_tiles):
                    state = T.meta_var(PipelineState(stages, kt))
                    s = state.index()
                    T.cuda.mbarrier_wait(full.ptr_to([s]), state.phase())
                    if kt == 0:
                        Tx.warp.gemm_async(C_tmem[:, :], A_smem[s, 0, :, :], B_smem[s, 0, :, :], transA=False,
                                           transB=False, accum=False, proxy_fence=False, cta_group=2)
                    else:
                        Tx.warp.gemm_async(C_tmem[:, :], A_smem[s, 0, :, :], B_smem[s, 0, :, :], transA=False,
                                           transB=False, accum=True, proxy_fence=False, cta_group=2)
                    if tid == 32:
                        T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster"
                              ".b64"](empty.ptr_to([s]), T.uint16(3))
                if tid == 32:
                    T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"](
                        done.ptr_to([0]), T.uint16(3))
        T.cuda.mbarrier_wait(done.ptr_to([0]), 0)
        Tx.wg.copy_async(C_reg[:, :], C_tmem[:, :])
        T.ptx["tcgen05.wait::ld.sync.aligned"]()
        Tx.wg.cast(out[:, :], C_reg[:, :])
        Tx.wg.copy(local_tile(D, (256, bn), (tm, tn), (rank * 128, None), (128, None)), out[:, :])
        T.cuda.cluster_sync()   # the pair's MMAs and reads are done before the tensor memory is freed
        tmem.dealloc()

    return kernel
