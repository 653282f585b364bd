"""The Hopper FP16 GEMM example (``axe4j.cuda.kernels.hopper_gemm``) compiles through axe4j to an sm_90a cubin: TMA loads
into a swizzled multi-stage ring, wgmma from shared-memory descriptors, mbarrier full/empty hand-offs between the
producer warpgroup and two consumer warpgroups. On a GPU (``-m gpu``) D is compared with numpy."""

import tvm  # noqa: F401  (before the JVM)

import functools
import re

import pytest

import _gpu_cases
import axe4j
from _lowered import assert_axe4j_lowered
from axe4j.cuda.kernels.hopper_gemm import check_shape, hopper_gemm

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

FATBIN_MAGIC = bytes.fromhex("50ed55ba")
TARGET = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
SHAPES = [(256, 256, 256), (512, 384, 1024), (8192, 4096, 4096)]

_built: dict = {}
_executables: dict = {}   # shape -> Executable, without the PTX


def _executable(shape):
    if shape not in _executables:
        axe4j.use_pip_nvcc()
        _executables[shape] = axe4j.compile(hopper_gemm(*shape), TARGET)
    return _executables[shape]


def _build(shape):
    if shape not in _built:
        from tvm.support import nvcc

        kernel = hopper_gemm(*shape)
        executable = _executable(shape)
        source = executable.mod.imports[0].inspect_source("cuda")
        with TARGET:
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        _built[shape] = (kernel, executable, source, ptx)
    return _built[shape]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_compiles_to_tma_wgmma_and_mbarriers(shape):
    _, executable, source, ptx = _build(shape)
    assert_axe4j_lowered(executable, expected=["axe4j-cuda-tma", "axe4j-cuda-wgmma", "axe4j-cuda-register"])
    # the epilogue stores what the accumulator fragment holds together: fp16 pairs, never single elements
    (store,) = [r for r in executable.lowered if r.call.startswith("T.wg.copy(D")]
    assert store.variant == "axe4j-cuda-register" and "2 elements (4 bytes) per access" in store.notes[0], store
    assert re.search(r"st\.global\.v2\.(u16|b16)", ptx) and not re.search(r"st\.global\.(u16|b16)\b", ptx)
    # per K tile and consumer: 4 wgmma (BK 64 / 16) of 64 x 128
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.f16\.f16", ptx)
    assert re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes", ptx)
    assert "mbarrier.try_wait" in ptx and "mbarrier.arrive.expect_tx" in ptx
    assert "wgmma.fence.sync.aligned" in ptx and "wgmma.wait_group.sync.aligned" in ptx
    assert "CUtensorMap" in source, "no tensor maps: the loads are not TMA"
    with TARGET:
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC and set(re.findall(rb"sm_[0-9]+a?", binary)) == {b"sm_90a"}


def test_explain_shows_axe4j_choosing_wgmma_for_the_swizzled_ring():
    report = axe4j.explain(hopper_gemm(256, 256, 256), TARGET, file=open("/dev/null", "w"))
    assert "axe4j-cuda-wgmma (prio=110): accepted <- chosen" in report
    assert "4 x m64n128k16 (64x128x64)" in report
    assert "A 128-byte swizzle, 8-row groups 1024 B apart" in report
    # the loads are axe4j's TMA (box from the layouts, 128-byte swizzle mode), not cp.async: the ring's mbarriers
    # count TMA bytes, which cp.async would never deliver
    assert report.count("axe4j-cuda-tma (prio=112): accepted <- chosen") == 2  # the A halves (one call in a loop) and B
    assert "1 x 2-d box [64, 64] (8192 bytes), 128B swizzle" in report


def test_a_k_tile_of_two_swizzle_rows_is_one_tma_box_per_operand_and_the_barrier_counts_its_bytes():
    """BK = 128 is two 64-element swizzle rows per K tile; the K coordinate kt * 128 of the global tensor is split
    into two tensor-map dims, which TVM's modular-set analysis keeps fixed below the outer one: one 3-d box per load,
    at coordinate (0, row, kt * 2). Every load is axe4j's TMA case, and its bytes add up to the expect_tx count the
    producer arms each stage's mbarrier with, so the consumers' waits complete."""
    from tvm.support import nvcc

    m = n = 256
    bm, bn, bk, stages = 128, 128, 128, 3
    executable = axe4j.compile(hopper_gemm(m, n, 512, bm=bm, bn=bn, bk=bk, stages=stages), TARGET)
    assert_axe4j_lowered(executable, expected=["axe4j-cuda-tma", "axe4j-cuda-wgmma"])
    loads = [r for r in executable.lowered if r.op == "copy_async"]
    assert [r.variant for r in loads] == ["axe4j-cuda-tma"] * 2
    assert "1 x 3-d box [64, 64, 2] (16384 bytes), 128B swizzle" in loads[0].notes[0]
    assert "1 x 3-d box [64, 128, 2] (32768 bytes), 128B swizzle" in loads[1].notes[0]
    tma_bytes = [int(re.search(r"TMA load of (\d+) bytes", r.notes[0]).group(1)) for r in loads]
    assert 2 * tma_bytes[0] + tma_bytes[1] == (bm + bn) * bk * 2   # the A call runs for both halves
    source = executable.mod.imports[0].inspect_source("cuda")
    with TARGET:
        ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
    assert re.search(r"cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global\.mbarrier::complete_tx::bytes", ptx)
    assert not re.search(r"cp\.async\.c[ag]\.shared", ptx)
    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n128k16", ptx)) >= 8   # BK / 16 per K tile


def test_shapes_it_cannot_tile_are_named():
    with pytest.raises(ValueError, match=r"N=200 is not a multiple of the tile 128"):
        check_shape(256, 200, 256, 128, 128, 64, 4)
    with pytest.raises(ValueError, match=r"need 393216 bytes of shared memory"):
        check_shape(256, 256, 256, 128, 256, 64, 8)


def _label(shape):
    return "x".join(map(str, shape))


def _case(shape):
    return _gpu_cases.GpuCase(
        name=f"hopper_gemm/{_label(shape)}", arch="sm_90a", build=lambda: _executable(shape),
        kernel=lambda: hopper_gemm(*shape), target=TARGET, args=lambda: _gpu_cases.fp16_gemm_operands(*shape),
        outputs=(2,), expected=_gpu_cases.fp16_product, rtol=2e-3, atol=1e-2,
        size="large" if shape[0] * shape[1] * shape[2] > 2 ** 30 else "small")


@functools.cache
def gpu_cases():
    """Every shape; 8192x4096x4096 (the size the GEMM is timed at) is large."""
    return [_case(shape) for shape in SHAPES]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=_label)
def test_results_on_a_gpu(shape):
    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"hopper_gemm/{_label(shape)}"))
