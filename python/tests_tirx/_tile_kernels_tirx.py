"""The kernels of _tile_kernels.py on the new TIRx lane: the same layouts and scopes, written with axe4j.tirx's ops
(``Ax.copy(dst, src, scope="cta")``) and tvm_tirx's spellings (``T.function``, ``T.Tensor``, ``T.alloc_shared``, a
``LaunchConfig`` for the grid and block), and their PTX through tvm_tirx's own nvcc driver."""

from __future__ import annotations

import os
from pathlib import Path

import tvm_tirx
from tvm_tirx.backend.cuda.compiler import compile_source
from tvm_tirx.backend.cuda.launch import LaunchConfig
from tvm_tirx.script import tirx as T

from axe4j import tirx as Ax
from axe4j.cuda import interp

import _tile_kernels
from _tile_kernels import KERNELS


def _layout(spec):
    from tvm_tirx.backend.cuda import axis

    names = (_tile_kernels.LANE, _tile_kernels.WARP, _tile_kernels.WARP_IN_WG, _tile_kernels.THREAD_IN_WG)
    return _tile_kernels.layout(spec, T.S, T.R, T.TileLayout, {n: getattr(axis, n) for n in names})


def registers(op, shape, dtype, out_dtype, layout, scope, threads, via_shared=False):
    """One kernel per op (TVMScript on tvm_tirx does not branch on a Python string inside the function)."""
    reg = _layout(layout)
    ns = {"add": Ax.add, "cast": Ax.cast, "copy": Ax.copy}[op]
    full = tuple(slice(0, d) for d in shape)
    if op == "add":
        @T.function
        def kernel(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype), C: T.Tensor(shape, out_dtype)):
            with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
                a = T.alloc_local(shape, dtype, layout=reg)
                b = T.alloc_local(shape, dtype, layout=reg)
                c = T.alloc_local(shape, out_dtype, layout=reg)
                Ax.copy(a[full], A[full], scope=scope)
                Ax.copy(b[full], B[full], scope=scope)
                Ax.add(c[full], a[full], b[full], scope=scope)
                Ax.copy(C[full], c[full], scope=scope)
        return kernel
    if via_shared:
        @T.function
        def kernel(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype), C: T.Tensor(shape, out_dtype)):
            with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
                a = T.alloc_local(shape, dtype, layout=reg)
                s = T.alloc_shared(shape, out_dtype, layout=T.TileLayout(T.S[shape]))
                Ax.copy(a[full], A[full], scope=scope)
                Ax.copy(s[full], a[full], scope=scope)
                T.cuda.cta_sync()
                Ax.copy(C[full], s[full], scope="cta")
        return kernel

    @T.function
    def kernel(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype), C: T.Tensor(shape, out_dtype)):
        with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
            a = T.alloc_local(shape, dtype, layout=reg)
            c = T.alloc_local(shape, out_dtype, layout=reg)
            Ax.copy(a[full], A[full], scope=scope)
            ns(c[full], a[full], scope=scope)
            Ax.copy(C[full], c[full], scope=scope)
    return kernel


def boxes():
    reg = _layout(((32,), ((1, _tile_kernels.LANE),)))

    @T.function
    def kernel(A: T.Tensor((64,), "float32"), B: T.Tensor((32,), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=32)):
            At = T.decl_tensor(A.data, ty_args=[T.Tensor((64,), "float32", layout=T.TileLayout(T.S[(8, 8):(1, 8)]))])
            r = T.alloc_local((32,), "float32", layout=reg)
            Ax.copy(r[:], At[4:36], scope="warp")
            Ax.copy(B[:], r[:], scope="warp")

    return kernel


def memory_digits():
    @T.function
    def kernel(A: T.Tensor((64,), "float32"), B: T.Tensor((32,), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=64)):
            At = T.decl_tensor(A.data, ty_args=[T.Tensor((64,), "float32", layout=T.TileLayout(T.S[(8, 8):(1, 8)]))])
            Ax.copy(B[:], At[4:36], scope="cta")

    return kernel


def digits():
    reg = _layout(((8, 4, 2), ((4, _tile_kernels.LANE), (1, _tile_kernels.LANE), 1)))

    @T.function
    def kernel(A: T.Tensor((128,), "float32"), B: T.Tensor((6, 64), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=32)):
            At = T.decl_tensor(A.data, ty_args=[T.Tensor((128,), "float32",
                                                         layout=T.TileLayout(T.S[(16, 8):(1, 16)]))])
            r = T.alloc_local((64,), "float32", layout=reg)
            for i in range(6):
                Ax.copy(r[:], At[5 * i + 3:5 * i + 67], scope="warp")
                Ax.copy(B[i, :], r[:], scope="warp")

    return kernel


def reduce(op, shape, layout, out_layout, scope, threads, accum=False):
    rows, _ = shape
    src, dst = _layout(layout), _layout(out_layout)
    fold = {"sum": Ax.sum, "max": Ax.max, "min": Ax.min}[op]
    if accum:
        @T.function
        def kernel(A: T.Tensor(shape, "float32"), B: T.Tensor((rows,), "float32")):
            with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
                r = T.alloc_local(shape, "float32", layout=src)
                s = T.alloc_local((rows,), "float32", layout=dst)
                Ax.copy(r[:, :], A[:, :], scope=scope)
                Ax.fill(s[:], T.float32(1.0), scope=scope)
                fold(s[:], r[:, :], [1], True, scope=scope)
                Ax.copy(B[:], s[:], scope=scope)
        return kernel

    @T.function
    def kernel(A: T.Tensor(shape, "float32"), B: T.Tensor((rows,), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
            r = T.alloc_local(shape, "float32", layout=src)
            s = T.alloc_local((rows,), "float32", layout=dst)
            Ax.copy(r[:, :], A[:, :], scope=scope)
            fold(s[:], r[:, :], [1], False, scope=scope)
            Ax.copy(B[:], s[:], scope=scope)
    return kernel


def roundtrip(shape, dtype, scope, threads, storage=None, s_strides=None, s_swizzle=None):
    storage = storage or shape
    rows, cols = shape
    s_layout = T.TileLayout(T.S[shape] if s_strides is None else T.S[shape:s_strides])
    if s_swizzle is not None:
        per_element, swizzle_len, atom_len, atom = s_swizzle
        s_layout = T.ComposeLayout(per_element, swizzle_len, atom_len, T.TileLayout(T.S[atom])).tile_to(shape, atom)

    @T.function
    def kernel(A: T.Tensor(storage, dtype), B: T.Tensor(storage, dtype)):
        with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
            A_smem = T.alloc_shared(shape, dtype, layout=s_layout)
            Ax.copy(A_smem[0:rows, 0:cols], A[0:rows, 0:cols], scope=scope)
            T.cuda.cta_sync()
            Ax.copy(B[0:rows, 0:cols], A_smem[0:rows, 0:cols], scope=scope)

    return kernel


def cp_async(shape, dtype, scope, threads, storage=None):
    storage = storage or shape
    rows, cols = shape

    @T.function
    def kernel(A: T.Tensor(storage, dtype), B: T.Tensor(storage, dtype)):
        with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
            A_smem = T.alloc_shared(shape, dtype, layout=T.TileLayout(T.S[shape]))
            Ax.copy_async(A_smem[0:rows, 0:cols], A[0:rows, 0:cols], scope=scope)   # commits its group
            Ax.wait_async(0)
            T.cuda.cta_sync()
            Ax.copy(B[0:rows, 0:cols], A_smem[0:rows, 0:cols], scope="cta")

    return kernel


def map_kernel(op, shape, dtype, out_dtype, scope, threads):
    """One kernel per op (TVMScript on tvm_tirx does not branch on a Python string inside the function)."""

    if op == "add":
        @T.function
        def kernel(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype), C: T.Tensor(shape, out_dtype)):
            with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
                X = T.alloc_shared(shape, dtype, layout=T.TileLayout(T.S[shape]))
                Y = T.alloc_shared(shape, out_dtype, layout=T.TileLayout(T.S[shape]))
                Ax.copy(X[:, :], A[:, :], scope="cta")
                T.cuda.cta_sync()
                Ax.add(X[:, :], X[:, :], B[:, :], scope=scope)
                T.cuda.cta_sync()
                Ax.copy(Y[:, :], X[:, :], scope="cta")
                T.cuda.cta_sync()
                Ax.copy(C[:, :], Y[:, :], scope="cta")
        return kernel
    if op == "fill":
        @T.function
        def kernel(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype), C: T.Tensor(shape, out_dtype)):
            with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
                X = T.alloc_shared(shape, dtype, layout=T.TileLayout(T.S[shape]))
                Y = T.alloc_shared(shape, out_dtype, layout=T.TileLayout(T.S[shape]))
                Ax.copy(X[:, :], A[:, :], scope="cta")
                T.cuda.cta_sync()
                Ax.fill(Y[:, :], T.float32(2.5), scope=scope)
                T.cuda.cta_sync()
                Ax.copy(C[:, :], Y[:, :], scope="cta")
        return kernel
    unary = {"exp": Ax.exp, "cast": Ax.cast}[op]

    @T.function
    def kernel(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype), C: T.Tensor(shape, out_dtype)):
        with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
            X = T.alloc_shared(shape, dtype, layout=T.TileLayout(T.S[shape]))
            Y = T.alloc_shared(shape, out_dtype, layout=T.TileLayout(T.S[shape]))
            Ax.copy(X[:, :], A[:, :], scope="cta")
            T.cuda.cta_sync()
            unary(Y[:, :], X[:, :], scope=scope)
            T.cuda.cta_sync()
            Ax.copy(C[:, :], Y[:, :], scope="cta")

    return kernel


def thread_local(shape, dtype):
    rows, cols = shape

    @T.function
    def kernel(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype)):
        with T.device_entry(launch=LaunchConfig(grid=1, block=rows)):
            tid = T.cuda.thread_idx("x")
            r = T.alloc_local((1, cols), dtype, layout=T.TileLayout(T.S[(1, cols)]))
            Ax.copy(r[0:1, :], A[tid:tid + 1, :])
            Ax.add(r[0:1, :], r[0:1, :], r[0:1, :])
            Ax.copy(B[tid:tid + 1, :], r[0:1, :])

    return kernel


M, N, TT = 64, 64, 32
GN = N // TT


def tile(meta):
    if meta:
        @T.function
        def kernel(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            with T.device_entry(launch=LaunchConfig(grid=(M // TT) * GN, block=128)):
                bid = T.cuda.block_idx("x")
                # tvm_tirx's T.meta_var binds a let variable, which the rules see as any integer: the offsets are
                # written out, so that the rules see the expressions (what T.meta_var gives on 0.27)
                t = T.alloc_shared((TT, TT), "float32", layout=T.TileLayout(T.S[TT, TT]))
                Ax.copy(t[:, :], A[bid // GN * TT:bid // GN * TT + TT, bid % GN * TT:bid % GN * TT + TT], scope="cta")
                T.cuda.cta_sync()
                Ax.copy(B[bid // GN * TT:bid // GN * TT + TT, bid % GN * TT:bid % GN * TT + TT], t[:, :], scope="cta")
    else:
        @T.function
        def kernel(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            with T.device_entry(launch=LaunchConfig(grid=(M // TT) * GN, block=128)):
                bid = T.cuda.block_idx("x")
                i0 = (bid // GN) * TT
                j0 = (bid % GN) * TT
                t = T.alloc_shared((TT, TT), "float32", layout=T.TileLayout(T.S[TT, TT]))
                Ax.copy(t[:, :], A[i0:i0 + TT, j0:j0 + TT], scope="cta")
                T.cuda.cta_sync()
                Ax.copy(B[i0:i0 + TT, j0:j0 + TT], t[:, :], scope="cta")
    return kernel


def transpose():
    swizzled = T.ComposeLayout(2, 3, 3, T.TileLayout(T.S[TT, TT]))
    swizzled_t = T.ComposeLayout(2, 3, 3, T.TileLayout(T.S[(TT, TT):(1, TT)]))

    @T.function
    def kernel(A: T.Tensor((M, N), "float32"), B: T.Tensor((N, M), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=(M // TT) * GN, block=128)):
            bid = T.cuda.block_idx("x")
            tile = T.alloc_shared((TT, TT), "float32", layout=swizzled)
            tile_t = T.decl_tensor(tile.data, ty_args=[T.Tensor((TT, TT), "float32", scope="shared",
                                                                layout=swizzled_t)])
            Ax.copy(tile[:, :], A[bid // GN * TT:bid // GN * TT + TT, bid % GN * TT:bid % GN * TT + TT], scope="cta")
            T.cuda.cta_sync()
            Ax.copy(B[bid % GN * TT:bid % GN * TT + TT, bid // GN * TT:bid // GN * TT + TT], tile_t[:, :], scope="cta")

    return kernel


def swizzle_bytes():
    swizzled = T.ComposeLayout(2, 3, 3, T.TileLayout(T.S[TT, TT]))

    @T.function
    def kernel(A: T.Tensor((TT, TT), "float32"), B: T.Tensor((TT, TT), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=128)):
            tile = T.alloc_shared((TT, TT), "float32", layout=swizzled)
            plain = T.decl_tensor(tile.data, ty_args=[T.Tensor((TT, TT), "float32", scope="shared",
                                                               layout=T.TileLayout(T.S[TT, TT]))])
            Ax.copy(tile[:, :], A[:, :], scope="cta")
            T.cuda.cta_sync()
            Ax.copy(B[:, :], plain[:, :], scope="cta")

    return kernel


def matrix(shape, layout, storage=None, scope="warp", threads=32, swizzle=None):
    storage = storage or shape
    reg = _layout(layout)
    tile = tuple(slice(0, d) for d in shape)
    plain = T.TileLayout(T.S[storage])
    s_layout = plain if swizzle is None else T.ComposeLayout(*swizzle, plain)

    @T.function
    def kernel(A: T.Tensor(shape, "float16"), B: T.Tensor(shape, "float16"), C: T.Tensor(shape, "float16")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
            As = T.alloc_shared(storage, "float16", layout=s_layout)
            Bs = T.alloc_shared(storage, "float16", layout=s_layout)
            R = T.alloc_local(shape, "float16", layout=reg)
            Ax.copy(As[tile], A[:, :], scope=scope)
            T.cuda.cta_sync()
            Ax.copy(R[:, :], As[tile], scope=scope)
            Ax.copy(Bs[tile], R[:, :], scope=scope)
            Ax.copy(C[:, :], R[:, :], scope=scope)
            T.cuda.cta_sync()
            Ax.copy(B[:, :], Bs[tile], scope=scope)

    return kernel


def mma(m, n, k):
    a_layout, b_layout, d_layout = (_layout(x) for x in _tile_kernels.mma_layouts(m, n, k))

    @T.function
    def kernel(A: T.Tensor((m, k), "float16"), B: T.Tensor((n, k), "float16"), D: T.Tensor((m, n), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=32)):
            As = T.alloc_shared((m, k), "float16", layout=T.TileLayout(T.S[m, k]))
            Bs = T.alloc_shared((n, k), "float16", layout=T.TileLayout(T.S[n, k]))
            Ar = T.alloc_local((m, k), "float16", layout=a_layout)
            Br = T.alloc_local((n, k), "float16", layout=b_layout)
            Dr = T.alloc_local((m, n), "float32", layout=d_layout)
            Ax.copy(As[:, :], A[:, :], scope="cta")
            Ax.copy(Bs[:, :], B[:, :], scope="cta")
            T.cuda.cta_sync()
            Ax.copy(Ar[:, :], As[:, :], scope="warp")
            Ax.copy(Br[:, :], Bs[:, :], scope="warp")
            Ax.gemm(Dr[:, :], Ar[:, :], Br[:, :], Dr[:, :], False, True, 1.0, 0.0, scope="warp")
            Ax.copy(D[:, :], Dr[:, :], scope="warp")

    return kernel


def wgmma(spec):
    """A and B -> K-major shared tiles by the CTA; one warpgroup's ``Ax.gemm_async`` (wgmma) into the accumulator
    fragment (onto 1.0 with ``accum``) -> C."""
    m, n, k = spec["mnk"]
    a_layout = _tile_kernels.wgmma_shared(spec["a"], m, k, T.S, T.TileLayout, T.ComposeLayout)
    b_layout = _tile_kernels.wgmma_shared(spec["b"], n, k, T.S, T.TileLayout, T.ComposeLayout)
    c_layout = _layout(_tile_kernels.wgmma_accumulator(m, n))
    if spec.get("accum", False):
        @T.function
        def kernel(A: T.Tensor((m, k), "float16"), B: T.Tensor((n, k), "float16"), C: T.Tensor((m, n), "float32")):
            with T.device_entry(launch=LaunchConfig(grid=1, block=128)):
                A_smem = T.alloc_shared((m, k), "float16", layout=a_layout, align=1024)
                B_smem = T.alloc_shared((n, k), "float16", layout=b_layout, align=1024)
                C_reg = T.alloc_local((m, n), "float32", layout=c_layout)
                Ax.copy(A_smem[:, :], A[:, :], scope="cta")
                Ax.copy(B_smem[:, :], B[:, :], scope="cta")
                T.cuda.cta_sync()
                Ax.fill(C_reg[:, :], T.float32(1.0), scope="warpgroup")
                Ax.gemm_async(C_reg[:, :], A_smem[:, :], B_smem[:, :], False, False, True, scope="warpgroup")
                Ax.copy(C[:, :], C_reg[:, :], scope="warpgroup")
        return kernel

    @T.function
    def kernel(A: T.Tensor((m, k), "float16"), B: T.Tensor((n, k), "float16"), C: T.Tensor((m, n), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=128)):
            A_smem = T.alloc_shared((m, k), "float16", layout=a_layout, align=1024)
            B_smem = T.alloc_shared((n, k), "float16", layout=b_layout, align=1024)
            C_reg = T.alloc_local((m, n), "float32", layout=c_layout)
            Ax.copy(A_smem[:, :], A[:, :], scope="cta")
            Ax.copy(B_smem[:, :], B[:, :], scope="cta")
            T.cuda.cta_sync()
            Ax.gemm_async(C_reg[:, :], A_smem[:, :], B_smem[:, :], False, False, False, scope="warpgroup")
            Ax.copy(C[:, :], C_reg[:, :], scope="warpgroup")
    return kernel


def hopper_gemm(spec):
    """The packaged kernel ``axe4j.tirx.kernels.hopper_gemm`` (the twin of ``axe4j.cuda.kernels.hopper_gemm``) at the
    spec's shape and tile: its ring and mbarriers in dynamic shared memory, as on 0.27."""
    from axe4j.tirx.kernels.hopper_gemm import hopper_gemm as packaged

    return packaged(*spec["mnk"], *spec["tile"])


def _tmem_layout(width):
    """Row r of a 128 x ``width`` tensor-memory tile on lane r, column c on column c (the M = 128 data path)."""
    from tvm_tirx.backend.cuda.axis import TCol, TLane

    return T.TileLayout(T.S[(128, width):(1 @ TLane, 1 @ TCol)])


@T.inline
def tcgen05_setup(A, B, a_layout, b_layout, n, k, tid):
    """The tcgen05 kernels' start: A and B's shared tiles, an mbarrier and the word tcgen05.alloc writes; warp 0
    allocates 512 tensor-memory columns, thread 0 initialises the mbarrier, the CTA stages A and B, fences them for
    the async proxy and syncs. Returns (A_smem, B_smem, mbar, slot)."""
    A_smem = T.alloc_shared((128, k), "float16", layout=a_layout, align=1024)
    B_smem = T.alloc_shared((n, k), "float16", layout=b_layout, align=1024)
    mbar = T.alloc_shared((1,), "uint64", layout=T.TileLayout(T.S[1]), align=8)
    slot = T.alloc_shared((1,), "uint32", layout=T.TileLayout(T.S[1]))
    if tid // 32 == 0:
        T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](slot.ptr_to([0]), T.uint32(512))
        T.ptx["tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned"]()
    if tid == 0:
        T.ptx["mbarrier.init.shared.b64"](mbar.ptr_to([0]), T.uint32(1))
    Ax.copy(A_smem[:, :], A[:, :], scope="cta")
    Ax.copy(B_smem[:, :], B[:, :], scope="cta")
    T.ptx["fence.proxy.async.shared::cta"]()
    T.cuda.cta_sync()
    return A_smem, B_smem, mbar, slot


@T.inline
def tcgen05_read_back(C, C_reg, C_tmem, taddr, tid):
    """The tcgen05 kernels' end: the warpgroup loads the accumulator (tcgen05.ld, its wait) and stores C; after a CTA
    sync warp 0 frees the 512 tensor-memory columns."""
    Ax.copy_async(C_reg[:, :], C_tmem[:, :], scope="warpgroup")
    T.ptx["tcgen05.wait::ld.sync.aligned"]()
    Ax.copy(C[:, :], C_reg[:, :], scope="warpgroup")
    T.cuda.cta_sync()
    if tid // 32 == 0:
        T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](taddr, T.uint32(512))


def tcgen05(spec, wait=True):
    """python/tests/test_cuda_tcgen05.py's kernel on this lane: warp 0 allocates 512 tensor-memory columns (the word
    tcgen05.alloc writes is read after the CTA sync, with the tile declared there: ``Ax.tmem_tensor``); thread 0
    initialises the mbarrier; the CTA stages A and B; with ``accum`` the warpgroup stores 1.0 into the accumulator
    (tcgen05.st, its wait, a CTA sync before the MMA reads it); thread 0 (``warp``: warp 0, one elected lane) issues
    ``Ax.gemm_async`` and thread 0 commits it to the mbarrier, which every thread waits on; the warpgroup reads the
    accumulator back (tcgen05.ld, its wait) and stores C; warp 0 frees the columns. ``wait`` False leaves out the
    mbarrier wait (a race the interpreter reports; the plain variant only)."""
    from tvm_tirx.backend.cuda.axis import tid_in_wg

    n, k = spec["nk"]
    swizzled = ("swizzled", spec["mode"])
    a_layout = _tile_kernels.wgmma_shared(swizzled, 128, k, T.S, T.TileLayout, T.ComposeLayout)
    b_layout = _tile_kernels.wgmma_shared(swizzled, n, k, T.S, T.TileLayout, T.ComposeLayout)
    c_layout, r_layout = _tmem_layout(n), T.TileLayout(T.S[(128, n):(1 @ tid_in_wg, 1)])
    accum, warp = bool(spec.get("accum", False)), bool(spec.get("warp", False))
    if accum != warp:   # one kernel per variant (TVMScript on tvm_tirx keeps a Python if as a branch)
        raise ValueError(f"tcgen05 kernels here: accum and warp together or neither, not {accum}, {warp}")
    if accum:
        @T.function
        def kernel(A: T.Tensor((128, k), "float16"), B: T.Tensor((n, k), "float16"),
                   C: T.Tensor((128, n), "float32")):
            with T.device_entry(launch=LaunchConfig(grid=1, block=128)):
                tid = T.cuda.thread_idx("x")
                A_smem, B_smem, mbar, slot = tcgen05_setup(A, B, a_layout, b_layout, n, k, tid)
                C_reg = T.alloc_local((128, n), "float32", layout=r_layout)
                taddr = T.meta_var(slot[0])
                C_tmem = Ax.tmem_tensor(taddr, (128, n), "float32", c_layout)
                Ax.fill(C_reg[:, :], T.float32(1.0), scope="warpgroup")
                Ax.copy_async(C_tmem[:, :], C_reg[:, :], scope="warpgroup")
                T.ptx["tcgen05.wait::st.sync.aligned"]()
                T.cuda.cta_sync()   # every warp's lanes stored before the MMA reads the accumulator
                if tid // 32 == 0:
                    Ax.gemm_async(C_tmem[:, :], A_smem[:, :], B_smem[:, :], False, False, True, scope="warp")
                    if tid == 0:
                        T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](
                            mbar.ptr_to([0]))
                T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
                tcgen05_read_back(C, C_reg, C_tmem, taddr, tid)
        return kernel

    @T.function
    def kernel(A: T.Tensor((128, k), "float16"), B: T.Tensor((n, k), "float16"), C: T.Tensor((128, n), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=128)):
            tid = T.cuda.thread_idx("x")
            A_smem, B_smem, mbar, slot = tcgen05_setup(A, B, a_layout, b_layout, n, k, tid)
            C_reg = T.alloc_local((128, n), "float32", layout=r_layout)
            taddr = T.meta_var(slot[0])
            C_tmem = Ax.tmem_tensor(taddr, (128, n), "float32", c_layout)
            if tid == 0:
                Ax.gemm_async(C_tmem[:, :], A_smem[:, :], B_smem[:, :], False, False, False, scope="thread")
                T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](mbar.ptr_to([0]))
            if wait:
                T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
            tcgen05_read_back(C, C_reg, C_tmem, taddr, tid)
    return kernel


def tmem(spec):
    """A -> a warpgroup's register tile -> tensor-memory columns ``column``.. (``Ax.copy_async``: tcgen05.st, then
    its wait) -> another register tile (tcgen05.ld, its wait) -> B; warp 0 allocates 512 columns first (read after
    a CTA sync) and frees them at the end."""
    width, column = spec["width"], spec["column"]
    r_layout = _layout(_tile_kernels.tmem_registers(width))
    x_layout = _tmem_layout(column + width)

    @T.function
    def kernel(A: T.Tensor((128, width), "float32"), B: T.Tensor((128, width), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=128)):
            tid = T.cuda.thread_idx("x")
            slot = T.alloc_shared((1,), "uint32", layout=T.TileLayout(T.S[1]))
            if tid // 32 == 0:
                T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](slot.ptr_to([0]), T.uint32(512))
                T.ptx["tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned"]()
            R = T.alloc_local((128, width), "float32", layout=r_layout)
            Q = T.alloc_local((128, width), "float32", layout=r_layout)
            Ax.copy(R[:, :], A[:, :], scope="warpgroup")
            T.cuda.cta_sync()
            taddr = T.meta_var(slot[0])
            X_tmem = Ax.tmem_tensor(taddr, (128, column + width), "float32", x_layout)
            Ax.copy_async(X_tmem[:, column:column + width], R[:, :], scope="warpgroup")
            T.ptx["tcgen05.wait::st.sync.aligned"]()
            Ax.copy_async(Q[:, :], X_tmem[:, column:column + width], scope="warpgroup")
            T.ptx["tcgen05.wait::ld.sync.aligned"]()
            Ax.copy(B[:, :], Q[:, :], scope="warpgroup")
            T.cuda.cta_sync()
            if tid // 32 == 0:
                T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](taddr, T.uint32(512))
    return kernel


def tma(spec):
    """Thread 0 initialises the mbarrier, loads the region by TMA (``Ax.copy_async(..., mbar)``) and arms the
    mbarrier with the bytes; all wait on parity 0; the tile goes back by a TMA store or a CTA copy. The shared tile is
    1024-byte aligned (the 128-byte swizzle's period)."""
    g_shape, s_shape, dtype = spec["g_shape"], spec["s_shape"], spec["dtype"]
    s_layout = T.TileLayout(T.S[s_shape])
    if "s_swizzle" in spec:
        per_element, swizzle_len, atom_len, atom = spec["s_swizzle"]
        s_layout = T.ComposeLayout(per_element, swizzle_len, atom_len, T.TileLayout(T.S[atom])).tile_to(s_shape, atom)
    nbytes = _tile_kernels.tma_bytes(spec)
    g_region = _tile_kernels.tma_region(spec)
    s_region = tuple(slice(0, d) for d in s_shape)
    if spec["store"] == "tma":
        @T.function
        def kernel(A: T.Tensor(g_shape, dtype), B: T.Tensor(g_shape, dtype)):
            with T.device_entry(launch=LaunchConfig(grid=1, block=128)):
                tid = T.cuda.thread_idx("x")
                A_smem = T.alloc_shared(s_shape, dtype, layout=s_layout, align=1024)
                mbar = T.alloc_shared((1,), "uint64", layout=T.TileLayout(T.S[1]), align=8)
                if tid == 0:
                    T.ptx["mbarrier.init.shared.b64"](mbar.ptr_to([0]), T.uint32(1))
                T.ptx["fence.proxy.async.shared::cta"]()
                T.cuda.cta_sync()
                if tid == 0:
                    Ax.copy_async(A_smem[s_region], A[g_region], mbar.ptr_to([0]))
                    T.ptx["mbarrier.arrive.expect_tx.shared.b64"](mbar.ptr_to([0]), T.uint32(nbytes))
                T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
                T.cuda.cta_sync()
                if tid == 0:
                    Ax.copy_async(B[g_region], A_smem[s_region])
                    T.ptx["cp.async.bulk.commit_group"]()
                    T.ptx["cp.async.bulk.wait_group"](0)
        return kernel

    @T.function
    def kernel(A: T.Tensor(g_shape, dtype), B: T.Tensor(g_shape, dtype)):
        with T.device_entry(launch=LaunchConfig(grid=1, block=128)):
            tid = T.cuda.thread_idx("x")
            A_smem = T.alloc_shared(s_shape, dtype, layout=s_layout, align=1024)
            mbar = T.alloc_shared((1,), "uint64", layout=T.TileLayout(T.S[1]), align=8)
            if tid == 0:
                T.ptx["mbarrier.init.shared.b64"](mbar.ptr_to([0]), T.uint32(1))
            T.ptx["fence.proxy.async.shared::cta"]()
            T.cuda.cta_sync()
            if tid == 0:
                Ax.copy_async(A_smem[s_region], A[g_region], mbar.ptr_to([0]))
                T.ptx["mbarrier.arrive.expect_tx.shared.b64"](mbar.ptr_to([0]), T.uint32(nbytes))
            T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
            T.cuda.cta_sync()
            Ax.copy(B[g_region], A_smem[s_region], scope="cta")
    return kernel


def shared_reduce(op, shape, threads):
    rows, _ = shape
    fold = {"sum": Ax.sum, "max": Ax.max, "min": Ax.min}[op]

    @T.function
    def kernel(A: T.Tensor(shape, "float32"), B: T.Tensor((rows,), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=threads)):
            a = T.alloc_shared(shape, "float32", layout=T.TileLayout(T.S[shape]))
            s = T.alloc_shared((rows,), "float32", layout=T.TileLayout(T.S[rows]))
            Ax.copy(a[:, :], A[:, :], scope="cta")
            T.cuda.cta_sync()
            fold(s[:], a[:, :], [1], False, scope="cta")
            T.cuda.cta_sync()
            Ax.copy(B[:], s[:], scope="cta")

    return kernel


def thread_reduce(shape):
    rows, cols = shape

    @T.function
    def kernel(A: T.Tensor(shape, "float32"), B: T.Tensor((rows,), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=rows)):
            tid = T.cuda.thread_idx("x")
            r = T.alloc_local((1, cols), "float32", layout=T.TileLayout(T.S[(1, cols)]))
            s = T.alloc_local((1,), "float32", layout=T.TileLayout(T.S[1]))
            Ax.copy(r[0:1, :], A[tid:tid + 1, :])
            Ax.fill(s[0:1], T.float32(1.0))
            Ax.sum(s[0:1], r[0:1, :], [1], True)
            Ax.copy(B[tid:tid + 1], s[0:1])

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
        return hopper_gemm(spec)
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


def target(arch):
    return tvm_tirx.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def compiled(name, arch):
    """(``axe4j.cuda.interp.compile_tirx``'s result: the executable with its lowered modules; CUDA source; the rules
    that lowered its calls) of kernel ``name`` for ``arch``."""
    before = len(Ax.LOWERED)
    result = interp.compile_tirx(build(KERNELS[name]), target(arch))
    source = result.executable.mod.imports[0].inspect_source("cuda")
    return result, source, [row.variant for row in Ax.LOWERED[before:]]


def ptx(source, arch, nvcc):
    """PTX of ``source`` by tvm_tirx's nvcc driver with the nvcc at ``nvcc`` (the nvidia-cuda-nvcc wheel's, which
    the 0.27 lane's venv installs) first on PATH."""
    folder = str(Path(nvcc).parent)
    os.environ["PATH"] = os.pathsep.join([folder, *(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                                   if p and p != folder)])
    result = compile_source(source, {"cuda": {"compiler": "nvcc", "target_format": "ptx"}}, target=target(arch))
    return result.binary.decode()
