"""Every GEMM plan the Java tests cover (TrnGemmRuleTest: the full 128 x 128 x 512 instruction, K contracted over 64
partitions, small M and N, transposed operands, a transposed output, a result across two PSUM banks) compiled
through ``tir_pipeline="trn"`` with axe4j's rules and run in the NKI executor against numpy: operands loaded from
HBM into SBUF with the test's layouts, the product into PSUM, copied to SBUF and stored."""

import numpy as np
import pytest

import tvm
from tvm.backend.trn.layout import trainium_layout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import F, P, S, TileLayout

from axe4j_tools import nki_executor
from axe4j.trn.kernels import gemm as trn_gemm


def _layout(spec, shape, psum=False):
    return trainium_layout(spec, shape, is_psum=psum) if isinstance(spec, str) else spec


def _gemm_kernel(a_shape, a_spec, b_shape, b_spec, d_shape, d_spec, trans_a=False, trans_b=False):
    """C = op(A) op(B) through SBUF tiles with the given layouts, PSUM D (``d_spec``) and an SBUF copy of D in the
    same layout, stored to C (float32 all the way from PSUM)."""
    a_layout, b_layout = _layout(a_spec, a_shape), _layout(b_spec, b_shape)
    d_layout, c_layout = _layout(d_spec, d_shape, psum=True), _layout(d_spec, d_shape)

    @T.prim_func
    def kernel(A: T.Buffer(a_shape, "float16"), B: T.Buffer(b_shape, "float16"), C: T.Buffer(d_shape, "float32")):
        T.func_attr({"num_inputs": 2, "global_symbol": "gemm"})
        T.device_entry()
        a = T.alloc_buffer(a_shape, "float16", scope="trn.sbuf", layout=a_layout)
        b = T.alloc_buffer(b_shape, "float16", scope="trn.sbuf", layout=b_layout)
        d = T.alloc_buffer(d_shape, "float32", scope="trn.psum", layout=d_layout)
        c = T.alloc_buffer(d_shape, "float32", scope="trn.sbuf", layout=c_layout)
        Tx.copy(a, A[:, :])
        Tx.copy(b, B[:, :])
        Tx.gemm(d, a, b, d, transpose_A=trans_a, transpose_B=trans_b)
        Tx.copy(c, d)
        Tx.copy(C[:, :], c)

    return kernel


# (name, a shape, a layout, b shape, b layout, d shape, d layout, trans_a, trans_b, nc_matmul count): the cases of
# TrnGemmRuleTest, with the instruction count its plan implies (tiles x K steps)
PLANS = [
    ("square_block_full_instruction", (128, 1024), "FP", (1024, 512), "PF", (128, 512), "PF", False, False, 8),
    ("k_320_over_64_partitions", (128, 320), TileLayout(S[(128, 5, 64):(1 @ F, 128 @ F, 1 @ P)]),
     (320, 256), TileLayout(S[(5, 64, 256):(256 @ F, 1 @ P, 1 @ F)]), (128, 256), "PF", False, False, 5),
    ("small_m_and_n", (32, 128), "FP", (128, 48), "PF", (32, 48), "PF", False, False, 1),
    ("transposed_operands", (256, 128), "PF", (512, 256), "FP", (128, 512), "PF", True, True, 2),
    ("transposed_output", (512, 128), "FP", (128, 128), "PF", (512, 128), "FP", False, False, 1),
    ("two_psum_banks", (128, 128), "FP", (128, 1024), "PF", (128, 1024), "PF", False, False, 2),
]


@pytest.mark.parametrize("plan", PLANS, ids=[p[0] for p in PLANS])
def test_the_plan_runs_end_to_end_and_matches_numpy(plan):
    name, a_shape, a_spec, b_shape, b_spec, d_shape, d_spec, trans_a, trans_b, matmuls = plan
    source = trn_gemm.nki_source(_gemm_kernel(a_shape, a_spec, b_shape, b_spec, d_shape, d_spec, trans_a, trans_b))
    rng = np.random.default_rng(len(name))
    a = rng.standard_normal(a_shape).astype(np.float16)
    b = rng.standard_normal(b_shape).astype(np.float16)
    c = np.full(d_shape, np.nan, np.float32)
    counts = nki_executor.run(source, a, b, c)
    av, bv = a.astype(np.float32), b.astype(np.float32)
    want = (av.T if trans_a else av) @ (bv.T if trans_b else bv)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3)
    assert counts["nisa.nc_matmul"] == matmuls, counts


def test_a_per_partition_column_multiplies_as_a_tensor_scalar():
    """TrnMapRulesTest.perPartitionColumnIsATensorScalar: D = A * s with s one value per partition (128 x 1)."""
    @T.prim_func
    def kernel(A: T.Buffer((128, 256), "float32"), Sc: T.Buffer((128, 1), "float32"),
               D: T.Buffer((128, 256), "float32")):
        T.func_attr({"num_inputs": 2, "global_symbol": "scale_rows"})
        T.device_entry()
        a = T.alloc_buffer((128, 256), "float32", scope="trn.sbuf", layout=trainium_layout("PF", (128, 256)))
        s = T.alloc_buffer((128, 1), "float32", scope="trn.sbuf", layout=trainium_layout("PF", (128, 1)))
        d = T.alloc_buffer((128, 256), "float32", scope="trn.sbuf", layout=trainium_layout("PF", (128, 256)))
        Tx.copy(a, A[:, :])
        Tx.copy(s, Sc[:, :])
        Tx.mul(d, a, s)
        Tx.copy(D[:, :], d)

    source = trn_gemm.nki_source(kernel)
    rng = np.random.default_rng(7)
    a, s = rng.standard_normal((128, 256)).astype(np.float32), rng.standard_normal((128, 1)).astype(np.float32)
    d = np.full((128, 256), np.nan, np.float32)
    counts = nki_executor.run(source, a, s, d)
    assert counts["nisa.tensor_scalar"] >= 1, counts
    np.testing.assert_allclose(d, a * s, rtol=1e-6)


def test_a_reduction_along_f_is_one_tensor_reduce_per_partition_tile():
    """TrnMapRulesTest.reductionAlongFIsOneTensorReducePerPartitionTile: the max of each row of 256 x 2048."""
    @T.prim_func
    def kernel(A: T.Buffer((256, 2048), "float32"), D: T.Buffer((256, 1), "float32")):
        T.func_attr({"num_inputs": 1, "global_symbol": "row_max"})
        T.device_entry()
        a = T.alloc_buffer((256, 2048), "float32", scope="trn.sbuf", layout=trainium_layout("PF", (256, 2048)))
        d = T.alloc_buffer((256, 1), "float32", scope="trn.sbuf", layout=trainium_layout("PF", (256, 1)))
        Tx.copy(a, A[:, :])
        Tx.max(d, a, [1])
        Tx.copy(D[:, :], d)

    source = trn_gemm.nki_source(kernel)
    a = np.random.default_rng(8).standard_normal((256, 2048)).astype(np.float32)
    d = np.full((256, 1), np.nan, np.float32)
    counts = nki_executor.run(source, a, d)
    assert counts["nisa.tensor_reduce"] == 2, counts                 # one per 128-partition tile
    np.testing.assert_array_equal(d, a.max(axis=1, keepdims=True))


def test_strict_mode_holds_accesses_to_what_the_layouts_span():
    """nki_source's first line gives each buffer's layout extent (A^T-style FP tiles included, which TVM declares
    with their logical shape); strict mode checks accesses against it: shrinking a_ptr's recorded extent makes the
    same kernel fail, naming the tensor and the layout's figures."""
    import json

    _, a_shape, a_spec, b_shape, b_spec, d_shape, d_spec, *_ = PLANS[2]          # small M and N: A is (32, 128) FP
    source = trn_gemm.nki_source(_gemm_kernel(a_shape, a_spec, b_shape, b_spec, d_shape, d_spec))
    extents = nki_executor.layout_extents(source)
    assert extents["a_ptr"] == (128, 32) and extents["d_ptr"] == (32, 48)       # K on partitions for FP A
    first, rest = source.split("\n", 1)
    shrunk = dict(json.loads(first[len(nki_executor.EXTENTS_LINE):]), a_ptr=[128, 16])
    arrays = [np.ones(a_shape, np.float16), np.ones(b_shape, np.float16), np.zeros(d_shape, np.float32)]
    with pytest.raises(nki_executor.NkiLimitError, match=r"a_ptr.*its layout: 128 partitions x 16 elements.*"
                                                         r"\[strict rule declared-extent\]"):
        nki_executor.run(nki_executor.EXTENTS_LINE + json.dumps(shrunk) + "\n" + rest, *arrays)
