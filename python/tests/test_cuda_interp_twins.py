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
    large = sorted(c.name for c in CASES if c.size != "small")
    for name in large:   # GEMMs of at least 2^30 multiply-adds: the teaching kernel and the timed sweep
        m, n, k = (int(x) for x in name.split("/")[1].split("_")[0].split("x"))
        assert name.startswith(("hopper_gemm/", "hopper_gemm_pipelined/")) and m * n * k >= 2 ** 30, name
    assert len(large) == 62 and len(SMALL) == len(CASES) - 62   # teaching kernel, 60 sweep kernels, fused
