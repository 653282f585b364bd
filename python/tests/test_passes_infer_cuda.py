"""InferLayouts on CUDA: register fragments for mma.sync and the wgmma accumulator, swizzled K-major shared tiles
for TMA and wgmma. Kernels whose register and shared tiles have no layout compile (pip nvcc, no GPU) to the same
CUDA source as the hand-written kernels, with the Java rules ``axe4j-cuda-mma``, ``axe4j-cuda-tma`` and
``axe4j-cuda-wgmma`` chosen; user-given layouts that the rule cannot take are reported."""

import tvm  # noqa: F401  (before the JVM)

import re

import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout, laneid, wid_in_wg
from tvm.tirx.script import tile as Tx

import axe4j
import axe4j.transform as at


def _target(arch):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


# ---- hand-written layouts (as python/tests/test_cuda_mma.py and test_cuda_wgmma.py write them) ----------------

def _mma_a(m, k):
    bm, bk = m // 16, k // 16
    return TileLayout(S[(bm, 2, 8, bk, 2, 4, 2):(8 * bk, 2, 4 @ laneid, 8, 4, 1 @ laneid, 1)])


def _mma_bt(n, k):
    bn, bk = n // 8, k // 16
    return TileLayout(S[(bn, 8, bk, 2, 4, 2):(4 * bk, 4 @ laneid, 4, 2, 1 @ laneid, 1)])


def _mma_b(k, n):
    """mma B fragment of B stored K x N (16x8 per block) over (k/16, n/8) blocks, row-major (4 registers each)."""
    bk, bn = k // 16, n // 8
    return TileLayout(S[(bk, 2, 4, 2, bn, 8):(4 * bn, 2, 1 @ laneid, 1, 4, 4 @ laneid)])


def _mma_c(m, n):
    bm, bn = m // 16, n // 8
    return TileLayout(S[(bm, 2, 8, bn, 4, 2):(4 * bn, 2, 4 @ laneid, 4, 1 @ laneid, 1)])


def _wgmma_acc(m, n):
    width = min(n, 256)
    bm, bn, per = m // 64, n // width, width // 2
    return TileLayout(S[(bm, 4, 2, 8, bn, width // 8, 4, 2):
                        (per * bn, 1 @ wid_in_wg, 2, 4 @ laneid, per, 4, 1 @ laneid, 1)])


def _swizzled(rows, k, mode):
    w = 8 << mode
    if k > w:
        return ComposeLayout(3, mode, 3, TileLayout(S[(rows, k // w, w):(w, rows * w, 1)]))
    return ComposeLayout(3, mode, 3, TileLayout(S[(rows, k):(k, 1)]))


# ---- kernels ------------------------------------------------------------------------------------------------

def mma_gemm(m, n, k, dtype="float16", a=None, b=None, d=None):
    """A (M x K) and B (N x K) staged in shared row-major tiles, ldmatrix into registers, warp gemm (trans_b)."""

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (m, k), dtype)
        B = T.match_buffer(B_ptr, (n, k), dtype)
        D = T.match_buffer(D_ptr, (m, n), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        A_smem = T.alloc_buffer((m, k), dtype, scope="shared", layout=TileLayout(S[(m, k)]))
        B_smem = T.alloc_buffer((n, k), dtype, scope="shared", layout=TileLayout(S[(n, k)]))
        A_reg = T.alloc_buffer((m, k), dtype, scope="local", layout=a)
        B_reg = T.alloc_buffer((n, k), dtype, scope="local", layout=b)
        D_reg = T.alloc_buffer((m, n), "float32", scope="local", layout=d)
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cta.copy(B_smem[:, :], B[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(A_reg[:, :], A_smem[:, :])
        Tx.warp.copy(B_reg[:, :], B_smem[:, :])
        Tx.warp.gemm(D_reg[:, :], A_reg[:, :], B_reg[:, :], D_reg[:, :], False, True, 1.0, 0.0)
        Tx.warp.copy(D[:, :], D_reg[:, :])

    return kernel


def tma_wgmma_gemm(m, n, k, dtype="float16", a=None, b=None, c=None):
    """A (M x K) and B (N x K) loaded by TMA into shared tiles (one mbarrier), wgmma into a register accumulator."""
    nbytes = (m + n) * k * 2

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (m, k), dtype)
        B = T.match_buffer(B_ptr, (n, k), dtype)
        C = T.match_buffer(C_ptr, (m, n), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        tid = T.thread_id([128])
        A_smem = T.alloc_buffer((m, k), dtype, scope="shared", layout=a, align=1024)
        B_smem = T.alloc_buffer((n, k), dtype, scope="shared", layout=b, align=1024)
        mbar = T.alloc_buffer((1,), "uint64", scope="shared", layout=TileLayout(S[1]))
        C_reg = T.alloc_buffer((m, n), "float32", scope="local", layout=c)
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            Tx.copy_async(A_smem[:, :], A[:, :], mbar=mbar.ptr_to([0]))
            Tx.copy_async(B_smem[:, :], B[:, :], mbar=mbar.ptr_to([0]))
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([0]), T.uint32(nbytes))
        T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
        Tx.wg.gemm_async(C_reg[:, :], A_smem[:, :], B_smem[:, :], transA=False, transB=False, accum=False)
        Tx.wg.copy(C[:, :], C_reg[:, :])

    return kernel


def tma_mma_gemm(m, n, k, trans_b=True, dtype="float16", sa=None, sb=None, a=None, b=None, d=None):
    """TMA loads of A (M x K) and B (N x K with trans_b, else K x N) into shared tiles, ldmatrix into registers,
    warp gemm (mma.sync) on sm_90a: every staging buffer without a layout."""
    nbytes = (m + n) * k * 2
    bshape = (n, k) if trans_b else (k, n)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (m, k), dtype)
        B = T.match_buffer(B_ptr, bshape, dtype)
        D = T.match_buffer(D_ptr, (m, n), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        tid = T.thread_id([32])
        A_smem = T.alloc_buffer((m, k), dtype, scope="shared", layout=sa, align=1024)
        B_smem = T.alloc_buffer(bshape, dtype, scope="shared", layout=sb, align=1024)
        mbar = T.alloc_buffer((1,), "uint64", scope="shared", layout=TileLayout(S[1]))
        A_reg = T.alloc_buffer((m, k), dtype, scope="local", layout=a)
        B_reg = T.alloc_buffer(bshape, dtype, scope="local", layout=b)
        D_reg = T.alloc_buffer((m, n), "float32", scope="local", layout=d)
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            Tx.copy_async(A_smem[:, :], A[:, :], mbar=mbar.ptr_to([0]))
            Tx.copy_async(B_smem[:, :], B[:, :], mbar=mbar.ptr_to([0]))
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([0]), T.uint32(nbytes))
        T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
        Tx.warp.copy(A_reg[:, :], A_smem[:, :])
        Tx.warp.copy(B_reg[:, :], B_smem[:, :])
        Tx.warp.gemm(D_reg[:, :], A_reg[:, :], B_reg[:, :], D_reg[:, :], False, trans_b, 1.0, 0.0)
        Tx.warp.copy(D[:, :], D_reg[:, :])

    return kernel


def staged_tma_wgmma_gemm(m, n, bk, dtype="float16", a=None, b=None, c=None):
    """K = 2 bk in a ring of two shared stages (stages, rows, bk), both loaded by TMA (one mbarrier each), then two
    accumulating wgmma steps, one per stage."""
    k = 2 * bk
    nbytes = (m + n) * bk * 2

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (m, k), dtype)
        B = T.match_buffer(B_ptr, (n, k), dtype)
        C = T.match_buffer(C_ptr, (m, n), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        tid = T.thread_id([128])
        A_smem = T.alloc_buffer((2, m, bk), dtype, scope="shared", layout=a, align=1024)
        B_smem = T.alloc_buffer((2, n, bk), dtype, scope="shared", layout=b, align=1024)
        full = T.alloc_buffer((2,), "uint64", scope="shared", layout=TileLayout(S[2]))
        C_reg = T.alloc_buffer((m, n), "float32", scope="local", layout=c)
        if tid == 0:
            for s in T.unroll(2):
                T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            for s in T.unroll(2):
                Tx.copy_async(A_smem[s, :, :], A[:, s * bk:s * bk + bk], mbar=full.ptr_to([s]))
                Tx.copy_async(B_smem[s, :, :], B[:, s * bk:s * bk + bk], mbar=full.ptr_to([s]))
                T.ptx.mbarrier.arrive.expect_tx.shared.b64(full.ptr_to([s]), T.uint32(nbytes))
        T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
        Tx.wg.gemm_async(C_reg[:, :], A_smem[0, :, :], B_smem[0, :, :], transA=False, transB=False, accum=False)
        T.cuda.mbarrier_wait(full.ptr_to([1]), 0)
        Tx.wg.gemm_async(C_reg[:, :], A_smem[1, :, :], B_smem[1, :, :], transA=False, transB=False, accum=True)
        Tx.wg.copy(C[:, :], C_reg[:, :])

    return kernel


def _staged(rows, bk):
    """(2, rows, bk) stages of the 128-byte-swizzled K-major tile, as python/axe4j/cuda/kernels/hopper_gemm.py writes."""
    kb = bk // 64
    return ComposeLayout(3, 3, 3, TileLayout(S[(2, rows, kb, 64):(rows * bk, 64, rows * 64, 1)]))


# name: (builder, arch, shape args, hand-written layouts by buffer, instructions the source must hold)
KERNELS = {
    "mma_32x16x32_f16": (mma_gemm, "sm_80", (32, 16, 32),
                         {"a": _mma_a(32, 32), "b": _mma_bt(16, 32), "d": _mma_c(32, 16)}, ["mma.sync"]),
    "mma_64x32x16_bf16": (lambda m, n, k, **kw: mma_gemm(m, n, k, "bfloat16", **kw), "sm_90a", (64, 32, 16),
                          {"a": _mma_a(64, 16), "b": _mma_bt(32, 16), "d": _mma_c(64, 32)}, ["mma.sync"]),
    "tma_wgmma_64x128x64_sw128": (tma_wgmma_gemm, "sm_90a", (64, 128, 64),
                                  {"a": _swizzled(64, 64, 3), "b": _swizzled(128, 64, 3), "c": _wgmma_acc(64, 128)},
                                  ["wgmma.mma_async", "cp.async.bulk.tensor"]),
    "tma_wgmma_128x64x32_sw64": (tma_wgmma_gemm, "sm_90a", (128, 64, 32),
                                 {"a": _swizzled(128, 32, 2), "b": _swizzled(64, 32, 2), "c": _wgmma_acc(128, 64)},
                                 ["wgmma.mma_async", "cp.async.bulk.tensor"]),
    "tma_mma_32x16x64_bt": (tma_mma_gemm, "sm_90a", (32, 16, 64),
                            {"sa": _swizzled(32, 64, 3), "sb": _swizzled(16, 64, 3), "a": _mma_a(32, 64),
                             "b": _mma_bt(16, 64), "d": _mma_c(32, 16)},
                            ["mma.sync", "cp.async.bulk.tensor", "ldmatrix"]),
    "tma_mma_32x16x64_b": (lambda m, n, k, **kw: tma_mma_gemm(m, n, k, trans_b=False, **kw), "sm_90a", (32, 16, 64),
                           {"sa": _swizzled(32, 64, 3), "sb": _swizzled(64, 16, 1), "a": _mma_a(32, 64),
                            "b": _mma_b(64, 16), "d": _mma_c(32, 16)},
                           ["mma.sync", "cp.async.bulk.tensor", "ldmatrix"]),
    "staged_tma_wgmma_64x64x2x64": (staged_tma_wgmma_gemm, "sm_90a", (64, 64, 64),
                                   {"a": _staged(64, 64), "b": _staged(64, 64), "c": _wgmma_acc(64, 64)},
                                   ["wgmma.mma_async", "cp.async.bulk.tensor"]),
}

_built: dict = {}


def _compile(kernel, arch):
    return axe4j.compile(kernel, _target(arch)).mod.imports[0].inspect_source("cuda")


def _build(name):
    if name not in _built:
        builder, arch, shape, hand, _ = KERNELS[name]
        axe4j.use_pip_nvcc()
        inferred, hand_written = builder(*shape), builder(*shape, **hand)
        _built[name] = (inferred, hand_written, _compile(inferred, arch), _compile(hand_written, arch))
    return _built[name]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_without_layouts_compiles_to_the_hand_written_source(name):
    _, arch, _, _, instructions = KERNELS[name]
    _, _, inferred, hand = _build(name)
    for ins in instructions:
        assert ins in inferred, (name, ins)
    assert inferred == hand
    with _target(arch):
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(inferred))
    assert set(re.findall(rb"sm_[0-9]+a?", binary)) == {arch.encode()}


def _inferred_layouts(name):
    builder, arch, shape, hand, _ = KERNELS[name]
    func, notes = at.infer(builder(*shape), _target(arch))
    layouts = {}

    def walk(node):
        if isinstance(node, tvm.tirx.AllocBuffer):
            layouts[str(node.buffer.name)] = node.buffer.ty.layout
        for field in ("seq", "body", "then_case", "else_case"):
            child = getattr(node, field, None)
            if child is not None:
                for c in (child if type(child).__name__ == "Array" else [child]):
                    walk(c)

    walk(func.body)
    return layouts, notes


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_inferred_layouts_are_the_hand_written_ones_as_maps(name):
    """Every element's (lane, warp, register / address) under the inferred layout is the hand-written one's."""
    _, _, shape, hand, _ = KERNELS[name]
    layouts, notes = _inferred_layouts(name)
    staged = "_reg" if name.startswith(("mma", "tma_mma")) else "_smem"
    names = {"a": "A" + staged, "b": "B" + staged, "c": "C_reg", "d": "D_reg", "sa": "A_smem", "sb": "B_smem"}
    for key, want in hand.items():
        got = layouts[names[key]]
        assert got is not None, (name, key, notes)
        assert _same_map(got, want), (name, key, str(got), str(want))
    assert all(n.startswith("[infer]") for n in notes), notes


def _same_map(got, want):
    """Equal swizzles and tile layouts inducing the same map (axe4j's exact equivalence)."""
    if isinstance(want, ComposeLayout) or isinstance(got, ComposeLayout):
        fields = ("per_element", "swizzle_len", "atom_len", "swizzle_inner")
        return (isinstance(got, ComposeLayout) and isinstance(want, ComposeLayout)
                and all(int(getattr(got, f)) == int(getattr(want, f)) for f in fields)
                and axe4j.layout.equivalent(got.tile_layout, want.tile_layout))
    return axe4j.layout.equivalent(got, want)


def test_choices_are_explained_and_reported_by_explain():
    _, notes = _inferred_layouts("tma_wgmma_64x128x64_sw128")
    assert any("TMA destination: 128-byte swizzle (the widest whose row of 64 elements divides its rows of 64)"
               in n for n in notes), notes
    assert any("C_reg" in n and "wgmma accumulator: the m64n128k16 fragment" in n for n in notes), notes
    _, notes = _inferred_layouts("mma_32x16x32_f16")
    assert any("A_reg" in n and "mma.m16n8k16 A fragment (16x16) tiled row-major over 2x2 blocks" in n
               for n in notes), notes
    assert any("B_reg" in n and "B_T fragment (8x16)" in n for n in notes), notes
    report = axe4j.explain(mma_gemm(32, 16, 32), _target("sm_80"), file=open("/dev/null", "w"))
    assert "axe4j-cuda-mma (prio=110): accepted <- chosen" in report
    assert "mma.m16n8k16 A fragment" in report  # the layout passes' choices
    report = axe4j.explain(tma_wgmma_gemm(64, 128, 64), _target("sm_90a"), file=open("/dev/null", "w"))
    assert "axe4j-cuda-wgmma (prio=110): accepted <- chosen" in report
    assert re.search(r"axe4j-cuda-tma \(prio=\d+\): accepted <- chosen", report)


def test_user_layouts_are_kept_and_a_conflicting_one_is_reported():
    # D given a row-major register layout: not a tile of the mma C fragment, so mma cannot take the call
    wrong = TileLayout(S[(32, 16):(16, 1)])
    func, notes = at.infer(mma_gemm(32, 16, 32, d=wrong), _target("sm_80"))
    conflicts = [n for n in notes if n.startswith("[infer-conflict]")]
    assert conflicts and "user-given layout S[(32,16):(16,1)] of D_reg (D) is not a tile of the mma fragment" \
        in conflicts[0], notes
    assert "axe4j-cuda-mma rule will decline this call" in conflicts[0]
    # a user-given swizzle is left alone; the other tile is still inferred
    func, notes = at.infer(tma_wgmma_gemm(64, 64, 64, a=_swizzled(64, 64, 2)), _target("sm_90a"))
    assert not any(n.startswith("[infer] kernel: buffer A_smem") for n in notes), notes
    assert any(n.startswith("[infer] kernel: buffer B_smem") and "128-byte swizzle" in n for n in notes), notes


def test_a_register_buffer_no_matrix_rule_uses_is_still_reported():
    @T.prim_func
    def k(A: T.Buffer((128,), "float32")) -> None:
        T.device_entry()
        T.warp_id([4])
        T.lane_id([32])
        r = T.alloc_buffer((128,), "float32", scope="local", layout=None)
        Tx.cta.copy(r[:], A[:])

    _, notes = at.infer(k, _target("sm_90a"))
    assert notes == ["[infer-unsupported] k: buffer r (128,) float32 local: no warp gemm (mma) or warpgroup "
                     "gemm_async (wgmma accumulator) uses this register buffer; give its layout"]
