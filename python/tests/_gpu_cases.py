"""The catalog of GPU cases: every kernel the CUDA tests run on a GPU, with its inputs, expected outputs and tolerances.

A ``GpuCase`` is one kernel compiled for one arch. Each test module that runs kernels on a GPU defines
``gpu_cases()`` (the kernels of its ``@pytest.mark.gpu`` tests, for every arch the module compiles them for); its GPU
test picks the case of the device's arch and calls ``run_on_gpu``. The same records drive whatever else runs those
kernels: the CPU interpreter of lowered CUDA kernels, and the GPU bundle (``make gpu-bundle``, docs/gpu-bundle.md),
which exports them with their inputs and expected outputs for a machine without TVM.

``args()`` makes every argument in order, outputs included (zeros), from a fixed seed; ``expected(args)`` gives the
arrays the outputs must hold afterwards, in ``outputs`` order, with the outputs' shapes and dtypes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

# The modules with GPU tests of axe4j kernels, in the order their cases are listed. test_native_cublas.py has a GPU
# test too, but it runs the cuBLAS harness (native/), not a compiled kernel: it has no case.
MODULES = ("test_cuda_corpus", "test_cuda_dispatch", "test_cuda_mma", "test_cuda_wgmma", "test_cuda_tcgen05",
           "test_cuda_register", "test_cuda_async", "test_hopper_gemm", "test_ampere_gemm", "test_hopper_gemm_pipelined",
           "test_blackwell_gemm", "test_moe_cuda")

ARCHS = ("sm_80", "sm_90a", "sm_100a")


@dataclass(frozen=True)
class GpuCase:
    name: str                      # unique and stable: "<module>/<kernel>[/<arch>]", e.g. "corpus/copy_vec_f16/sm_90a"
    arch: str                      # "sm_80" | "sm_90a" | "sm_100a": the arch the kernel is compiled for
    build: Callable[[], object]    # the executable from axe4j.compile (cached by the test module)
    kernel: Callable[[], object]   # the PrimFunc or IRModule that build() compiles
    target: object                 # the tvm.target.Target build() compiles for
    args: Callable[[], list]       # fresh numpy arrays for every argument in order, outputs included (zeros)
    outputs: tuple                 # indices in args of the arrays the kernel writes
    expected: Callable[[list], list]  # from args(): the expected arrays of each output, in `outputs` order
    rtol: float
    atol: float
    check_exact: bool = False      # the outputs must equal the expected arrays bit for bit
    size: str = "small"            # "small", or "large": too big for a CPU interpreter
    epilogue: dict | None = None   # a GEMM with a fused epilogue (alpha, beta, bias, activation): it takes
                                   # (A, B, C, Bias, D); the GPU bundle's timing makes C and Bias for it

    def __post_init__(self):
        if self.arch not in ARCHS:
            raise ValueError(f"case {self.name}: arch {self.arch!r} is not one of {ARCHS}")
        if self.size not in ("small", "large"):
            raise ValueError(f"case {self.name}: size {self.size!r} must be 'small' or 'large'")


def all_cases() -> list[GpuCase]:
    """The cases of every module in ``MODULES``, each module's in its own order."""
    cases = []
    for name in MODULES:
        cases.extend(importlib.import_module(name).gpu_cases())
    return cases


def check(case: GpuCase, got_outputs: list, args: list | None = None) -> None:
    """Asserts each output against ``case.expected`` (from ``args``, or a fresh ``case.args()``) with the case's
    tolerances (or bit for bit when ``check_exact``); the message names the case and the output."""
    want_all = case.expected(case.args() if args is None else args)
    assert len(got_outputs) == len(want_all) == len(case.outputs), \
        f"{case.name}: {len(got_outputs)} outputs given, {len(want_all)} expected, {len(case.outputs)} declared"
    for index, got, want in zip(case.outputs, got_outputs, want_all):
        got, want = np.asarray(got), np.asarray(want)
        message = f"{case.name} output {index} (argument {index})"
        assert got.shape == want.shape, f"{message}: shape {got.shape}, expected {want.shape}"
        if case.check_exact:
            np.testing.assert_array_equal(got, want, err_msg=message)
        else:
            np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=case.rtol, atol=case.atol,
                                       err_msg=message)


def device_arch(compute_version: str | None = None) -> str | None:
    """The case arch whose code runs on a GPU of this compute capability (``tvm.cuda(0)``'s when not given):
    sm_80 for 8.x, sm_90a for 9.0, sm_100a for 10.0; None for no GPU or one none of them runs on."""
    if compute_version is None:
        import tvm

        try:
            device = tvm.cuda(0)
            if not device.exist:
                return None
            compute_version = str(device.compute_version)
        except Exception:  # noqa: BLE001  (no CUDA driver at all)
            return None
    major, minor = (int(x) for x in compute_version.split("."))
    if major == 8:
        return "sm_80"
    return {(9, 0): "sm_90a", (10, 0): "sm_100a"}.get((major, minor))


def for_device(cases, key: str) -> GpuCase:
    """The case named ``key``, or ``key/<arch>`` for the device's arch; skips the calling test when there is none."""
    import pytest

    by_name = {c.name: c for c in cases}
    if key in by_name:
        case = by_name[key]
        if device_arch() != case.arch:
            pytest.skip(f"{key} is {case.arch} code; this GPU runs {device_arch() or 'none of sm_80, sm_90a, sm_100a'}")
        return case
    arch = device_arch()
    if f"{key}/{arch}" in by_name:
        return by_name[f"{key}/{arch}"]
    archs = sorted(c.arch for c in cases if c.name.startswith(key + "/"))
    assert archs, f"no GPU case {key}"
    pytest.skip(f"{key} is compiled for {', '.join(archs)}; this GPU runs {arch or 'none of them'}")


def run_on_gpu(case: GpuCase) -> None:
    """Runs the case's executable on ``tvm.cuda(0)`` and checks its outputs."""
    import tvm

    device = tvm.cuda(0)
    host = case.args()
    tensors = [tvm.runtime.tensor(a, device) for a in host]
    case.build()(*tensors)
    check(case, [tensors[i].numpy() for i in case.outputs], host)


def prim_func(kernel):
    """The one PrimFunc of ``kernel`` (a PrimFunc, or an IRModule holding one)."""
    from tvm import tirx

    if isinstance(kernel, tirx.PrimFunc):
        return kernel
    funcs = [f for f in kernel.functions.values() if isinstance(f, tirx.PrimFunc)]
    if len(funcs) != 1:
        raise ValueError(f"expected one PrimFunc, found {len(funcs)}")
    return funcs[0]


def params(kernel) -> list[tuple[tuple, str]]:
    """(shape, dtype) of each parameter's buffer, in order. (TIRx PrimFuncs of TVM 0.27 have no ``buffer_map``: a
    buffer parameter is a ``Var`` that carries the buffer's shape and dtype.)"""
    func = prim_func(kernel)
    return [(tuple(int(n) for n in p.shape), str(p.dtype)) for p in func.params]


def numpy_dtype(dtype: str):
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(dtype)


def normal_args(shapes: list) -> list:
    """Every argument, (shape, dtype) as ``params`` gives them, from a standard normal (seed 0, in order), then the
    last one (the output) zeroed: the inputs of the element-wise, reduction and copy tests."""
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(shape).astype(dtype) for shape, dtype in shapes]
    host[-1][...] = 0
    return host


def integer_operands(shapes: list, dtype: str) -> list:
    """A and B of small integers in [-3, 3] (exact in fp16 and bf16; seed 0) in ``dtype``, then the float32 output
    zeroed: the operands of the GEMM tests whose kernel computes A (M x K) times B (N x K) transposed. ``shapes``:
    (shape, dtype) of the three parameters, as ``params`` gives them."""
    shapes = [shape for shape, _ in shapes]
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, shapes[0]).astype("float32")
    b = rng.integers(-3, 4, shapes[1]).astype("float32")
    return [a.astype(numpy_dtype(dtype)), b.astype(numpy_dtype(dtype)), np.zeros(shapes[2], "float32")]


def product(host: list, plus: float = 0.0) -> list:
    """A times B transposed in float32 (exact for ``integer_operands``), plus a constant."""
    return [host[0].astype("float32") @ host[1].astype("float32").T + np.float32(plus)]


def fp16_gemm_operands(m: int, n: int, k: int) -> list:
    """A (M x K) and B (N x K) of integers in [-2, 2] in fp16 (seed 0), D (M x N) fp16 zeros: the operands of the
    GEMM examples (axe4j.cuda.kernels), whose sums of products stay exact in fp32 and, up to 2048, in fp16."""
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (m, k)).astype("float16")
    b = rng.integers(-2, 3, (n, k)).astype("float16")
    return [a, b, np.zeros((m, n), "float16")]


def fp16_product(host: list) -> list:
    """A times B transposed in float32, as the fp16 output holds it."""
    return [(host[0].astype("float32") @ host[1].astype("float32").T).astype("float16")]
