"""Trainium copies that transpose and sums across partitions, through the TensorEngine, run in the executor."""

import io

import numpy as np
import pytest

import tvm
from tvm.backend.trn.layout import trainium_layout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

import axe4j
from axe4j_tools import nki_executor
from axe4j.trn.kernels import gemm as trn_gemm


def _explain(func):
    return axe4j.explain(func, tvm.target.Target(trn_gemm.TARGET), file=io.StringIO())


def test_copy_to_the_other_partition_dim_is_an_exact_transpose():
    @T.prim_func
    def kernel(A: T.Buffer((256, 384), "float16"), I: T.Buffer((128, 128), "float16"),
               B: T.Buffer((256, 384), "float16")):
        T.func_attr({"num_inputs": 2, "global_symbol": "transpose"})
        T.device_entry()
        a = T.alloc_buffer((256, 384), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (256, 384)))
        b = T.alloc_buffer((256, 384), "float16", scope="trn.sbuf", layout=trainium_layout("FP", (256, 384)))
        ident = T.alloc_buffer((128, 128), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (128, 128)))
        ps = T.alloc_buffer((128, 128), "float32", scope="trn.psum",
                            layout=trainium_layout("PF", (128, 128), is_psum=True))
        Tx.copy(ident, I)
        Tx.copy(a, A)
        Tx.copy(b, a, workspace={"identity": ident, "acc_psum": ps})
        Tx.copy(B, b)

    assert "6 x transpose of 128 x 128 through the TensorEngine" in _explain(kernel)
    a = np.random.default_rng(0).standard_normal((256, 384)).astype(np.float16)
    out = np.zeros_like(a)
    counts = nki_executor.run(trn_gemm.nki_source(kernel), a, np.eye(128, dtype=np.float16), out)
    assert counts["nisa.nc_matmul"] == 6
    np.testing.assert_array_equal(out, a)


def _reduce_kernel(op, axis):
    @T.prim_func
    def kernel(A: T.Buffer((256, 1024), "float16"), One: T.Buffer((128, 1), "float16"),
               B: T.Buffer((1, 1024), "float32")):
        T.func_attr({"num_inputs": 2, "global_symbol": "column_sums"})
        T.device_entry()
        a = T.alloc_buffer((256, 1024), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (256, 1024)))
        ones = T.alloc_buffer((128, 1), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (128, 1)))
        b = T.alloc_buffer((1, 1024), "float32", scope="trn.sbuf", layout=trainium_layout("PF", (1, 1024)))
        ps = T.alloc_buffer((1, 512), "float32", scope="trn.psum",
                            layout=trainium_layout("PF", (1, 512), is_psum=True))
        Tx.copy(ones, One)
        Tx.copy(a, A)
        op(b, a, axis, workspace={"ones": ones, "acc_psum": ps})
        Tx.copy(B, b)

    return kernel


def test_sum_across_partitions_runs_on_the_tensor_engine():
    kernel = _reduce_kernel(Tx.sum, 0)
    assert "4 x nc_matmul of a ones column: 128 partitions summed x 512 free elements" in _explain(kernel)
    a = (np.random.default_rng(1).random((256, 1024)) - 0.5).astype(np.float16)
    out = np.zeros((1, 1024), np.float32)
    nki_executor.run(trn_gemm.nki_source(kernel), a, np.ones((128, 1), np.float16), out)
    np.testing.assert_allclose(out, a.astype(np.float32).sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-4)


def test_max_across_partitions_is_declined_with_the_way_round():
    text = _explain(_reduce_kernel(Tx.max, 0))
    assert "only sum crosses partitions" in text and "then reduce along F" in text
    with pytest.raises(Exception):
        trn_gemm.nki_source(_reduce_kernel(Tx.max, 0))   # TVM's own case takes none of it either
