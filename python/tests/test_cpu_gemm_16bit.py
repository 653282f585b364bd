"""The blocked CPU GEMM with float16 and bfloat16 A and B into a float32 D.

Each 16-bit element is widened to float32 where the kernel reads it (while packing, or where the row kernel loads
it) and every multiply-add is float32, so the result must match numpy's float32 GEMM of the same widened values
up to float32 rounding: an error bound of ``K * 2^-23 * (|A| @ |B|)`` per element, far below one 16-bit rounding
(2^-11 for float16, 2^-8 for bfloat16; ``test_the_bound_rejects_a_result_rounded_to_16_bits``). On small integers
every sum is exact and the result must equal numpy's bit for bit. Kernels run for the AVX2 and the AVX-512 target
where this machine has the ISA (as in ``test_cpu_gemm_isa.py``); explain and the instructions are checked anywhere.

The call used to be reported as failing TVM's argument check (``Mismatched A.strides ... expected to be compact
array``). That check fires for an array whose strides are not row-major, whatever its dtype: numpy's ``x.T.astype``
keeps the transposed (column-major) order, and such an array passed to the compiled function as it is fails for
float32 too (``test_a_column_major_array_fails_the_argument_check_for_any_dtype``); ``tvm.runtime.tensor`` copies
it into a compact tensor.
"""

import io

import ml_dtypes
import numpy as np
import pytest
import tvm
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j
from _asm import innermost_fma_loop, instructions
from test_cpu_gemm_isa import AVX2, AVX512, NEEDS, host_flags, runs_here

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

NUMPY_DTYPE = {"float16": np.dtype("float16"), "bfloat16": np.dtype(ml_dtypes.bfloat16), "float32": np.dtype("float32")}
TARGETS = [pytest.param(AVX2, id="avx2-haswell"), pytest.param(AVX512, id="avx512-skylake")]
DTYPES = ["float16", "bfloat16"]


def gemm_kernel(m, n, k, a_dtype, b_dtype, trans_a=False, trans_b=False, beta=0.0):
    a_shape = (k, m) if trans_a else (m, k)
    b_shape = (n, k) if trans_b else (k, n)

    @T.prim_func
    def gemm(A: T.Buffer(a_shape, a_dtype), B: T.Buffer(b_shape, b_dtype), C: T.Buffer((m, n), "float32"),
             D: T.Buffer((m, n), "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], trans_a, trans_b, T.float32(1.0), T.float32(beta))

    return gemm, a_shape, b_shape


def explain(kernel, target) -> str:
    return axe4j.explain(kernel, tvm.target.Target(target) if isinstance(target, dict) else target,
                         file=io.StringIO())


def run(kernel, target, a, b, c):
    lib = axe4j.compile(kernel, tvm.target.Target(target))
    tensors = [tvm.runtime.tensor(x) for x in (a, b, c, np.zeros(c.shape, "float32"))]
    lib(*tensors)
    return tensors[3].numpy()


def require(target):
    if not runs_here(target):
        pytest.skip(f"this CPU lacks {sorted(NEEDS[target['mcpu']] - host_flags())} for {target['mcpu']}")


def product(a, b, trans_a, trans_b):
    """op(a) @ op(b) in numpy float32 from the 16-bit values, and |op(a)| @ |op(b)| (the error bound's scale)."""
    a32, b32 = a.astype("float32"), b.astype("float32")
    a32, b32 = (a32.T if trans_a else a32), (b32.T if trans_b else b32)
    return a32 @ b32, np.abs(a32).astype("float64") @ np.abs(b32).astype("float64")


def within_float32_rounding(actual, expected, scale, k):
    """Elementwise |actual - expected| <= K * 2^-23 * (|A| @ |B|): two float32 sums of the same K products in any
    order differ by at most about that much."""
    bound = k * 2.0 ** -23 * scale + 1e-30
    return np.abs(actual.astype("float64") - expected.astype("float64")) <= bound


# (M, N, K, trans_a, trans_b, beta): odd sizes with A·B^T and A·B, full tiles, A transposed, both transposed, K over
# two K blocks with beta * C, one row and four rows with B stride-1 along n (the AVX-512 row kernel; 2100 columns =
# two 1024-column chunks and a ragged one)
SHAPES = [(17, 33, 65, False, True, 0.0), (17, 33, 65, False, False, 0.0), (64, 128, 96, False, False, 0.0),
          (64, 128, 96, False, True, 0.0), (64, 128, 96, True, False, 0.0), (31, 45, 70, True, True, 0.0),
          (50, 37, 300, False, False, 1.0), (1, 100, 70, False, False, 0.0), (4, 2100, 33, False, False, 2.0)]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k,trans_a,trans_b,beta", SHAPES)
def test_16bit_gemm_matches_numpy_float32_of_the_same_values(target, dtype, m, n, k, trans_a, trans_b, beta):
    require(target)
    kernel, a_shape, b_shape = gemm_kernel(m, n, k, dtype, dtype, trans_a, trans_b, beta)
    assert "axe4j-cpu-gemm-blocked (prio=10): accepted <- chosen" in explain(kernel, target)
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    a = rng.standard_normal(a_shape).astype(NUMPY_DTYPE[dtype])
    b = rng.standard_normal(b_shape).astype(NUMPY_DTYPE[dtype])
    c = rng.standard_normal((m, n)).astype("float32")
    out = run(kernel, target, a, b, c)
    expected, scale = product(a, b, trans_a, trans_b)
    expected = expected + np.float32(beta) * c
    scale = scale + abs(beta) * np.abs(c)
    ok = within_float32_rounding(out, expected, scale, k)
    worst = np.unravel_index(np.argmax(np.abs(out - expected)), out.shape)
    assert ok.all(), (f"{(~ok).sum()} of {ok.size} elements off; worst at {worst}: {out[worst]} against "
                      f"{expected[worst]}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k,trans_a,trans_b", [(17, 33, 65, False, True), (64, 128, 96, True, False),
                                                   (4, 2100, 33, False, False)])
def test_16bit_gemm_is_exact_on_small_integers(target, dtype, m, n, k, trans_a, trans_b):
    """Integers up to 3 are exact in both 16-bit types and every partial sum is exact in float32: bit for bit."""
    require(target)
    kernel, a_shape, b_shape = gemm_kernel(m, n, k, dtype, dtype, trans_a, trans_b)
    rng = np.random.default_rng(k)
    a = rng.integers(-3, 4, a_shape).astype(NUMPY_DTYPE[dtype])
    b = rng.integers(-3, 4, b_shape).astype(NUMPY_DTYPE[dtype])
    out = run(kernel, target, a, b, np.zeros((m, n), "float32"))
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(out, ((a64.T if trans_a else a64) @ (b64.T if trans_b else b64)).astype("float32"))


@pytest.mark.parametrize("target", TARGETS)
def test_one_16bit_operand_with_a_float32_one(target):
    require(target)
    m, n, k = 33, 40, 70
    kernel, a_shape, b_shape = gemm_kernel(m, n, k, "bfloat16", "float32", trans_b=True)
    rng = np.random.default_rng(3)
    a = rng.standard_normal(a_shape).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal(b_shape).astype("float32")
    out = run(kernel, target, a, b, np.zeros((m, n), "float32"))
    expected, scale = product(a, b, False, True)
    assert within_float32_rounding(out, expected, scale, k).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_bound_rejects_a_result_rounded_to_16_bits(dtype):
    """The tolerance is tight enough that rounding the result (or the products) to the input type would fail."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((17, 65)).astype(NUMPY_DTYPE[dtype])
    b = rng.standard_normal((65, 33)).astype(NUMPY_DTYPE[dtype])
    expected, scale = product(a, b, False, False)
    rounded = expected.astype(NUMPY_DTYPE[dtype]).astype("float32")
    assert not within_float32_rounding(rounded, expected, scale, 65).all()
    assert within_float32_rounding(expected, expected, scale, 65).all()


def test_column_major_inputs_are_copied_compact_by_tvm_runtime_tensor():
    """``x.T.astype`` keeps column-major order; ``tvm.runtime.tensor`` copies it row-major and the call runs."""
    m, n, k = 17, 33, 65
    kernel, a_shape, b_shape = gemm_kernel(m, n, k, "float16", "float16")
    rng = np.random.default_rng(9)
    a = rng.standard_normal((k, m)).T.astype("float16")
    b = rng.standard_normal((n, k)).T.astype("float16")
    assert not a.flags["C_CONTIGUOUS"] and not b.flags["C_CONTIGUOUS"]
    out = run(kernel, "llvm", a, b, np.zeros((m, n), "float32"))
    expected, scale = product(a, b, False, False)
    assert within_float32_rounding(out, expected, scale, k).all()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_column_major_array_fails_the_argument_check_for_any_dtype(dtype):
    """The error once reported for 16-bit inputs: TVM's check of a non-row-major array passed as it is (through
    DLPack). float32 fails the same way; it is the caller's array, not the kernel."""
    m, n, k = 16, 24, 32
    kernel, _, _ = gemm_kernel(m, n, k, dtype, dtype)
    lib = axe4j.compile(kernel, "llvm")
    a = np.random.default_rng(1).standard_normal((k, m)).T.astype(dtype)
    b = np.zeros((k, n), dtype)
    with pytest.raises(ValueError, match=r"(?s)argument #0 \(A\): shape \[16, 32\] and dtype \w+ match, but the "
                       r"array is not compact row-major.*Mismatched A\.strides.*expected to be compact array"):
        lib(a, b, np.zeros((m, n), "float32"), np.zeros((m, n), "float32"))
    lib(np.ascontiguousarray(a), b, np.zeros((m, n), "float32"), np.zeros((m, n), "float32"))


def test_explain_says_how_16bit_inputs_are_widened():
    fp16, _, _ = gemm_kernel(256, 256, 256, "float16", "float16")
    assert "A, B float16 -> float32 by F16C vcvtph2ps, while packing; float32 multiply-adds into float32 " \
           "accumulators: no 16-bit FMA or dot product (avx512_bf16 vdpbf16ps, avx512_fp16) is used" \
           in explain(fp16, AVX512)
    assert "float16 -> float32 by F16C vcvtph2ps" in explain(fp16, AVX2)
    assert "float16 -> float32 by a call to __extendhfsf2 per element (the target has no F16C" \
           in explain(fp16, "llvm")
    rows, _, _ = gemm_kernel(4, 4096, 256, "bfloat16", "bfloat16")
    report = explain(rows, AVX512)
    assert "chunks of 1024 columns (2 KiB of each 16-bit V row)" in report
    assert "A, B bfloat16 -> float32 by moving each element's 16 bits to the top of a float32 (exact: a zero-extend " \
           "and a shift), where the row kernel loads them (nothing is packed)" in report
    mixed, _, _ = gemm_kernel(64, 64, 64, "float16", "float32")
    assert "; A float16 -> float32 by F16C" in explain(mixed, AVX512)
    fp32, _, _ = gemm_kernel(256, 256, 256, "float32", "float32")
    assert "-> float32 by" not in explain(fp32, AVX512)


@pytest.mark.parametrize("dtype,widen", [("float16", "vcvtph2ps"), ("bfloat16", "vpslld")])
def test_the_instructions_explain_names(dtype, widen):
    """Compiled only (any machine): the AVX-512 code widens with the instruction explain names, multiplies with
    float32 zmm FMAs and has no 16-bit dot product; plain llvm calls __extendhfsf2 for float16."""
    for shape in ((256, 256, 256), (4, 4096, 256)):   # packed tile, row kernel
        kernel, _, _ = gemm_kernel(*shape, dtype, dtype)
        asm = axe4j.compile(kernel, tvm.target.Target(AVX512)).mod.inspect_source("asm")
        assert widen in asm, shape
        assert any("vfmadd" in line and "ps" in line and "zmm" in line for line in asm.splitlines()), shape
        assert "vdpbf16ps" not in asm and "vfmadd231ph" not in asm, shape
    kernel, _, _ = gemm_kernel(64, 64, 64, "float16", "float16")
    assert "__extendhfsf2" in axe4j.compile(kernel, "llvm").mod.inspect_source("asm")


@pytest.mark.parametrize("mcpu", ["znver4", "skylake-avx512"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_the_row_kernel_widens_each_element_once(dtype, mcpu):
    """Compiled only (any machine): at 8 x 4096 x 4096 the row kernel's column loop widens each V vector once for
    the 8 rows and each U factor before the loop, so it holds no broadcast and at most 2 instructions per FMA.
    A bfloat16 U factor and V vector, widened by a Cast, cannot be bound (TVM miscompiles it) and were widened and
    broadcast again for every row and vector: 203 instructions for 32 FMAs on znver4; by their bits they are
    bound (58)."""
    kernel, _, _ = gemm_kernel(8, 4096, 4096, dtype, dtype)
    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu})
    assert "row kernel" in axe4j.explain(kernel, target, file=io.StringIO())
    loop = instructions(innermost_fma_loop(axe4j.compile(kernel, target).mod.inspect_source("asm")))
    fmas = [i for i in loop if i.startswith("vfmadd") and "zmm" in i]
    assert len(fmas) >= 32 and not [i for i in loop if "broadcast" in i] and len(loop) <= 2 * len(fmas), loop
