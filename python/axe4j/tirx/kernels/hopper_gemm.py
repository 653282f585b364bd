"""The Hopper FP16 GEMM (``axe4j.cuda.kernels.hopper_gemm``) on the new TIRx lane: D = A B^T, A (M x K) and B (N x K)
row-major FP16, FP32 accumulation, D (M x N) FP16; the same layouts, tiles, ring and warp roles as on 0.27.

One CTA of three warpgroups computes a (BM x BN) tile of D. Warpgroup 0's thread 0 is the producer: it streams the
(BM x BK) tile of A (as two BM/2-row halves, one per consumer) and the (BN x BK) tile of B into a ring of ``stages``
shared-memory slots by TMA (``copy_async`` with the slot's ``full`` mbarrier, armed with the stage's bytes), waiting
on the slot's ``empty`` mbarrier before refilling it. Warpgroups 1 and 2 are the consumers: each waits on ``full``,
multiplies its half of the slot by wgmma (``gemm_async`` into its register accumulator), releases the slot (one
arrival on ``empty`` per warpgroup), and at the end casts the accumulator to FP16 and stores its BM/2 rows. Slot
``kt % stages``, parity ``(kt // stages) % 2``; the producer waits with the opposite parity (the ring starts free).

The ring and its mbarriers live in DYNAMIC shared memory, as on 0.27: one ``shared.dyn`` block carved in order by
tvm_tirx's ``SMEMPool`` (A's slots, B's slots, both 1024-byte aligned for the 128-byte swizzle, then the mbarriers);
``commit`` records the block's size as the launch's dynamic shared bytes (the host passes it as
``tirx.use_dyn_shared_memory``), so the cubin's static ``.nv.shared`` holds nothing of it (only the 1 KiB sm_90
reserves) and a 4-stage ring of 128 KiB is asked for at launch, as CUDA requires past 48 KiB a block.

Differences of spelling only: the consumer's row block is written ``(tid // 128 + 1) % 2`` where 0.27 writes
``wg - 1`` (the same for warpgroups 1 and 2): tvm_tirx proves a region in bounds from the thread index's range
alone, not from the branch that holds the call; the slot and parity are written out (a ``T.meta_var`` on tvm_tirx
binds a variable the rules see as any integer).
"""

from __future__ import annotations

from ...cuda.kernels.hopper_shape import accumulator_shard, check_shape, ring_bytes, shared_tile_shard


def shared_tile(stages: int, parts: int, rows: int, bk: int, itemsize: int = 2):
    """``axe4j.cuda.kernels.hopper_gemm.shared_tile`` with tvm_tirx's layouts (the data: ``shared_tile_shard``)."""
    from tvm_tirx.script import tirx as T

    per_element, swizzle_len, atom_len, extents, strides = shared_tile_shard(stages, parts, rows, bk, itemsize)
    return T.ComposeLayout(per_element, swizzle_len, atom_len, T.TileLayout(T.S[extents:strides]))


def accumulator(rows: int, n: int):
    """``axe4j.cuda.kernels.hopper_gemm.accumulator`` with tvm_tirx's layouts (the data: ``accumulator_shard``)."""
    from tvm_tirx.backend.cuda import axis
    from tvm_tirx.script import tirx as T

    extents, strides = accumulator_shard(rows, n)
    return T.TileLayout(T.S[extents:tuple(s if isinstance(s, int) else s[0] @ getattr(axis, s[1])
                                          for s in strides)])


def dynamic_shared_bytes(bm: int = 128, bn: int = 128, bk: int = 64, stages: int = 4) -> int:
    """The kernel's dynamic shared bytes, as ``SMEMPool`` carves them: the ring, then the 2 x ``stages`` mbarriers
    (8 bytes each; the ring's size is a multiple of 8)."""
    return ring_bytes(bm, bn, bk, stages) + 2 * stages * 8


def hopper_gemm(m: int, n: int, k: int, bm: int = 128, bn: int = 128, bk: int = 64, stages: int = 4):
    """The kernel as a tvm_tirx function (see the module docstring). Raises ValueError naming a shape it cannot
    tile."""
    check_shape(m, n, k, bm, bn, bk, stages)
    from tvm_tirx.backend.cuda.lang import SMEMPool
    from tvm_tirx.backend.cuda.launch import LaunchConfig
    from tvm_tirx.script import tirx as T

    from ... import tirx as Ax

    half = bm // 2
    a_layout, b_layout = shared_tile(stages, 2, half, bk), shared_tile(stages, 1, bn, bk)
    acc_layout = accumulator(half, bn)
    k_tiles = k // bk
    stage_bytes = (bm + bn) * bk * 2

    @T.function
    def kernel(A: T.Tensor((m, k), "float16"), B: T.Tensor((n, k), "float16"), D: T.Tensor((m, n), "float16")):
        with T.device_entry(launch=LaunchConfig(grid=(n // bn, m // bm), block=384)):
            bx = T.cuda.block_idx("x")
            by = T.cuda.block_idx("y")
            tid = T.cuda.thread_idx("x")
            pool = SMEMPool()   # one dynamic shared-memory block, carved in order
            A_smem = pool.alloc((stages, 2, half, bk), "float16", layout=a_layout, align=1024)
            B_smem = pool.alloc((stages, 1, bn, bk), "float16", layout=b_layout, align=1024)
            full = pool.alloc((stages,), "uint64", layout=T.TileLayout(T.S[stages]), align=8)
            empty = pool.alloc((stages,), "uint64", layout=T.TileLayout(T.S[stages]), align=8)
            pool.commit()
            if tid == 0:
                for s in T.unroll(stages):
                    T.ptx["mbarrier.init.shared.b64"](full.ptr_to([s]), T.uint32(1))
                    T.ptx["mbarrier.init.shared.b64"](empty.ptr_to([s]), T.uint32(2))
            T.ptx["fence.proxy.async.shared::cta"]()
            T.cuda.cta_sync()
            if tid < 128:
                if tid == 0:
                    for kt in T.serial(k_tiles):
                        if kt >= stages:
                            # wait until both consumers released the slot's previous contents
                            T.cuda.mbarrier_wait(empty.ptr_to([kt % stages]), (kt // stages + 1) % 2)
                        for h in T.unroll(2):
                            Ax.copy_async(A_smem[kt % stages, h, :, :],
                                          A[by * bm + h * half:by * bm + h * half + half, kt * bk:kt * bk + bk],
                                          full.ptr_to([kt % stages]))
                        Ax.copy_async(B_smem[kt % stages, 0, :, :], B[bx * bn:bx * bn + bn, kt * bk:kt * bk + bk],
                                      full.ptr_to([kt % stages]))
                        T.ptx["mbarrier.arrive.expect_tx.shared.b64"](full.ptr_to([kt % stages]),
                                                                      T.uint32(stage_bytes))
            else:
                part = (tid // 128 + 1) % 2   # wg - 1 for warpgroups 1 and 2 (see the module docstring)
                acc = T.alloc_local((half, bn), "float32", layout=acc_layout)
                out = T.alloc_local((half, bn), "float16", layout=acc_layout)
                Ax.fill(acc[:, :], T.float32(0.0), scope="warpgroup")
                for kt in T.serial(k_tiles):
                    T.cuda.mbarrier_wait(full.ptr_to([kt % stages]), (kt // stages) % 2)
                    Ax.gemm_async(acc[:, :], A_smem[kt % stages, part, :, :], B_smem[kt % stages, 0, :, :],
                                  False, False, True, None, False, scope="warpgroup")
                    if tid % 128 == 0:
                        T.ptx["mbarrier.arrive.shared.b64"](empty.ptr_to([kt % stages]), T.uint32(1))
                Ax.cast(out[:, :], acc[:, :], scope="warpgroup")
                Ax.copy(D[by * bm + part * half:by * bm + part * half + half, bx * bn:bx * bn + bn], out[:, :],
                        scope="warpgroup")

    return kernel
