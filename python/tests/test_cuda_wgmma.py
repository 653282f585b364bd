"""wgmma GEMM at warpgroup scope through the Java rule ``axe4j-cuda-wgmma`` (sm_90a), compiled to PTX and cubins.

Each kernel stages A (M x K) and B (N x K), K-major, in shared memory with a swizzled (128/64/32-byte) or plain
core-matrix layout, runs ``Tx.wg.gemm_async`` into a register accumulator laid out as a tile of the wgmma
fragment, and stores C. The PTX must hold ``wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16`` once per block
and K step, with the fence, commit and wait; the Java side derived the descriptors (checked element by element
against the layouts). On a GPU (``-m gpu``) C is compared with numpy.
"""

import tvm  # noqa: F401  (before the JVM)

import functools
import re

import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout, laneid, wid_in_wg
from tvm.tirx.script import tile as Tx

import _gpu_cases
import axe4j
from _lowered import assert_axe4j_lowered

FATBIN_MAGIC = bytes.fromhex("50ed55ba")


def _target(arch="sm_90a"):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def _accumulator(m, n, width):
    """wgmma accumulator fragment (64 x width) tiled over (m/64, n/width) blocks, row-major block order."""
    bm, bn, per = m // 64, n // width, width // 2
    return TileLayout(S[(bm, 4, 2, 8, bn, width // 8, 4, 2):
                        (per * bn, 1 @ wid_in_wg, 2, 4 @ laneid, per, 4, 1 @ laneid, 1)])


def _swizzled(rows, k, mode):
    """K-major rows x k tile, swizzle rows of W = 8 * 2^mode elements; K blocks of W columns outermost."""
    w = 8 << mode
    if k > w:
        return ComposeLayout(3, mode, 3, TileLayout(S[(rows, k // w, w):(w, rows * w, 1)]))
    return ComposeLayout(3, mode, 3, TileLayout(S[(rows, k):(k, 1)]))


def _core_matrices(rows, k):
    """No swizzle: 8x8 core matrices (64 contiguous elements), K-adjacent core matrices next, then 8-row groups."""
    return TileLayout(S[(rows // 8, 8, k // 8, 8):(8 * k, 8, 64, 1)])


def _gemm(m, n, k, a_layout, b_layout, width=None, accum=False, dtype="float16"):
    width = width or min(n, 256)
    c_layout = _accumulator(m, n, width)

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
        T.thread_id([128])
        A_smem = T.alloc_buffer((m, k), dtype, scope="shared", layout=a_layout, align=1024)
        B_smem = T.alloc_buffer((n, k), dtype, scope="shared", layout=b_layout, align=1024)
        C_reg = T.alloc_buffer((m, n), "float32", scope="local", layout=c_layout)
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cta.copy(B_smem[:, :], B[:, :])
        T.cuda.cta_sync()
        if accum:
            Tx.wg.fill(C_reg[:, :], T.float32(1.0))
        Tx.wg.gemm_async(C_reg[:, :], A_smem[:, :], B_smem[:, :], transA=False, transB=False, accum=accum)
        Tx.wg.copy(C[:, :], C_reg[:, :])

    return kernel


KERNELS = {
    "wgmma_64x128x64_sw128": (lambda: _gemm(64, 128, 64, _swizzled(64, 64, 3), _swizzled(128, 64, 3)), 4, 128),
    "wgmma_128x256x128_sw128": (lambda: _gemm(128, 256, 128, _swizzled(128, 128, 3), _swizzled(256, 128, 3)),
                                16, 256),
    "wgmma_64x64x32_sw64": (lambda: _gemm(64, 64, 32, _swizzled(64, 32, 2), _swizzled(64, 32, 2)), 2, 64),
    "wgmma_64x32x32_sw32": (lambda: _gemm(64, 32, 32, _swizzled(64, 32, 1), _swizzled(32, 32, 1)), 2, 32),
    "wgmma_64x64x32_interleaved_accum": (lambda: _gemm(64, 64, 32, _core_matrices(64, 32), _core_matrices(64, 32),
                                                       accum=True), 2, 64),
    "wgmma_64x128x32_bf16": (lambda: _gemm(64, 128, 32, _swizzled(64, 32, 2), _swizzled(128, 32, 2),
                                           dtype="bfloat16"), 2, 128),
}

_built: dict = {}
_executables: dict = {}   # name -> (PrimFunc, Executable), without the PTX


def _executable(name):
    if name not in _executables:
        axe4j.use_pip_nvcc()
        kernel = KERNELS[name][0]()
        _executables[name] = (kernel, axe4j.compile(kernel, _target()))
    return _executables[name]


def _build(name):
    if name not in _built:
        from tvm.support import nvcc

        kernel, executable = _executable(name)
        source = executable.mod.imports[0].inspect_source("cuda")
        with _target():
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        _built[name] = (kernel, executable, source, ptx)
    return _built[name]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gemm_async_is_wgmma_per_block_and_k_step(name):
    kernel, executable, source, ptx = _build(name)
    assert_axe4j_lowered(executable, expected=["axe4j-cuda-wgmma"])
    _, count, width = KERNELS[name]
    dtype = "bf16" if "bf16" in name else "f16"
    found = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n{width}k16\.f32\.{dtype}\.{dtype}", ptx)
    assert len(found) == count, (len(found), count)
    for companion in ("wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned"):
        assert companion in ptx
    with _target():
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC and set(re.findall(rb"sm_[0-9]+a?", binary)) == {b"sm_90a"}


def _explain(kernel, arch="sm_90a"):
    return axe4j.explain(kernel, _target(arch), file=open("/dev/null", "w"))


def test_explain_shows_the_descriptors():
    report = _explain(KERNELS["wgmma_64x128x64_sw128"][0]())
    assert "axe4j-cuda-wgmma (prio=110): accepted <- chosen" in report
    assert "4 x m64n128k16 (64x128x64)" in report
    assert "A 128-byte swizzle, 8-row groups 1024 B apart" in report
    report = _explain(KERNELS["wgmma_64x64x32_interleaved_accum"][0]())
    assert "no swizzle, 8-row groups 512 B apart, core-matrix columns 128 B apart" in report


def test_declines_name_the_operand_and_the_reason():
    # a row-major A without swizzle is not the core-matrix walk
    report = _explain(_gemm(64, 64, 32, TileLayout(S[(64, 32)]), _core_matrices(64, 32)))
    assert "the matrix descriptor (no swizzle" in report and "A_smem" in report
    # the right swizzle but rows too narrow for it (64-element rows under a 32-byte swizzle)
    report = _explain(_gemm(64, 64, 64, ComposeLayout(3, 1, 3, TileLayout(S[(64, 64)])), _swizzled(64, 64, 1)))
    assert "reads it from" in report
    # wgmma is sm_90a only
    report = _explain(KERNELS["wgmma_64x64x32_sw64"][0](), "sm_100a")
    assert "wgmma needs arch sm_90a, the target's is sm_100a" in report


def _dtype(name):
    return "bfloat16" if "bf16" in name else "float16"


def _case(name):
    shapes = _gpu_cases.params(KERNELS[name][0]())
    plus = 1.0 if "accum" in name else 0.0
    return _gpu_cases.GpuCase(
        name=f"wgmma/{name}", arch="sm_90a", build=lambda: _executable(name)[1], kernel=KERNELS[name][0],
        target=_target(), args=lambda: _gpu_cases.integer_operands(shapes, _dtype(name)),
        outputs=(2,), expected=lambda host: _gpu_cases.product(host, plus), rtol=1e-3, atol=1e-3)


@functools.cache
def gpu_cases():
    return [_case(name) for name in sorted(KERNELS)]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gemm_async_results_on_a_gpu(name):
    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"wgmma/{name}"))
