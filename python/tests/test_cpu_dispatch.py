"""TIRx kernels with tile ops on Axe layouts, compiled for llvm through the Java CPU rules, checked against numpy.

Kernels with non-row-major layouts take flat 1-D tensors and declare layout views over their memory inside the
kernel (``T.decl_buffer(shape, data=X.data, layout=...)``), so offset, replicated, tiled, column-major and
worker (cpu) layouts address exactly the memory numpy prepares (``Mem``); the others take ordinary tensors.
Each case compares every element of the output, and where a layout leaves memory untouched, that memory must
keep its sentinel.
"""

import tvm  # noqa: F401  (before the JVM)

import os
import re

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import R, S, Axis, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j

SENTINEL = -7.0
CPU = Axis.get("cpu")
RNG = np.random.default_rng(20261122)


def row(*shape):
    return TileLayout(S[tuple(shape)])


def col(m, n):
    return TileLayout(S[(m, n):(1, m)])


class Mem:
    """Flat memory for one buffer plus a numpy view of the logical elements through an Axe layout."""

    def __init__(self, shape, layout, size, dtype="float32", fill=None):
        self.shape, self.layout, self.dtype = shape, layout, dtype
        self.data = np.full(size, SENTINEL, dtype) if fill is None else fill.astype(dtype)
        self.addresses = _addresses(shape, layout)

    def logical(self, flat=None):
        flat = self.data if flat is None else flat
        return flat[self.addresses[..., 0]]

    def put(self, values):
        for r in range(self.addresses.shape[-1]):
            self.data[self.addresses[..., r]] = values


def _addresses(shape, layout):
    """addr[c..., r]: memory address of logical coordinate c at replica r, by enumerating the layout in numpy.

    A shard iter on the worker axis ``cpu`` places worker w's slab of span_m elements after the slabs of workers
    0..w-1: the point (m, cpu=w) is the address m + w * span_m.
    """
    def axis(it):
        return str(it.axis.name)

    span_m = 1 + sum((int(it.extent) - 1) * abs(int(it.stride))
                     for it in list(layout.shard) + list(layout.replica) if axis(it) == "m")
    shard = [(int(it.extent), int(it.stride) * (span_m if axis(it) == "cpu" else 1)) for it in layout.shard]
    replica = [(int(it.extent), int(it.stride)) for it in layout.replica]
    offset = sum(int(v) for v in layout.offset.values())
    n = int(np.prod(shape))
    x = np.arange(n)
    addr = np.zeros(n, dtype=np.int64) + offset
    rest = x.copy()
    for e, s in reversed(shard):
        addr += (rest % e) * s
        rest //= e
    reps = np.zeros(1, dtype=np.int64)
    for e, s in replica:
        reps = (reps[:, None] + np.arange(e)[None, :] * s).reshape(-1)
    return (addr[:, None] + reps[None, :]).reshape(*shape, len(reps))


def random_mem(shape, layout, size, dtype="float32", low=-2.0, high=2.0):
    m = Mem(shape, layout, size, dtype)
    values = RNG.uniform(low, high, size=shape).astype(dtype)
    m.put(values)
    return m


def run(kernel, *mems, target="llvm"):
    lib = axe4j.compile(kernel, target)
    tensors = [tvm.runtime.tensor(m.data) for m in mems]
    lib(*tensors)
    return [t.numpy() for t in tensors]


def expect(out_flat, mem, expected, rtol=1e-5, atol=1e-6):
    """Every replica of every logical element equals ``expected``; memory outside the layout keeps its sentinel."""
    for r in range(mem.addresses.shape[-1]):
        np.testing.assert_allclose(out_flat[mem.addresses[..., r]].astype("float64"),
                                   np.asarray(expected, dtype="float64"), rtol=rtol, atol=atol)
    untouched = np.ones(out_flat.shape, bool)
    untouched[mem.addresses.reshape(-1)] = False
    np.testing.assert_array_equal(out_flat[untouched], mem.data[untouched])


@pytest.fixture(scope="module", autouse=True)
def installed():
    axe4j.install()


# ---- copy -----------------------------------------------------------------------------------------

COPY_CASES = {
    # name: (shape, src layout, src size, dst layout, dst size)
    "row_8x12": ((8, 12), row(8, 12), 96, row(8, 12), 96),
    "nonpow2_7x13": ((7, 13), row(7, 13), 91, row(7, 13), 91),
    "col_to_row_9x5": ((9, 5), col(9, 5), 45, row(9, 5), 45),
    "row_to_col_6x10": ((6, 10), row(6, 10), 60, col(6, 10), 60),
    "offset_dst_5x6": ((5, 6), row(5, 6), 30, TileLayout(S[(5, 6):(6, 1)] + 7), 40),
    "padded_rows_4x7": ((4, 7), TileLayout(S[(4, 7):(9, 1)]), 36, TileLayout(S[(4, 7):(8, 1)] + 3), 35),
    "replicated_dst_4x8": ((4, 8), row(4, 8), 32, TileLayout(S[(4, 8):(16, 1)] + R[2:8]), 64),
    "replicated_src_3x5": ((3, 5), TileLayout(S[(3, 5):(10, 1)] + R[2:5]), 30, row(3, 5), 15),
    "tiled_8x8_4x4": ((8, 8), TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)]), 64, row(8, 8), 64),
    "tiled_both_6x9": ((6, 9), TileLayout(S[(2, 3, 3, 3):(27, 3, 9, 1)]), 54,
                       TileLayout(S[(3, 2, 9):(2, 1, 6)]), 54),
    "large_parallel_1024x1040": ((1024, 1040), row(1024, 1040), 1064960, row(1024, 1040), 1064960),
    "prime_tail_3x37": ((3, 37), row(3, 37), 111, TileLayout(S[(3, 37):(37, 1)] + 4), 120),
    "prime_parallel_tail_1031x1033": ((1031, 1033), row(1031, 1033), 1065023, row(1031, 1033), 1065023),
}


def _copy_kernel(shape, src_layout, src_size, dst_layout, dst_size, dispatch=None):
    @T.prim_func
    def kernel(Sf: T.Buffer((src_size,), "float32"), Df: T.Buffer((dst_size,), "float32")):
        A = T.decl_buffer(shape, "float32", data=Sf.data, layout=src_layout)
        B = T.decl_buffer(shape, "float32", data=Df.data, layout=dst_layout)
        Tx.copy(B[:, :], A[:, :], dispatch=dispatch)

    return kernel


@pytest.mark.parametrize("name", sorted(COPY_CASES))
def test_copy(name):
    shape, sl, ss, dl, ds = COPY_CASES[name]
    src = random_mem(shape, sl, ss)
    dst = Mem(shape, dl, ds)
    _, out = run(_copy_kernel(shape, sl, ss, dl, ds), src, dst)
    expect(out, dst, src.logical())


def test_copy_sliced_regions_between_buffers_of_different_shapes():
    @T.prim_func
    def kernel(A: T.Buffer((9, 11), "float32"), B: T.Buffer((8, 12), "float32")):
        Tx.copy(B[2:6, 3:10], A[1:5, 0:7])

    a = RNG.standard_normal((9, 11)).astype("float32")
    b = np.full((8, 12), SENTINEL, "float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(b)
    lib(ta, tb)
    expected = b.copy()
    expected[2:6, 3:10] = a[1:5, 0:7]
    np.testing.assert_array_equal(tb.numpy(), expected)


def test_copy_unit_dim_region_of_3d_buffer():
    @T.prim_func
    def kernel(A: T.Buffer((5, 3, 6), "float32"), B: T.Buffer((5, 6), "float32")):
        Tx.copy(B[:, :], A[:, 2, :])

    a = RNG.standard_normal((5, 3, 6)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.zeros((5, 6), "float32"))
    lib(ta, tb)
    np.testing.assert_array_equal(tb.numpy(), a[:, 2, :])


def test_copy_sliced_tiled_layout_region_inside_one_tile_row():
    """A region [1:3, 4:8) of a 4x4-tiled 8x8 buffer stays inside digits: affine for the vector rule."""
    layout = TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)])

    @T.prim_func
    def kernel(Sf: T.Buffer((64,), "float32"), Df: T.Buffer((8,), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Sf.data, layout=layout)
        B = T.decl_buffer((2, 4), "float32", data=Df.data)
        Tx.copy(B[:, :], A[1:3, 4:8])

    src = random_mem((8, 8), layout, 64)
    dst = Mem((2, 4), row(2, 4), 8)
    _, out = run(kernel, src, dst)
    expect(out, dst, src.logical()[1:3, 4:8])


def test_copy_region_crossing_a_digit_falls_back_to_the_digits_rule():
    """Columns 2:6 of a 4x4-tiled 8x8 buffer cross a tile edge: the vector rule declines, the digits one runs."""
    layout = TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)])

    @T.prim_func
    def kernel(Sf: T.Buffer((64,), "float32"), Df: T.Buffer((32,), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Sf.data, layout=layout)
        B = T.decl_buffer((8, 4), "float32", data=Df.data)
        Tx.copy(B[:, :], A[:, 2:6])

    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "axe4j-cpu-vector (prio=10): declined:" in report and "crosses a digit of extent 4" in report
    assert "axe4j-cpu-digits (prio=5): accepted <- chosen" in report
    src = random_mem((8, 8), layout, 64)
    dst = Mem((8, 4), row(8, 4), 32)
    _, out = run(kernel, src, dst)
    expect(out, dst, src.logical()[:, 2:6])


def test_forced_scalar_variant_matches_and_forced_scalar_on_replicas_is_declined():
    shape, sl, ss, dl, ds = COPY_CASES["col_to_row_9x5"]
    src = random_mem(shape, sl, ss)
    dst = Mem(shape, dl, ds)
    _, out = run(_copy_kernel(shape, sl, ss, dl, ds, dispatch="axe4j-cpu-scalar"), src, dst)
    expect(out, dst, src.logical())

    shape, sl, ss, dl, ds = COPY_CASES["replicated_dst_4x8"]
    with pytest.raises(Exception, match="has replicas; TVM's buffer flattening stores only the base point"):
        axe4j.compile(_copy_kernel(shape, sl, ss, dl, ds, dispatch="axe4j-cpu-scalar"), "llvm")


def test_unknown_forced_variant_is_reported():
    shape, sl, ss, dl, ds = COPY_CASES["row_8x12"]
    with pytest.raises(Exception, match="no variant named 'axe4j-cpu-nothing'"):
        axe4j.compile(_copy_kernel(shape, sl, ss, dl, ds, dispatch="axe4j-cpu-nothing"), "llvm")


def test_generated_code_is_vectorized_and_parallel():
    shape, sl, ss, dl, ds = COPY_CASES["large_parallel_1024x1040"]
    lib = axe4j.compile(_copy_kernel(shape, sl, ss, dl, ds), "llvm")
    ll = lib.mod.inspect_source("ll")
    assert "<16 x float>" in ll
    assert "TVMBackendParallelLaunch" in ll


def test_explain_lists_every_candidate():
    shape, sl, ss, dl, ds = COPY_CASES["replicated_dst_4x8"]
    report = axe4j.explain(_copy_kernel(shape, sl, ss, dl, ds), "llvm", file=open("/dev/null", "w"))
    lines = report.splitlines()
    assert lines[0].startswith("main #0: T.tile.copy(")
    assert "axe4j-cpu-vector (prio=10): accepted <- chosen" in report
    assert "axe4j-cpu-scalar (prio=0): declined: copy: destination layout S[(4,8):(16,1)] + R[2:8] has replicas" \
        in report


# ---- fill, zero, cast -----------------------------------------------------------------------------

def test_fill_sliced_region_of_offset_layout():
    layout = TileLayout(S[(6, 7):(8, 1)] + 2)

    @T.prim_func
    def kernel(Df: T.Buffer((50,), "float32")):
        B = T.decl_buffer((6, 7), "float32", data=Df.data, layout=layout)
        Tx.fill(B[1:5, 2:7], T.float32(3.5))

    dst = random_mem((6, 7), layout, 50)
    before = dst.logical().copy()
    (out,) = run(kernel, dst)
    expected = before.copy()
    expected[1:5, 2:7] = 3.5
    expect(out, dst, expected)


def test_fill_replicated_layout():
    layout = TileLayout(S[(5, 3):(3, 1)] + R[3:15])

    @T.prim_func
    def kernel(Df: T.Buffer((45,), "float32")):
        B = T.decl_buffer((5, 3), "float32", data=Df.data, layout=layout)
        Tx.fill(B[:, :], T.float32(-1.25))

    dst = Mem((5, 3), layout, 45)
    (out,) = run(kernel, dst)
    expect(out, dst, np.full((5, 3), -1.25))


def test_zero_column_major():
    @T.prim_func
    def kernel(Df: T.Buffer((33,), "float32")):
        B = T.decl_buffer((3, 11), "float32", data=Df.data, layout=col(3, 11))
        Tx.zero(B[:, :])

    dst = random_mem((3, 11), col(3, 11), 33)
    (out,) = run(kernel, dst)
    expect(out, dst, np.zeros((3, 11)))


@pytest.mark.parametrize("src_dtype,dst_dtype", [("float32", "float16"), ("int32", "float32"),
                                                 ("float32", "int32")])
def test_cast(src_dtype, dst_dtype):
    @T.prim_func
    def kernel(A: T.Buffer((10, 6), src_dtype), B: T.Buffer((10, 6), dst_dtype)):
        Tx.cast(B[:, :], A[:, :])

    a = (RNG.uniform(-50, 50, (10, 6))).astype(src_dtype)
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.zeros((10, 6), dst_dtype))
    lib(ta, tb)
    np.testing.assert_array_equal(tb.numpy(), a.astype(dst_dtype))


# ---- element-wise unary and binary ----------------------------------------------------------------

UNARY = {
    "exp": (Tx.exp, np.exp, (-2, 2)),
    "exp2": (Tx.exp2, np.exp2, (-2, 2)),
    "log2": (Tx.log2, np.log2, (0.1, 5)),
    "sqrt": (Tx.sqrt, np.sqrt, (0.1, 5)),
    "reciprocal": (Tx.reciprocal, lambda x: 1 / x, (0.5, 3)),
    "silu": (Tx.silu, lambda x: x / (1 + np.exp(-x)), (-3, 3)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_on_strided_layouts(name):
    tile_op, ref, (low, high) = UNARY[name]
    sl = TileLayout(S[(7, 9):(10, 1)] + 1)
    dl = col(7, 9)

    @T.prim_func
    def kernel(Sf: T.Buffer((71,), "float32"), Df: T.Buffer((63,), "float32")):
        A = T.decl_buffer((7, 9), "float32", data=Sf.data, layout=sl)
        B = T.decl_buffer((7, 9), "float32", data=Df.data, layout=dl)
        tile_op(B[:, :], A[:, :])

    src = random_mem((7, 9), sl, 71, low=low, high=high)
    dst = Mem((7, 9), dl, 63)
    _, out = run(kernel, src, dst)
    expect(out, dst, ref(src.logical().astype("float64")), rtol=2e-5)


BINARY = {
    "add": (Tx.add, np.add),
    "sub": (Tx.sub, np.subtract),
    "mul": (Tx.mul, np.multiply),
    "fdiv": (Tx.fdiv, np.divide),
    "maximum": (Tx.maximum, np.maximum),
    "minimum": (Tx.minimum, np.minimum),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_mixed_layouts_and_slices(name):
    tile_op, ref = BINARY[name]
    la = TileLayout(S[(2, 6, 2, 5):(60, 5, 30, 1)])  # 12x10 in 6x5 tiles
    lb = col(12, 10)

    @T.prim_func
    def kernel(Af: T.Buffer((120,), "float32"), Bf: T.Buffer((120,), "float32"), Cf: T.Buffer((48,), "float32")):
        A = T.decl_buffer((12, 10), "float32", data=Af.data, layout=la)
        B = T.decl_buffer((12, 10), "float32", data=Bf.data, layout=lb)
        C = T.decl_buffer((6, 8), "float32", data=Cf.data)
        tile_op(C[0:6, 0:5], A[6:12, 5:10], B[1:7, 3:8])

    a = random_mem((12, 10), la, 120, low=0.5, high=3)
    b = random_mem((12, 10), lb, 120, low=0.5, high=3)
    c = Mem((6, 8), row(6, 8), 48)
    _, _, out = run(kernel, a, b, c)
    expected = c.logical().copy()
    expected[0:6, 0:5] = ref(a.logical()[6:12, 5:10], b.logical()[1:7, 3:8])
    expect(out, c, expected)


def test_binary_with_scalar_operand():
    @T.prim_func
    def kernel(A: T.Buffer((5, 17), "float32"), B: T.Buffer((5, 17), "float32")):
        Tx.mul(B[:, :], A[:, :], T.float32(-0.5))

    a = RNG.standard_normal((5, 17)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.zeros((5, 17), "float32"))
    lib(ta, tb)
    np.testing.assert_allclose(tb.numpy(), a * -0.5, rtol=1e-6)


# ---- reductions -----------------------------------------------------------------------------------

REDUCE = {"sum": (Tx.sum, np.sum), "max": (Tx.max, np.max), "min": (Tx.min, np.min)}


@pytest.mark.parametrize("name,axis", [("sum", 1), ("max", 0), ("min", 1), ("sum", 0)])
def test_reduce_one_axis(name, axis):
    tile_op, ref = REDUCE[name]
    m, n = 13, 21
    out_n = m if axis == 1 else n

    @T.prim_func
    def kernel(A: T.Buffer((m, n), "float32"), B: T.Buffer((out_n,), "float32")):
        tile_op(B[:], A[:, :], axes=axis)

    a = RNG.standard_normal((m, n)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.full(out_n, SENTINEL, "float32"))
    lib(ta, tb)
    np.testing.assert_allclose(tb.numpy(), ref(a, axis=axis), rtol=1e-5, atol=1e-5)


def test_sum_accumulates_over_a_sliced_tiled_source():
    layout = TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)])

    @T.prim_func
    def kernel(Af: T.Buffer((64,), "float32"), B: T.Buffer((4,), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Af.data, layout=layout)
        Tx.sum(B[:], A[4:8, :], axes=-1, accum=True)

    a = random_mem((8, 8), layout, 64)
    b0 = RNG.standard_normal(4).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a.data), tvm.runtime.tensor(b0.copy())
    lib(ta, tb)
    np.testing.assert_allclose(tb.numpy(), b0 + a.logical()[4:8, :].sum(axis=1), rtol=1e-5, atol=1e-5)


def test_max_over_all_axes_of_a_3d_region():
    @T.prim_func
    def kernel(A: T.Buffer((3, 5, 7), "float32"), B: T.Buffer((1,), "float32")):
        Tx.max(B[:], A[:, 1:5, :], axes=(0, 1, 2))

    a = RNG.standard_normal((3, 5, 7)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.zeros(1, "float32"))
    lib(ta, tb)
    np.testing.assert_array_equal(tb.numpy(), [a[:, 1:5, :].max()])


def test_sum_into_column_major_destination_is_vectorized():
    @T.prim_func
    def kernel(A: T.Buffer((6, 32, 9), "float32"), Bf: T.Buffer((54,), "float32")):
        B = T.decl_buffer((6, 9), "float32", data=Bf.data, layout=col(6, 9))
        Tx.sum(B[:, :], A[:, :, :], axes=1)

    a = RNG.standard_normal((6, 32, 9)).astype("float32")
    b = Mem((6, 9), col(6, 9), 54)
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(b.data)
    lib(ta, tb)
    expect(tb.numpy(), b, a.sum(axis=1), rtol=1e-5, atol=1e-5)


# ---- gemm -----------------------------------------------------------------------------------------

def _gemm_kernel(m, n, k, trans_a=False, trans_b=False, d_layout=None, beta=0.0, dispatch=None):
    a_shape = (k, m) if trans_a else (m, k)
    b_shape = (n, k) if trans_b else (k, n)
    d_layout = d_layout or row(m, n)

    @T.prim_func
    def kernel(A: T.Buffer(a_shape, "float32"), B: T.Buffer(b_shape, "float32"), C: T.Buffer((m, n), "float32"),
               Df: T.Buffer((m * n,), "float32")):
        D = T.decl_buffer((m, n), "float32", data=Df.data, layout=d_layout)
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], trans_a, trans_b, T.float32(1.5), T.float32(beta),
                dispatch=dispatch)

    return kernel, a_shape, b_shape


GEMM_CASES = {
    "square_16": dict(m=16, n=16, k=16),
    "nonpow2_13x19x7_beta": dict(m=13, n=19, k=7, beta=0.5),
    "trans_b_9x24x11": dict(m=9, n=24, k=11, trans_b=True),
    "trans_a_col_major_d_21x6x5": dict(m=21, n=6, k=5, trans_a=True, d_layout=col(21, 6), beta=-1.0),
    "parallel_128x96x64": dict(m=128, n=96, k=64, beta=1.0),
    # several K blocks (256 deep), a ragged last K block, a ragged u block and a ragged v panel
    "k_blocks_ragged_103x70x600_beta": dict(m=103, n=70, k=600, beta=0.75),
    "k_blocks_trans_a_b_50x33x513": dict(m=50, n=33, k=513, trans_a=True, trans_b=True),
    "k_blocks_col_major_d_97x40x300": dict(m=97, n=40, k=300, d_layout=col(97, 40), beta=1.0),
    "parallel_ragged_200x129x257": dict(m=200, n=129, k=257),
    "forced_naive_7x5x3": dict(m=7, n=5, k=3, beta=2.0, dispatch="axe4j-cpu-gemm-naive"),
}


@pytest.mark.parametrize("name", sorted(GEMM_CASES))
def test_gemm(name):
    case = GEMM_CASES[name]
    m, n = case["m"], case["n"]
    kernel, a_shape, b_shape = _gemm_kernel(**case)
    a = RNG.standard_normal(a_shape).astype("float32")
    b = RNG.standard_normal(b_shape).astype("float32")
    c = RNG.standard_normal((m, n)).astype("float32")
    d = Mem((m, n), case.get("d_layout") or row(m, n), m * n)
    lib = axe4j.compile(kernel, "llvm")
    ts = [tvm.runtime.tensor(x) for x in (a, b, c, d.data)]
    lib(*ts)
    op_a = a.T if case.get("trans_a") else a
    op_b = b.T if case.get("trans_b") else b
    expected = 1.5 * (op_a.astype("float64") @ op_b.astype("float64")) + case.get("beta", 0.0) * c
    expect(ts[3].numpy(), d, expected, rtol=1e-4, atol=1e-4)


def test_blocked_gemm_plan_follows_the_accumulator_layout():
    kernel, _, _ = _gemm_kernel(21, 6, 5, trans_a=True, d_layout=col(21, 6))
    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "axe4j-cpu-gemm-blocked (prio=10): accepted <- chosen" in report
    assert "register tile 6x16 vector dim m" in report
    kernel, _, _ = _gemm_kernel(128, 96, 64)
    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "register tile 6x16 vector dim n, K block 64, 48-row blocks, parallel=True" in report
    ll = axe4j.compile(kernel, "llvm").mod.inspect_source("ll")
    assert "<16 x float>" in ll and "TVMBackendParallelLaunch" in ll


def test_gemm_into_a_tiled_accumulator_runs_the_digits_based_naive_rule():
    """D in 4x4 tiles is not one affine loop per dim: the blocked rule declines, the naive one addresses by digits."""
    tiled = TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)])

    @T.prim_func
    def kernel(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32"),
               Df: T.Buffer((64,), "float32")):
        D = T.decl_buffer((8, 8), "float32", data=Df.data, layout=tiled)
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, False, T.float32(1.0), T.float32(0.5))

    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "axe4j-cpu-gemm-blocked (prio=10): declined: gemm: dim 0 of D" in report
    assert "not one affine loop" in report
    assert "axe4j-cpu-gemm-naive (prio=0): accepted <- chosen" in report
    a, b, c = (RNG.standard_normal((8, 8)).astype("float32") for _ in range(3))
    d = Mem((8, 8), tiled, 64)
    lib = axe4j.compile(kernel, "llvm")
    ts = [tvm.runtime.tensor(x) for x in (a, b, c, d.data)]
    lib(*ts)
    expect(ts[3].numpy(), d, a.astype("float64") @ b + 0.5 * c, rtol=1e-5, atol=1e-5)


def test_reduction_over_a_region_crossing_tiles_runs_the_digits_rule():
    tiled = TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)] + R[2:64])

    @T.prim_func
    def kernel(Af: T.Buffer((64,), "float32"), Bf: T.Buffer((128,), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Af.data, layout=TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)]))
        B = T.decl_buffer((8, 8), "float32", data=Bf.data, layout=tiled)
        Tx.sum(B[1:7, 3], A[1:7, 2:7], axes=1)

    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "axe4j-cpu-reduce (prio=10): declined:" in report
    assert "axe4j-cpu-reduce-digits (prio=5): accepted <- chosen" in report
    a = random_mem((8, 8), TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)]), 64)
    b = random_mem((8, 8), tiled, 128)
    expected = b.logical().copy()
    expected[1:7, 3] = a.logical()[1:7, 2:7].sum(axis=1)
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a.data), tvm.runtime.tensor(b.data)
    lib(ta, tb)
    expect(tb.numpy(), b, expected, rtol=1e-5, atol=1e-5)


def test_gemm_packs_both_operands_whatever_their_strides():
    """B moves by K along n when transposed, by 1 otherwise: either way it is packed into panels 16 wide."""
    kernel, a_shape, b_shape = _gemm_kernel(10, 20, 9, trans_b=True, beta=1.0)
    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "B packed per K block into K-major panels 16 wide (it moves by 9 along n)" in report
    assert "A packed per 12-row m block into panels 6 wide" in report
    kernel, _, _ = _gemm_kernel(10, 20, 9, beta=1.0)
    assert "(it moves by 1 along n)" in axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))


def test_explain_shows_cases_registered_by_others():
    from tvm.tirx.operator.tile_primitive.dispatcher import register_dispatch

    @register_dispatch("fill", "llvm", variant="third-party-fill", priority=5)
    def other(op_call, sctx):  # pragma: no cover - declines inside the pipeline
        from tvm.tirx.operator.tile_primitive.dispatcher import fail

        fail("never applies")

    @T.prim_func
    def kernel(A: T.Buffer((4, 4), "float32")):
        Tx.fill(A[:, :], T.float32(2.0))

    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "third-party-fill" not in report, "TVM's and third-party cases are listed only with verbose=True"
    assert "axe4j-cpu-vector (prio=10): accepted <- chosen" in report
    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"), verbose=True)
    assert "third-party-fill (prio=5): not an axe4j rule" in report
    lib = axe4j.compile(kernel, "llvm")
    t = tvm.runtime.tensor(np.zeros((4, 4), "float32"))
    lib(t)
    np.testing.assert_array_equal(t.numpy(), np.full((4, 4), 2.0))


def test_vector_tail_for_extents_without_a_lane_divisor():
    shape, sl, ss, dl, ds = COPY_CASES["prime_tail_3x37"]
    report = axe4j.explain(_copy_kernel(shape, sl, ss, dl, ds), "llvm", file=open("/dev/null", "w"))
    assert "serial(6) vectorized(16); vector loop of extent 111 has no divisor in [4, 16]: 6 x 16 lanes, then a tail of 15" \
        in report

    @T.prim_func
    def kernel(A: T.Buffer((5, 37), "float32"), B: T.Buffer((37,), "float32")):
        Tx.sum(B[:], A[:, :], axes=0)

    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "then a tail of 5" in report
    a = RNG.standard_normal((5, 37)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.full(37, SENTINEL, "float32"))
    lib(ta, tb)
    np.testing.assert_allclose(tb.numpy(), a.sum(axis=0), rtol=1e-5, atol=1e-5)


# ---- the worker axis cpu ----------------------------------------------------------------------------

def test_copy_from_rows_spread_over_workers_runs_a_parallel_loop():
    src_layout = TileLayout(S[(2, 4, 8):(1 @ CPU, 8, 1)])  # row-major 8x8, row halves on two workers
    kernel = _copy_kernel((8, 8), src_layout, 64, col(8, 8), 64)
    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "parallel(2)" in report and "parallel loop from the layout's cpu axis" in report
    assert "axe4j-cpu-scalar (prio=0): declined: copy: layout S[(2,4,8):(1@cpu,8,1)] has a cpu iter" in report
    src = random_mem((8, 8), src_layout, 64)
    dst = Mem((8, 8), col(8, 8), 64)
    _, out = run(kernel, src, dst)
    expect(out, dst, src.logical())
    assert "TVMBackendParallelLaunch" in axe4j.compile(kernel, "llvm").mod.inspect_source("ll")


def test_add_into_a_destination_spread_over_three_workers_with_padding():
    dl = TileLayout(S[(3, 5, 7):(1 @ CPU, 8, 1)] + 2)  # 15x7, 5 rows per worker, rows padded to 8
    span = 2 + 3 * (1 + 4 * 8 + 6)

    @T.prim_func
    def kernel(A: T.Buffer((15, 7), "float32"), B: T.Buffer((15, 7), "float32"), Cf: T.Buffer((span,), "float32")):
        C = T.decl_buffer((15, 7), "float32", data=Cf.data, layout=dl)
        Tx.add(C[:, :], A[:, :], B[:, :])

    a = RNG.standard_normal((15, 7)).astype("float32")
    b = RNG.standard_normal((15, 7)).astype("float32")
    c = Mem((15, 7), dl, span)
    lib = axe4j.compile(kernel, "llvm")
    ts = [tvm.runtime.tensor(x) for x in (a, b, c.data)]
    lib(*ts)
    expect(ts[2].numpy(), c, a + b)


def test_sum_over_a_source_whose_kept_rows_are_spread_over_workers():
    sl = TileLayout(S[(4, 3, 10):(1 @ CPU, 10, 1)])

    @T.prim_func
    def kernel(Af: T.Buffer((120,), "float32"), B: T.Buffer((12,), "float32")):
        A = T.decl_buffer((12, 10), "float32", data=Af.data, layout=sl)
        Tx.sum(B[:], A[:, :], axes=1)

    a = random_mem((12, 10), sl, 120)
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a.data), tvm.runtime.tensor(np.zeros(12, "float32"))
    lib(ta, tb)
    np.testing.assert_allclose(tb.numpy(), a.logical().sum(axis=1), rtol=1e-5, atol=1e-5)


def test_worker_views_used_only_inside_a_loop():
    """The views with a cpu iter are dropped after the dispatch; the loop is then the function's one statement
    (TVM refuses a SeqStmt of one: found by the differential fuzzer, seed 45200, program 621)."""
    xl = TileLayout(S[(4, 2, 2, 4):(8, 1, 1 @ CPU, 2)])
    yl = TileLayout(S[(6, 5):(1 @ CPU, 1)])

    @T.prim_func
    def kernel(A: T.Buffer((64,), "int32"), D: T.Buffer((30,), "int32")):
        X = T.decl_buffer((8, 8), "int32", data=A.data, layout=xl)
        Y = T.decl_buffer((6, 5), "int32", data=D.data, layout=yl)
        for v in T.serial(2):
            Tx.add(Y[v * 3:v * 3 + 3, 0:5], X[1 + v * 3:1 + v * 3 + 3, 3:8], T.int32(-6))

    a = np.arange(64, dtype="int32")
    x = Mem((8, 8), xl, 64, "int32", fill=a)
    y = Mem((6, 5), yl, 30, "int32", fill=np.zeros(30))
    lib = axe4j.compile(kernel, "llvm")
    td = tvm.runtime.tensor(y.data.copy())
    lib(tvm.runtime.tensor(a), td)
    expect(td.numpy(), y, x.logical()[1:7, 3:8] - 6)


@pytest.mark.parametrize("name", ["sum", "max", "min"])
def test_reduce_along_a_contiguous_row_keeps_one_partial_result_per_lane(name):
    tile_op, ref = REDUCE[name]

    @T.prim_func
    def kernel(A: T.Buffer((6, 37), "float32"), B: T.Buffer((6,), "float32")):
        tile_op(B[:], A[:, :], axes=-1)

    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "vector lanes keep partial results" in report and "then a tail of 5" in report
    a = RNG.standard_normal((6, 37)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.full(6, SENTINEL, "float32"))
    lib(ta, tb)
    np.testing.assert_allclose(tb.numpy(), ref(a, axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dispatch", ["axe4j-cpu-vector", "axe4j-cpu-scalar"])
def test_views_with_an_element_offset(dispatch):
    """A view declared ``elem_offset`` elements into its data: both rules address from there."""
    @T.prim_func
    def kernel(Af: T.Buffer((40,), "float32"), Bf: T.Buffer((40,), "float32")):
        A = T.decl_buffer((3, 7), "float32", data=Af.data, elem_offset=11)
        B = T.decl_buffer((3, 7), "float32", data=Bf.data, elem_offset=4, layout=col(3, 7))
        Tx.exp(B[:, :], A[:, :], dispatch=dispatch)

    a = RNG.standard_normal(40).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.full(40, SENTINEL, "float32"))
    lib(ta, tb)
    expected = np.full(40, SENTINEL, "float32")
    logical = np.exp(a[11:32].reshape(3, 7))
    expected[4:25] = logical.T.reshape(-1)
    np.testing.assert_allclose(tb.numpy(), expected, rtol=1e-6)


def test_gemm_on_views_with_element_offsets():
    @T.prim_func
    def kernel(Af: T.Buffer((64,), "float32"), Bf: T.Buffer((64,), "float32"), Df: T.Buffer((64,), "float32")):
        A = T.decl_buffer((5, 6), "float32", data=Af.data, elem_offset=3)
        B = T.decl_buffer((6, 7), "float32", data=Bf.data, elem_offset=9)
        D = T.decl_buffer((5, 7), "float32", data=Df.data, elem_offset=20)
        Tx.gemm(D[:, :], A[:, :], B[:, :], D[:, :], False, False, T.float32(1.0), T.float32(0.0))

    a = RNG.standard_normal(64).astype("float32")
    b = RNG.standard_normal(64).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ts = [tvm.runtime.tensor(x) for x in (a, b, np.full(64, SENTINEL, "float32"))]
    lib(*ts)
    expected = np.full(64, SENTINEL, "float32")
    expected[20:55] = (a[3:33].reshape(5, 6).astype("float64") @ b[9:51].reshape(6, 7)).reshape(-1)
    np.testing.assert_allclose(ts[2].numpy(), expected, rtol=1e-5, atol=1e-5)


# ---- tile calls inside loops: regions that start at a loop variable ---------------------------------

def test_row_by_row_unary_in_a_loop():
    @T.prim_func
    def kernel(A: T.Buffer((6, 40), "float32"), B: T.Buffer((6, 40), "float32")):
        for i in range(6):
            Tx.exp(B[i, 0:40], A[i, 0:40])

    a = RNG.standard_normal((6, 40)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.zeros((6, 40), "float32"))
    lib(ta, tb)
    np.testing.assert_allclose(tb.numpy(), np.exp(a), rtol=1e-6)


def test_column_tiles_of_a_binary_op_in_a_loop_with_a_column_major_operand():
    @T.prim_func
    def kernel(A: T.Buffer((5, 24), "float32"), Bf: T.Buffer((120,), "float32"), C: T.Buffer((5, 24), "float32")):
        B = T.decl_buffer((5, 24), "float32", data=Bf.data, layout=col(5, 24))
        for t in range(3):
            Tx.sub(C[:, t * 8:t * 8 + 8], A[:, t * 8:t * 8 + 8], B[:, t * 8:t * 8 + 8])

    a = RNG.standard_normal((5, 24)).astype("float32")
    b = random_mem((5, 24), col(5, 24), 120)
    report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
    assert "axe4j-cpu-vector (prio=10): accepted <- chosen" in report
    lib = axe4j.compile(kernel, "llvm")
    ts = [tvm.runtime.tensor(x) for x in (a, b.data, np.zeros((5, 24), "float32"))]
    lib(*ts)
    np.testing.assert_allclose(ts[2].numpy(), a - b.logical(), rtol=1e-6)


def _split_dim_rows(step):
    """Row pairs [i * step, i * step + 2) of an 8x8 tensor stored in 4x4 tiles (rows split as 2 blocks of 4)."""
    tiled = TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)])

    @T.prim_func
    def kernel(Af: T.Buffer((64,), "float32"), B: T.Buffer((8, 8), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Af.data, layout=tiled)
        for i in range(7 if step == 1 else 4):
            Tx.copy(B[i * step:i * step + 2, :], A[i * step:i * step + 2, :])

    return kernel, tiled


def test_run_time_start_in_a_split_dim_keeps_the_vector_rule_where_the_start_stays_inside_a_digit():
    """Row 2 i + (0, 1) never crosses the 4-row block (TVM's analysis: the start is 2 n), so the vector rule walks the
    pair as a loop and adds the start's digits, (i * 2 mod 4) * 4 + (i * 2 // 4) * 32, at run time; at start i a
    pair may cross a block (rows 3, 4), which only the digits rule addresses."""
    for step, chosen in ((2, "axe4j-cpu-vector (prio=10): accepted <- chosen"),
                         (1, "axe4j-cpu-digits (prio=5): accepted <- chosen")):
        kernel, tiled = _split_dim_rows(step)
        report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
        assert chosen in report, report
        if step == 1:
            assert "starts at a run-time index 1n, so the region (2 elements past the start's known part of 1) may " \
                   "cross digit (4, stride 4)" in report
        a = random_mem((8, 8), tiled, 64)
        lib = axe4j.compile(kernel, "llvm")
        ta, tb = tvm.runtime.tensor(a.data), tvm.runtime.tensor(np.zeros((8, 8), "float32"))
        lib(ta, tb)
        np.testing.assert_array_equal(tb.numpy(), a.logical())


def test_row_maxima_one_call_per_row():
    @T.prim_func
    def kernel(A: T.Buffer((7, 33), "float32"), B: T.Buffer((7,), "float32")):
        for i in range(7):
            Tx.max(B[i:i + 1], A[i:i + 1, :], axes=1)

    a = RNG.standard_normal((7, 33)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.zeros(7, "float32"))
    lib(ta, tb)
    np.testing.assert_array_equal(tb.numpy(), a.max(axis=1))


def test_gemm_accumulating_over_k_blocks_in_a_loop():
    @T.prim_func
    def kernel(A: T.Buffer((9, 24), "float32"), B: T.Buffer((24, 20), "float32"), D: T.Buffer((9, 20), "float32")):
        for kb in range(3):
            Tx.gemm(D[:, :], A[:, kb * 8:kb * 8 + 8], B[kb * 8:kb * 8 + 8, :], D[:, :], False, False,
                    T.float32(1.0), T.float32(1.0))

    a = RNG.standard_normal((9, 24)).astype("float32")
    b = RNG.standard_normal((24, 20)).astype("float32")
    d0 = RNG.standard_normal((9, 20)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ts = [tvm.runtime.tensor(x) for x in (a, b, d0.copy())]
    lib(*ts)
    np.testing.assert_allclose(ts[2].numpy(), d0 + a.astype("float64") @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dispatch", ["axe4j-cpu-vector", "axe4j-cpu-digits"])
def test_in_place_add_on_a_replicated_buffer_updates_every_copy_once(dispatch):
    """A = A + B on a replicated A: each store reads the base copy, so the base must be written last."""
    layout = TileLayout(S[(4, 6):(6, 1)] + R[3:24])

    @T.prim_func
    def kernel(Af: T.Buffer((72,), "float32"), B: T.Buffer((4, 6), "float32")):
        A = T.decl_buffer((4, 6), "float32", data=Af.data, layout=layout)
        Tx.add(A[:, :], A[:, :], B[:, :], dispatch=dispatch)

    a = random_mem((4, 6), layout, 72)
    b = RNG.standard_normal((4, 6)).astype("float32")
    expected = a.logical() + b
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a.data), tvm.runtime.tensor(b)
    lib(ta, tb)
    expect(ta.numpy(), a, expected)


def test_gemm_with_half_precision_inputs_accumulates_in_float32():
    @T.prim_func
    def kernel(A: T.Buffer((12, 20), "float16"), B: T.Buffer((20, 18), "float16"), C: T.Buffer((12, 18), "float32"),
               D: T.Buffer((12, 18), "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, False, T.float32(1.0), T.float32(1.0))

    a = RNG.standard_normal((12, 20)).astype("float16")
    b = RNG.standard_normal((20, 18)).astype("float16")
    c = RNG.standard_normal((12, 18)).astype("float32")
    lib = axe4j.compile(kernel, "llvm")
    ts = [tvm.runtime.tensor(x) for x in (a, b, c, np.zeros((12, 18), "float32"))]
    lib(*ts)
    np.testing.assert_allclose(ts[3].numpy(), a.astype("float64") @ b.astype("float64") + c, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["max", "min", "sum"])
def test_integer_reductions(name):
    tile_op, ref = REDUCE[name]

    @T.prim_func
    def kernel(A: T.Buffer((9, 23), "int32"), B: T.Buffer((23,), "int32")):
        tile_op(B[:], A[:, :], axes=0)

    a = RNG.integers(-1000, 1000, size=(9, 23)).astype("int32")
    lib = axe4j.compile(kernel, "llvm")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.zeros(23, "int32"))
    lib(ta, tb)
    np.testing.assert_array_equal(tb.numpy(), ref(a, axis=0))


# -mcpus whose code the blocked GEMM is checked on, whatever this machine runs: (register kind, accumulator registers
# of the plan's tile): AVX2 6 x 2 ymm, AVX-512 8 x 2 zmm. LLVM generates code for any -mcpu; only running needs the ISA.
GEMM_CODE_TARGETS = {"x86-64-v3": ("ymm", 12), "znver3": ("ymm", 12), "znver4": ("zmm", 16),
                     "skylake-avx512": ("zmm", 16), "host": None}
# the caches the K and u blocks are sized from: this machine's (sysfs), and a 32 KiB L1d / 1 MiB L2 core (Zen 4,
# Skylake-SP), whose AVX-512 K block is shorter (3 K blocks at K = 300 where a 48 KiB L1d gives 2); the AVX2 plan's
# blocks are constants, so AVX2 -mcpus are checked under one
GEMM_CODE_CACHES = {"sysfs": None, "l1d_32k": {"l1d": 32 * 1024, "l2": 1024 * 1024}}


@pytest.mark.parametrize("mcpu,caches", [(mcpu, caches) for mcpu in GEMM_CODE_TARGETS for caches in GEMM_CODE_CACHES
                                         if caches == "sysfs" or GEMM_CODE_TARGETS[mcpu] != ("ymm", 12)])
def test_blocked_gemm_keeps_its_accumulators_in_registers_and_its_panels_in_the_workspace(mcpu, caches, monkeypatch):
    """Only the two packed panels come from TVM's workspace, in each K-block body (the first applies beta * C, the
    rest add into D): 2 calls of ``TVMBackendAllocWorkspace`` per K-block body LLVM keeps, each a panel's size. The accumulator tile is a
    stack array (scope ``global`` under 1 KiB), which LLVM keeps in registers: no spill or reload anywhere, and the
    FMAs accumulate into at least the tile's count of vector registers of the ISA's width."""
    from axe4j.cpu import target as cpu_target

    if GEMM_CODE_CACHES[caches] is not None:
        monkeypatch.setattr(cpu_target, "cache_bytes", lambda root=None: dict(GEMM_CODE_CACHES[caches]))
    # plans for 2 cores whatever this machine has: the core count shapes the u blocks and the parallel region's runs,
    # and so the loops LLVM keeps (the run at the end takes whatever pool the calling thread has)
    monkeypatch.setattr(cpu_target, "cores", lambda: 2)
    m, n, k = 60, 48, 300
    kernel, a_shape, b_shape = _gemm_kernel(m, n, k, beta=1.0)
    target = axe4j.host_target() if mcpu == "host" else tvm.target.Target({"kind": "llvm", "mcpu": mcpu})
    assert target.kind.name == "llvm" and target.attrs["mcpu"]
    isa, _, _ = cpu_target.isa_of(target)
    kind, accumulators = GEMM_CODE_TARGETS[mcpu] or (("zmm", 16) if isa == "avx512" else ("ymm", 12))
    plan = axe4j.explain(kernel, target, file=open(os.devnull, "w"))
    kc = int(re.search(r"K block (\d+)", plan).group(1))
    lib = axe4j.compile(kernel, target)
    ll, asm = lib.mod.inspect_source("ll"), lib.mod.inspect_source("asm")
    allocs = [line for line in ll.splitlines() if "@__TVMBackendAllocWorkspace" in line and "load" in line]
    # LLVM may unroll the K-block loop or not (the sites are 2 per K-block body it kept): count the sites, and read
    # the sizes, every one a packed panel, none the accumulator tile (at most 1 KiB: 8 x 32 fp32)
    assert 2 <= len(allocs) <= 2 * -(-k // kc) and len(allocs) % 2 == 0, (target, kc, allocs)
    sizes = [int(b) for b in re.findall(r"call ptr %\d+\(i32 1, i32 %dev_id, i64 (\d+),", ll)]
    assert len(sizes) == len(allocs) and min(sizes) > 1024, (target, sizes)
    assert "Spill" not in asm and "Reload" not in asm, target
    fmas = re.findall(r"\bvfmadd\w+\s+[^\n]*%(" + kind + r"\d+)\s*$", asm, re.MULTILINE)
    assert len(set(fmas)) >= accumulators, (target, sorted(set(fmas)))
    if mcpu != "host":
        return
    a, b, c = RNG.standard_normal(a_shape), RNG.standard_normal(b_shape), RNG.standard_normal((m, n))
    ts = [tvm.runtime.tensor(x.astype("float32")) for x in (a, b, c, np.zeros(m * n))]
    lib(*ts)
    np.testing.assert_allclose(ts[3].numpy().reshape(m, n), 1.5 * (a @ b) + c, rtol=1e-4, atol=1e-3)
