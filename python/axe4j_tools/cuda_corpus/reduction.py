"""``Tx.sum`` / ``Tx.max`` / ``Tx.min`` on registers (thread, warp) and shared memory (warp, warpgroup, CTA).

A reduction across lanes is written on a register view whose source layout shards a dim over ``laneid`` and
whose destination layout *replicates* the result over ``laneid`` (``S[...] + R[32:1@laneid]``): every lane
ends up holding the reduced value, which upstream computes with butterfly shuffles.
"""

import numpy as np
from tvm.script import tirx as T
from tvm.tirx.layout import R, S, TileLayout, laneid, tid_in_wg
from tvm.tirx.script import tile as Tx

from ._base import BLACKWELL, BOTH, HOPPER, Tensor, entry


@entry(op="sum", scope="thread", storage="local", archs=(HOPPER,),
       inputs=(Tensor((4, 16), "float32"),), outputs=(Tensor((4,), "float32"),),
       reference=lambda a: (a.sum(axis=-1),),
       expect=(r"B_local_ptr\[\w+\] = \(B_local_ptr\[\w+\] \+ A_local_ptr\[",), atol=1e-5, rtol=1e-5,
       layouts={"A_local": "S[4, 16]", "B_local": "S[4]"})
def sum_rows_local_thread_f32():
    @T.prim_func
    def kernel(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([1])
        A_local = T.alloc_buffer((4, 16), "float32", scope="local")
        B_local = T.alloc_buffer((4,), "float32", scope="local")
        Tx.copy(A_local[:, :], A[:, :])
        Tx.sum(B_local[:], A_local[:, :], axes=(-1,))
        Tx.copy(B[:], B_local[:])

    return kernel


@entry(op="max", scope="thread", storage="local", archs=BOTH,
       inputs=(Tensor((64,), "float32"),), outputs=(Tensor((1,), "float32"),),
       reference=lambda a: (a.max(keepdims=True),), expect=(),
       expect_by_arch={HOPPER: (r"B_local_ptr\[0\] = max\(B_local_ptr\[0\], A_local_ptr\[",),
                       BLACKWELL: (r"tvm_builtin_ptx_max3_f32\(", r"max\.f32 %0, %1, %2, %3")},
       notes="sm_100a: three-input max.f32 d, a, b, c folds two elements per instruction",
       layouts={"A_local": "S[64]", "B_local": "S[1]"})
def max_local_thread_f32():
    @T.prim_func
    def kernel(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([1])
        A_local = T.alloc_buffer((64,), "float32", scope="local")
        B_local = T.alloc_buffer((1,), "float32", scope="local")
        Tx.copy(A_local[:], A[:])
        Tx.max(B_local[:], A_local[:])
        B[0] = B_local[0]

    return kernel


@entry(op="sum", scope="thread", storage="local", archs=(BLACKWELL,),
       inputs=(Tensor((64,), "float32"),), outputs=(Tensor((1,), "float32"),),
       reference=lambda a: (a.sum(keepdims=True),), expect=(r"add\.rn\.ftz\.f32x2",), atol=1e-4, rtol=1e-4,
       notes="sm_100a: packed add.f32x2 over register pairs", layouts={"A_local": "S[64]", "B_local": "S[1]"})
def sum_local_thread_packed_f32():
    @T.prim_func
    def kernel(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([1])
        A_local = T.alloc_buffer((64,), "float32", scope="local")
        B_local = T.alloc_buffer((1,), "float32", scope="local")
        Tx.copy(A_local[:], A[:])
        Tx.sum(B_local[:], A_local[:])
        B[0] = B_local[0]

    return kernel


SHUFFLE = (r"tvm_builtin_cuda_warp_reduce_\w+_32\(", r"__shfl_xor_sync\(")


@entry(op="sum", scope="warp", storage="local", archs=BOTH,
       inputs=(Tensor((32,), "float32"),), outputs=(Tensor((32,), "float32"),),
       reference=lambda a: (np.full(32, a.sum(), "float32"),), expect=SHUFFLE, atol=1e-4, rtol=1e-4,
       notes="lane i holds a[i]; every lane receives the sum",
       layouts={"src": "S[32:1@laneid]", "dst": "S[1:1] + R[32:1@laneid]"})
def sum_lanes_warp_f32():
    @T.prim_func
    def kernel(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        lane = T.lane_id([32])
        src = T.alloc_buffer((1,), "float32", scope="local")
        dst = T.alloc_buffer((1,), "float32", scope="local")
        src[0] = A[lane]
        src_view = src.view(32, layout=TileLayout(S[32:1 @ laneid]))
        dst_view = dst.view(1, layout=TileLayout(S[1:1] + R[32:1 @ laneid]))
        Tx.warp.sum(dst_view, src_view)
        B[lane] = dst[0]

    return kernel


@entry(op="max", scope="warp", storage="local", archs=(HOPPER,),
       inputs=(Tensor((4, 32), "float32"),), outputs=(Tensor((32, 4), "float32"),),
       reference=lambda a: (np.tile(a.max(axis=1), (32, 1)),), expect=SHUFFLE,
       notes="4 rows per lane (registers), columns across lanes; lane l writes row l of B with the 4 maxima",
       layouts={"src": "S[(4, 32):(1, 1@laneid)]", "dst": "S[4:1] + R[32:1@laneid]"})
def max_rows_across_lanes_warp_f32():
    @T.prim_func
    def kernel(A: T.Buffer((4, 32), "float32"), B: T.Buffer((32, 4), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        lane = T.lane_id([32])
        src = T.alloc_buffer((4,), "float32", scope="local")
        dst = T.alloc_buffer((4,), "float32", scope="local")
        for i in range(4):
            src[i] = A[i, lane]
        src_view = src.view(4, 32, layout=TileLayout(S[(4, 32):(1, 1 @ laneid)]))
        dst_view = dst.view(4, layout=TileLayout(S[4:1] + R[32:1 @ laneid]))
        Tx.warp.max(dst_view, src_view, axes=(1,))
        for i in range(4):
            B[lane, i] = dst[i]

    return kernel


# TVM 0.27.0.post1: the "shared" reduction case builds its body with a checked @T.prim_func that reads the
# launch's threadIdx variable, which that PrimFunc does not bind, so every shared-memory reduction fails with
# "Invalid use of undefined variable tid" (warp, warpgroup) or "... tid_in_scope" (CTA).
UNBOUND_TID = r"Invalid use of undefined variable (tid|tid_in_scope)\b"


@entry(op="sum", scope="warpgroup", storage="local", archs=BOTH,
       inputs=(Tensor((128, 16), "float32"),), outputs=(Tensor((128,), "float32"),),
       reference=lambda a: (a.sum(axis=1),), expect=(r"dst_ptr\[0\] = \(dst_ptr\[0\] \+ src_ptr\[",), atol=1e-4, rtol=1e-4,
       notes="thread t sums its own row: upstream's warpgroup register reduction is thread-local only",
       layouts={"src": "S[(128, 16):(1@tid_in_wg, 1)]", "dst": "S[128:1@tid_in_wg]"})
def sum_rows_local_wg_f32():
    @T.prim_func
    def kernel(A: T.Buffer((128, 16), "float32"), B: T.Buffer((128,), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        tid = T.thread_id([128])
        src = T.alloc_buffer((128, 16), "float32", scope="local", layout=TileLayout(S[(128, 16):(1 @ tid_in_wg, 1)]))
        dst = T.alloc_buffer((128,), "float32", scope="local", layout=TileLayout(S[128:1 @ tid_in_wg]))
        Tx.wg.copy(src[:, :], A[:, :])
        Tx.wg.sum(dst[:], src[:, :], axes=(1,))
        B[tid] = dst.local()[0]

    return kernel


def _shared_reduce(op, scope, threads, shape, axes):
    """Kernel: A -> A_smem (CTA copy), ``op`` over ``axes`` into B_smem at ``scope``, B_smem -> B."""
    out_shape = tuple(n for d, n in enumerate(shape) if d not in {a % len(shape) for a in axes})
    scoped = {"cta": Tx.cta, "warpgroup": Tx.wg, "warp": Tx.warp}[scope]
    reduce = getattr(scoped, op)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(out_shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id([threads])
        A_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        B_smem = T.alloc_buffer(out_shape, "float32", scope="shared", layout=TileLayout(S[out_shape]))
        Tx.cta.copy(A_smem, A)
        T.cuda.cta_sync()
        reduce(B_smem, A_smem, axes=axes)
        T.cuda.cta_sync()
        Tx.cta.copy(B, B_smem)

    return kernel


@entry(op="sum", scope="cta", storage="shared", archs=BOTH,
       inputs=(Tensor((64, 32), "float32"),), outputs=(Tensor((64,), "float32"),),
       reference=lambda a: (a.sum(axis=1),), expect=(), atol=1e-4, rtol=1e-4, upstream_refuses=UNBOUND_TID,
       layouts={"A_smem": "S[64, 32]", "B_smem": "S[64]"})
def sum_rows_shared_cta_f32():
    return _shared_reduce("sum", "cta", 128, (64, 32), (-1,))


@entry(op="min", scope="warp", storage="shared", archs=(HOPPER,),
       inputs=(Tensor((16, 32), "float32"),), outputs=(Tensor((32,), "float32"),),
       reference=lambda a: (a.min(axis=0),), expect=(), upstream_refuses=UNBOUND_TID,
       notes="reduces the first (strided) dim: column minima", layouts={"A_smem": "S[16, 32]", "B_smem": "S[32]"})
def min_cols_shared_warp_f32():
    return _shared_reduce("min", "warp", 32, (16, 32), (0,))


@entry(op="max", scope="warpgroup", storage="shared", archs=BOTH,
       inputs=(Tensor((16, 64), "float32"),), outputs=(Tensor((16,), "float32"),),
       reference=lambda a: (a.max(axis=1),), expect=(), upstream_refuses=UNBOUND_TID,
       layouts={"A_smem": "S[16, 64]", "B_smem": "S[16]"})
def max_rows_shared_wg_f32():
    return _shared_reduce("max", "warpgroup", 128, (16, 64), (-1,))
