"""The Blackwell GEMM (``axe4j.cuda.kernels.blackwell_gemm``): TMA ring, tcgen05.mma from one elected lane into tensor
memory, slots released by ``tcgen05.commit`` to their mbarriers, a tcgen05.ld epilogue. Compiled for sm_100a (PTX
and cubin checked) and run in the CPU interpreter against numpy; on a GPU (``-m gpu``, Blackwell only) D is compared
with numpy."""

import tvm  # noqa: F401  (before the JVM)

import re

import ml_dtypes
import numpy as np
import pytest

import axe4j
from axe4j.cuda import interp as cuda_interp
from axe4j.cuda.kernels.blackwell_gemm import blackwell_gemm, stages_for

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

FATBIN_MAGIC = bytes.fromhex("50ed55ba")
TARGET = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"}, host="llvm")

CASES = {
    "256x256x256_f16": ((256, 256, 256), {}),
    "128x128x512_two_stages": ((128, 128, 512), dict(stages=2)),
    "256x128x128_bn64_bf16": ((256, 128, 128), dict(bn=64, dtype="bfloat16")),
    # 2-CTA: clusters of two CTAs, tcgen05.mma.cta_group::2 (M = 256) over the pair, 2 stages over 4 K tiles
    "512x256x256_pair": ((512, 256, 256), dict(bn=128, stages=2, cta_group=2)),
    "256x128x128_pair_bn64_bf16": ((256, 128, 128), dict(bn=64, dtype="bfloat16", cta_group=2)),
}

_built: dict = {}


def _build(name):
    if name not in _built:
        shape, options = CASES[name]
        axe4j.use_pip_nvcc()
        _built[name] = axe4j.compile(blackwell_gemm(*shape, **options), TARGET)
    return _built[name]


def _operands(name):
    (m, n, k), options = CASES[name]
    dtype = ml_dtypes.bfloat16 if options.get("dtype") == "bfloat16" else np.float16
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (m, k)).astype("float32")
    b = rng.integers(-2, 3, (n, k)).astype("float32")
    return a.astype(dtype), b.astype(dtype), np.zeros((m, n), dtype), a @ b.T


def gpu_cases():
    """One case per CASES entry (sm_100a), exact results (small-integer inputs)."""
    import _gpu_cases

    return [_gpu_cases.GpuCase(
        name=f"blackwell_gemm/{name}", arch="sm_100a", build=lambda name=name: _build(name),
        kernel=lambda name=name: blackwell_gemm(*CASES[name][0], **CASES[name][1]), target=TARGET,
        args=lambda name=name: list(_operands(name)[:3]), outputs=(2,),
        expected=lambda args: [(args[0].astype("float32") @ args[1].astype("float32").T).astype(args[2].dtype)],
        rtol=0.0, atol=0.0, check_exact=True) for name in sorted(CASES)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_interpreted_results_match_numpy(name):
    a, b, d, expected = _operands(name)
    cuda_interp.run(_build(name), a, b, d)
    np.testing.assert_array_equal(d.astype("float32"), expected)


def test_ptx_has_tma_tcgen05_mma_commits_and_tensor_memory_loads():
    from tvm.support import nvcc

    source = _build("256x256x256_f16").mod.imports[0].inspect_source("cuda")
    with TARGET:
        ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
    # per K tile (64 / 16 = 4 steps) one tcgen05.mma per step, in a loop over the K tiles
    assert len(re.findall(r"tcgen05\.mma\.cta_group::1\.kind::f16", ptx)) >= 4
    assert re.search(r"tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.shared::cluster\.b64", ptx)
    assert re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes", ptx)
    assert re.search(r"tcgen05\.ld\.sync\.aligned\.32x32b\.x\d+\.b32", ptx)
    assert "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32" in ptx
    with TARGET:
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC and set(re.findall(rb"sm_[0-9]+a?", binary)) == {b"sm_100a"}


def test_ptx_of_the_pair_kernel_has_the_cta_group_2_forms():
    from tvm.support import nvcc

    source = _build("512x256x256_pair").mod.imports[0].inspect_source("cuda")
    with TARGET:
        ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
    assert len(re.findall(r"tcgen05\.mma\.cta_group::2\.kind::f16", ptx)) >= 4
    assert "tcgen05.mma.cta_group::1" not in ptx
    # the MMAs' completion reaches both CTAs' mbarriers; both CTAs' loads complete on the even CTA's
    assert re.search(r"tcgen05\.commit\.cta_group::2\.mbarrier::arrive::one\.shared::cluster\.multicast::cluster"
                     r"\.b64", ptx)
    assert re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes\.cta_group::2",
                     ptx)
    assert "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32" in ptx and "mapa.shared::cluster.u32" in ptx
    assert "barrier.cluster.arrive" in ptx


def test_explain_shows_the_pair_mma():
    report = axe4j.explain(blackwell_gemm(512, 256, 256, bn=128, cta_group=2), TARGET, file=open("/dev/null", "w"))
    assert report.count("tcgen05.mma m256n128k16 (256x128x64, cta_group::2 over the CTA pair") == 2
    assert "instruction descriptor 0x10200010" in report   # M / 16 = 16 at bits 24-28, N / 8 = 16 at 17-22


def test_the_pair_shapes_it_cannot_lower_are_named():
    with pytest.raises(ValueError, match=r"cta_group=3: 1 \(one CTA per 128-row tile\) or 2"):
        blackwell_gemm(512, 256, 256, cta_group=3)
    with pytest.raises(ValueError, match=r"M=384 is not a multiple of the tile 256"):
        blackwell_gemm(384, 256, 256, cta_group=2)


def test_explain_shows_tcgen05_and_tma_chosen():
    report = axe4j.explain(blackwell_gemm(256, 256, 256), TARGET, file=open("/dev/null", "w"))
    assert report.count("axe4j-cuda-tcgen05 (prio=110): accepted <- chosen") == 2   # the accum=False/True calls
    assert report.count("axe4j-cuda-tma (prio=112): accepted <- chosen") == 2       # A and B loads


def test_parameters_it_cannot_lower_are_named():
    assert stages_for(128, 64) == 7
    with pytest.raises(ValueError, match=r"N=200 is not a multiple of the tile 128"):
        blackwell_gemm(256, 200, 256)
    with pytest.raises(ValueError, match=r"BN=256: the epilogue holds one accumulator row per thread"):
        blackwell_gemm(256, 256, 256, bn=256)
    with pytest.raises(ValueError, match=r"need \d+ bytes of shared memory"):
        blackwell_gemm(256, 256, 256, stages=8)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_results_on_a_blackwell_gpu(name):
    import _gpu_cases

    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"blackwell_gemm/{name}"))
