"""``Tx.fill``, ``Tx.cast``, unary (``exp``, ``sqrt``) and binary (``add``, ``mul``) maps on shared and register tiles.

Data moves in and out with ``Tx.copy`` (global <-> shared or global <-> registers), so each kernel also
exercises the copy dispatch; the entry's op/scope/storage name the map under test.
"""

import numpy as np
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid, tid_in_wg
from tvm.tirx.script import tile as Tx

from ._base import BLACKWELL, BOTH, HOPPER, Tensor, entry


@entry(op="fill", scope="cta", storage="shared", archs=BOTH,
       inputs=(), outputs=(Tensor((64, 32), "float32"),),
       reference=lambda: (np.full((64, 32), 1.5, "float32"),), expect=(r"\*\(float4\*\)\(A_smem_ptr[^;]*= make_float4\(0x1\.8p\+0f",),  # 128-bit stores of 1.5
       layouts={"A_smem": "S[64, 32]"})
def fill_shared_cta_f32():
    shape = (64, 32)

    @T.prim_func
    def kernel(B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        Tx.cta.fill(A_smem[:, :], T.float32(1.5))
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], A_smem[:, :])

    return kernel


@entry(op="fill", scope="warp", storage="local", archs=(HOPPER,),
       inputs=(), outputs=(Tensor((32, 8), "float16"),),
       reference=lambda: (np.full((32, 8), -0.25, "float16"),), expect=(r"R_ptr\[\w+\] = __float2half_rn\(-0x1p-2f", r"st\.global\.v4"),
       layouts={"R": "S[(32, 8):(1@laneid, 1)]"})
def fill_reg_warp_f16():
    shape = (32, 8)

    @T.prim_func
    def kernel(B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        R = T.alloc_buffer(shape, "float16", scope="local", layout=TileLayout(S[shape:(1 @ laneid, 1)]))
        Tx.warp.fill(R[:, :], T.float16(-0.25))
        Tx.warp.copy(B[:, :], R[:, :])

    return kernel


@entry(op="cast", scope="cta", storage="shared", archs=BOTH,
       inputs=(Tensor((64, 64), "float32"),), outputs=(Tensor((64, 64), "float16"),),
       reference=lambda a: (a.astype("float16"),), expect=(r"tvm_builtin_cast_float32x2_float16x2\(", r"__float22half2_rn"),
       atol=1e-3, rtol=1e-3, layouts={"A_smem": "S[64, 64]", "B_smem": "S[64, 64]"})
def cast_shared_cta_f32_f16():
    shape = (64, 64)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        B_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.cast(B_smem[:, :], A_smem[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], B_smem[:, :])

    return kernel


def _to_bf16(a):
    import ml_dtypes

    return (a.astype(ml_dtypes.bfloat16),)


@entry(op="cast", scope="warpgroup", storage="local", archs=BOTH,
       inputs=(Tensor((128, 8), "float32"),), outputs=(Tensor((128, 8), "bfloat16"),),
       reference=_to_bf16, expect=(r"tvm_builtin_cast_float32x2_bfloat16x2\(", r"__float22bfloat162_rn"),
       atol=1e-2, rtol=1e-2, layouts={"R": "S[(128, 8):(1@tid_in_wg, 1)]"})
def cast_reg_wg_f32_bf16():
    shape = (128, 8)
    layout = TileLayout(S[shape:(1 @ tid_in_wg, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "bfloat16")):
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        T.thread_id([128])
        R = T.alloc_buffer(shape, "float32", scope="local", layout=layout)
        Rb = T.alloc_buffer(shape, "bfloat16", scope="local", layout=layout)
        Tx.wg.copy(R[:, :], A[:, :])
        Tx.wg.cast(Rb[:, :], R[:, :])
        Tx.wg.copy(B[:, :], Rb[:, :])

    return kernel


@entry(op="exp", scope="cta", storage="shared", archs=BOTH,
       inputs=(Tensor((64, 32), "float32"),), outputs=(Tensor((64, 32), "float32"),),
       reference=lambda a: (np.exp(a),), expect=(r"float4 v_ = \*\(float4\*\)\(A_smem_ptr", r"= expf\(v_\.x\)"),
       atol=1e-4, rtol=1e-4, layouts={"A_smem": "S[64, 32]", "B_smem": "S[64, 32]"})
def exp_shared_cta_f32():
    shape = (64, 32)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        B_smem = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.exp(B_smem[:, :], A_smem[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], B_smem[:, :])

    return kernel


@entry(op="sqrt", scope="warp", storage="shared", archs=(HOPPER,),
       inputs=(Tensor((32, 32), "float16", 0.1, 4.0),), outputs=(Tensor((32, 32), "float16"),),
       reference=lambda a: (np.sqrt(a.astype("float32")).astype("float16"),), expect=(r"= hsqrt\(\(\(half2\*\)",),
       atol=1e-2, rtol=1e-2, layouts={"A_smem": "S[32, 32]"})
def sqrt_shared_warp_f16():
    shape = (32, 32)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float16"), B: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        A_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        Tx.warp.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.warp.sqrt(A_smem[:, :], A_smem[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(B[:, :], A_smem[:, :])

    return kernel


@entry(op="exp", scope="warp", storage="local", archs=BOTH,
       inputs=(Tensor((32, 16), "float32"),), outputs=(Tensor((32, 16), "float32"),),
       reference=lambda a: (np.exp(a),), expect=(r"R_ptr\[\w+\] = expf\(R_ptr\[\w+\]\)",),
       atol=1e-4, rtol=1e-4, layouts={"R": "S[(32, 16):(1@laneid, 1)]"})
def exp_reg_warp_f32():
    shape = (32, 16)
    layout = TileLayout(S[shape:(1 @ laneid, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        R = T.alloc_buffer(shape, "float32", scope="local", layout=layout)
        Tx.warp.copy(R[:, :], A[:, :])
        Tx.warp.exp(R[:, :], R[:, :])
        Tx.warp.copy(B[:, :], R[:, :])

    return kernel


@entry(op="sqrt", scope="thread", storage="local", archs=BOTH,
       inputs=(Tensor((8, 8), "float32", 0.1, 4.0),), outputs=(Tensor((8, 8), "float32"),),
       reference=lambda a: (np.sqrt(a),), expect=(r"R_ptr\[\w+\] = sqrtf\(R_ptr\[\w+\]\)",), atol=1e-5, rtol=1e-5,
       layouts={"R": "S[8, 8]"})
def sqrt_reg_thread_f32():
    shape = (8, 8)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([1])
        R = T.alloc_buffer(shape, "float32", scope="local", layout=TileLayout(S[shape]))
        Tx.copy(R[:, :], A[:, :])
        Tx.sqrt(R[:, :], R[:, :])
        Tx.copy(B[:, :], R[:, :])

    return kernel


@entry(op="add", scope="cta", storage="shared", archs=BOTH,
       inputs=(Tensor((64, 64), "float16"), Tensor((64, 64), "float16")), outputs=(Tensor((64, 64), "float16"),),
       reference=lambda a, b: (a + b,), expect=(r"uint4 v_ = \*\(uint4\*\)\(A_smem_ptr", r"->x\+\(\(half2\*\)"), atol=1e-2, rtol=1e-2,
       layouts={"A_smem": "S[64, 64]", "B_smem": "S[64, 64]"})
def add_shared_cta_f16():
    shape = (64, 64)

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float16"), B: T.Buffer(shape, "float16"), C: T.Buffer(shape, "float16")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        A_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        B_smem = T.alloc_buffer(shape, "float16", scope="shared", layout=TileLayout(S[shape]))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cta.copy(B_smem[:, :], B[:, :])
        T.cuda.cta_sync()
        Tx.cta.add(A_smem[:, :], A_smem[:, :], B_smem[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(C[:, :], A_smem[:, :])

    return kernel


@entry(op="mul", scope="warpgroup", storage="local", archs=BOTH,
       inputs=(Tensor((128, 8), "float32"), Tensor((128, 8), "float32")), outputs=(Tensor((128, 8), "float32"),),
       reference=lambda a, b: (a * b,), expect=(), notes="sm_100a multiplies pairs with the packed mul.rz.ftz.f32x2",
       expect_by_arch={HOPPER: (r"RA_ptr\[\w+\] = \(RA_ptr\[\w+\] \* RB_ptr\[\w+\]\)",),
                       BLACKWELL: (r"mul\.rz\.ftz\.f32x2",)}, layouts={"R": "S[(128, 8):(1@tid_in_wg, 1)]"})
def mul_reg_wg_f32():
    shape = (128, 8)
    layout = TileLayout(S[shape:(1 @ tid_in_wg, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32"), C: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        T.thread_id([128])
        RA = T.alloc_buffer(shape, "float32", scope="local", layout=layout)
        RB = T.alloc_buffer(shape, "float32", scope="local", layout=layout)
        Tx.wg.copy(RA[:, :], A[:, :])
        Tx.wg.copy(RB[:, :], B[:, :])
        Tx.wg.mul(RA[:, :], RA[:, :], RB[:, :])
        Tx.wg.copy(C[:, :], RA[:, :])

    return kernel


@entry(op="add", scope="warp", storage="local, scalar", archs=(HOPPER,),
       inputs=(Tensor((32, 8), "float32"),), outputs=(Tensor((32, 8), "float32"),),
       reference=lambda a: (a + np.float32(0.75),), expect=(r"R_ptr\[\w+\] = \(R_ptr\[\w+\] \+ 0x1\.8p-1f",),
       layouts={"R": "S[(32, 8):(1@laneid, 1)]"})
def add_scalar_reg_warp_f32():
    shape = (32, 8)
    layout = TileLayout(S[shape:(1 @ laneid, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        R = T.alloc_buffer(shape, "float32", scope="local", layout=layout)
        Tx.warp.copy(R[:, :], A[:, :])
        Tx.warp.add(R[:, :], R[:, :], T.float32(0.75))
        Tx.warp.copy(B[:, :], R[:, :])

    return kernel
