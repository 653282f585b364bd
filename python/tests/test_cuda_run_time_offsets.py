"""Every CUDA rule with a memory operand, at a tile offset known only at run time, plans what it plans at a constant.

Each kernel below is built three times: with its tile at a constant offset W (``"constant"``), at a CTA index
``bx * W`` (``"cta"``) and at a K-loop index ``kt * W`` (``"k_loop"``). TVM's modular-set analysis knows the run-time
starts are multiples of W (``start_modulus``); the rules prove alignment from that. So all three must be lowered by
the same axe4j case (``executable.lowered``: no call may go to one of TVM's own cases) with the same plan notes (the
vector width, the cp.async chunk, the TMA box, the ldmatrix groups, the descriptors' strides), and the PTX of both
must hold the rule's instructions (16-byte vectors, ``cp.async.cg`` of 16 bytes, ``cp.async.bulk.tensor``,
``ldmatrix.x4``, ``wgmma``, ``tcgen05.mma``, pairs of fp16 stored from the mma fragment) and none of the narrower
ones (scalar accesses, 4- or 8-byte cp.async, cp.async instead of TMA).

The mma and shuffle-reduce rules read and write registers only: they have no memory offset to test (their operands in
the GEMM kernels sit in K-loops, tested in ``test_ampere_gemm.py`` / ``test_hopper_gemm.py``).
"""

import tvm  # noqa: F401  (before the JVM)

import re

import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout, laneid, wg_local_layout, wid_in_wg
from tvm.tirx.script import tile as Tx

import axe4j

PLACES = {"constant": lambda bx, kt, w: w, "cta": lambda bx, kt, w: bx * w, "k_loop": lambda bx, kt, w: kt * w}

LD_G4 = r"ld\.global(\.nc)?\.v4\.(f32|u32|b32)"
ST_G4 = r"st\.global\.v4\.(f32|u32|b32)"
ST_G2_F16 = r"st\.global\.v2\.(u16|b16|f16)"
LD_G1 = r"ld\.global(\.nc)?\.(f32|u32|b32)\b"
ST_G1 = r"st\.global\.(f32|u32|b32)\b"
ST_G1_F16 = r"st\.global\.(u16|b16|f16)\b"
LD_G1_F16 = r"ld\.global(\.nc)?\.(u16|b16|f16)\b"


def _target(arch):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def _vector_copy(at):
    """fp32 columns [at, at + 32) of a (64, 64) tensor -> shared -> the same columns of C (the issue's copy)."""

    @T.prim_func
    def kernel(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        X = T.alloc_buffer((64, 32), "float32", scope="shared", layout=TileLayout(S[(64, 32)]))
        for kt in T.serial(2):
            Tx.cta.copy(X[:, :], A[:, at(bx, kt, 32):at(bx, kt, 32) + 32])
            T.cuda.cta_sync()
            Tx.cta.copy(C[:, at(bx, kt, 32):at(bx, kt, 32) + 32], X[:, :])
            T.cuda.cta_sync()

    return kernel


def _digits_copy(at):
    """The same copy forced to the digits rule (one element per thread and round, any layout)."""

    @T.prim_func
    def kernel(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 32), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        X = T.alloc_buffer((64, 32), "float32", scope="shared", layout=TileLayout(S[(64, 32)]))
        for kt in T.serial(2):
            Tx.cta.copy(X[:, :], A[:, at(bx, kt, 32):at(bx, kt, 32) + 32], dispatch="axe4j-cuda-digits")
            T.cuda.cta_sync()
        Tx.cta.copy(C[:, :], X[:, :])

    return kernel


def _cp_async(at):
    """fp16 K tiles [at, at + 32) of a (64, 128) tensor into shared memory with cp.async (the issue's K loop)."""

    @T.prim_func
    def kernel(A: T.Buffer((64, 128), "float16")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        X = T.alloc_buffer((64, 32), "float16", scope="shared", layout=TileLayout(S[(64, 32)]), align=128)
        for kt in T.serial(2):
            Tx.cta.copy_async(X[:, :], A[:, at(bx, kt, 32):at(bx, kt, 32) + 32])
            T.ptx["cp.async.commit_group"]()
            T.ptx["cp.async.wait_group"](0)
            T.cuda.cta_sync()

    return kernel


def _swizzled_k_blocks(rows, k):
    """K-major rows x k fp16 under the 128-byte swizzle, K blocks of 64 outermost (the Hopper GEMM's tiles)."""
    return ComposeLayout(3, 3, 3, TileLayout(S[(rows, k // 64, 64):(64, rows * 64, 1)]))


def _tma(at, bk):
    """A (64 x bk) fp16 tile at column ``at`` of a (64, 256) tensor, TMA into a 128B-swizzled tile (K blocks of 64
    outermost): bk = 64 is one 2-d box, bk = 128 one 3-d box [64, 64, 2] whose K coordinate is at // 64."""
    layout = _swizzled_k_blocks(64, bk)

    @T.prim_func
    def kernel(A: T.Buffer((64, 256), "float16")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warp_id([1])
        T.lane_id([32])
        tid = T.thread_id([32])
        pool = T.SMEMPool()
        X = pool.alloc((64, bk), "float16", layout=layout, align=1024)
        bar = pool.alloc((1,), "uint64", align=8)
        pool.commit()
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
            for kt in T.serial(2):
                Tx.copy_async(X[:, :], A[:, at(bx, kt, bk):at(bx, kt, bk) + bk], mbar=bar.ptr_to([0]))
                T.ptx.mbarrier.arrive.expect_tx.shared.b64(bar.ptr_to([0]), T.uint32(64 * bk * 2))
                T.cuda.mbarrier_wait(bar.ptr_to([0]), kt % 2)

    return kernel


# mma A fragment tiled over (16 x 16) blocks: a tile of the ldmatrix fragment
MMA_16x16 = TileLayout(S[(2, 8, 2, 4, 2):(2, 4 @ laneid, 4, 1 @ laneid, 1)])


def _ldmatrix(at):
    """ldmatrix of a 16 x 16 fp16 block at column ``at`` of a (16, 64) shared tile."""

    @T.prim_func
    def kernel(A: T.Buffer((16, 64), "float16"), B: T.Buffer((16, 16), "float16")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        X = T.alloc_buffer((16, 64), "float16", scope="shared", layout=TileLayout(S[(16, 64)]), align=128)
        Y = T.alloc_buffer((16, 16), "float16", scope="shared", layout=TileLayout(S[(16, 16)]), align=128)
        R = T.alloc_buffer((16, 16), "float16", scope="local", layout=MMA_16x16)
        Tx.warp.copy(X[:, :], A[:, :])
        T.cuda.cta_sync()
        for kt in T.serial(2):
            Tx.warp.copy(R[:, :], X[:, at(bx, kt, 16):at(bx, kt, 16) + 16])
            Tx.warp.copy(Y[:, :], R[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(B[:, :], Y[:, :])

    return kernel


def _reduce(at, rows):
    """Row sums of the (rows x 16) block at column ``at`` of a shared (64, 64) tile: 64 rows over 128 threads is the
    shuffle tree (two threads per row), 64 rows over 32 threads the one-thread-per-output fold."""
    threads = 128 if rows == "tree" else 32

    @T.prim_func
    def kernel(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id([threads])
        X = T.alloc_buffer((64, 64), "float32", scope="shared", layout=TileLayout(S[(64, 64)]))
        r = T.alloc_buffer((64,), "float32", scope="shared", layout=TileLayout(S[(64,)]))
        Tx.cta.copy(X[:, :], A[:, :])
        T.cuda.cta_sync()
        for kt in T.serial(2):
            if rows == "tree":
                Tx.cta.sum(r[:], X[:, at(bx, kt, 16):at(bx, kt, 16) + 16], [1], False)
            else:
                Tx.warp.sum(r[:], X[:, at(bx, kt, 16):at(bx, kt, 16) + 16], [1], False)
            T.cuda.cta_sync()
        Tx.cta.copy(B[:], r[:])

    return kernel


def _c_fragment(rows, cols):
    """mma C/D fragments (16 x 8) over (rows/16, cols/8) blocks: lane l holds column pairs (2 (l % 4), +1)."""
    bm, bn = rows // 16, cols // 8
    return TileLayout(S[(bm, 2, 8, bn, 4, 2):(4 * bn, 2, 4 @ laneid, 4, 1 @ laneid, 1)])


def _register_epilogue(at):
    """A warp's fp32 mma accumulator cast to fp16 and stored at column ``at`` of D (the Ampere GEMM's epilogue), and
    a register tile (8 consecutive fp16 per lane) loaded from the same columns."""
    frag = _c_fragment(32, 32)
    rows8 = TileLayout(S[(32, 4, 8):(1 @ laneid, 8, 1)])

    @T.prim_func
    def kernel(A: T.Buffer((32, 128), "float16"), D: T.Buffer((32, 128), "float16"), E: T.Buffer((32, 32), "float16")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        acc = T.alloc_buffer((32, 32), "float32", scope="local", layout=frag)
        out = T.alloc_buffer((32, 32), "float16", scope="local", layout=frag)
        r = T.alloc_buffer((32, 32), "float16", scope="local", layout=rows8)
        Tx.warp.fill(acc[:, :], T.float32(1.0))
        Tx.warp.cast(out[:, :], acc[:, :])
        for kt in T.serial(2):
            Tx.warp.copy(r[:, :], A[:, at(bx, kt, 32):at(bx, kt, 32) + 32])
            Tx.warp.copy(D[:, at(bx, kt, 32):at(bx, kt, 32) + 32], out[:, :])
        Tx.warp.copy(E[:, :], r[:, :])

    return kernel


def _accumulator(m, n):
    per = n // 2
    return TileLayout(S[(m // 64, 4, 2, 8, 1, n // 8, 4, 2):(per, 1 @ wid_in_wg, 2, 4 @ laneid, per, 4, 1 @ laneid, 1)])


def _wgmma(at):
    """wgmma over the K block [at, at + 64) of 128B-swizzled (64, 128) A and B tiles (K blocks of 64 outermost)."""
    a_layout = _swizzled_k_blocks(64, 128)

    @T.prim_func
    def kernel(A: T.Buffer((64, 128), "float16"), C: T.Buffer((64, 64), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        T.thread_id([128])
        A_smem = T.alloc_buffer((64, 128), "float16", scope="shared", layout=a_layout, align=1024)
        B_smem = T.alloc_buffer((64, 128), "float16", scope="shared", layout=a_layout, align=1024)
        C_reg = T.alloc_buffer((64, 64), "float32", scope="local", layout=_accumulator(64, 64))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cta.copy(B_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.wg.fill(C_reg[:, :], T.float32(0.0))
        for kt in T.serial(2):
            Tx.wg.gemm_async(C_reg[:, :], A_smem[:, at(bx, kt, 64):at(bx, kt, 64) + 64],
                             B_smem[:, at(bx, kt, 64):at(bx, kt, 64) + 64], transA=False, transB=False, accum=True)
        Tx.wg.copy(C[:, :], C_reg[:, :])

    return kernel


def _tcgen05(at):
    """tcgen05.mma over the K block [at, at + 64) of 128B-swizzled (128, 128) A and (64, 128) B tiles."""
    a_layout, b_layout = _swizzled_k_blocks(128, 128), _swizzled_k_blocks(64, 128)

    @T.prim_func
    def kernel(A: T.Buffer((128, 128), "float16"), C: T.Buffer((128, 64), "float32")):
        T.device_entry()
        bx = T.cta_id([2])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id_in_wg([128])
        tid = T.thread_id([128])
        pool = T.SMEMPool()
        A_smem = pool.alloc((128, 128), "float16", layout=a_layout, align=1024)
        B_smem = pool.alloc((64, 128), "float16", layout=b_layout, align=1024)
        mbar = pool.alloc((1,), "uint64", align=8)
        tmem = T.TMEMPool(pool, total_cols=512)
        C_tmem = tmem.alloc((128, 64), "float32")
        pool.commit()
        tmem.commit()
        C_reg = T.alloc_buffer((128, 64), "float32", scope="local", layout=wg_local_layout(64))
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cta.copy(B_smem[:, :], A[0:64, :])
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            for kt in T.serial(2):
                Tx.gemm_async(C_tmem[:, :], A_smem[:, at(bx, kt, 64):at(bx, kt, 64) + 64],
                              B_smem[:, at(bx, kt, 64):at(bx, kt, 64) + 64], transA=False, transB=False, accum=True)
            T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](mbar.ptr_to([0]))
        T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
        Tx.wg.copy_async(C_reg[:, :], C_tmem[:, :])
        T.ptx["tcgen05.wait::ld.sync.aligned"]()
        Tx.wg.copy(C[:, :], C_reg[:, :])
        T.cuda.cta_sync()
        tmem.dealloc()

    return kernel


CP_ASYNC_16 = r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 16"
NARROW_CP_ASYNC = r"cp\.async\.c[ag]\.shared\.global \[[^]]+\], \[[^]]+\], [48]\b"

# name: (kernel builder given the start, arch, {focused variant: (PTX patterns present, PTX patterns absent)})
CASES = {
    "vector_copy_f32": (_vector_copy, "sm_90a", {"axe4j-cuda-vector": ([LD_G4, ST_G4], [LD_G1, ST_G1])}),
    "digits_copy_f32": (_digits_copy, "sm_90a", {"axe4j-cuda-digits": ([LD_G1], [])}),
    "cp_async_f16": (_cp_async, "sm_80", {"axe4j-cuda-cp-async": ([CP_ASYNC_16], [NARROW_CP_ASYNC])}),
    "tma_2d_f16": (lambda at: _tma(at, 64), "sm_90a",
                   {"axe4j-cuda-tma": ([r"cp\.async\.bulk\.tensor\.2d\.shared::cluster"], [r"cp\.async\.c[ag]"])}),
    "tma_3d_split_k_f16": (lambda at: _tma(at, 128), "sm_90a",
                           {"axe4j-cuda-tma": ([r"cp\.async\.bulk\.tensor\.3d\.shared::cluster"],
                                               [r"cp\.async\.c[ag]"])}),
    "ldmatrix_f16": (_ldmatrix, "sm_90a", {"axe4j-cuda-ldstmatrix": ([r"ldmatrix\.sync\.aligned\.m8n8\.x4"],
                                                                     [r"ldmatrix\.sync\.aligned\.m8n8\.x[12]\."])}),
    "reduce_tree_f32": (lambda at: _reduce(at, "tree"), "sm_90a",
                        {"axe4j-cuda-tree-reduce": ([r"shfl\.sync\.bfly"], [])}),
    "reduce_fold_f32": (lambda at: _reduce(at, "fold"), "sm_90a",
                        {"axe4j-cuda-reduce": ([r"add(\.rn)?(\.ftz)?\.f32"], [])}),
    "register_epilogue_f16": (_register_epilogue, "sm_80",
                              {"axe4j-cuda-register": ([ST_G2_F16, LD_G4], [ST_G1_F16, LD_G1_F16])}),
    "wgmma_k_block_f16": (_wgmma, "sm_90a",
                          {"axe4j-cuda-wgmma": ([r"wgmma\.mma_async\.sync\.aligned\.m64n64k16"], [])}),
    "tcgen05_k_block_f16": (_tcgen05, "sm_100a",
                            {"axe4j-cuda-tcgen05": ([r"tcgen05\.mma\.cta_group::1\.kind::f16"], [])}),
}

# TVM's own cases that these kernels use on purpose: reading the tensor-memory accumulator back (tcgen05.ld)
UPSTREAM_ON_PURPOSE = {"tmem<->local"}

_built: dict = {}


def _build(name, place):
    key = (name, place)
    if key not in _built:
        from tvm.support import nvcc

        builder, arch, _ = CASES[name]
        axe4j.use_pip_nvcc()
        executable = axe4j.compile(builder(PLACES[place]), _target(arch))
        source = executable.mod.imports[0].inspect_source("cuda")
        with _target(arch):
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        _built[key] = (executable.lowered, ptx)
    return _built[key]


@pytest.mark.parametrize("place", ["constant", "cta", "k_loop"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_call_is_lowered_by_axe4j(name, place):
    rows, _ = _build(name, place)
    focus = set(CASES[name][2])
    assert {r.variant for r in rows} & focus == focus, "\n".join(map(str, rows))
    for row in rows:
        assert row.by_axe4j or row.variant in UPSTREAM_ON_PURPOSE, f"TVM's case lowered {row}"


@pytest.mark.parametrize("place", ["cta", "k_loop"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_run_time_offset_keeps_the_plan_and_the_instructions_of_a_constant_one(name, place):
    constant_rows, constant_ptx = _build(name, "constant")
    rows, ptx = _build(name, place)
    for variant, (present, absent) in CASES[name][2].items():
        planned = [r.notes for r in rows if r.variant == variant]
        assert planned == [r.notes for r in constant_rows if r.variant == variant], (
            f"{variant} at a {place} offset planned {planned}; at a constant one "
            f"{[r.notes for r in constant_rows if r.variant == variant]}")
        # counts differ where nvcc unrolls the K loop of one kernel and not the other; the kinds must not
        for pattern in present:
            assert re.search(pattern, ptx) and re.search(pattern, constant_ptx), f"{pattern} missing"
        for pattern in absent:
            assert not re.search(pattern, ptx) and not re.search(pattern, constant_ptx), f"{pattern} found"


def test_the_issue_widths():
    """The copies of the report, with their widths spelt out: 16-byte fp32 vectors at bx * 32, 16-byte cp.async
    chunks at kt * 32, fp16 pairs from the mma fragment at a run-time column."""
    rows, ptx = _build("vector_copy_f32", "cta")
    assert all("4 elements (16 bytes) per access" in r.notes[0] for r in rows), rows
    assert len(re.findall(LD_G1, ptx)) == 0
    rows, _ = _build("cp_async_f16", "k_loop")
    assert "cp.async.cg.shared.global of 16 bytes (8 elements)" in rows[0].notes[0]
    rows, ptx = _build("register_epilogue_f16", "cta")
    stores = [r for r in rows if r.call.startswith("T.warp.copy(D")]
    assert "2 elements (4 bytes) per access" in stores[0].notes[0], stores
    assert not re.search(ST_G1_F16, ptx)
