"""A GEMM whose row count is known only at run time (a ragged group: one expert's tokens), through the blocked
CPU rule: the region ``D[0:T.min(m[0], M), :]`` is described with its bound M, the rule takes the run-time extent
on the accumulator's non-vector dim, and the emitted loops stop at the run-time value. One kernel is compiled and
run at every row count from 0 to M; rows past the count keep their sentinel."""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

M, N, K = 20, 24, 40
SENTINEL = -7.0


def ragged(trans_b, start):
    b_shape = (N, K) if trans_b else (K, N)

    @T.prim_func
    def gemm(A: T.Buffer((M + 5, K), "float32"), B: T.Buffer(b_shape, "float32"), D: T.Buffer((M, N), "float32"),
             m: T.Buffer((1,), "int32")):
        Tx.gemm(D[0:T.min(m[0], M), :], A[start:start + T.min(m[0], M), :], B[:, :], D[0:T.min(m[0], M), :],
                False, trans_b, T.float32(1.0), T.float32(0.0))

    return gemm


@pytest.mark.parametrize("trans_b", [False, True])
def test_every_row_count_from_zero_to_the_bound(bridge, trans_b):
    start = 3
    lib = axe4j.compile(ragged(trans_b, start), "llvm")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M + 5, K)).astype("float32")
    b = rng.standard_normal((N, K) if trans_b else (K, N)).astype("float32")
    full = a[start:start + M] @ (b.T if trans_b else b)
    for rows in range(M + 1):
        d = tvm.runtime.tensor(np.full((M, N), SENTINEL, "float32"))
        lib["gemm"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), d, tvm.runtime.tensor(np.array([rows], "int32")))
        got = d.numpy()
        np.testing.assert_allclose(got[:rows], full[:rows], rtol=1e-5, atol=1e-4, err_msg=f"rows={rows}")
        assert (got[rows:] == SENTINEL).all(), f"rows={rows}: a row past the run-time count was written"


def test_explain_names_the_run_time_extent_and_other_rules_decline(bridge):
    import io

    text = axe4j.explain(ragged(False, 0), "llvm", file=io.StringIO())
    assert "M=<=20 (run time)" in text, text
    assert "has a run-time extent in dim 0 (at most 20); axe4j-cpu-gemm-naive needs constant extents" in text, text


def test_an_unbounded_run_time_extent_is_refused_with_the_dim_named(bridge):
    @T.prim_func
    def unbounded(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), D: T.Buffer((M, N), "float32"),
                  m: T.Buffer((1,), "int32")):
        Tx.gemm(D[0:m[0], :], A[0:m[0], :], B[:, :], D[0:m[0], :], False, False, T.float32(1.0), T.float32(0.0))

    with pytest.raises(Exception, match="not bounded by the dim's size"):
        axe4j.compile(unbounded, "llvm")
