"""Row operations of a softmax on the CPU: reductions with several vector accumulators, the element-wise vector
width per ISA, and unary maps with a bias tile and a scale, ``f(src * scale + bias)`` (docs/cpu-dispatch.md)."""

import tvm  # noqa: F401  (before the JVM)

import io
import re

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j

RNG = np.random.default_rng(20261207)
ROWS, COLS, PITCH = 8, 1000, 1024   # rows of 1000 in a 1024-wide buffer, so the rows do not join into one loop
# LLVM writes code for any -mcpu; only running it needs the ISA: x86-64-v3 is AVX2, skylake-avx512 AVX-512
AVX2, AVX512 = "x86-64-v3", "skylake-avx512"
REDUCE = {"sum": (Tx.sum, np.sum), "max": (Tx.max, np.max), "min": (Tx.min, np.min)}


@pytest.fixture(scope="module", autouse=True)
def installed():
    axe4j.install()


def _target(mcpu):
    return axe4j.host_target() if mcpu == "host" else tvm.target.Target({"kind": "llvm", "mcpu": mcpu})


def _plan(kernel, mcpu):
    out = io.StringIO()
    axe4j.explain(kernel, _target(mcpu), file=out)
    return out.getvalue()


def _reduce_kernel(name):
    tile_op = REDUCE[name][0]

    @T.prim_func
    def kernel(A: T.Buffer((ROWS, PITCH), "float32"), B: T.Buffer((ROWS,), "float32")):
        tile_op(B[:], A[:, 0:COLS], axes=-1)

    return kernel


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_a_row_reduction_keeps_four_vector_accumulators(name):
    kernel = _reduce_kernel(name)
    for mcpu in (AVX2, AVX512):
        assert ("4 vector accumulators of 16 lanes (64 partial results); reduced loop of extent 1000: 15 x 64 "
                "lanes, then a tail of 40") in _plan(kernel, mcpu)
    a = (RNG.standard_normal((ROWS, PITCH)) * 3 + 1).astype("float32")
    lib = axe4j.compile(kernel, axe4j.host_target())
    tb = tvm.runtime.tensor(np.full(ROWS, -7.0, "float32"))
    lib(tvm.runtime.tensor(a), tb)
    ref = REDUCE[name][1](a[:, :COLS].astype("float64"), axis=1)
    if name == "sum":   # 64 partial sums, then halved pairwise: float32 error well inside sqrt(n) eps |x|
        np.testing.assert_allclose(tb.numpy(), ref, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(tb.numpy(), ref.astype("float32"))


def test_the_accumulators_are_separate_registers_in_the_avx512_code():
    lib = axe4j.compile(_reduce_kernel("sum"), _target(AVX512))
    asm = lib.mod.inspect_source("asm")
    chains = {m.group(1) for m in re.finditer(r"vaddps\s+[^,]+\(%\w+\), %zmm\d+, (%zmm\d+)", asm)}
    assert len(chains) >= 4, f"vaddps from memory into {sorted(chains)}: fewer than 4 accumulator registers"
    # stack arrays, not a workspace allocated per row (which every add then stored to)
    assert "AllocWorkspace" not in lib.mod.inspect_source("ll")


def test_short_rows_keep_fewer_accumulators():
    @T.prim_func
    def kernel(A: T.Buffer((6, 37), "float32"), B: T.Buffer((6,), "float32")):
        Tx.sum(B[:], A[:, :], axes=-1)

    plan = _plan(kernel, AVX512)
    assert "2 vector accumulators of 16 lanes" in plan and "then a tail of 5" in plan


def _exp_kernel():
    @T.prim_func
    def kernel(A: T.Buffer((ROWS, PITCH), "float32"), B: T.Buffer((ROWS, PITCH), "float32")):
        Tx.exp(B[:, 0:COLS], A[:, 0:COLS])

    return kernel


def test_rows_of_1000_take_whole_avx512_registers_and_a_tail_but_8_lanes_on_avx2():
    kernel = _exp_kernel()
    assert "serial(8) serial(62) vectorized(16); vector loop of extent 1000: whole 16-lane registers and a tail " \
        "take fewer register operations than 8-lane vectors: 62 x 16 lanes, then a tail of 8" in _plan(kernel, AVX512)
    avx2 = _plan(kernel, AVX2)
    assert "serial(8) serial(125) vectorized(8)" in avx2 and "tail" not in avx2.split("axe4j-cpu-digits")[0]
    a = RNG.uniform(-5, 5, (ROWS, PITCH)).astype("float32")
    lib = axe4j.compile(kernel, axe4j.host_target())
    tb = tvm.runtime.tensor(np.zeros((ROWS, PITCH), "float32"))
    lib(tvm.runtime.tensor(a), tb)
    np.testing.assert_allclose(tb.numpy()[:, :COLS], np.exp(a[:, :COLS].astype("float64")), rtol=1e-6)
    assert not tb.numpy()[:, COLS:].any(), "the tail wrote past the rows"


def _softmax_kernel(rows, cols):
    per_row = TileLayout(S[(rows, cols):(1, 0)])   # the row's statistic broadcast along it (stride 0)

    @T.prim_func
    def kernel(X: T.Buffer((rows, cols), "float32"), Y: T.Buffer((rows, cols), "float32")):
        stat = T.decl_buffer((rows,), "float32", scope="global")
        stat_rows = T.decl_buffer((rows, cols), "float32", data=stat.data, scope="global", layout=per_row)
        Tx.max(stat[:], X[:, :], [1])
        Tx.mul(stat[:], stat[:], T.float32(-1))
        Tx.exp(Y[:, :], X[:, :], stat_rows[:, :])
        Tx.sum(stat[:], Y[:, :], [1])
        Tx.reciprocal(stat[:], stat[:])
        Tx.mul(Y[:, :], Y[:, :], stat_rows[:, :])

    return kernel


@pytest.mark.parametrize("shape", [(4, 1000), (3, 37), (2, 4096)])
def test_softmax_rows_with_exp_of_a_broadcast_bias(shape):
    kernel = _softmax_kernel(*shape)
    assert "T.tile.exp(Y" in _plan(kernel, "host")
    x = (RNG.standard_normal(shape) * 3 + 1).astype("float32")
    lib = axe4j.compile(kernel, axe4j.host_target())
    ty = tvm.runtime.tensor(np.zeros(shape, "float32"))
    lib(tvm.runtime.tensor(x), ty)
    e = np.exp(x.astype("float64") - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(ty.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op,ref,low", [("exp", np.exp, -3.0), ("exp2", np.exp2, -3.0), ("log2", np.log2, 0.5),
                                        ("sqrt", np.sqrt, 0.5)])
@pytest.mark.parametrize("bias_kind", ["tile", "scalar", "none"])
def test_unary_map_with_bias_and_scale(op, ref, low, bias_kind):
    """dst = f(src * scale + bias), TVM's unary-with-bias-scale op, with a per-row bias tile or a scalar."""
    tile_op = getattr(Tx, op)
    per_row = TileLayout(S[(5, 24):(1, 0)])
    scale = 0.75

    @T.prim_func
    def kernel(A: T.Buffer((5, 24), "float32"), Bias: T.Buffer((5,), "float32"), D: T.Buffer((5, 24), "float32")):
        rows = T.decl_buffer((5, 24), "float32", data=Bias.data, layout=per_row)
        if bias_kind == "tile":
            tile_op(D[:, :], A[:, :], rows[:, :], T.float32(scale))
        elif bias_kind == "scalar":
            tile_op(D[:, :], A[:, :], T.float32(1.5), T.float32(scale))
        else:
            tile_op(D[:, :], A[:, :], None, T.float32(scale))

    a = RNG.uniform(low, 3.0, (5, 24)).astype("float32")
    bias = RNG.uniform(0.5, 1.0, 5).astype("float32")
    lib = axe4j.compile(kernel, axe4j.host_target())
    td = tvm.runtime.tensor(np.zeros((5, 24), "float32"))
    lib(tvm.runtime.tensor(a), tvm.runtime.tensor(bias), td)
    b = {"tile": bias[:, None].astype("float64"), "scalar": 1.5, "none": 0.0}[bias_kind]
    np.testing.assert_allclose(td.numpy(), ref(a.astype("float64") * scale + b), rtol=3e-6, atol=1e-7)


def test_a_scale_tile_is_refused_with_the_reason():
    @T.prim_func
    def kernel(A: T.Buffer((4, 8), "float32"), Sc: T.Buffer((4, 8), "float32"), D: T.Buffer((4, 8), "float32")):
        Tx.exp(D[:, :], A[:, :], None, Sc[:, :])

    with pytest.raises(Exception, match=r"exp: scale must be a scalar, not the tile Sc\[0:4, 0:8\]; bias may be a tile"):
        axe4j.compile(kernel, "llvm")
