"""The interpreted twin of every GPU test: each case of the GPU catalog (``_gpu_cases.all_cases()``: the kernels the
``gpu``-marked tests run on a GPU, with the same inputs, references and tolerances) runs in the CPU interpreter of
lowered CUDA kernels and must match. The GPU tests keep their GPU form; these run everywhere."""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest

import _gpu_cases
from axe4j.cuda import interp as cuda_interp

CASES = _gpu_cases.all_cases()
SMALL = [c for c in CASES if c.size == "small"]


@pytest.mark.parametrize("case", SMALL, ids=[c.name for c in SMALL])
def test_interpreted_twin_matches(case):
    args = case.args()
    expected_from = [np.array(a, copy=True) for a in args]   # references read the arguments as the kernel got them
    cuda_interp.run(case.build(), *args)
    _gpu_cases.check(case, [args[i] for i in case.outputs], expected_from)


def test_only_large_cases_have_no_twin():
    """A case without a twin is one too large for a CPU interpreter (named here, and in docs/cuda-interp.md)."""
    from axe4j.cuda.kernels import gemm_tuning

    large = sorted(c.name for c in CASES if c.size != "small")
    # the GEMMs timed on a GPU: the teaching kernel, the fused one, and the sweep's FP16 (SWEEP and SERVED), BF16 and
    # FP8 parts, each at least 2^27 multiply-adds or a decode step over at least 2^24 weights (the interpreter runs a
    # GEMM of 2^21 in about a second)
    timed = {f"hopper_gemm_pipelined/{m}x{n}x{k}_{c.label}{suffix}"
             for cases, suffix in ((gemm_tuning.sweep_cases(), ""), (gemm_tuning.sweep_cases_bf16(), "_bf16"),
                                   (gemm_tuning.sweep_cases_fp8(), "_fp8"))
             for (m, n, k), c in cases}
    timed |= {"hopper_gemm/8192x4096x4096", "hopper_gemm_pipelined/8192x4096x4096_128x256_fused"}
    for name in large:
        m, n, k = (int(x) for x in name.split("/")[1].split("_")[0].split("x"))
        assert name in timed and (m * n * k >= 2 ** 27 or n * k >= 2 ** 24), name
    assert len(large) == len(timed) and len(SMALL) == len(CASES) - len(large)
