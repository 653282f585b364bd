"""The Blackwell GEMM (``axe4j.cuda.kernels.blackwell_gemm``) on the new TIRx lane: D = A B^T, A (M x K) and B (N x K)
row-major FP16 or BF16, FP32 accumulation in tensor memory, D (M x N) in the input type; the same layouts, tiles,
ring and roles as on 0.27, for sm_100a.

One CTA of one warpgroup computes a (128 x BN) tile of D. Thread 0 is the producer: it streams the (128 x BK) tile of
A and the (BN x BK) tile of B into a ring of ``stages`` shared slots by TMA (``copy_async`` with the slot's ``full``
mbarrier, armed with the stage's bytes), waiting on the slot's ``empty`` mbarrier before refilling it. Warp 1 issues
the MMAs: per K tile it waits on ``full``, one elected lane issues the tile's ``tcgen05.mma`` (``gemm_async`` at warp
scope into the tensor-memory accumulator) and thread 32 commits them to the slot's ``empty`` mbarrier
(``tcgen05.commit``), and after the last tile to ``done``. The epilogue (all four warps) waits on ``done``, reads the
accumulator (``copy_async``: ``tcgen05.ld``, one row per thread), casts and stores D. Slot ``kt % stages``, parity
``(kt // stages) % 2``; the producer waits with the opposite parity (the ring starts free).

``cta_group=2`` (``blackwell_gemm_pair``): clusters of two CTAs, each pair computing a (256 x BN) tile of D with
``tcgen05.mma.cta_group::2`` issued by the even CTA. CTA r of the pair loads its 128 rows of A and its BN/2 rows of
B into its own ring (the same shared offsets in both); both CTAs' loads complete on the even CTA's ``full`` mbarrier
(``copy_async(..., cta_group=2)``: the TMA ``.cta_group::2`` form, the mbarrier's address mapped into the even CTA
with ``mapa``), which the even CTA arms with the pair's bytes; the even CTA's commits are multicast to ``empty`` and
``done`` of both CTAs (mask 0b11). Cluster barriers after the set-up and before the tensor memory is freed.

As on the new lane's Hopper GEMM, the ring, its mbarriers and the word ``tcgen05.alloc`` writes are one dynamic
shared-memory block carved by tvm_tirx's ``SMEMPool``. Tensor memory is allocated as the new lane's tcgen05 kernels
do (tvm_tirx 0.1.0a4's ``T.tmem`` reserves a local array): warp 0 allocates 512 columns (``tcgen05.alloc``,
``relinquish_alloc_permit``; the pair's ``.cta_group::2`` forms in both CTAs), and after the CTA (cluster) barrier
the accumulator is declared at the address it wrote (``Ax.tmem_tensor``); warp 0 frees the columns at the end.

Differences of spelling only: the slot, parity and tile offsets are written out (a ``T.meta_var`` on tvm_tirx binds a
variable the rules see as any integer); the cluster rank and index are ``blockIdx.x % 2`` and ``blockIdx.x // 2``
(clusters of 2 x 1 x 1 CTAs along x), where 0.27 reads ``%cluster_ctarank`` and ``%clusterid.x``: tvm_tirx proves a
region in bounds from the block index's range, and a special register has none.
"""

from __future__ import annotations

from ...cuda.kernels.blackwell_shape import check, stages_for
from .hopper_gemm import shared_tile

TMEM_COLUMNS = 512   # what warp 0 allocates, as 0.27's TMEMPool(total_cols=512)


def _layouts(bn: int):
    """(tensor-memory accumulator, register tile): row r on lane r and column c on column c (the M = 128 data path of
    each CTA); thread t of the warpgroup holds row t (0.27's ``wg_local_layout``)."""
    from tvm_tirx.backend.cuda.axis import TCol, TLane, tid_in_wg
    from tvm_tirx.script import tirx as T

    return (T.TileLayout(T.S[(128, bn):(1 @ TLane, 1 @ TCol)]), T.TileLayout(T.S[(128, bn):(1 @ tid_in_wg, 1)]))


def blackwell_gemm(m: int, n: int, k: int, bn: int = 128, bk: int = 64, stages: int | None = None,
                   dtype: str = "float16", cta_group: int = 1):
    """The kernel as a tvm_tirx function (see the module docstring); ``cta_group=2`` gives the 2-CTA form
    (``blackwell_gemm_pair``). Raises ValueError naming what it cannot lower."""
    if cta_group == 2:
        return blackwell_gemm_pair(m, n, k, bn, bk, stages, dtype)
    stages = stages or stages_for(bn, bk)
    check(m, n, k, bn, bk, stages, dtype, cta_group)
    from tvm_tirx.backend.cuda.lang import SMEMPool
    from tvm_tirx.backend.cuda.launch import LaunchConfig
    from tvm_tirx.script import tirx as T

    from ... import tirx as Ax

    a_layout, b_layout = shared_tile(stages, 1, 128, bk), shared_tile(stages, 1, bn, bk)
    c_layout, r_layout = _layouts(bn)
    k_tiles = k // bk
    stage_bytes = (128 + bn) * bk * 2

    @T.function
    def kernel(A: T.Tensor((m, k), dtype), B: T.Tensor((n, k), dtype), D: T.Tensor((m, n), dtype)):
        with T.device_entry(launch=LaunchConfig(grid=(n // bn, m // 128), block=128)):
            bx = T.cuda.block_idx("x")
            by = T.cuda.block_idx("y")
            tid = T.cuda.thread_idx("x")
            pool = SMEMPool()   # one dynamic shared-memory block, carved in order
            A_smem = pool.alloc((stages, 1, 128, bk), dtype, layout=a_layout, align=1024)
            B_smem = pool.alloc((stages, 1, bn, bk), dtype, layout=b_layout, align=1024)
            full = pool.alloc((stages,), "uint64", layout=T.TileLayout(T.S[stages]), align=8)
            empty = pool.alloc((stages,), "uint64", layout=T.TileLayout(T.S[stages]), align=8)
            done = pool.alloc((1,), "uint64", layout=T.TileLayout(T.S[1]), align=8)
            slot = pool.alloc((1,), "uint32", layout=T.TileLayout(T.S[1]), align=4)   # tcgen05.alloc's word
            pool.commit()
            if tid // 32 == 0:
                T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](slot.ptr_to([0]),
                                                                                 T.uint32(TMEM_COLUMNS))
                T.cuda.warp_sync()   # as 0.27's TMEMPool: the warp reconverges after the allocation
                T.ptx["tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned"]()
            C_reg = T.alloc_local((128, bn), "float32", layout=r_layout)
            out = T.alloc_local((128, bn), dtype, layout=r_layout)
            if tid == 0:
                for s in T.unroll(stages):
                    T.ptx["mbarrier.init.shared.b64"](full.ptr_to([s]), T.uint32(1))
                    T.ptx["mbarrier.init.shared.b64"](empty.ptr_to([s]), T.uint32(1))
                T.ptx["mbarrier.init.shared.b64"](done.ptr_to([0]), T.uint32(1))
            T.ptx["fence.proxy.async.shared::cta"]()
            T.cuda.cta_sync()
            taddr = T.meta_var(slot[0])
            C_tmem = Ax.tmem_tensor(taddr, (128, bn), "float32", c_layout)
            if tid == 0:
                for kt in T.serial(k_tiles):
                    if kt >= stages:
                        # the MMAs that read the slot's previous contents have completed (tcgen05.commit)
                        T.cuda.mbarrier_wait(empty.ptr_to([kt % stages]), (kt // stages + 1) % 2)
                    Ax.copy_async(A_smem[kt % stages, 0, :, :], A[by * 128:by * 128 + 128, kt * bk:kt * bk + bk],
                                  full.ptr_to([kt % stages]))
                    Ax.copy_async(B_smem[kt % stages, 0, :, :], B[bx * bn:bx * bn + bn, kt * bk:kt * bk + bk],
                                  full.ptr_to([kt % stages]))
                    T.ptx["mbarrier.arrive.expect_tx.shared.b64"](full.ptr_to([kt % stages]), T.uint32(stage_bytes))
            if tid // 32 == 1:
                for kt in T.serial(k_tiles):
                    T.cuda.mbarrier_wait(full.ptr_to([kt % stages]), (kt // stages) % 2)
                    if kt == 0:
                        Ax.gemm_async(C_tmem[:, :], A_smem[kt % stages, 0, :, :], B_smem[kt % stages, 0, :, :],
                                      False, False, False, None, False, scope="warp")
                    else:
                        Ax.gemm_async(C_tmem[:, :], A_smem[kt % stages, 0, :, :], B_smem[kt % stages, 0, :, :],
                                      False, False, True, None, False, scope="warp")
                    if tid == 32:
                        T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](
                            empty.ptr_to([kt % stages]))
                if tid == 32:
                    T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](done.ptr_to([0]))
            T.cuda.mbarrier_wait(done.ptr_to([0]), 0)
            Ax.copy_async(C_reg[:, :], C_tmem[:, :], scope="warpgroup")
            T.ptx["tcgen05.wait::ld.sync.aligned"]()
            Ax.cast(out[:, :], C_reg[:, :], scope="warpgroup")
            Ax.copy(D[by * 128:by * 128 + 128, bx * bn:bx * bn + bn], out[:, :], scope="warpgroup")
            T.cuda.cta_sync()
            if tid // 32 == 0:
                T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](taddr, T.uint32(TMEM_COLUMNS))

    return kernel


def blackwell_gemm_pair(m: int, n: int, k: int, bn: int = 128, bk: int = 64, stages: int | None = None,
                        dtype: str = "float16"):
    """The 2-CTA form (see the module docstring): a cluster of two CTAs per (256 x BN) tile of D, one
    ``tcgen05.mma.cta_group::2`` (M = 256) per K step issued by the even CTA over both CTAs' slots; C is this CTA's
    128 x BN, B its BN/2 x BK."""
    stages = stages or stages_for(bn // 2, bk)
    check(m, n, k, bn, bk, stages, dtype, cta_group=2)
    from tvm_tirx.backend.cuda.lang import SMEMPool
    from tvm_tirx.backend.cuda.launch import LaunchConfig
    from tvm_tirx.script import tirx as T

    from ... import tirx as Ax

    half_n = bn // 2
    a_layout, b_layout = shared_tile(stages, 1, 128, bk), shared_tile(stages, 1, half_n, bk)
    c_layout, r_layout = _layouts(bn)
    k_tiles = k // bk
    pair_bytes = 2 * (128 + half_n) * bk * 2   # what lands in the pair per stage
    tiles_n = n // bn
    clusters = (m // 256) * tiles_n

    @T.function
    def kernel(A: T.Tensor((m, k), dtype), B: T.Tensor((n, k), dtype), D: T.Tensor((m, n), dtype)):
        with T.device_entry(launch=LaunchConfig(grid=2 * clusters, block=128, cluster=2)):
            bx = T.cuda.block_idx("x")
            tid = T.cuda.thread_idx("x")
            rank = T.meta_var(bx % 2)   # %cluster_ctarank: clusters of (2, 1, 1) CTAs along x
            cl = T.meta_var(bx // 2)    # %clusterid.x
            pool = SMEMPool()   # one dynamic shared-memory block, carved in order (the same offsets in both CTAs)
            A_smem = pool.alloc((stages, 1, 128, bk), dtype, layout=a_layout, align=1024)
            B_smem = pool.alloc((stages, 1, half_n, bk), dtype, layout=b_layout, align=1024)
            full = pool.alloc((stages,), "uint64", layout=T.TileLayout(T.S[stages]), align=8)
            empty = pool.alloc((stages,), "uint64", layout=T.TileLayout(T.S[stages]), align=8)
            done = pool.alloc((1,), "uint64", layout=T.TileLayout(T.S[1]), align=8)
            slot = pool.alloc((1,), "uint32", layout=T.TileLayout(T.S[1]), align=4)   # tcgen05.alloc's word
            pool.commit()
            if tid // 32 == 0:
                T.ptx["tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32"](slot.ptr_to([0]),
                                                                                 T.uint32(TMEM_COLUMNS))
                T.cuda.warp_sync()   # as 0.27's TMEMPool: the warp reconverges after the allocation
                T.ptx["tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned"]()
            C_reg = T.alloc_local((128, bn), "float32", layout=r_layout)
            out = T.alloc_local((128, bn), dtype, layout=r_layout)
            if tid == 0:
                for s in T.unroll(stages):
                    T.ptx["mbarrier.init.shared.b64"](full.ptr_to([s]), T.uint32(1))
                    T.ptx["mbarrier.init.shared.b64"](empty.ptr_to([s]), T.uint32(1))
                T.ptx["mbarrier.init.shared.b64"](done.ptr_to([0]), T.uint32(1))
            T.ptx["fence.proxy.async.shared::cta"]()
            T.cuda.cluster_sync()   # the pair's barriers and tensor memory exist before either CTA uses the other's
            taddr = T.meta_var(slot[0])
            C_tmem = Ax.tmem_tensor(taddr, (128, bn), "float32", c_layout)
            tm = T.meta_var(cl // tiles_n)
            tn = T.meta_var(cl % tiles_n)
            if tid == 0:
                leader_full = T.alloc_local((1,), "uint32", layout=T.TileLayout(T.S[1]))
                for kt in T.serial(k_tiles):
                    if kt >= stages:
                        # the pair's MMAs that read this slot have completed (the even CTA's multicast commit)
                        T.cuda.mbarrier_wait(empty.ptr_to([kt % stages]), (kt // stages + 1) % 2)
                    # the even CTA's full[s], as this CTA addresses it in the cluster window
                    T.ptx["mapa.shared::cluster.u32"](leader_full[0],
                                                      T.cuda.cvta_generic_to_shared(full.ptr_to([kt % stages])),
                                                      T.uint32(0))
                    if rank == 0:
                        T.ptx["mbarrier.arrive.expect_tx.shared.b64"](full.ptr_to([kt % stages]),
                                                                      T.uint32(pair_bytes))
                    Ax.copy_async(A_smem[kt % stages, 0, :, :],
                                  A[tm * 256 + rank * 128:tm * 256 + rank * 128 + 128, kt * bk:kt * bk + bk],
                                  leader_full[0], None, 2)
                    Ax.copy_async(B_smem[kt % stages, 0, :, :],
                                  B[tn * bn + rank * half_n:tn * bn + rank * half_n + half_n, kt * bk:kt * bk + bk],
                                  leader_full[0], None, 2)
            if tid // 32 == 1:
                if rank == 0:
                    for kt in T.serial(k_tiles):
                        T.cuda.mbarrier_wait(full.ptr_to([kt % stages]), (kt // stages) % 2)
                        if kt == 0:
                            Ax.gemm_async(C_tmem[:, :], A_smem[kt % stages, 0, :, :], B_smem[kt % stages, 0, :, :],
                                          False, False, False, None, False, 2, scope="warp")
                        else:
                            Ax.gemm_async(C_tmem[:, :], A_smem[kt % stages, 0, :, :], B_smem[kt % stages, 0, :, :],
                                          False, False, True, None, False, 2, scope="warp")
                        if tid == 32:
                            T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster"
                                  ".multicast::cluster.b64"](empty.ptr_to([kt % stages]), T.uint16(3))
                    if tid == 32:
                        T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster"
                              ".b64"](done.ptr_to([0]), T.uint16(3))
            T.cuda.mbarrier_wait(done.ptr_to([0]), 0)
            Ax.copy_async(C_reg[:, :], C_tmem[:, :], scope="warpgroup")
            T.ptx["tcgen05.wait::ld.sync.aligned"]()
            Ax.cast(out[:, :], C_reg[:, :], scope="warpgroup")
            Ax.copy(D[tm * 256 + rank * 128:tm * 256 + rank * 128 + 128, tn * bn:tn * bn + bn], out[:, :],
                    scope="warpgroup")
            T.cuda.cluster_sync()   # the pair's MMAs and reads are done before the tensor memory is freed
            if tid // 32 == 0:
                T.ptx["tcgen05.dealloc.cta_group::2.sync.aligned.b32"](taddr, T.uint32(TMEM_COLUMNS))

    return kernel
