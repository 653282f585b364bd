"""Java ``copy_async`` rules on CUDA: ``cp.async`` (global -> shared, any scope) and TMA bulk tensor copies
(global <-> shared, one thread, sm_90+), compiled to PTX and cubins for sm_90a / sm_100a.

No GPU is needed to compile: the PTX must hold the instructions the plan asks for (``cp.async.cg`` with 16 bytes,
``cp.async.ca`` with 4 or 8, ``cp.async.bulk.tensor.Nd`` loads and stores), upstream's own cases must not have run
(their helpers and variable names are absent), and the fatbin must hold a cubin for the arch. On a GPU
(``-m gpu``) the kernels run against numpy; without one those tests skip with the reason.
"""

import tvm  # noqa: F401  (before the JVM)

import functools
import re

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout
from tvm.tirx.script import tile as Tx

import _gpu_cases
import axe4j
from _lowered import assert_axe4j_lowered

ARCHS = ["sm_90a", "sm_100a"]
FATBIN_MAGIC = bytes.fromhex("50ed55ba")


def _target(arch):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def _cp_async(shape, dtype, scope, threads, g_layout=None, s_layout=None, storage=None):
    """A -> shared with copy_async at ``scope``; commit, wait, sync; shared -> B with a plain CTA copy. ``storage``:
    the global arguments' own shape when the copied ``shape`` is a region of it (padded rows)."""
    storage = storage or shape
    g_layout = g_layout or TileLayout(S[storage])
    s_layout = s_layout or TileLayout(S[shape])
    ns = getattr(Tx, {"warpgroup": "wg"}.get(scope, scope))
    full = tuple(slice(0, d) for d in shape)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, storage, dtype, layout=g_layout)
        B = T.match_buffer(B_ptr, storage, dtype, layout=g_layout)
        T.device_entry()
        T.cta_id([1])
        T.warpgroup_id([threads // 128 if threads >= 128 else 1])
        T.warp_id_in_wg([4 if threads >= 128 else threads // 32])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id_in_wg([min(threads, 128)])
        T.thread_id([threads])
        A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=s_layout)
        ns.copy_async(A_smem[full], A[full])
        T.ptx["cp.async.commit_group"]()
        T.ptx["cp.async.wait_group"](0)
        T.cuda.cta_sync()
        Tx.cta.copy(B[full], A_smem[full])

    return kernel


def _tma(g_shape, region, s_shape, dtype, s_layout=None, g_layout=None, dispatch=None):
    """A's region -> shared by a TMA load on one thread (mbarrier armed with the bytes, waited by all), then the
    shared tile -> B's region by a TMA store (bulk group committed and waited)."""
    s_layout = s_layout or TileLayout(S[s_shape])
    g_layout = g_layout or TileLayout(S[g_shape])
    nbytes = tvm.DataType(dtype).bits // 8
    for d in s_shape:
        nbytes *= d
    g_region = tuple(slice(a, b) if b is not None else a for a, b in region)
    s_region = tuple(slice(0, d) for d in s_shape)
    forced = {"dispatch": dispatch} if dispatch else {}

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, g_shape, dtype, layout=g_layout)
        B = T.match_buffer(B_ptr, g_shape, dtype, layout=g_layout)
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        tid = T.thread_id([128])
        arena = T.alloc_buffer([nbytes + 8], "uint8", scope="shared.dyn")
        A_smem = T.decl_buffer(s_shape, dtype, arena.data, elem_offset=0, scope="shared.dyn", layout=s_layout)
        mbar = T.decl_buffer([1], "uint64", arena.data, elem_offset=nbytes // 8, scope="shared.dyn")
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            Tx.copy_async(A_smem[s_region], A[g_region], mbar=mbar.ptr_to([0]), **forced)
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([0]), T.uint32(nbytes))
        T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
        T.cuda.cta_sync()
        if tid == 0:
            Tx.copy_async(B[g_region], A_smem[s_region])
            T.ptx["cp.async.bulk.commit_group"]()
            T.ptx["cp.async.bulk.wait_group"](0)

    return kernel


def _tma_pipelined(stages=2, bm=64, bk=64, dtype="float16"):
    """A k-loop of TMA loads into a ring of 128B-swizzled stages: run-time starts in the global column and the
    shared stage, one mbarrier per stage (the loads only; the tile is not read back)."""
    s_layout = _mma_layout(dtype, 3, (stages, bm, bk))
    nbytes = stages * bm * bk * tvm.DataType(dtype).bits // 8

    @T.prim_func
    def kernel(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (128, 256), dtype)
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        tid = T.thread_id([128])
        arena = T.alloc_buffer([nbytes + 8 * stages], "uint8", scope="shared.dyn")
        A_smem = T.decl_buffer((stages, bm, bk), dtype, arena.data, elem_offset=0, scope="shared.dyn",
                               layout=s_layout)
        mbar = T.decl_buffer([stages], "uint64", arena.data, elem_offset=nbytes // 8, scope="shared.dyn")
        for ks in T.serial(256 // bk):
            if tid == 0:
                Tx.copy_async(A_smem[ks % stages, :, :], A[64:128, ks * bk:ks * bk + bk],
                              mbar=mbar.ptr_to([ks % stages]))

    return kernel


def _tma_ops(rank):
    load = rf"cp\.async\.bulk\.tensor\.{rank}d\.shared::cluster\.global(\.tile)?\.mbarrier::complete_tx::bytes"
    store = rf"cp\.async\.bulk\.tensor\.{rank}d\.global\.shared::cta(\.tile)?\.bulk_group"
    return [load, store]


def _cp(kind, size):
    return rf"cp\.async\.{kind}\.shared\.global(\.L2::\w+)? \[%r\d+\], \[%rd\d+\], {size};"


def _mma_layout(dtype, mode, shape):
    """TVM's MMA shared layout (tile of the TMA swizzle atom) for ``mode`` 0-3 (none, 32B, 64B, 128B)."""
    from tvm.backend.cuda.tile_primitive.tma_utils import mma_shared_layout

    return mma_shared_layout(dtype, mode, shape)


SWIZZLED_F16 = ComposeLayout(3, 3, 3, TileLayout(S[8, 64])).tile_to((64, 64), (8, 64))   # Swizzle<3,3,3>

KERNELS = {
    "cp_async_cta_f32_64x32": (lambda: _cp_async((64, 32), "float32", "cta", 128), [_cp("cg", 16)]),
    "cp_async_warp_f16_32x64": (lambda: _cp_async((32, 64), "float16", "warp", 32), [_cp("cg", 16)]),
    "cp_async_warpgroup_f32_128x16": (lambda: _cp_async((128, 16), "float32", "warpgroup", 128), [_cp("cg", 16)]),
    "cp_async_thread_f32_8x8": (lambda: _cp_async((8, 8), "float32", "thread", 32), [_cp("cg", 16)]),
    # rows of 30 fp32 at a pitch of 32 in global: 2-element (8-byte) chunks, .ca
    "cp_async_cta_padded_rows_f32": (lambda: _cp_async((16, 30), "float32", "cta", 64, storage=(16, 32)),
                                     [_cp("ca", 8)]),
    # a transposing shared tile: one 4-byte element per cp.async, .ca
    "cp_async_cta_transposing_f32": (lambda: _cp_async((32, 32), "float32", "cta", 128,
                                                       s_layout=TileLayout(S[(32, 32):(1, 32)])), [_cp("ca", 4)]),
    # 128-byte swizzle of fp16 (8-element units stay whole): 16-byte chunks at XORed addresses
    "cp_async_cta_swizzled_f16": (lambda: _cp_async((64, 64), "float16", "cta", 128, s_layout=SWIZZLED_F16),
                                  [_cp("cg", 16)]),
    # a 64x64 fp16 tile of a 128x128 tensor: one 2-d box each way
    "tma_2d_f16_64x64": (lambda: _tma((128, 128), [(64, 128), (0, 64)], (64, 64), "float16"), _tma_ops(2)),
    # fp32 rows of 32 from a 3-d tensor with rows of 48 at batch 2: the batch is a third map dim of box 1
    "tma_3d_f32_batch": (lambda: _tma((4, 32, 48), [(2, None), (0, 32), (8, 40)], (32, 32), "float32"),
                         _tma_ops(3)),
    # TVM's 128B-swizzled MMA tile of fp16 64x128: two 64x64 column blocks, one 3-d box, 128B swizzle mode
    "tma_swizzle128_f16_64x128": (lambda: _tma((64, 256), [(0, 64), (128, 256)], (64, 128), "float16",
                                               s_layout=_mma_layout("float16", 3, (64, 128))), _tma_ops(3)),
    # run-time starts (the k-loop's column, the ring's stage) through one tensor map
    "tma_pipelined_runtime_starts_f16": (_tma_pipelined, _tma_ops(2)[:1]),
    # the unswizzled MMA tile (16-byte column blocks): a 3-d box of 8 x 64 x 16
    "tma_mma_unswizzled_f16_64x128": (lambda: _tma((64, 128), [(0, 64), (0, 128)], (64, 128), "float16",
                                                   s_layout=_mma_layout("float16", 0, (64, 128))), _tma_ops(3)),
}

# names only upstream's copy_async cases write into the kernel (ldgsts; tma names its maps <buffer>_tensormap)
UPSTREAM_MARKS = ["g_lin_ptr", "s_off_ptr", "s_buf_w_offset", "A_tensormap", "B_tensormap"]

_built: dict = {}
_executables: dict = {}   # (name, arch) -> (PrimFunc, Executable), without the PTX


def _executable(name, arch):
    key = (name, arch)
    if key not in _executables:
        axe4j.use_pip_nvcc()
        kernel = KERNELS[name][0]()
        _executables[key] = (kernel, axe4j.compile(kernel, _target(arch)))
    return _executables[key]


def _build(name, arch):
    key = (name, arch)
    if key not in _built:
        kernel, executable = _executable(name, arch)
        source = executable.mod.imports[0].inspect_source("cuda")
        _built[key] = (kernel, executable, source, _ptx(source, arch))
    return _built[key]


def _ptx(source, arch):
    """PTX from TVM's own nvcc driver (it adds the toolkit's include folders, as for the cubin)."""
    from tvm.support import nvcc

    axe4j.use_pip_nvcc()
    with _target(arch):
        return bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_copy_async_compiles_to_the_intended_instructions(name, arch):
    kernel, executable, source, ptx = _build(name, arch)
    assert_axe4j_lowered(executable, expected=["axe4j-cuda-tma" if name.startswith("tma") else "axe4j-cuda-cp-async"])
    for mark in UPSTREAM_MARKS:
        assert mark not in source, f"an upstream copy_async case ran instead of the axe4j rule ({mark})"
    for pattern in KERNELS[name][1]:
        assert re.search(pattern, ptx), f"{pattern} not in the PTX of {name} ({arch})"
    with _target(arch):
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC
    assert set(re.findall(rb"sm_[0-9]+a?", binary)) == {arch.encode()}


def test_cp_async_plan_is_chosen_and_explained():
    report = axe4j.explain(KERNELS["cp_async_cta_f32_64x32"][0](), _target("sm_90a"), file=open("/dev/null", "w"))
    offset = axe4j.dispatch.cuda_priority_offset()
    assert f"axe4j-cuda-cp-async (prio={10 + offset}): accepted <- chosen" in report
    assert "cp.async.cg.shared.global of 16 bytes (4 elements), 512 chunks over 128 threads" in report
    report = axe4j.explain(KERNELS["cp_async_cta_swizzled_f16"][0](), _target("sm_90a"), file=open("/dev/null", "w"))
    assert "cp.async.cg.shared.global of 16 bytes (8 elements), 512 chunks over 128 threads" in report
    _, _, source, _ = _build("cp_async_cta_swizzled_f16", "sm_90a")
    assert "^" in source, "no XOR in the shared addresses: the swizzle was dropped"


def test_cp_async_declines_two_byte_chunks_with_the_reason():
    kernel = _cp_async((32, 32), "float16", "cta", 128, s_layout=TileLayout(S[(32, 32):(1, 32)]))
    report = axe4j.explain(kernel, _target("sm_90a"), file=open("/dev/null", "w"))
    assert "axe4j-cuda-cp-async (prio=110): declined: copy_async: cp.async moves 4, 8 or 16 bytes per " \
           "instruction, but the widest aligned chunk of dst=A_smem[0:32, 0:32] float16 S[(32,32):(1,32)]" in report
    assert "1 element(s) = 2 bytes" in report


def test_tma_plans_name_the_box_the_map_and_the_swizzle_mode():
    report = axe4j.explain(KERNELS["tma_swizzle128_f16_64x128"][0](), _target("sm_90a"), file=open("/dev/null", "w"))
    offset = axe4j.dispatch.cuda_priority_offset()
    assert f"axe4j-cuda-tma (prio={12 + offset}): accepted <- chosen" in report
    assert "TMA load of 16384 bytes: 1 x 3-d box [64, 64, 2] (16384 bytes), 128B swizzle; tensor map dims " \
           "[64, 64, 4] strides [1, 256, 64] elements" in report
    assert "TMA store of 16384 bytes: 1 x 3-d box [64, 64, 2]" in report
    report = axe4j.explain(KERNELS["tma_3d_f32_batch"][0](), _target("sm_90a"), file=open("/dev/null", "w"))
    assert "1 x 3-d box [32, 32, 1] (4096 bytes); tensor map dims [48, 32, 4] strides [1, 48, 1536]" in report
    _, _, source, _ = _build("tma_2d_f16_64x64", "sm_90a")
    assert "A_tensor_map" in source and "B_tensor_map" in source
    _, _, source, _ = _build("tma_pipelined_runtime_starts_f16", "sm_90a")
    # coordinates (ks * 64, 64) and the stage's shared offset follow the loop variable
    assert re.search(r"A_tensor_map\)\)\)\), \(ks \* 64\), 64,", source), source


def test_forced_tma_on_a_layout_it_cannot_express_is_a_compile_error_naming_op_layouts_and_reason():
    transposed = TileLayout(S[(64, 64):(1, 64)])
    kernel = _tma((128, 128), [(0, 64), (0, 64)], (64, 64), "float16", s_layout=transposed,
                  dispatch="axe4j-cuda-tma")
    with pytest.raises(Exception) as failure:
        axe4j.compile(kernel, _target("sm_90a"))
    message = str(failure.value)
    assert "copy_async" in message
    assert "dst=A_smem[0:64, 0:64] float16 S[(64,64):(1,64)]" in message
    assert "src0=A[0:64, 0:64] float16 S[(128,128):(128,1)]" in message
    assert "TMA's innermost box dim must be contiguous in global memory" in message


def test_tma_load_without_an_mbarrier_is_declined_with_the_reason():
    @T.prim_func
    def kernel(A_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (64, 64), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        tid = T.thread_id([32])
        A_smem = T.alloc_buffer((64, 64), "float16", scope="shared.dyn", layout=TileLayout(S[(64, 64)]))
        if tid == 0:
            Tx.copy_async(A_smem[:, :], A[:, :])

    report = axe4j.explain(kernel, _target("sm_90a"), file=open("/dev/null", "w"))
    assert "axe4j-cuda-tma (prio=112): declined: copy_async: a TMA load completes on an mbarrier; pass mbar=" in report


def _mbarrier_load(s_layout, dispatch=None, pitch=64):
    """One thread loads a (64, 64) fp16 tile with ``mbar=`` into the first 64 columns of a (64, pitch) shared buffer
    and arms the barrier with its bytes (a TMA load)."""

    @T.prim_func
    def kernel(A: T.Buffer((128, 128), "float16")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        tid = T.thread_id([32])
        pool = T.SMEMPool()
        A_smem = pool.alloc((64, pitch), "float16", layout=s_layout, align=1024)
        bar = pool.alloc((1,), "uint64", align=8)
        pool.commit()
        if tid == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
            Tx.copy_async(A_smem[:, 0:64], A[0:64, 0:64], mbar=bar.ptr_to([0]), dispatch=dispatch)
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(bar.ptr_to([0]), T.uint32(64 * 64 * 2))
            T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)

    return kernel


def test_an_mbarrier_load_no_tma_case_takes_fails_to_compile_naming_the_reason():
    """Rows of 64 fp16 at a pitch of 72 in shared memory are no TMA box (axe4j's rule and TVM's decline); TVM's cp.async
    case (ldgsts, prio 20, above TVM's TMA cases) takes such a call and drops the barrier, so the consumer would wait
    for bytes that never arrive. It is refused, naming axe4j's TMA reason."""
    padded = TileLayout(S[(64, 72)])
    with pytest.raises(Exception) as failure:
        axe4j.compile(_mbarrier_load(padded, pitch=72), _target("sm_90a"))
    message = str(failure.value)
    assert "ldgsts would issue this copy_async without its mbarrier (mbar=): the waiters' expect_tx bytes would " \
           "never arrive; only a TMA case may lower it (axe4j-cuda-tma declined: copy_async: the shared tile " \
           "dst=A_smem[0:64, 0:64] float16 S[(64,72):(72,1)] is not whole TMA boxes [64, 1]" in message
    # forcing TVM's cp.async case is refused the same way
    with pytest.raises(Exception, match="ldgsts would issue this copy_async without its mbarrier"):
        axe4j.compile(_mbarrier_load(padded, dispatch="ldgsts", pitch=72), _target("sm_90a"))
    # the row-major tile is a TMA box: axe4j's rule lowers it
    executable = axe4j.compile(_mbarrier_load(TileLayout(S[(64, 64)])), _target("sm_90a"))
    assert [r.variant for r in executable.lowered] == ["axe4j-cuda-tma"]


def test_a_kernel_builder_refuses_a_kernel_whose_calls_no_axe4j_rule_lowers():
    """``axe4j.kernel_rules.require``, which the kernel builders call: the mbarrier load of a padded tile is no TMA
    box, so the kernel is refused before any code is generated, naming the call and the rules' reasons."""
    from axe4j import kernel_rules as rules

    with pytest.raises(ValueError) as failure:
        rules.require(_mbarrier_load(TileLayout(S[(64, 72)]), pitch=72), _target("sm_90a"), "padded_load()")
    message = str(failure.value)
    assert message.startswith("padded_load(): axe4j's rules do not lower every tile call of the kernel")
    assert "axe4j-cuda-tma: copy_async: the shared tile dst=A_smem[0:64, 0:64] float16 S[(64,72):(72,1)] is not " \
           "whole TMA boxes" in message
    assert "no case lowers it (TIRx schedule dispatch failed: op=tirx.tile.copy_async target=cuda)" in message
    rows = rules.require(_mbarrier_load(TileLayout(S[(64, 64)])), _target("sm_90a"), "row_major_load()")
    assert [r.variant for r in rows] == ["axe4j-cuda-tma"]


# what B holds after each kernel: the copied region of A, zeros elsewhere (None: the whole of A)
COPIED = {
    "tma_2d_f16_64x64": np.s_[64:128, 0:64],
    "tma_3d_f32_batch": np.s_[2, 0:32, 8:40],
    "cp_async_cta_padded_rows_f32": np.s_[:, 0:30],
    "tma_swizzle128_f16_64x128": np.s_[0:64, 128:256],
}
NO_OUTPUT = {"tma_pipelined_runtime_starts_f16"}   # loads only: checked by its PTX


def _expected(name, host):
    if name not in COPIED:
        return [host[0].copy()]
    expected = np.zeros_like(host[0])
    expected[COPIED[name]] = host[0][COPIED[name]]
    return [expected]


def _case(name, arch):
    shapes = _gpu_cases.params(KERNELS[name][0]())
    return _gpu_cases.GpuCase(
        name=f"async/{name}/{arch}", arch=arch, build=lambda: _executable(name, arch)[1], kernel=KERNELS[name][0],
        target=_target(arch), args=lambda: _gpu_cases.normal_args(shapes), outputs=(len(shapes) - 1,),
        expected=lambda host: _expected(name, host), rtol=0.0, atol=0.0, check_exact=True)


@functools.cache
def gpu_cases():
    """Every kernel with an output (NO_OUTPUT's only loads, checked by their PTX), at each arch."""
    return [_case(name, arch) for name in sorted(set(KERNELS) - NO_OUTPUT) for arch in ARCHS]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(set(KERNELS) - NO_OUTPUT))
def test_copy_async_results_on_a_gpu(name):
    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"async/{name}"))
