"""Register <-> shared copies that upstream lowers to ``ldmatrix`` / ``stmatrix`` (fp16 8x8 matrices).

The register tile is the mma fragment: shape ``(8, 4, num, 2)`` with layout
``S[(8, 4, num, 2):(4@laneid, 1@laneid, 2, 1)]`` -- lane ``4*r + c`` holds row ``r``, columns ``t*8 + 2*c + w``
of each of the ``num`` matrices, as ``num*2`` consecutive registers. The shared tile with strides
``(8*num, 2, 8, 1)`` is the row-major (8, 8*num) matrix, so the copy is exactly one ``ldmatrix.x{num}``.
"""

from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid, tid_in_wg
from tvm.tirx.script import tile as Tx

from ._base import BOTH, Tensor, entry


def _same(a):
    return (a.copy(),)


@entry(op="copy", scope="warp", storage="shared->local", archs=BOTH,
       inputs=(Tensor((8, 32), "float16"),), outputs=(Tensor((8, 32), "float16"),),
       reference=_same, expect=(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16",),
       layouts={"R": "S[(8, 4, 4, 2):(4@laneid, 1@laneid, 2, 1)]", "A_smem": "S[(8, 4, 4, 2):(32, 2, 8, 1)]"})
def copy_ldmatrix_warp_f16():
    num = 4
    tile = (8, 4, num, 2)

    @T.prim_func
    def kernel(A: T.Buffer((8, 8 * num), "float16"), B: T.Buffer((8, 8 * num), "float16")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        tid = T.thread_id([32])
        A_smem = T.alloc_buffer(tile, "float16", scope="shared", layout=TileLayout(S[tile:(8 * num, 2, 8, 1)]))
        R = T.alloc_buffer(tile, "float16", scope="local", layout=TileLayout(S[tile:(4 @ laneid, 1 @ laneid, 2, 1)]))
        row = tid // 4
        col = tid % 4
        for t in range(num):
            for w in range(2):
                A_smem[row, col, t, w] = A[row, t * 8 + col * 2 + w]
        T.cuda.cta_sync()
        Tx.warp.copy(R[:, :, :, :], A_smem[:, :, :, :])
        regs = R.local()
        for t in range(num):
            for w in range(2):
                B[row, t * 8 + col * 2 + w] = regs[t * 2 + w]

    return kernel


@entry(op="copy", scope="warpgroup", storage="local->shared", archs=BOTH,
       inputs=(Tensor((32, 16), "float16"),), outputs=(Tensor((32, 16), "float16"),),
       reference=_same, expect=(r"stmatrix\.sync\.aligned\.m8n8\.x2\.shared\.b16",),
       notes="four warps, each stores its 8x16 slab",
       layouts={"R": "S[(4, 8, 4, 2, 2):(32@tid_in_wg, 4@tid_in_wg, 1@tid_in_wg, 2, 1)]",
                "A_smem": "S[(4, 8, 4, 2, 2):(128, 16, 2, 8, 1)]"})
def copy_stmatrix_wg_f16():
    num = 2
    tile = (4, 8, 4, num, 2)
    r_layout = TileLayout(S[tile:(32 @ tid_in_wg, 4 @ tid_in_wg, 1 @ tid_in_wg, 2, 1)])
    s_layout = TileLayout(S[tile:(64 * num, 8 * num, 2, 8, 1)])

    @T.prim_func
    def kernel(A: T.Buffer((32, 8 * num), "float16"), B: T.Buffer((32, 8 * num), "float16")):
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        tid = T.thread_id([128])
        A_smem = T.alloc_buffer(tile, "float16", scope="shared", layout=s_layout)
        R = T.alloc_buffer(tile, "float16", scope="local", layout=r_layout)
        warp = tid // 32
        row = tid % 32 // 4
        col = tid % 4
        regs = R.local()
        for t in range(num):
            for w in range(2):
                regs[t * 2 + w] = A[warp * 8 + row, t * 8 + col * 2 + w]
        Tx.wg.copy(A_smem[:, :, :, :, :], R[:, :, :, :, :])
        T.cuda.cta_sync()
        for t in range(num):
            for w in range(2):
                B[warp * 8 + row, t * 8 + col * 2 + w] = A_smem[warp, row, col, t, w]

    return kernel
