"""The Ampere-style FP16 GEMM example (``axe4j.cuda.kernels.ampere_gemm``) compiles through axe4j: cp.async into a 3-stage
ring, ldmatrix into mma fragments, mma.sync m16n8k16, for sm_80, sm_90a and sm_100a. On a GPU (``-m gpu``) D is
compared with numpy."""

import tvm  # noqa: F401  (before the JVM)

import functools
import re

import pytest

import _gpu_cases
import axe4j
from _lowered import assert_axe4j_lowered
from axe4j.cuda.kernels.ampere_gemm import ampere_gemm, check_shape

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

FATBIN_MAGIC = bytes.fromhex("50ed55ba")
ARCHS = ["sm_80", "sm_90a", "sm_100a"]
SHAPES = [(128, 128, 128), (256, 192, 96)]


def _target(arch):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


_built: dict = {}
_executables: dict = {}   # (shape, arch) -> Executable, without the PTX


def _executable(shape, arch):
    if (shape, arch) not in _executables:
        axe4j.use_pip_nvcc()
        _executables[(shape, arch)] = axe4j.compile(ampere_gemm(*shape), _target(arch))
    return _executables[(shape, arch)]


def _build(shape, arch):
    if (shape, arch) not in _built:
        from tvm.support import nvcc

        executable = _executable(shape, arch)
        source = executable.mod.imports[0].inspect_source("cuda")
        with _target(arch):
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        _built[(shape, arch)] = (executable, source, ptx)
    return _built[(shape, arch)]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_compiles_to_cp_async_ldmatrix_and_mma(shape, arch):
    executable, source, ptx = _build(shape, arch)
    # every cp.async is axe4j's 16-byte plan (K tiles at run-time starts nk * 32 keep their alignment), the epilogue
    # stores fp16 pairs from the mma fragment
    assert_axe4j_lowered(executable, expected=["axe4j-cuda-cp-async", "axe4j-cuda-ldstmatrix", "axe4j-cuda-mma",
                                               "axe4j-cuda-register"])
    for row in executable.lowered:
        if row.op == "copy_async":
            assert "cp.async.cg.shared.global of 16 bytes (8 elements)" in row.notes[0], row
    (store,) = [r for r in executable.lowered if r.call.startswith("T.warp.copy(D")]
    assert "2 elements (4 bytes) per access" in store.notes[0], store
    assert not re.search(r"st\.global\.(u16|b16)\b", ptx)
    assert re.search(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32", ptx)
    assert re.search(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", ptx)
    assert re.search(r"cp\.async\.cg\.shared\.global(\.L2::\w+)? \[[^]]+\], \[[^]]+\], 16", ptx)
    assert "cp.async.wait_group 1" in ptx and "cp.async.commit_group" in ptx
    with _target(arch):
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC and set(re.findall(rb"sm_[0-9]+a?", binary)) == {arch.encode()}


def test_explain_shows_axe4j_choosing_ldmatrix_and_mma():
    report = axe4j.explain(ampere_gemm(128, 128, 128), _target("sm_80"), file=open("/dev/null", "w"))
    assert "axe4j-cuda-mma (prio=110): accepted <- chosen" in report
    assert "8 x m16n8k16 (32x32x16)" in report
    assert "axe4j-cuda-ldstmatrix (prio=112): accepted <- chosen" in report


def test_shapes_it_cannot_tile_are_named():
    with pytest.raises(ValueError, match=r"K=100 is not a multiple of the tile 32"):
        check_shape(128, 128, 100, 3)


def _label(shape):
    return "x".join(map(str, shape))


def _case(shape, arch):
    return _gpu_cases.GpuCase(
        name=f"ampere_gemm/{_label(shape)}/{arch}", arch=arch, build=lambda: _executable(shape, arch),
        kernel=lambda: ampere_gemm(*shape), target=_target(arch), args=lambda: _gpu_cases.fp16_gemm_operands(*shape),
        outputs=(2,), expected=_gpu_cases.fp16_product, rtol=2e-3, atol=1e-2)


@functools.cache
def gpu_cases():
    return [_case(shape, arch) for shape in SHAPES for arch in ARCHS]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=_label)
def test_results_on_a_gpu(shape):
    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"ampere_gemm/{_label(shape)}"))
