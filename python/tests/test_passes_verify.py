"""VerifyLayouts: broken kernels, one per rule and some combinations, each with the exact diagnostics it must produce;
a correct kernel produces none. Every case is checked twice: through ``axe4j.transform.verify`` (the list) and
through the pass in a ``tvm.transform.Sequential`` (the ValueError that lists every violation at once)."""

import tvm  # noqa: F401  (before the JVM)

import pytest
import tvm_ffi
from tvm.script import tirx as T
from tvm.tirx.layout import Axis, R, S, TileLayout, laneid, warpid
from tvm.tirx.script import tile as Tx

import axe4j
import axe4j.transform as at

P = Axis.get("P")
F = Axis.get("F")
SM90 = {"kind": "cuda", "arch": "sm_90a"}
SM80 = {"kind": "cuda", "arch": "sm_80"}


def row(*shape):
    return TileLayout(S[tuple(shape)])


def _cuda_header(warps):
    T.device_entry()
    T.cta_id([1])
    T.warp_id([warps])
    T.lane_id([32])
    T.thread_id([warps * 32])


# ---- kernels ------------------------------------------------------------------------------------

def size_mismatch():
    @T.prim_func
    def k(A: T.Buffer((8, 4), "float32")):
        X = T.alloc_buffer((8, 4), "float32", layout=TileLayout(S[(8, 8):(8, 1)]))
        Tx.copy(X[:, :], A[:, :])
    return k


def ungroupable():
    @T.prim_func
    def k(A: T.Buffer((6, 4), "float32")):
        X = T.alloc_buffer((6, 4), "float32", layout=TileLayout(S[(4, 6):(1, 4)]))
        Tx.copy(X[:, :], A[:, :])
    return k


def view_past_memory():
    @T.prim_func
    def k(Sf: T.Buffer((40,), "float32"), B: T.Buffer((8, 8), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Sf.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        Tx.copy(B[:, :], A[:, :])
    return k


def padded_argument():
    """A (16, 30) argument with rows 32 apart: TVM passes 480 elements, the layout reads up to element 509."""
    @T.prim_func
    def k(A: T.Buffer((16, 30), "float32", layout=TileLayout(S[(16, 30):(32, 1)])), B: T.Buffer((16, 30), "float32")):
        Tx.copy(B[:, :], A[:, :])
    return k


def padded_allocation(scope="global"):
    """A (8, 32) tile with rows 40 apart: the layout reaches element 311. In global memory TVM allocates the shape's
    256 elements (refused); on-chip (shared, local) axe4j allocates the layout's span, 312 elements (fine)."""
    @T.prim_func
    def k(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8, 32), "float32")):
        X = T.alloc_buffer((8, 32), "float32", scope=scope, layout=TileLayout(S[(8, 32):(40, 1)]))
        Tx.copy(X[:, :], A[:, :])
        Tx.copy(B[:, :], X[:, :])
    return k


def padded_view(view_pitch):
    """A shared (4, 8) tile with rows 9 apart is allocated by its span, 35 elements; a view of its memory with rows
    ``view_pitch`` apart reaches element 3 * view_pitch + 7: inside the allocation for 9, past it for 10."""
    @T.prim_func
    def k(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        _cuda_header(1)
        X = T.alloc_buffer((4, 8), "float32", scope="shared", layout=TileLayout(S[(4, 8):(9, 1)]))
        V = T.decl_buffer((4, 8), "float32", data=X.data, layout=TileLayout(S[(4, 8):(view_pitch, 1)]))
        Tx.cta.copy(X[:, :], A[:, :])
        Tx.cta.copy(B[:, :], V[:, :])
    return k


def negative_address():
    @T.prim_func
    def k(Sf: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        A = T.decl_buffer((8,), "float32", data=Sf.data, layout=TileLayout(S[(8,):(-1,)]))
        Tx.copy(B[:], A[:])
    return k


def offset_past_memory():
    @T.prim_func
    def k(Sf: T.Buffer((40,), "float32"), B: T.Buffer((4, 8), "float32")):
        A = T.decl_buffer((4, 8), "float32", data=Sf.data, layout=TileLayout(S[(4, 8):(8, 1)] + 10))
        Tx.copy(B[:, :], A[:, :])
    return k


def replica_past_memory():
    @T.prim_func
    def k(Df: T.Buffer((40,), "float32"), B: T.Buffer((4, 8), "float32")):
        A = T.decl_buffer((4, 8), "float32", data=Df.data, layout=TileLayout(S[(4, 8):(8, 1)] + R[2:16]))
        Tx.copy(A[:, :], B[:, :])
    return k


def half_view_of_doubles():
    """16 float32 elements are 64 bytes; a float64 view of 16 elements needs 128."""
    @T.prim_func
    def k(Sf: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float64")):
        A = T.decl_buffer((16,), "float64", data=Sf.data)
        Tx.copy(B[:], A[:])
    return k


def region_outside():
    @T.prim_func
    def k(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        Tx.copy(B[0:8, 4:12], A[0:8, 0:8])
    return k


def symbolic_region_outside():
    """B has n + 1 rows and A n: the first copy fits whatever n is, the second reads A[0:n + 1] (one row past)."""
    @T.prim_func
    def k(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 8), "float32")
        B = T.match_buffer(b, (n + 1, 8), "float32")
        Tx.copy(B[1:n + 1, 0:8], A[0:n, 0:8])
        Tx.copy(B[0:n + 1, 0:8], A[0:n + 1, 0:8])
    return k


def add_mismatch():
    @T.prim_func
    def k(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        Tx.add(C[:, :], A[:, 0:4], B[:, :])
    return k


def copy_mismatch():
    @T.prim_func
    def k(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        Tx.exp(B[0:4, :], A[:, 0:4])
    return k


def sum_wrong_destination():
    @T.prim_func
    def k(A: T.Buffer((8, 16), "float32"), r: T.Buffer((4,), "float32")):
        Tx.sum(r[:], A[:, :], axes=-1)
    return k


def max_over_wrong_axis():
    @T.prim_func
    def k(A: T.Buffer((8, 16), "float32"), r: T.Buffer((8,), "float32")):
        Tx.max(r[:], A[:, :], axes=0)
    return k


def aliasing_destination():
    """A (4, 4) copy target whose layout S[(4,4):(1,1)] sends element (0, 1) and (1, 0) to one address."""
    @T.prim_func
    def k(A: T.Buffer((4, 4), "float32"), Sf: T.Buffer((16,), "float32")):
        B = T.decl_buffer((4, 4), "float32", data=Sf.data, layout=TileLayout(S[(4, 4):(1, 1)]))
        Tx.copy(B[:, :], A[:, :])
    return k


def stride0_destination():
    """A (4, 8) global destination with row stride 0: four rows written to one row."""
    @T.prim_func
    def k(A: T.Buffer((4, 8), "float32"), Sf: T.Buffer((8,), "float32")):
        B = T.decl_buffer((4, 8), "float32", data=Sf.data, layout=TileLayout(S[(4, 8):(0, 1)]))
        Tx.copy(B[:, :], A[:, :])
    return k


def stride0_source_is_fine():
    """The same stride-0 view read (a broadcast) is no violation."""
    @T.prim_func
    def k(Sf: T.Buffer((8,), "float32"), B: T.Buffer((4, 8), "float32")):
        A = T.decl_buffer((4, 8), "float32", data=Sf.data, layout=TileLayout(S[(4, 8):(0, 1)]))
        Tx.copy(B[:, :], A[:, :])
    return k


def _gemm(d, a, b, c, ta=False, tb=False):
    @T.prim_func
    def k(D: T.Buffer(d, "float32"), A: T.Buffer(a, "float32"), B: T.Buffer(b, "float32"), C: T.Buffer(c, "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], ta, tb, T.float32(1.0), T.float32(0.0))
    return k


def gemm_m():
    return _gemm((8, 4), (6, 16), (16, 4), (8, 4))


def gemm_k():
    return _gemm((8, 4), (8, 16), (12, 4), (8, 4))


def gemm_c():
    return _gemm((8, 4), (8, 16), (16, 4), (4, 8))


def gemm_trans_b():
    return _gemm((8, 4), (8, 16), (16, 4), (8, 4), tb=True)


def gemm_async_k():
    """gemm_async takes B as N x K (K-major) unless transB: here its K (16) is not A's (32)."""
    @T.prim_func
    def k(C: T.Buffer((64, 64), "float32"), A: T.Buffer((64, 32), "float16"), B: T.Buffer((64, 16), "float16")):
        Tx.gemm_async(C[:, :], A[:, :], B[:, :], transA=False, transB=False, accum=False)
    return k


def gemm_async_fine():
    @T.prim_func
    def k(C: T.Buffer((64, 128), "float32"), A: T.Buffer((64, 32), "float16"), B: T.Buffer((128, 32), "float16")):
        Tx.gemm_async(C[:, :], A[:, :], B[:, :], transA=False, transB=False, accum=False)
    return k


def lanes_64():
    @T.prim_func
    def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")) -> None:
        _cuda_header(4)
        r = T.alloc_buffer((64,), "float32", scope="local", layout=TileLayout(S[(64,):(1 @ laneid,)]))
        Tx.warp.copy(r[:], A[:])
        Tx.warp.copy(B[:], r[:])
    return k


def warps_8_of_4():
    @T.prim_func
    def k(A: T.Buffer((256,), "float32")) -> None:
        _cuda_header(4)
        r = T.alloc_buffer((256,), "float32", scope="local", layout=TileLayout(S[(8, 32):(1 @ warpid, 1 @ laneid)]))
        Tx.cta.copy(r[:], A[:])
    return k


def warps_not_launched():
    @T.prim_func
    def k(A: T.Buffer((128,), "float32")) -> None:
        T.device_entry()
        T.lane_id([32])
        r = T.alloc_buffer((128,), "float32", scope="local", layout=TileLayout(S[(4, 32):(1 @ warpid, 1 @ laneid)]))
        Tx.cta.copy(r[:], A[:])
    return k


def lane_replicas():
    @T.prim_func
    def k(A: T.Buffer((16,), "float32")) -> None:
        _cuda_header(1)
        r = T.alloc_buffer((16,), "float32", scope="local", layout=TileLayout(S[16:1 @ laneid] + R[4:8 @ laneid]))
        Tx.warp.copy(r[:], A[:])
    return k


def warp_offset():
    @T.prim_func
    def k(A: T.Buffer((128,), "float32")) -> None:
        _cuda_header(4)
        r = T.alloc_buffer((128,), "float32", scope="local",
                           layout=TileLayout(S[(4, 32):(1 @ warpid, 1 @ laneid)] + 2 @ warpid))
        Tx.cta.copy(r[:], A[:])
    return k


def _shared(elements, dtype="float32"):
    @T.prim_func
    def k(A: T.Buffer((elements,), dtype)) -> None:
        _cuda_header(4)
        s = T.alloc_buffer((elements,), dtype, scope="shared", layout=TileLayout(S[elements]))
        t = T.alloc_buffer((1024,), dtype, scope="shared", layout=TileLayout(S[1024]))
        Tx.cta.copy(s[:], A[:])
        Tx.cta.copy(t[:], A[0:1024])
    return k


def _trn(shape, layout, scope, dtype="float32"):
    @T.prim_func
    def k(A: T.Buffer(shape, dtype)):
        X = T.alloc_buffer(shape, dtype, scope=scope, layout=layout)
        Tx.copy(X[:, :], A[:, :])
    return k


def three_at_once():
    @T.prim_func
    def k(Sf: T.Buffer((40,), "float32"), B: T.Buffer((8, 8), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Sf.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        Y = T.alloc_buffer((8, 4), "float32", layout=TileLayout(S[(8, 8):(8, 1)]))
        Tx.exp(B[:, :], A[:, :])
        Tx.add(B[:, :], B[:, :], Y[:, 0:3])
    return k


def bounds_and_shape_in_one_call():
    @T.prim_func
    def k(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        Tx.exp(B[0:8, 6:10], A[0:8, 0:8])
    return k


def mma_fragment_swapped():
    """A warp mma on register tiles whose A layout swaps the fragment's row and column halves: an ldmatrix tile,
    not the m16n8k16 A fragment."""
    swapped = TileLayout(S[(2, 8, 2, 4, 2):(4, 4 @ laneid, 2, 1 @ laneid, 1)])
    right_a = TileLayout(S[(2, 8, 2, 4, 2):(2, 4 @ laneid, 4, 1 @ laneid, 1)])
    b_t = TileLayout(S[(8, 2, 4, 2):(4 @ laneid, 2, 1 @ laneid, 1)])
    c = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])

    @T.prim_func
    def k(A: T.Buffer((16, 16), "float16"), D: T.Buffer((16, 8), "float32")) -> None:
        _cuda_header(1)
        A_reg = T.alloc_buffer((16, 16), "float16", scope="local", layout=swapped)
        R_reg = T.alloc_buffer((16, 16), "float16", scope="local", layout=right_a)
        B_reg = T.alloc_buffer((8, 16), "float16", scope="local", layout=b_t)
        D_reg = T.alloc_buffer((16, 8), "float32", scope="local", layout=c)
        Tx.warp.gemm(D_reg[:, :], A_reg[:, :], B_reg[:, :], D_reg[:, :], False, True, T.float32(1.0),
                     T.float32(0.0))
        Tx.warp.gemm(D_reg[:, :], R_reg[:, :], B_reg[:, :], D_reg[:, :], False, True, T.float32(1.0),
                     T.float32(0.0))
    return k


def warps_and_shared():
    @T.prim_func
    def k(A: T.Buffer((65536,), "float32")) -> None:
        _cuda_header(4)
        s = T.alloc_buffer((65536,), "float32", scope="shared", layout=TileLayout(S[65536]))
        r = T.alloc_buffer((256,), "float32", scope="local", layout=TileLayout(S[(8, 32):(1 @ warpid, 1 @ laneid)]))
        Tx.cta.copy(s[:], A[:])
        Tx.cta.copy(r[:], s[0:256])
    return k


# case: (kernel, target, [(rule, text that must appear in that diagnostic)])
CASES = {
    "layout_size": (size_mismatch, None, [("layout-shape", "buffer X (8, 4) float32 global: the layout has 64 elements, "
                                                           "the shape (8, 4) has 32 (layout S[(8,8):(8,1)])")]),
    "layout_group": (ungroupable, None, [("layout-shape", "cannot be grouped by the shape (6, 4)")]),
    "view_past_memory": (view_past_memory, None, [("memory-span", "buffer A (8, 8) float32 global: the layout reaches "
                                                   "element 63 (shard 63 + replicas 0 + offset 0), past the 40 float32 "
                                                   "elements of Sf's memory")]),
    "padded_argument": (padded_argument, None, [("memory-span", "buffer A (16, 30) float32 global: the layout reaches "
                                                              "element 509 (shard 509 + replicas 0 + offset 0), past "
                                                              "the 480 elements of the argument of shape (16, 30); the "
                                                              "caller's memory must hold 510 elements: declare the "
                                                              "parameter with shape (16, 32) and use its region "
                                                              "[0:16, 0:30]")]),
    "padded_allocation": (padded_allocation, None, [("memory-span", "buffer X (8, 32) float32 global: the layout "
                                                                  "reaches element 311 (shard 311 + replicas 0 + offset "
                                                                  "0), past the 256 elements TVM allocates of shape "
                                                                  "(8, 32); it needs 312 elements: declare the buffer "
                                                                  "with shape (8, 40) and use its region [0:8, 0:32]")]),
    "view_past_padded_tile": (lambda: padded_view(10), SM90,
                              [("memory-span", "buffer V (4, 8) float32 shared: the layout reaches element 37 (shard "
                                               "37 + replicas 0 + offset 0), past the 35 float32 elements of X's "
                                               "memory")]),
    "negative_address": (negative_address, None, [("memory-span", "reaches address -7, before the start")]),
    "offset_past_memory": (offset_past_memory, None, [("offset-range", "reaches element 41 (shard 31 + replicas 0 + "
                                                       "offset 10), past the 40 float32 elements of Sf's memory")]),
    "replica_past_memory": (replica_past_memory, None, [("replica-range", "reaches element 47 (shard 31 + replicas 16"
                                                         " + offset 0), past the 40 float32 elements of Df's memory")]),
    "dtype_view": (half_view_of_doubles, None, [("memory-span", "past the 8 float64 elements of Sf's memory")]),
    "region_bounds": (region_outside, None, [("region-bounds", "operand B[0:8, 4:12] dim 1 spans [4, 12) outside the "
                                              "buffer's extent 8")]),
    "symbolic_region_bounds": (symbolic_region_outside, None, [("region-bounds", "call #1 copy(B[0:?+?, 0:8], "
                                                                "A[0:?+?, 0:8]): operand A[0:?+?, 0:8] dim 0 spans [0, "
                                                                "n + 1) outside the buffer's extent n")]),
    "add_shapes": (add_mismatch, None, [("region-shape", "call #0 add(C[0:8, 0:8], A[0:8, 0:4], B[0:8, 0:8]): operand "
                                         "A[0:8, 0:4] has extents [8, 4], the destination C[0:8, 0:8] has [8, 8]")]),
    "exp_shapes": (copy_mismatch, None, [("region-shape", "operand A[0:8, 0:4] has extents [8, 4], the destination "
                                           "B[0:4, 0:8] has [4, 8]")]),
    "sum_shapes": (sum_wrong_destination, None, [("region-shape", "destination r[0:4] has extents [4], the source "
                                                  "A[0:8, 0:16] without its reduced axes [1] has [8]")]),
    "max_axis": (max_over_wrong_axis, None, [("region-shape", "without its reduced axes [0] has [16]")]),
    "gemm_m": (gemm_m, None, [("region-shape", "gemm operands disagree: A has M = 6, D has M = 8")]),
    "gemm_k": (gemm_k, None, [("region-shape", "gemm operands disagree: A has K = 16, B has K = 12")]),
    "gemm_c": (gemm_c, None, [("region-shape", "C is 4x8, D is 8x4")]),
    "gemm_trans_b": (gemm_trans_b, None, [("region-shape", "B has N = 16, D has N = 4; A has K = 16, B has K = 4 "
                                           "(trans_a=false, trans_b=true)")]),
    "gemm_async_k": (gemm_async_k, None, [("region-shape", "gemm operands disagree: A has K = 32, B has K = 16")]),
    "lanes": (lanes_64, SM90, [("thread-extent", "buffer r (64,) float32 local: laneid reaches 63 (shard 63 + replicas"
                                                 " 0 + offset 0), but laneid < 32 in this launch")]),
    "warps": (warps_8_of_4, SM90, [("thread-extent", "warpid reaches 7 (shard 7 + replicas 0 + offset 0), but "
                                                     "warpid < 4 in this launch")]),
    "warps_unlaunched": (warps_not_launched, SM90, [("thread-extent", "places elements on warpid (up to 3), but the "
                                                                      "function launches no warpid")]),
    "lane_replicas": (lane_replicas, SM90, [("replica-range", "laneid reaches 39 (shard 15 + replicas 24 + offset 0)")]),
    "warp_offset": (warp_offset, SM90, [("offset-range", "warpid reaches 5 (shard 3 + replicas 0 + offset 2), but "
                                                         "warpid < 4")]),
    "shared_sm90": (lambda: _shared(60000), SM90, [("shared-memory", "244096 bytes of shared memory (s 240000 B, t 4096 B)"
                                                                     " > 232448 bytes per CTA on cuda sm_90a")]),
    "shared_sm80": (lambda: _shared(42000, "float32"), SM80, [("shared-memory", "172096 bytes of shared memory "
                                                                                 "(s 168000 B, t 4096 B) > 166912")]),
    "trn_partitions": (lambda: _trn((256, 64), TileLayout(S[(256, 64):(1 @ P, 1 @ F)]), "trn.sbuf"), None,
                       [("trn-partitions", "buffer X (256, 64) float32 trn.sbuf: spans 256 partitions > 128")]),
    "trn_sbuf": (lambda: _trn((128, 65536), TileLayout(S[(128, 65536):(1 @ P, 1 @ F)]), "trn.sbuf"), None,
                 [("trn-sbuf", "262144 bytes per partition > SBUF's 196608")]),
    "trn_psum": (lambda: _trn((128, 8192), TileLayout(S[(128, 8192):(1 @ P, 1 @ F)]), "trn.psum"), None,
                 [("trn-psum-banks", "16 PSUM banks (32768 bytes per partition) > 8 banks of 2048 bytes")]),
    "trn_both": (lambda: _trn((512, 8192), TileLayout(S[(512, 8192):(1 @ P, 1 @ F)]), "trn.psum"), None,
                 [("trn-partitions", "spans 512 partitions > 128"), ("trn-psum-banks", "16 PSUM banks")]),
    "three_at_once": (three_at_once, None, [("memory-span", "buffer A (8, 8)"), ("layout-shape", "buffer Y (8, 4)"),
                                            ("region-shape", "operand Y[0:8, 0:3] has extents [8, 3]")]),
    "bounds_and_shape": (bounds_and_shape_in_one_call, None,
                         [("region-bounds", "B[0:8, 6:10] dim 1 spans [6, 10)"),
                          ("region-shape", "operand A[0:8, 0:8] has extents [8, 8], the destination B[0:8, 6:10] "
                                           "has [8, 4]")]),
    "write_alias": (aliasing_destination, None, [("write-alias", "destination buffer B (4, 4) float32 global is "
                                                                "written, but its iters overlap; logical elements 1 "
                                                                "and 4 (flat) both go to")]),
    "write_stride0": (stride0_destination, None, [("write-alias", "its iter (4,0) has stride 0 (a broadcast written as "
                                                                  "a layout: only reads may use it); logical elements "
                                                                  "0 and 8")]),
    "read_stride0": (stride0_source_is_fine, None, []),
    "mma_fragment": (mma_fragment_swapped, SM90, [("mma-fragment", "call #0 gemm(D_reg[0:16, 0:8], A_reg[0:16, 0:16], "
                                                   "B_reg[0:8, 0:16], D_reg[0:16, 0:8]): operand A A_reg[0:16, 0:16]: "
                                                   "its layout is not a tile of the mma.m16n8k16 A fragment "
                                                   "S[(2,8,2,4,2):(2,4@laneid,4,1@laneid,1)] over (16, 16)")]),
    "warps_and_shared": (warps_and_shared, SM90, [("thread-extent", "warpid reaches 7"),
                                                  ("shared-memory", "262144 bytes of shared memory (s 262144 B)")]),
}


@pytest.fixture(scope="module", autouse=True)
def installed():
    axe4j.install()


def _target(t):
    return None if t is None else tvm.target.Target(t)


@pytest.mark.parametrize("name", sorted(CASES))
def test_broken_kernel_reports_every_violation(name):
    make, target, expected = CASES[name]
    found = at.verify(make(), _target(target))
    assert len(found) == len(expected), "\n".join(found)
    for (rule, text), diag in zip(expected, found):
        assert diag.startswith(f"[{rule}] k: "), diag
        assert text in diag, diag


@pytest.mark.parametrize("name", ["three_at_once", "warps_and_shared", "trn_both", "gemm_k"])
def test_the_pass_raises_all_diagnostics_at_once_in_a_sequential(name):
    make, target, expected = CASES[name]
    mod = tvm.IRModule({"k": make()})
    seq = tvm.transform.Sequential([at.VerifyLayouts(target and _target(target)), at.CanonicalizeLayouts()])
    with pytest.raises(ValueError) as error:
        seq(mod)
    message = str(error.value)
    n = len(expected)
    assert f"VerifyLayouts: {n} layout violation{'s' if n > 1 else ''} in k:" in message
    for diag in at.verify(make(), _target(target)):
        assert diag in message


def test_at_least_25_broken_kernels_and_every_rule_is_exercised():
    assert len(CASES) >= 25
    rules = {rule for _, _, expected in CASES.values() for rule, _ in expected}
    assert rules == {"layout-shape", "memory-span", "offset-range", "replica-range", "region-bounds", "region-shape",
                     "thread-extent", "shared-memory", "trn-partitions", "trn-sbuf", "trn-psum-banks", "write-alias",
                     "mma-fragment"}


def correct_cpu():
    @T.prim_func
    def k(Sf: T.Buffer((64,), "float32"), B: T.Buffer((8, 8), "float32"), r: T.Buffer((8,), "float32"),
          D: T.Buffer((8, 4), "float32"), W: T.Buffer((8, 4), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Sf.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        X = T.alloc_buffer((8, 8), "float32", layout=TileLayout(S[(8, 8):(8, 1)]))
        Tx.exp(X[:, :], A[:, :])
        Tx.add(B[:, :], X[:, :], A[:, :])
        Tx.sum(r[:], B[:, :], axes=-1)
        Tx.gemm(D[:, :], B[:, :], X[:, 0:4], D[:, :], False, False, T.float32(1.0), T.float32(0.0))
        Tx.copy(W[0:8, 0:4], D[0:8, 0:4])
    return k


def correct_cuda():
    @T.prim_func
    def k(A: T.Buffer((128, 8), "float32"), B: T.Buffer((128, 8), "float32")) -> None:
        _cuda_header(4)
        r = T.alloc_buffer((128, 8), "float32", scope="local", layout=TileLayout(S[(4, 32, 8):(1 @ warpid, 1 @ laneid, 1)]))
        s = T.alloc_buffer((128, 8), "float32", scope="shared", layout=TileLayout(S[(128, 8)]))
        Tx.cta.copy(r[:, :], A[:, :])
        Tx.cta.copy(s[:, :], r[:, :])
        Tx.cta.copy(B[:, :], s[:, :])
    return k


@pytest.mark.parametrize("make,target", [(correct_cpu, "llvm"), (correct_cpu, None), (correct_cuda, SM90),
                                         (gemm_async_fine, SM90), (lambda: padded_allocation("shared"), SM90),
                                         (lambda: padded_view(9), SM90),
                                         (lambda: padded_allocation("local"), None)])
def test_a_correct_kernel_produces_no_diagnostic(make, target):
    assert at.verify(make(), _target(target)) == []
    mod = tvm.IRModule({"k": make()})
    out = tvm.transform.Sequential([at.VerifyLayouts(_target(target))])(mod)
    assert tvm_ffi.structural_equal(out["k"], mod["k"])


def test_every_function_of_a_module_is_reported():
    """Two functions with violations: compile's layout passes name both, not only the first."""
    from axe4j.transform import run_layout_passes

    first, second = aliasing_destination(), size_mismatch()
    mod = tvm.IRModule({"first": first.with_attr("global_symbol", "first"),
                        "second": second.with_attr("global_symbol", "second")})
    with pytest.raises(ValueError) as error:
        run_layout_passes(mod)
    message = str(error.value)
    assert "VerifyLayouts: 1 layout violation in first:" in message and "[write-alias] first: " in message
    assert "VerifyLayouts: 1 layout violation in second:" in message and "[layout-shape] second: " in message


def test_what_cannot_be_decided_on_symbolic_shapes_is_listed():
    """Regions against a symbolic extent in other variables, and a layout on a symbolic buffer: not violations, but
    listed by not_checked rather than skipped in silence; a function with constant shapes lists nothing."""

    @T.prim_func
    def k(a: T.handle, b: T.handle):
        n = T.int32()
        m = T.int32()
        A = T.match_buffer(a, (n, 8), "float32")
        B = T.match_buffer(b, (m, 8), "float32", layout=TileLayout(S[(m, 8):(8, 1)]))
        Tx.copy(B[0:m, 0:8], A[0:m, 0:8])

    assert at.verify(k, "llvm") == []
    notes = at.not_checked(k, "llvm")
    assert any("operand A[0:?+?, 0:8] dim 0 spans [0, m) against the symbolic extent n: not decided" in t
               for t in notes), notes
    assert not any("operand B" in t and "not decided" in t for t in notes), notes   # [0, m) of m: decided
    assert any(t.startswith("k: buffer B (?, 8) float32") and "against the symbolic shape" in t for t in notes), notes
    decided = at.not_checked(symbolic_region_outside(), "llvm")   # every bound there is decided; layouts listed
    assert decided and not any("not decided" in t for t in decided), decided
    assert at.not_checked(correct_cpu(), "llvm") == []


def test_the_verify_pass_reports_every_function_of_a_module():
    """at.VerifyLayouts is a module pass: one ValueError names the violations of both functions."""
    mod = tvm.IRModule({"first": aliasing_destination().with_attr("global_symbol", "first"),
                        "second": size_mismatch().with_attr("global_symbol", "second")})
    with pytest.raises(ValueError) as error:
        at.VerifyLayouts()(mod)
    message = str(error.value)
    assert "VerifyLayouts: 1 layout violation in first:" in message and "[write-alias] first: " in message
    assert "VerifyLayouts: 1 layout violation in second:" in message and "[layout-shape] second: " in message
    fine = tvm.IRModule({"a": correct_cpu().with_attr("global_symbol", "a")})
    assert isinstance(at.VerifyLayouts()(fine), tvm.IRModule)   # no violation: the module goes on


def test_a_view_is_checked_against_the_allocation_it_aliases_after_allocation_by_span():
    """Once AllocateBySpan has made X a declaration over its 35-element storage, a view of X's data is still checked
    against those 35 elements: the view with X's own padded layout passes, one reaching element 37 does not."""
    for pitch, expected in ((9, []), (10, ["past the 35 float32 elements of X's memory"])):
        mod = at.AllocateBySpan()(tvm.IRModule({"k": padded_view(pitch)}))
        assert "decl_buffer((35,)" not in mod.script() and "(35,)" in mod.script(), mod.script()
        found = at.verify(mod["k"], _target(SM90))
        assert len(found) == len(expected) and all(e in d for e, d in zip(expected, found)), found
