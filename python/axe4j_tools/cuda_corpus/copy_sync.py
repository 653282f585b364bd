"""Synchronous ``Tx.copy`` between global, shared and registers (local) at thread, warp, warpgroup and CTA scope.

Register tiles are per-thread ``local`` buffers whose Axe layout puts the row dim on a thread axis:
``S[(n, k):(1@laneid, 1)]`` (warp), ``1@tid_in_wg`` (warpgroup), ``1@tx`` (CTA): thread t holds row t, k values.
"""

from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout, laneid, tid_in_wg, tx
from tvm.tirx.script import tile as Tx

from ._base import BOTH, HOPPER, Tensor, entry

V4_G2S = (r"ld\.global\.v4", r"st\.shared\.v4")
V4_S2G = (r"ld\.shared\.v4", r"st\.global\.v4")


def _same(a):
    return (a.copy(),)


@entry(op="copy", scope="warp", storage="global->shared, shared->global", archs=BOTH,
       inputs=(Tensor((32, 64), "float16"),), outputs=(Tensor((32, 64), "float16"),),
       reference=_same, expect=V4_G2S + V4_S2G,
       layouts={"A_smem": "S[32, 64]"})
def copy_g2s_s2g_warp_f16():
    shape = (32, 64)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float16"), B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        A_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        Tx.warp.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(B[:, :], A_smem[:, :])

    return kernel


@entry(op="copy", scope="warpgroup", storage="global->shared, shared->global", archs=(HOPPER,),
       inputs=(Tensor((128, 32), "float32"),), outputs=(Tensor((128, 32), "float32"),),
       reference=_same, expect=V4_G2S + V4_S2G, layouts={"A_smem": "S[128, 32]"})
def copy_g2s_s2g_wg_f32():
    shape = (128, 32)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        Tx.wg.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.wg.copy(B[:, :], A_smem[:, :])

    return kernel


@entry(op="copy", scope="cta", storage="global->shared, shared->global", archs=BOTH,
       inputs=(Tensor((256, 32), "float16"),), outputs=(Tensor((256, 32), "float16"),),
       reference=_same, expect=V4_G2S + V4_S2G, layouts={"A_smem": "S[256, 32]"})
def copy_g2s_s2g_cta_f16():
    shape = (256, 32)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float16"), B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([8])
        T.lane_id([32])
        T.thread_id([256])
        A_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], A_smem[:, :])

    return kernel


def _window_copy(a):
    b = (a * 0)
    b[8:16, 16:32] = a[8:16, 16:32]
    return (b,)


@entry(op="copy", scope="thread", storage="global->shared, shared->global", archs=(HOPPER,),
       inputs=(Tensor((32, 64), "float32"),), outputs=(Tensor((32, 64), "float32"),),
       reference=_window_copy, expect=(r"ld\.global\.v4", r"st\.shared\.v4"),
       notes="one thread copies the window A[8:16, 16:32]", layouts={"A_smem": "S[8, 16]"})
def copy_window_thread_f32():
    shape = (32, 64)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([1])
        A_smem = T.alloc_buffer((8, 16), "float32", scope="shared", layout=TileLayout(S[8, 16]))
        Tx.copy(A_smem[:, :], A[8:16, 16:32])
        T.cuda.cta_sync()
        Tx.copy(B[8:16, 16:32], A_smem[:, :])

    return kernel


def _swizzle_128b(rows, cols):
    """128-byte swizzle for fp16 (8-element chunks XOR-ed by the row within an 8-row period)."""
    # ComposeLayout(per_element=3, swizzle_len=3, atom_len=3): 16-byte chunk c of row r lands at c ^ (r % 8).
    return ComposeLayout(3, 3, 3, TileLayout(S[8, 64])).tile_to((rows, cols), (8, 64))


@entry(op="copy", scope="cta", storage="global->shared(swizzled), shared->global", archs=BOTH,
       inputs=(Tensor((64, 64), "float16"),), outputs=(Tensor((64, 64), "float16"),),
       reference=_same, expect=V4_G2S + V4_S2G + (r"\^",),
       layouts={"A_smem": "ComposeLayout(3, 3, 3, S[8, 64]) tiled to (64, 64)"})
def copy_swizzled_smem_cta_f16():
    shape = (64, 64)
    layout = _swizzle_128b(*shape)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float16"), B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=layout)
        Tx.cta.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], A_smem[:, :])

    return kernel


# ---- registers (local) ---------------------------------------------------------------------------

@entry(op="copy", scope="warp", storage="shared->local, local->shared", archs=BOTH,
       inputs=(Tensor((32, 8), "float16"),), outputs=(Tensor((32, 8), "float16"),),
       reference=_same, expect=(r"ld\.shared\.v4", r"st\.shared\.v4"),
       layouts={"R": "S[(32, 8):(1@laneid, 1)]"})
def copy_s2r_r2s_warp_f16():
    shape = (32, 8)
    r_layout = TileLayout(S[shape:(1 @ laneid, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float16"), B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        A_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        B_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        R = T.alloc_buffer(shape, "float16", scope="local", layout=r_layout)
        Tx.warp.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(R[:, :], A_smem[:, :])
        Tx.warp.copy(B_smem[:, :], R[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(B[:, :], B_smem[:, :])

    return kernel


@entry(op="copy", scope="warpgroup", storage="global->local, local->global", archs=BOTH,
       inputs=(Tensor((128, 16), "float32"),), outputs=(Tensor((128, 16), "float32"),),
       reference=_same, expect=(r"ld\.global\.v4", r"st\.global\.v4"),
       layouts={"R": "S[(128, 16):(1@tid_in_wg, 1)]"})
def copy_g2r_r2g_wg_f32():
    shape = (128, 16)
    r_layout = TileLayout(S[shape:(1 @ tid_in_wg, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        T.thread_id([128])
        R = T.alloc_buffer(shape, "float32", scope="local", layout=r_layout)
        Tx.wg.copy(R[:, :], A[:, :])
        Tx.wg.copy(B[:, :], R[:, :])

    return kernel


@entry(op="copy", scope="cta", storage="global->local, local->global", archs=(HOPPER,),
       inputs=(Tensor((256, 16), "float16"),), outputs=(Tensor((256, 16), "float16"),),
       reference=_same, expect=(r"ld\.global\.v4", r"st\.global\.v4"),
       layouts={"R": "S[(256, 16):(1@tx, 1)]"})
def copy_g2r_r2g_cta_f16():
    shape = (256, 16)
    r_layout = TileLayout(S[shape:(1 @ tx, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float16"), B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([8])
        T.lane_id([32])
        T.thread_id([256])
        R = T.alloc_buffer(shape, "float16", scope="local", layout=r_layout)
        Tx.cta.copy(R[:, :], A[:, :])
        Tx.cta.copy(B[:, :], R[:, :])

    return kernel


def _block_copy(a):
    b = a * 0
    b[2, 8:16, 0:8] = a[2, 8:16, 0:8]
    return (b,)


@entry(op="copy", scope="thread", storage="global->local, local->global", archs=BOTH,
       inputs=(Tensor((4, 16, 16), "float32"),), outputs=(Tensor((4, 16, 16), "float32"),),
       reference=_block_copy, expect=(r"ld\.global\.v4", r"st\.global\.v4"),
       notes="each thread's own 8x8 register tile (no thread axis in its layout)",
       layouts={"R": "S[8, 8]"})
def copy_g2r_r2g_thread_f32():
    shape = (4, 16, 16)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([1])
        R = T.alloc_buffer((8, 8), "float32", scope="local", layout=TileLayout(S[8, 8]))
        Tx.copy(R[:, :], A[2:3, 8:16, 0:8])
        Tx.copy(B[2:3, 8:16, 0:8], R[:, :])

    return kernel


@entry(op="copy", scope="cta", storage="shared->local, local->shared", archs=BOTH,
       inputs=(Tensor((256, 8), "float32"),), outputs=(Tensor((256, 8), "float32"),),
       reference=_same, expect=(r"ld\.shared\.v4", r"st\.shared\.v4"),
       layouts={"R": "S[(256, 8):(1@tx, 1)]"})
def copy_s2r_r2s_cta_f32():
    shape = (256, 8)
    r_layout = TileLayout(S[shape:(1 @ tx, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([8])
        T.lane_id([32])
        T.thread_id([256])
        A_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        B_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        R = T.alloc_buffer(shape, "float32", scope="local", layout=r_layout)
        Tx.cta.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(R[:, :], A_smem[:, :])
        Tx.cta.copy(B_smem[:, :], R[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], B_smem[:, :])

    return kernel


@entry(op="copy", scope="warpgroup", storage="shared->local, local->shared", archs=(HOPPER,),
       inputs=(Tensor((128, 16), "bfloat16"),), outputs=(Tensor((128, 16), "bfloat16"),),
       reference=_same, expect=(r"ld\.shared\.v4", r"st\.shared\.v4"),
       notes="16 bf16 per thread: two 128-bit accesses each way",
       layouts={"R": "S[(128, 16):(1@tid_in_wg, 1)]"})
def copy_s2r_r2s_wg_bf16():
    shape = (128, 16)
    r_layout = TileLayout(S[shape:(1 @ tid_in_wg, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "bfloat16"), B: T.Buffer(shape, "bfloat16")):
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "bfloat16", scope="shared", layout=TileLayout(S[shape]))
        B_smem = T.alloc_buffer(shape, "bfloat16", scope="shared", layout=TileLayout(S[shape]))
        R = T.alloc_buffer(shape, "bfloat16", scope="local", layout=r_layout)
        Tx.wg.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.wg.copy(R[:, :], A_smem[:, :])
        Tx.wg.copy(B_smem[:, :], R[:, :])
        T.cuda.cta_sync()
        Tx.wg.copy(B[:, :], B_smem[:, :])

    return kernel
