"""The kernels of _tile_kernels.py on the 0.27 lane (Tx.<scope>.<op> through TVM 0.27's dispatch table), compiled for
each arch with axe4j.compile and turned into PTX by TVM's nvcc driver (as python/tests/test_cuda_dispatch.py does).
Each also runs (sm_80) in axe4j's CUDA interpreter on the arrays of _tile_kernels.arrays. Run in .venv's Python:
prints {"mix": {name: {arch: mix}}, "rules": {name: [variant, ...]}, "exact": {name: whether the interpreter's
numbers agree with numpy}, "refusal": the message of the call no rule lowers} as JSON."""

import tvm  # noqa: F401  (before the JVM)

import json
import sys
from pathlib import Path

from tvm.script import tirx as T
from tvm.support import nvcc
from tvm.tirx.layout import ComposeLayout, S, TileLayout
from tvm.tirx.script import tile as Tx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parents[1] / "tests"))   # kernels shared with the 0.27 lane's own tests

import axe4j  # noqa: E402

import _ptx_mix  # noqa: E402
import _tile_kernels  # noqa: E402
from _tile_kernels import KERNELS, agrees, archs, arrays  # noqa: E402


def _layout(spec):
    from tvm.tirx import layout as axes
    from tvm.tirx.layout import R

    names = (_tile_kernels.LANE, _tile_kernels.WARP, _tile_kernels.WARP_IN_WG, _tile_kernels.THREAD_IN_WG)
    return _tile_kernels.layout(spec, S, R, TileLayout, {n: getattr(axes, n) for n in names})


def _header(threads):
    T.device_entry()
    T.cta_id([1])
    T.warpgroup_id([max(1, threads // 128)])
    T.warp_id_in_wg([min(4, threads // 32)])
    T.warp_id([threads // 32])
    T.lane_id([32])
    T.thread_id_in_wg([min(threads, 128)])
    T.thread_id([threads])


def registers(op, shape, dtype, out_dtype, layout, scope, threads, via_shared=False):
    reg = _layout(layout)
    ns = _ns(scope)
    full = tuple(slice(0, d) for d in shape)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, shape, dtype)
        C = T.match_buffer(C_ptr, shape, out_dtype)
        _header(threads)
        a = T.alloc_buffer(shape, dtype, scope="local", layout=reg)
        ns.copy(a[full], A[full])
        if via_shared:
            s = T.alloc_buffer(shape, out_dtype, scope="shared", layout=TileLayout(S[shape]))
            ns.copy(s[full], a[full])
            T.cuda.cta_sync()
            Tx.cta.copy(C[full], s[full])
        else:
            c = T.alloc_buffer(shape, out_dtype, scope="local", layout=reg)
            if op == "add":
                b = T.alloc_buffer(shape, dtype, scope="local", layout=reg)
                ns.copy(b[full], B[full])
                ns.add(c[full], a[full], b[full])
            elif op == "cast":
                ns.cast(c[full], a[full])
            else:
                ns.copy(c[full], a[full])
            ns.copy(C[full], c[full])

    return kernel


def boxes():
    from tvm.tirx.layout import laneid

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (64,), "float32")
        B = T.match_buffer(B_ptr, (32,), "float32")
        _header(32)
        At = T.decl_buffer((64,), "float32", data=A.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        r = T.alloc_buffer((32,), "float32", scope="local", layout=TileLayout(S[32:1 @ laneid]))
        Tx.warp.copy(r[:], At[4:36])
        Tx.warp.copy(B[:], r[:])

    return kernel


def memory_digits():
    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (64,), "float32")
        B = T.match_buffer(B_ptr, (32,), "float32")
        _header(64)
        At = T.decl_buffer((64,), "float32", data=A.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        Tx.cta.copy(B[:], At[4:36])

    return kernel


def digits():
    from tvm.tirx.layout import laneid

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (128,), "float32")
        B = T.match_buffer(B_ptr, (6, 64), "float32")
        _header(32)
        At = T.decl_buffer((128,), "float32", data=A.data, layout=TileLayout(S[(16, 8):(1, 16)]))
        r = T.alloc_buffer((64,), "float32", scope="local", layout=TileLayout(S[(8, 4, 2):(4 @ laneid, 1 @ laneid, 1)]))
        for i in T.serial(6):
            Tx.warp.copy(r[:], At[5 * i + 3:5 * i + 67])
            Tx.warp.copy(B[i, :], r[:])

    return kernel


def reduce(op, shape, layout, out_layout, scope, threads, accum=False):
    rows, _ = shape
    src, dst = _layout(layout), _layout(out_layout)
    ns = _ns(scope)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, "float32")
        B = T.match_buffer(B_ptr, (rows,), "float32")
        _header(threads)
        r = T.alloc_buffer(shape, "float32", scope="local", layout=src)
        s = T.alloc_buffer((rows,), "float32", scope="local", layout=dst)
        ns.copy(r[:, :], A[:, :])
        if accum:
            ns.fill(s[:], T.float32(1.0))
        if op == "sum":
            ns.sum(s[:], r[:, :], [1], accum)
        elif op == "max":
            ns.max(s[:], r[:, :], [1], accum)
        else:
            ns.min(s[:], r[:, :], [1], accum)
        ns.copy(B[:], s[:])

    return kernel


def _ns(scope):
    return Tx if scope == "thread" else getattr(Tx, {"warpgroup": "wg"}.get(scope, scope))


def roundtrip(shape, dtype, scope, threads, storage=None, s_strides=None, s_swizzle=None):
    storage = storage or shape
    rows, cols = shape
    s_layout = TileLayout(S[shape] if s_strides is None else S[shape:s_strides])
    if s_swizzle is not None:
        from tvm.tirx.layout import ComposeLayout

        per_element, swizzle_len, atom_len, atom = s_swizzle
        s_layout = ComposeLayout(per_element, swizzle_len, atom_len, TileLayout(S[atom])).tile_to(shape, atom)
    ns = _ns(scope)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, storage, dtype)
        B = T.match_buffer(B_ptr, storage, dtype)
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([max(1, threads // 128)])
        T.warp_id_in_wg([min(threads, 128) // 32])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id_in_wg([min(threads, 128)])
        T.thread_id([threads])
        A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=s_layout)
        ns.copy(A_smem[0:rows, 0:cols], A[0:rows, 0:cols])
        T.cuda.cta_sync()
        ns.copy(B[0:rows, 0:cols], A_smem[0:rows, 0:cols])

    return kernel


def cp_async(shape, dtype, scope, threads, storage=None):
    storage = storage or shape
    rows, cols = shape
    ns = _ns(scope)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, storage, dtype)
        B = T.match_buffer(B_ptr, storage, dtype)
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([max(1, threads // 128)])
        T.warp_id_in_wg([min(threads, 128) // 32])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id_in_wg([min(threads, 128)])
        T.thread_id([threads])
        A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=TileLayout(S[shape]))
        ns.copy_async(A_smem[0:rows, 0:cols], A[0:rows, 0:cols])
        T.ptx["cp.async.commit_group"]()
        T.ptx["cp.async.wait_group"](0)
        T.cuda.cta_sync()
        Tx.cta.copy(B[0:rows, 0:cols], A_smem[0:rows, 0:cols])

    return kernel


def map_kernel(op, shape, dtype, out_dtype, scope, threads):
    ns = _ns(scope)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, shape, dtype)
        C = T.match_buffer(C_ptr, shape, out_dtype)
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([max(1, threads // 128)])
        T.warp_id_in_wg([min(threads, 128) // 32])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id_in_wg([min(threads, 128)])
        T.thread_id([threads])
        X = T.alloc_buffer(shape, dtype, scope="shared", layout=TileLayout(S[shape]))
        Y = T.alloc_buffer(shape, out_dtype, scope="shared", layout=TileLayout(S[shape]))
        Tx.cta.copy(X[:, :], A[:, :])
        T.cuda.cta_sync()
        if op == "add":
            ns.add(X[:, :], X[:, :], B[:, :])
            T.cuda.cta_sync()
            Tx.cta.copy(Y[:, :], X[:, :])
        elif op == "exp":
            ns.exp(Y[:, :], X[:, :])
        elif op == "cast":
            ns.cast(Y[:, :], X[:, :])
        elif op == "fill":
            ns.fill(Y[:, :], T.float32(2.5))
        T.cuda.cta_sync()
        Tx.cta.copy(C[:, :], Y[:, :])

    return kernel


def thread_local(shape, dtype):
    rows, cols = shape

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, shape, dtype)
        T.device_entry()
        T.cta_id([1])
        T.warp_id([rows // 32])
        T.lane_id([32])
        tid = T.thread_id([rows])
        r = T.alloc_buffer((1, cols), dtype, scope="local", layout=TileLayout(S[(1, cols)]))
        Tx.copy(r[0:1, :], A[tid:tid + 1, :])
        Tx.add(r[0:1, :], r[0:1, :], r[0:1, :])
        Tx.copy(B[tid:tid + 1, :], r[0:1, :])

    return kernel


M, N, TT = 64, 64, 32
GN = N // TT


def tile(meta):
    if meta:
        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (M, N), "float32")
            B = T.match_buffer(B_ptr, (M, N), "float32")
            T.device_entry()
            bid = T.cta_id([(M // TT) * GN])
            T.warp_id([4])
            T.lane_id([32])
            T.thread_id([128])
            i0 = T.meta_var((bid // GN) * TT)
            j0 = T.meta_var((bid % GN) * TT)
            t = T.alloc_buffer((TT, TT), "float32", scope="shared", layout=TileLayout(S[TT, TT]))
            Tx.cta.copy(t[:, :], A[i0:i0 + TT, j0:j0 + TT])
            T.cuda.cta_sync()
            Tx.cta.copy(B[i0:i0 + TT, j0:j0 + TT], t[:, :])
    else:
        @T.prim_func
        def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (M, N), "float32")
            B = T.match_buffer(B_ptr, (M, N), "float32")
            T.device_entry()
            bid = T.cta_id([(M // TT) * GN])
            T.warp_id([4])
            T.lane_id([32])
            T.thread_id([128])
            i0 = (bid // GN) * TT
            j0 = (bid % GN) * TT
            t = T.alloc_buffer((TT, TT), "float32", scope="shared", layout=TileLayout(S[TT, TT]))
            Tx.cta.copy(t[:, :], A[i0:i0 + TT, j0:j0 + TT])
            T.cuda.cta_sync()
            Tx.cta.copy(B[i0:i0 + TT, j0:j0 + TT], t[:, :])
    return kernel


def transpose():
    from tvm.tirx.layout import ComposeLayout

    swizzled = ComposeLayout(2, 3, 3, TileLayout(S[TT, TT]))
    swizzled_t = ComposeLayout(2, 3, 3, TileLayout(S[(TT, TT):(1, TT)]))

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (M, N), "float32")
        B = T.match_buffer(B_ptr, (N, M), "float32")
        T.device_entry()
        bid = T.cta_id([(M // TT) * GN])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        i0 = T.meta_var((bid // GN) * TT)
        j0 = T.meta_var((bid % GN) * TT)
        tile = T.alloc_buffer((TT, TT), "float32", scope="shared", layout=swizzled)
        tile_t = T.decl_buffer((TT, TT), "float32", data=tile.data, scope="shared", layout=swizzled_t)
        Tx.cta.copy(tile[:, :], A[i0:i0 + TT, j0:j0 + TT])
        T.cuda.cta_sync()
        Tx.cta.copy(B[j0:j0 + TT, i0:i0 + TT], tile_t[:, :])

    return kernel


def swizzle_bytes():
    from tvm.tirx.layout import ComposeLayout

    swizzled = ComposeLayout(2, 3, 3, TileLayout(S[TT, TT]))

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (TT, TT), "float32")
        B = T.match_buffer(B_ptr, (TT, TT), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        tile = T.alloc_buffer((TT, TT), "float32", scope="shared", layout=swizzled)
        plain = T.decl_buffer((TT, TT), "float32", data=tile.data, scope="shared", layout=TileLayout(S[TT, TT]))
        Tx.cta.copy(tile[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], plain[:, :])

    return kernel


def matrix(shape, layout, storage=None, scope="warp", threads=32, swizzle=None):
    storage = storage or shape
    reg = _layout(layout)
    tile = tuple(slice(0, d) for d in shape)
    plain = TileLayout(S[storage])
    s_layout = plain if swizzle is None else ComposeLayout(*swizzle, plain)
    ns = _ns(scope)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, "float16")
        B = T.match_buffer(B_ptr, shape, "float16")
        C = T.match_buffer(C_ptr, shape, "float16")
        _header(threads)
        As = T.alloc_buffer(storage, "float16", scope="shared", layout=s_layout)
        Bs = T.alloc_buffer(storage, "float16", scope="shared", layout=s_layout)
        R = T.alloc_buffer(shape, "float16", scope="local", layout=reg)
        ns.copy(As[tile], A[:, :])
        T.cuda.cta_sync()
        ns.copy(R[:, :], As[tile])
        ns.copy(Bs[tile], R[:, :])
        ns.copy(C[:, :], R[:, :])
        T.cuda.cta_sync()
        ns.copy(B[:, :], Bs[tile])

    return kernel


def mma(m, n, k):
    a_layout, b_layout, d_layout = (_layout(x) for x in _tile_kernels.mma_layouts(m, n, k))

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (m, k), "float16")
        B = T.match_buffer(B_ptr, (n, k), "float16")
        D = T.match_buffer(D_ptr, (m, n), "float32")
        _header(32)
        As = T.alloc_buffer((m, k), "float16", scope="shared", layout=TileLayout(S[(m, k)]))
        Bs = T.alloc_buffer((n, k), "float16", scope="shared", layout=TileLayout(S[(n, k)]))
        Ar = T.alloc_buffer((m, k), "float16", scope="local", layout=a_layout)
        Br = T.alloc_buffer((n, k), "float16", scope="local", layout=b_layout)
        Dr = T.alloc_buffer((m, n), "float32", scope="local", layout=d_layout)
        Tx.cta.copy(As[:, :], A[:, :])
        Tx.cta.copy(Bs[:, :], B[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(Ar[:, :], As[:, :])
        Tx.warp.copy(Br[:, :], Bs[:, :])
        Tx.warp.gemm(Dr[:, :], Ar[:, :], Br[:, :], Dr[:, :], False, True, 1.0, 0.0)
        Tx.warp.copy(D[:, :], Dr[:, :])

    return kernel


def wgmma(spec):
    """python/tests/test_cuda_wgmma.py's kernel (``_gemm``: A and B to shared tiles by the CTA, one wgmma into the
    accumulator fragment, C from it) with the shared layouts of ``spec``."""
    from tvm.tirx.layout import ComposeLayout

    import test_cuda_wgmma   # python/tests, on the path above

    m, n, k = spec["mnk"]
    a_layout = _tile_kernels.wgmma_shared(spec["a"], m, k, S, TileLayout, ComposeLayout)
    b_layout = _tile_kernels.wgmma_shared(spec["b"], n, k, S, TileLayout, ComposeLayout)
    return test_cuda_wgmma._gemm(m, n, k, a_layout, b_layout, width=n, accum=bool(spec.get("accum", False)))


def tcgen05(spec):
    """python/tests/test_cuda_tcgen05.py's kernel (``_gemm``: A and B to swizzled shared tiles by the CTA, TMEMPool's
    512 columns, one thread's or an elected lane's tcgen05.mma committed to an mbarrier, the accumulator read back by
    the warpgroup, C from it)."""
    import test_cuda_tcgen05   # python/tests, on the path above

    n, k = spec["nk"]
    return test_cuda_tcgen05._gemm(n, k, mode=spec["mode"], accum=bool(spec.get("accum", False)),
                                   warp=bool(spec.get("warp", False)))


def tmem(spec):
    """A -> a warpgroup's register tile -> tensor-memory columns ``column``.. (tcgen05.st) -> another register tile
    (tcgen05.ld) -> B; TMEMPool allocates the columns (warp 0) and frees them at the end."""
    width, column = spec["width"], spec["column"]
    r_layout = _layout(_tile_kernels.tmem_registers(width))

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (128, width), "float32")
        B = T.match_buffer(B_ptr, (128, width), "float32")
        _header(128)
        pool = T.SMEMPool()
        tmem = T.TMEMPool(pool, total_cols=512)
        X_tmem = tmem.alloc((128, column + width), "float32")
        pool.commit()
        tmem.commit()
        R = T.alloc_buffer((128, width), "float32", scope="local", layout=r_layout)
        Q = T.alloc_buffer((128, width), "float32", scope="local", layout=r_layout)
        Tx.wg.copy(R[:, :], A[:, :])
        Tx.wg.copy_async(X_tmem[:, column:column + width], R[:, :])
        T.ptx["tcgen05.wait::st.sync.aligned"]()
        Tx.wg.copy_async(Q[:, :], X_tmem[:, column:column + width])
        T.ptx["tcgen05.wait::ld.sync.aligned"]()
        Tx.wg.copy(B[:, :], Q[:, :])
        T.cuda.cta_sync()
        tmem.dealloc()

    return kernel


def tma(spec):
    from tvm.tirx.layout import ComposeLayout

    g_shape, s_shape, dtype = spec["g_shape"], spec["s_shape"], spec["dtype"]
    s_layout = TileLayout(S[s_shape])
    if "s_swizzle" in spec:
        per_element, swizzle_len, atom_len, atom = spec["s_swizzle"]
        s_layout = ComposeLayout(per_element, swizzle_len, atom_len, TileLayout(S[atom])).tile_to(s_shape, atom)
    nbytes = _tile_kernels.tma_bytes(spec)
    g_region = _tile_kernels.tma_region(spec)
    s_region = tuple(slice(0, d) for d in s_shape)
    store_by_tma = spec["store"] == "tma"

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, g_shape, dtype)
        B = T.match_buffer(B_ptr, g_shape, dtype)
        _header(128)
        tid = T.thread_id([128])
        arena = T.alloc_buffer([nbytes + 8], "uint8", scope="shared.dyn")
        A_smem = T.decl_buffer(s_shape, dtype, arena.data, elem_offset=0, scope="shared.dyn", layout=s_layout)
        mbar = T.decl_buffer([1], "uint64", arena.data, elem_offset=nbytes // 8, scope="shared.dyn")
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            Tx.copy_async(A_smem[s_region], A[g_region], mbar=mbar.ptr_to([0]))
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([0]), T.uint32(nbytes))
        T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
        T.cuda.cta_sync()
        if store_by_tma:
            if tid == 0:
                Tx.copy_async(B[g_region], A_smem[s_region])
                T.ptx["cp.async.bulk.commit_group"]()
                T.ptx["cp.async.bulk.wait_group"](0)
        else:
            Tx.cta.copy(B[g_region], A_smem[s_region])

    return kernel


def shared_reduce(op, shape, threads):
    rows, _ = shape

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, "float32")
        B = T.match_buffer(B_ptr, (rows,), "float32")
        _header(threads)
        a = T.alloc_buffer(shape, "float32", scope="shared", layout=TileLayout(S[shape]))
        s = T.alloc_buffer((rows,), "float32", scope="shared", layout=TileLayout(S[rows]))
        Tx.cta.copy(a[:, :], A[:, :])
        T.cuda.cta_sync()
        if op == "sum":
            Tx.cta.sum(s[:], a[:, :], [1], False)
        else:
            Tx.cta.max(s[:], a[:, :], [1], False)
        T.cuda.cta_sync()
        Tx.cta.copy(B[:], s[:])

    return kernel


def thread_reduce(shape):
    rows, cols = shape

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, "float32")
        B = T.match_buffer(B_ptr, (rows,), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([rows // 32])
        T.lane_id([32])
        tid = T.thread_id([rows])
        r = T.alloc_buffer((1, cols), "float32", scope="local", layout=TileLayout(S[(1, cols)]))
        s = T.alloc_buffer((1,), "float32", scope="local", layout=TileLayout(S[1]))
        Tx.copy(r[0:1, :], A[tid:tid + 1, :])
        Tx.fill(s[0:1], T.float32(1.0))
        Tx.sum(s[0:1], r[0:1, :], [1], True)
        Tx.copy(B[tid:tid + 1], s[0:1])

    return kernel


def build(spec):
    kind = spec["kind"]
    if kind == "roundtrip":
        return roundtrip(spec["shape"], spec["dtype"], spec["scope"], spec["threads"], spec.get("storage"),
                         spec.get("s_strides"), spec.get("s_swizzle"))
    if kind == "cp_async":
        return cp_async(spec["shape"], spec["dtype"], spec["scope"], spec["threads"], spec.get("storage"))
    if kind == "map":
        return map_kernel(spec["op"], spec["shape"], spec["dtype"], spec["out_dtype"], spec["scope"], spec["threads"])
    if kind == "thread_local":
        return thread_local(spec["shape"], spec["dtype"])
    if kind == "transpose":
        return transpose()
    if kind == "swizzle_bytes":
        return swizzle_bytes()
    if kind == "registers":
        return registers(spec["op"], spec["shape"], spec["dtype"], spec["out_dtype"], spec["layout"], spec["scope"],
                         spec["threads"], spec.get("via_shared", False))
    if kind == "memory_digits":
        return memory_digits()
    if kind == "boxes":
        return boxes()
    if kind == "digits":
        return digits()
    if kind == "mma":
        return mma(*spec["mnk"])
    if kind == "tma":
        return tma(spec)
    if kind == "wgmma":
        return wgmma(spec)
    if kind == "tcgen05":
        return tcgen05(spec)
    if kind == "tmem":
        return tmem(spec)
    if kind == "hopper_gemm":
        from axe4j.cuda.kernels.hopper_gemm import hopper_gemm

        return hopper_gemm(*spec["mnk"], *spec["tile"])
    if kind == "matrix":
        return matrix(spec["shape"], spec["layout"], spec.get("storage"), spec.get("scope", "warp"),
                      spec.get("threads", 32), spec.get("swizzle"))
    if kind == "shared_reduce":
        return shared_reduce(spec["op"], spec["shape"], spec["threads"])
    if kind == "thread_reduce":
        return thread_reduce(spec["shape"])
    if kind == "reduce":
        return reduce(spec["op"], spec["shape"], spec["layout"], spec["out_layout"], spec["scope"], spec["threads"],
                      spec.get("accum", False))
    return tile(spec["meta"])


def exchange():
    """A warp's register tile r (lane l holds element l) copied into s (lane l holds elements 2l % 32 ...): an
    exchange between lanes, which no rule lowers (python/tests/test_cuda_refusals.py)."""
    from tvm.tirx.layout import laneid

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (32,), "float32")
        B = T.match_buffer(B_ptr, (32,), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        r = T.alloc_buffer((32,), "float32", scope="local", layout=TileLayout(S[32:1 @ laneid]))
        s = T.alloc_buffer((32,), "float32", scope="local", layout=TileLayout(S[(2, 16):(1 @ laneid, 2 @ laneid)]))
        Tx.warp.copy(r[:], A[:])
        Tx.warp.copy(s[:], r[:])
        Tx.warp.copy(B[:], s[:])

    return kernel


def refusal() -> str:
    try:
        axe4j.compile(exchange(), tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm"))
    except axe4j.DispatchRefused as error:
        return str(error)
    raise AssertionError("the exchange between lanes compiled on the 0.27 lane")


def main(names):
    axe4j.install()
    axe4j.use_pip_nvcc()
    mixes, rules, exact = {}, {}, {}
    for name in names:
        kernel = build(KERNELS[name])
        for arch in archs(name):
            target = tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")
            executable = axe4j.compile(kernel, target)
            source = executable.mod.imports[0].inspect_source("cuda")
            with target:   # nvcc's -gencode comes from the current target's arch
                ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
            mixes.setdefault(name, {})[arch] = _ptx_mix.mix(ptx)
            rules[name] = [row.variant for row in executable.lowered]
            if arch == archs(name)[0]:   # the numbers in axe4j's CUDA interpreter, against numpy
                args, expected, exactly = arrays(name)
                axe4j.cuda.interp.run(executable, *args)
                exact[name] = agrees(args, expected, exactly)
    print(json.dumps({"mix": mixes, "rules": rules, "exact": exact, "refusal": refusal()}))


if __name__ == "__main__":
    main(sys.argv[1:] or sorted(KERNELS))
