"""``Tx.copy_async`` global -> shared: ``cp.async`` (LDGSTS, sm_80+) and TMA (``cp.async.bulk.tensor``, sm_90a+).

cp.async needs the caller to commit and wait (``cp.async.commit_group`` / ``wait_group 0``) and then a CTA
barrier. TMA runs on one thread: it names an mbarrier in shared memory, the issuing thread arms it with the
byte count (``mbarrier.arrive.expect_tx``), and every thread waits for phase 0 to complete (``T.cuda.mbarrier_wait``, a ``mbarrier.try_wait`` loop).
"""

from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout
from tvm.tirx.script import tile as Tx

from ._base import BOTH, Tensor, entry


def _same(a):
    return (a.copy(),)


@entry(op="copy_async", scope="cta", storage="global->shared", archs=BOTH,
       inputs=(Tensor((128, 64), "float16"),), outputs=(Tensor((128, 64), "float16"),),
       reference=_same, expect=(r"cp\.async\.cg\.shared\.global", r"cp\.async\.commit_group", r"cp\.async\.wait_group"),
       layouts={"A_smem": "S[128, 64]"})
def copy_async_cp_async_cta_f16():
    shape = (128, 64)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float16"), B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        Tx.cta.copy_async(A_smem[:, :], A[:, :])
        T.ptx.cp.async_.commit_group()
        T.ptx.cp.async_.wait_group(0)
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], A_smem[:, :])

    return kernel


@entry(op="copy_async", scope="warp", storage="global->shared", archs=BOTH,
       inputs=(Tensor((32, 32), "float32"),), outputs=(Tensor((32, 32), "float32"),),
       reference=_same, expect=(r"cp\.async\.cg\.shared\.global",),
       layouts={"A_smem": "S[32, 32]"})
def copy_async_cp_async_warp_f32():
    shape = (32, 32)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        A_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        Tx.warp.copy_async(A_smem[:, :], A[:, :])
        T.ptx.cp.async_.commit_group()
        T.ptx.cp.async_.wait_group(0)
        T.cuda.cta_sync()
        Tx.warp.copy(B[:, :], A_smem[:, :])

    return kernel


def _tma_g2s(shape, dtype, s_layout, dispatch):
    nbytes = shape[0] * shape[1] * (2 if dtype == "float16" else 4)

    @T.prim_func
    def kernel(A: T.Buffer(shape, dtype), B: T.Buffer(shape, dtype)):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        tid = T.thread_id([128])
        A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=s_layout)
        mbar = T.alloc_buffer((1,), "uint64", scope="shared")
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            Tx.copy_async(A_smem[:, :], A[:, :], dispatch=dispatch, mbar=mbar.ptr_to([0]))
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([0]), T.uint32(nbytes))
        T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], A_smem[:, :])

    return kernel


TMA_G2S = (r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global", r"mbarrier\.try_wait")


@entry(op="copy_async", scope="thread", storage="global->shared", archs=BOTH,
       inputs=(Tensor((64, 64), "float16"),), outputs=(Tensor((64, 64), "float16"),),
       reference=_same, expect=TMA_G2S, layouts={"A_smem": "S[64, 64]"},
       notes="TMA forced (dispatch='tma_auto'): cp.async would also apply to a one-thread global->shared copy")
def copy_async_tma_g2s_f16():
    return _tma_g2s((64, 64), "float16", TileLayout(S[64, 64]), "tma_auto")


@entry(op="copy_async", scope="thread", storage="global->shared(swizzled)", archs=BOTH,
       inputs=(Tensor((64, 64), "float16"),), outputs=(Tensor((64, 64), "float16"),),
       reference=_same, expect=TMA_G2S,
       layouts={"A_smem": "ComposeLayout(3, 3, 3, S[8, 64]) tiled to (64, 64) (TMA SWIZZLE_128B)"})
def copy_async_tma_g2s_swizzle128_f16():
    layout = ComposeLayout(3, 3, 3, TileLayout(S[8, 64])).tile_to((64, 64), (8, 64))
    return _tma_g2s((64, 64), "float16", layout, "tma_auto")


@entry(op="copy_async", scope="thread", storage="shared->global", archs=BOTH,
       inputs=(Tensor((32, 64), "float32"),), outputs=(Tensor((32, 64), "float32"),),
       reference=_same, expect=(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta", r"cp\.async\.bulk\.commit_group"),
       layouts={"A_smem": "S[32, 64]"})
def copy_async_tma_s2g_f32():
    shape = (32, 64)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        tid = T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            Tx.copy_async(B[:, :], A_smem[:, :], dispatch="tma_auto")
            T.ptx.cp.async_.bulk.commit_group()
            T.ptx.cp.async_.bulk.wait_group(0)

    return kernel
