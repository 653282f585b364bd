"""bfloat16 on the CPU (llvm): fill, copy, cast, element-wise maps and reductions, with contiguous and stride-0
(broadcast) sources, checked against numpy on ``ml_dtypes.bfloat16``.

A vectorized loop that stores one value to every lane (a fill, a stride-0 source, a reduction's initial value)
used to stop inside TVM (``dtype mismatch on BufferStore: buffer's dtype is T.uint16 ... RHS's dtype is
T.bfloat16x7``): ``axe4j/cpu/bf16.py`` says why and how the CPU emitters store bfloat16 instead. Exact ops (fill,
copy, casts, max, min, add of bfloat16 values, maps rounded once) must equal numpy bit for bit; sums, which round
at each step, within a bound on that rounding.
"""

import tvm  # noqa: F401  (before the JVM)

import ml_dtypes
import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(20261207)
pytestmark = pytest.mark.strict   # axe4j's own rules lower every call here


@pytest.fixture(scope="module", autouse=True)
def installed():
    axe4j.install()


def run(kernel, *arrays):
    lib = axe4j.compile(kernel, "llvm")
    tensors = [tvm.runtime.tensor(a) for a in arrays]
    lib(*tensors)
    return [t.numpy() for t in tensors]


def same_bits(got, expected):
    """Equal as bfloat16 values bit for bit (NaNs: NaN at the same places)."""
    got, expected = np.asarray(got), np.asarray(expected).astype(got.dtype)
    nan = np.isnan(expected.astype("float32"))
    np.testing.assert_array_equal(np.isnan(got.astype("float32")), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint16), expected[~nan].view(np.uint16))


def bf16_values(shape):
    """Random bfloat16 values over many binades, with both signs."""
    return (RNG.standard_normal(shape) * np.exp2(RNG.integers(-20, 20, shape))).astype(BF16)


# ---- fill: every lane of a vector store gets one value ---------------------------------------------------------

@pytest.mark.parametrize("n", [7, 64, 131])
@pytest.mark.parametrize("value", [1.0, -3.140625, 65280.0])
def test_fill(n, value):
    @T.prim_func
    def kernel(A: T.Buffer((n,), "bfloat16")):
        Tx.fill(A[0:n], T.bfloat16(value))

    (out,) = run(kernel, np.full(n, 5, BF16))
    same_bits(out, np.full(n, value, BF16))


def test_fill_rounds_a_float32_value_to_nearest_even():
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even gives 1; 1 + 3 * 2^-8 gives 1 + 2^-6
    @T.prim_func
    def kernel(A: T.Buffer((16,), "bfloat16"), B: T.Buffer((16,), "bfloat16")):
        Tx.fill(A[0:16], T.Cast("bfloat16", T.float32(1.00390625)))
        Tx.fill(B[0:16], T.Cast("bfloat16", T.float32(1.01171875)))

    a, b = run(kernel, np.zeros(16, BF16), np.zeros(16, BF16))
    same_bits(a, np.full(16, np.float32(1.00390625), BF16))
    same_bits(b, np.full(16, np.float32(1.01171875), BF16))
    assert float(a[0]) == 1.0 and float(b[0]) == 1.015625


# ---- copies and casts, contiguous and from a stride-0 source ----------------------------------------------------

BROADCAST_ROW = TileLayout(S[(5, 24):(0, 1)])   # every row of the (5, 24) view reads the same 24 elements
BROADCAST_ALL = TileLayout(S[(5, 24):(0, 0)])   # every element reads element 0


def _src_for(layout):
    return 24 if layout is BROADCAST_ROW else 1


def _logical(flat, layout):
    return np.broadcast_to(flat[:24] if layout is BROADCAST_ROW else flat[:1], (5, 24))


@pytest.mark.parametrize("layout", [BROADCAST_ROW, BROADCAST_ALL], ids=["row", "all"])
@pytest.mark.parametrize("src_dtype,dst_dtype", [("bfloat16", "bfloat16"), ("float32", "bfloat16"),
                                                 ("bfloat16", "float32"), ("float16", "bfloat16"),
                                                 ("bfloat16", "float16")])
def test_copy_and_cast_from_a_stride0_source(layout, src_dtype, dst_dtype):
    size = _src_for(layout)

    @T.prim_func
    def kernel(Af: T.Buffer((size,), src_dtype), B: T.Buffer((5, 24), dst_dtype)):
        A = T.decl_buffer((5, 24), src_dtype, data=Af.data, layout=layout)
        if src_dtype == dst_dtype:
            Tx.copy(B[:, :], A[:, :])
        else:
            Tx.cast(B[:, :], A[:, :])

    a = (RNG.standard_normal(size) * 100).astype(np.float32)
    a = a.astype(BF16 if src_dtype == "bfloat16" else src_dtype)
    out = run(kernel, a, np.zeros((5, 24), BF16 if dst_dtype == "bfloat16" else dst_dtype))[1]
    expected = _logical(a, layout)
    # widening float16 or bfloat16 to float32 is exact: the reference rounds once, from float32
    if out.dtype == BF16:
        same_bits(out, expected.astype(np.float32).astype(BF16))
    else:
        np.testing.assert_array_equal(out, expected.astype(np.float32).astype(out.dtype))


@pytest.mark.parametrize("src_dtype,dst_dtype", [("bfloat16", "bfloat16"), ("float32", "bfloat16"),
                                                 ("bfloat16", "float32"), ("float16", "bfloat16"),
                                                 ("bfloat16", "float16")])
def test_copy_and_cast_contiguous(src_dtype, dst_dtype):
    @T.prim_func
    def kernel(A: T.Buffer((9, 37), src_dtype), B: T.Buffer((9, 37), dst_dtype)):
        if src_dtype == dst_dtype:
            Tx.copy(B[:, :], A[:, :])
        else:
            Tx.cast(B[:, :], A[:, :])

    np_dtype = {"bfloat16": BF16, "float16": np.dtype("float16"), "float32": np.dtype("float32")}
    a = (RNG.standard_normal((9, 37)) * 1000).astype(np.float32).astype(np_dtype[src_dtype])
    out = run(kernel, a, np.zeros((9, 37), np_dtype[dst_dtype]))[1]
    same_bits(out, a.astype(np.float32).astype(out.dtype))


def test_cast_of_every_float32_class_rounds_like_ml_dtypes():
    """Halfway cases, subnormals, infinities, NaN, the largest float32 (rounds to infinity)."""
    special = np.array([1.00390625, 1.01171875, -1.00390625, 1e-40, -1e-40, 3.3895314e38, 3.4028235e38,
                        -3.4028235e38, np.inf, -np.inf, np.nan, 0.0, -0.0, 1.1754942e-38, 65504.0, 2.0 ** -133],
                       np.float32)
    a = np.concatenate([special, RNG.standard_normal(48).astype(np.float32) * np.float32(1e5)])

    @T.prim_func
    def kernel(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "bfloat16")):
        Tx.cast(B[0:64], A[0:64])

    out = run(kernel, a, np.zeros(64, BF16))[1]
    same_bits(out, a.astype(BF16))


# ---- element-wise maps ------------------------------------------------------------------------------------------

def test_binary_maps_with_a_stride0_operand_round_once():
    @T.prim_func
    def kernel(Af: T.Buffer((24,), "bfloat16"), B: T.Buffer((5, 24), "bfloat16"), C: T.Buffer((5, 24), "bfloat16"),
               D: T.Buffer((5, 24), "bfloat16"), E: T.Buffer((5, 24), "bfloat16")):
        A = T.decl_buffer((5, 24), "bfloat16", data=Af.data, layout=BROADCAST_ROW)
        Tx.add(C[:, :], A[:, :], B[:, :])
        Tx.mul(D[:, :], B[:, :], A[:, :])
        Tx.maximum(E[:, :], A[:, :], B[:, :])

    a, b = bf16_values(24), bf16_values((5, 24))
    out = run(kernel, a, b, *[np.zeros((5, 24), BF16)] * 3)
    wide_a, wide_b = np.broadcast_to(a, (5, 24)).astype(np.float32), b.astype(np.float32)
    # one float32 add or mul of two bfloat16 values rounded to bfloat16 is the correctly rounded result
    same_bits(out[2], (wide_a + wide_b).astype(BF16))
    same_bits(out[3], (wide_b * wide_a).astype(BF16))
    same_bits(out[4], np.maximum(wide_a, wide_b).astype(BF16))


UNARY = {"exp": (Tx.exp, np.exp), "sqrt": (Tx.sqrt, np.sqrt), "silu": (Tx.silu, lambda x: x / (1 + np.exp(-x))),
         "reciprocal": (Tx.reciprocal, lambda x: 1 / x)}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_maps_compute_in_float32_and_round_once(name):
    tile_op, ref = UNARY[name]

    @T.prim_func
    def kernel(A: T.Buffer((512,), "bfloat16"), B: T.Buffer((512,), "bfloat16")):
        tile_op(B[0:512], A[0:512])

    a = (RNG.uniform(-20, 20, 512) if name != "sqrt" else RNG.uniform(0, 1e4, 512)).astype(BF16)
    out = run(kernel, a, np.zeros(512, BF16))[1]
    with np.errstate(over="ignore", divide="ignore"):
        expected = ref(a.astype(np.float32)).astype(np.float32)
    # the float32 functions of numpy and of the compiled code may differ in their last float32 bit, which can move
    # a result across a bfloat16 rounding boundary: at most one bfloat16 step apart, and equal almost everywhere
    got_bits, ref_bits = out.view(np.int16).astype(np.int32), expected.astype(BF16).view(np.int16).astype(np.int32)
    assert np.max(np.abs(got_bits - ref_bits)) <= 1
    assert np.mean(got_bits == ref_bits) > 0.99


# ---- reductions, with their initial values -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["max", "min", "sum"])
@pytest.mark.parametrize("n", [37, 128])
def test_reduce_along_rows(name, n):
    tile_op = {"max": Tx.max, "min": Tx.min, "sum": Tx.sum}[name]

    @T.prim_func
    def kernel(A: T.Buffer((6, n), "bfloat16"), B: T.Buffer((6,), "bfloat16"), C: T.Buffer((n,), "bfloat16")):
        tile_op(B[:], A[:, :], axes=-1)
        tile_op(C[:], A[:, :], axes=0)

    a = (RNG.standard_normal((6, n)) * 10).astype(BF16)
    _, b, c = run(kernel, a, np.full(6, 7, BF16), np.full(n, 7, BF16))
    wide = a.astype(np.float32)
    for got, axis in ((b, 1), (c, 0)):
        if name == "sum":   # each step rounds to bfloat16: |error| <= (terms) * 2^-8 * sum |a|
            bound = wide.shape[axis] * 2.0 ** -8 * np.abs(wide).sum(axis=axis)
            assert np.all(np.abs(got.astype(np.float64) - wide.astype(np.float64).sum(axis=axis)) <= bound)
        else:
            same_bits(got, getattr(np, name)(wide, axis=axis).astype(BF16))


@pytest.mark.parametrize("name", ["max", "min"])
def test_reduce_of_a_stride0_source(name):
    tile_op = {"max": Tx.max, "min": Tx.min}[name]

    @T.prim_func
    def kernel(Af: T.Buffer((24,), "bfloat16"), B: T.Buffer((24,), "bfloat16")):
        A = T.decl_buffer((5, 24), "bfloat16", data=Af.data, layout=BROADCAST_ROW)
        tile_op(B[:], A[:, :], axes=0)

    a = bf16_values(24)
    out = run(kernel, a, np.zeros(24, BF16))[1]
    same_bits(out, a)


def test_reduce_initial_values_are_below_and_above_every_value():
    """max of all -big values and min of all +big values: an initial value that is not the extreme shows."""
    @T.prim_func
    def kernel(A: T.Buffer((4, 64), "bfloat16"), B: T.Buffer((4,), "bfloat16"), C: T.Buffer((4,), "bfloat16")):
        Tx.max(B[:], A[:, :], axes=-1)
        Tx.min(C[:], A[:, :], axes=-1)

    a = np.full((4, 64), -3.3e38, np.float32).astype(BF16)
    a[1] = np.float32(3.3e38)
    a[2, 5] = -np.inf
    a[3, 7] = np.inf
    _, b, c = run(kernel, a, np.zeros(4, BF16), np.zeros(4, BF16))
    wide = a.astype(np.float32)
    same_bits(b, wide.max(axis=1).astype(BF16))
    same_bits(c, wide.min(axis=1).astype(BF16))


# ---- every element-wise rule and both reduce rules, on a tiled layout ---------------------------------------------

TILED = TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)])   # (8, 8) in 4 x 4 tiles
TILED_ADDRESS = np.array([[(i // 4) * 32 + (i % 4) * 4 + (j // 4) * 16 + j % 4 for j in range(8)] for i in range(8)])


@pytest.mark.parametrize("dispatch", ["axe4j-cpu-vector", "axe4j-cpu-digits", "axe4j-cpu-scalar"])
def test_every_elementwise_rule_on_a_tiled_source(dispatch):
    @T.prim_func
    def kernel(Af: T.Buffer((64,), "bfloat16"), B: T.Buffer((8, 8), "bfloat16"), C: T.Buffer((8, 8), "bfloat16"),
               D: T.Buffer((8, 8), "float32"), E: T.Buffer((8, 8), "bfloat16")):
        A = T.decl_buffer((8, 8), "bfloat16", data=Af.data, layout=TILED)
        Tx.copy(B[:, :], A[:, :], dispatch=dispatch)
        Tx.fill(C[:, :], T.bfloat16(2.5), dispatch=dispatch)
        Tx.cast(D[:, :], A[:, :], dispatch=dispatch)
        Tx.mul(E[:, :], A[:, :], A[:, :], dispatch=dispatch)

    a = bf16_values(64)
    _, b, c, d, e = run(kernel, a, np.zeros((8, 8), BF16), np.zeros((8, 8), BF16), np.zeros((8, 8), np.float32),
                        np.zeros((8, 8), BF16))
    logical = a[TILED_ADDRESS]
    same_bits(b, logical)
    same_bits(c, np.full((8, 8), 2.5, BF16))
    np.testing.assert_array_equal(d, logical.astype(np.float32))
    same_bits(e, (logical.astype(np.float32) ** 2).astype(BF16))


@pytest.mark.parametrize("dispatch", ["axe4j-cpu-reduce", "axe4j-cpu-reduce-digits"])
@pytest.mark.parametrize("name", ["max", "min"])
def test_both_reduce_rules_on_a_tiled_source(dispatch, name):
    tile_op = {"max": Tx.max, "min": Tx.min}[name]

    @T.prim_func
    def kernel(Af: T.Buffer((64,), "bfloat16"), B: T.Buffer((8,), "bfloat16")):
        A = T.decl_buffer((8, 8), "bfloat16", data=Af.data, layout=TILED)
        tile_op(B[:], A[:, :], axes=-1, dispatch=dispatch)

    a = bf16_values(64)
    _, b = run(kernel, a, np.zeros(8, BF16))
    same_bits(b, getattr(np, name)(a[TILED_ADDRESS].astype(np.float32), axis=1).astype(BF16))


def test_mixed_dtypes_a_scalar_operand_and_zero():
    """max of float32 into bfloat16, max of bfloat16 into float32, add of a bfloat16 scalar, zero."""
    @T.prim_func
    def kernel(A: T.Buffer((6, 40), "float32"), B: T.Buffer((6,), "bfloat16"), C: T.Buffer((6, 40), "bfloat16"),
               D: T.Buffer((6,), "float32"), E: T.Buffer((6, 40), "bfloat16"), F: T.Buffer((6, 40), "bfloat16")):
        Tx.max(B[:], A[:, :], axes=-1)
        Tx.cast(C[:, :], A[:, :])
        Tx.max(D[:], C[:, :], axes=-1)
        Tx.add(E[:, :], C[:, :], T.bfloat16(1.5))
        Tx.zero(F[:, :])

    a = (RNG.standard_normal((6, 40)) * 100).astype(np.float32)
    _, b, c, d, e, f = run(kernel, a, np.zeros(6, BF16), np.zeros((6, 40), BF16), np.zeros(6, np.float32),
                           np.zeros((6, 40), BF16), np.ones((6, 40), BF16))
    same_bits(b, a.max(axis=1).astype(BF16))
    same_bits(c, a.astype(BF16))
    np.testing.assert_array_equal(d, a.astype(BF16).astype(np.float32).max(axis=1))
    same_bits(e, (a.astype(BF16).astype(np.float32) + np.float32(1.5)).astype(BF16))
    same_bits(f, np.zeros((6, 40), BF16))


def test_a_copy_moves_bits_unchanged():
    """A copy stores each loaded element's bits: a signalling NaN's payload and -0 survive, from a stride-0 source
    too (a value computed through float32 would make the NaN quiet)."""
    @T.prim_func
    def kernel(A: T.Buffer((8,), "bfloat16"), B: T.Buffer((8,), "bfloat16"), Cf: T.Buffer((1,), "bfloat16"),
               D: T.Buffer((5, 24), "bfloat16")):
        C = T.decl_buffer((5, 24), "bfloat16", data=Cf.data, layout=BROADCAST_ALL)
        Tx.copy(B[0:8], A[0:8])
        Tx.copy(D[:, :], C[:, :])

    a = np.array([0x7F81, 0xFF82, 0x8000, 0x0001, 0x7F80, 0x3F80, 0x7FC3, 0xC000], np.uint16).view(BF16)
    c = np.array([0x7F85], np.uint16).view(BF16)
    _, b, _, d = run(kernel, a, np.zeros(8, BF16), c, np.zeros((5, 24), BF16))
    np.testing.assert_array_equal(b.view(np.uint16), a.view(np.uint16))
    np.testing.assert_array_equal(d.view(np.uint16), np.full((5, 24), 0x7F85, np.uint16))


# ---- GEMM into a bfloat16 D: float32 arithmetic, D rounded where it is stored ----------------------------------

def _gemm(m, n, k, alpha):
    @T.prim_func
    def gemm(A: T.Buffer((m, k), "bfloat16"), B: T.Buffer((k, n), "bfloat16"), C: T.Buffer((m, n), "bfloat16"),
             D: T.Buffer((m, n), "bfloat16")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, False, T.float32(alpha), T.float32(0.0))
    return gemm


@pytest.mark.parametrize("mcpu", [None, "skylake-avx512", "znver4", "x86-64-v3"])
@pytest.mark.parametrize("m, n, k", [(2, 256, 64), (64, 96, 300)])   # the row kernel (AVX-512), the packed tile
def test_gemm_into_bfloat16_compiles_for_every_cpu(mcpu, m, n, k):
    target = axe4j.host_target() if mcpu is None else tvm.target.Target({"kind": "llvm", "mcpu": mcpu})
    lib = axe4j.compile(_gemm(m, n, k, 1.0), target)
    if mcpu is not None:
        return   # compiled for another CPU: not run here
    a = RNG.integers(-3, 4, (m, k)).astype(BF16)
    b = RNG.integers(-3, 4, (k, n)).astype(BF16)
    tensors = [tvm.runtime.tensor(x) for x in (a, b, np.zeros((m, n), BF16), np.zeros((m, n), BF16))]
    lib(*tensors)
    # integer partial sums below 256 are exact in bfloat16: the product is too, whatever the order
    same_bits(tensors[3].numpy(), (a.astype("float32") @ b.astype("float32")).astype(BF16))


def test_gemm_into_bfloat16_on_random_values_is_within_the_roundings_of_d():
    m, n, k = 64, 96, 300
    lib = axe4j.compile(_gemm(m, n, k, 1.5), axe4j.host_target())
    a, b = RNG.standard_normal((m, k)).astype(BF16), RNG.standard_normal((k, n)).astype(BF16)
    tensors = [tvm.runtime.tensor(x) for x in (a, b, np.zeros((m, n), BF16), np.zeros((m, n), BF16))]
    lib(*tensors)
    reference = 1.5 * (a.astype(np.float64) @ b.astype(np.float64))
    # D is read and rounded once per K block of the plan (at most 3 here): within 2 bfloat16 steps of the scale
    step = np.exp2(np.floor(np.log2(np.abs(reference).max())) - 7)
    assert np.abs(tensors[3].numpy().astype(np.float64) - reference).max() <= 2 * step
