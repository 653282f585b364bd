"""mma.sync GEMM of a warp's register tiles through the Java rule ``axe4j-cuda-mma``, compiled to PTX and cubins.

The kernels stage A (M x K) and B (N x K, i.e. transposed) in shared memory, load the register fragments with
ldmatrix (the fragment layouts are tiles of the ldmatrix 8x8 fragment), multiply with ``Tx.warp.gemm`` and store
D (M x N, f32). The PTX must hold ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`` (the number of
instructions = the block count) and a cubin for the arch; on a GPU (``-m gpu``) D is compared with numpy.
"""

import tvm  # noqa: F401  (before the JVM)

import functools
import re

import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import _gpu_cases
import axe4j
from _lowered import assert_axe4j_lowered

ARCHS = ["sm_80", "sm_90a", "sm_100a"]
FATBIN_MAGIC = bytes.fromhex("50ed55ba")


def _target(arch):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def _a_layout(m, k):
    """mma A fragment (16x16) tiled over (m/16, k/16) blocks, row-major block order (8 registers per block)."""
    bm, bk = m // 16, k // 16
    return TileLayout(S[(bm, 2, 8, bk, 2, 4, 2):(8 * bk, 2, 4 @ laneid, 8, 4, 1 @ laneid, 1)])


def _bt_layout(n, k):
    """mma B fragment of B stored N x K (8x16 per block) over (n/8, k/16) blocks, row-major (4 registers each)."""
    bn, bk = n // 8, k // 16
    return TileLayout(S[(bn, 8, bk, 2, 4, 2):(4 * bk, 4 @ laneid, 4, 2, 1 @ laneid, 1)])


def _c_layout(m, n, column_blocks_first=False):
    """mma C/D fragment (16x8) over (m/16, n/8) blocks (4 registers each)."""
    bm, bn = m // 16, n // 8
    sm, sn = (4, 4 * bm) if column_blocks_first else (4 * bn, 4)
    return TileLayout(S[(bm, 2, 8, bn, 4, 2):(sm, 2, 4 @ laneid, sn, 1 @ laneid, 1)])


def _gemm(m, n, k, dtype="float16", beta=0.0, column_blocks_first=False, alpha=1.0, a_layout=None):
    a_layout, b_layout = a_layout or _a_layout(m, k), _bt_layout(n, k)
    d_layout = _c_layout(m, n, column_blocks_first)

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
        A_reg = T.alloc_buffer((m, k), dtype, scope="local", layout=a_layout)
        B_reg = T.alloc_buffer((n, k), dtype, scope="local", layout=b_layout)
        D_reg = T.alloc_buffer((m, n), "float32", scope="local", layout=d_layout)
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cta.copy(B_smem[:, :], B[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(A_reg[:, :], A_smem[:, :])
        Tx.warp.copy(B_reg[:, :], B_smem[:, :])
        if beta == 1.0:
            Tx.warp.fill(D_reg[:, :], T.float32(1.0))
        Tx.warp.gemm(D_reg[:, :], A_reg[:, :], B_reg[:, :], D_reg[:, :], False, True, alpha, beta)
        Tx.warp.copy(D[:, :], D_reg[:, :])

    return kernel


KERNELS = {
    "mma_16x8x16_f16": (lambda: _gemm(16, 8, 16), 1),
    "mma_32x16x32_f16": (lambda: _gemm(32, 16, 32), 8),
    "mma_64x32x32_bf16": (lambda: _gemm(64, 32, 32, "bfloat16"), 32),
    "mma_32x32x16_f16_column_blocks": (lambda: _gemm(32, 32, 16, column_blocks_first=True), 8),
}

_built: dict = {}
_executables: dict = {}   # (name, arch) -> (PrimFunc, Executable), without the PTX


def _executable(name, arch):
    if (name, arch) not in _executables:
        axe4j.use_pip_nvcc()
        kernel = KERNELS[name][0]()
        _executables[(name, arch)] = (kernel, axe4j.compile(kernel, _target(arch)))
    return _executables[(name, arch)]


def _build(name, arch):
    if (name, arch) not in _built:
        from tvm.support import nvcc

        kernel, executable = _executable(name, arch)
        source = executable.mod.imports[0].inspect_source("cuda")
        with _target(arch):
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        _built[(name, arch)] = (kernel, executable, source, ptx)
    return _built[(name, arch)]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gemm_is_one_mma_per_block_triple(name, arch):
    kernel, executable, source, ptx = _build(name, arch)
    assert_axe4j_lowered(executable, expected=["axe4j-cuda-mma", "axe4j-cuda-ldstmatrix"])
    dtype = "bf16" if "bf16" in name else "f16"
    found = re.findall(rf"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.{dtype}\.{dtype}\.f32", ptx)
    assert len(found) == KERNELS[name][1], (len(found), name, arch)
    assert re.search(r"ldmatrix\.sync\.aligned\.m8n8\.x[124]\.shared\.b16", ptx)
    with _target(arch):
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC
    assert set(re.findall(rb"sm_[0-9]+a?", binary)) == {arch.encode()}


def test_explain_names_the_mma_plan_and_declines_with_reasons():
    report = axe4j.explain(KERNELS["mma_32x16x32_f16"][0](), _target("sm_90a"), file=open("/dev/null", "w"))
    assert "axe4j-cuda-mma (prio=110): accepted <- chosen" in report and "8 x m16n8k16 (32x16x32)" in report
    # alpha = 2: mma has no scale
    report = axe4j.explain(_gemm(16, 8, 16, alpha=2.0), _target("sm_90a"), file=open("/dev/null", "w"))
    assert "alpha must be 1 and beta 0 or 1, not 2 and 0" in report


def test_a_register_tile_that_is_not_an_mma_fragment_is_declined():
    # the A tile's two row halves and two column halves swapped in the registers: still an ldmatrix tile, not the
    # mma A fragment
    swapped = TileLayout(S[(2, 8, 2, 4, 2):(4, 4 @ laneid, 2, 1 @ laneid, 1)])
    report = axe4j.explain(_gemm(16, 8, 16, a_layout=swapped), _target("sm_90a"), file=open("/dev/null", "w"))
    assert "axe4j-cuda-ldstmatrix (prio=112): accepted" in report
    assert "is not a tile of the mma fragment" in report


def _dtype(name):
    return "bfloat16" if "bf16" in name else "float16"


def _case(name, arch):
    shapes = _gpu_cases.params(KERNELS[name][0]())
    return _gpu_cases.GpuCase(
        name=f"mma/{name}/{arch}", arch=arch, build=lambda: _executable(name, arch)[1], kernel=KERNELS[name][0],
        target=_target(arch), args=lambda: _gpu_cases.integer_operands(shapes, _dtype(name)),
        outputs=(2,), expected=_gpu_cases.product, rtol=1e-3, atol=1e-3)


@functools.cache
def gpu_cases():
    return [_case(name, arch) for name in sorted(KERNELS) for arch in ARCHS]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gemm_results_on_a_gpu(name):
    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"mma/{name}"))
