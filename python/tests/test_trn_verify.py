"""VerifyLayouts on trn kernels: the per-partition column broadcast is legal there, other shape clashes are not,
and ``axe4j.compile(..., tir_pipeline="trn")`` stops a broken kernel before TVM's own trn cases see it."""

import pytest
import tvm
from tvm.backend.trn.layout import trainium_layout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

import axe4j
import axe4j.transform as at
from axe4j.trn.kernels import gemm as trn_gemm, mha as trn_mha

TRN = tvm.target.Target(trn_gemm.TARGET)


def _scaled(cols: int):
    tile = trainium_layout("PF", (128, 512))
    col = trainium_layout("PF", (128, cols))

    @T.prim_func
    def kernel(A: T.Buffer((128, 512), "float32"), C: T.Buffer((128, 512), "float32")):
        T.func_attr({"num_inputs": 1, "global_symbol": "scaled"})
        T.device_entry()
        a = T.alloc_buffer((128, 512), "float32", scope="trn.sbuf", layout=tile)
        s = T.alloc_buffer((128, cols), "float32", scope="trn.sbuf", layout=col)
        Tx.copy(a, A)
        Tx.fill(s, T.float32(2))
        Tx.mul(a, a, s)
        Tx.copy(C, a)

    return kernel


def test_the_examples_break_no_rule():
    assert at.verify(trn_gemm.gemm(512), TRN) == []
    assert at.verify(trn_mha.attention(512), TRN) == []


def test_a_per_partition_column_broadcasts_on_trn_only():
    assert at.verify(_scaled(1), TRN) == []
    found = at.verify(_scaled(1), "llvm")
    assert len(found) == 1 and found[0].startswith("[region-shape] scaled: call #")


def test_a_non_unit_mismatch_is_reported_on_trn():
    found = at.verify(_scaled(2), TRN)
    assert len(found) == 1
    assert "operand s[0:128, 0:2] has extents [128, 2], the destination a[0:128, 0:512] has [128, 512]" in found[0]


def test_compile_names_every_violation_before_the_trn_pipeline():
    with TRN, pytest.raises(ValueError) as error:
        axe4j.compile(tvm.IRModule({"main": _scaled(2)}), target=TRN, tir_pipeline="trn")
    # the layout passes (verify -> infer -> canonicalize) stop it, naming the kernel and the violation
    assert str(error.value).startswith("VerifyLayouts: 1 layout violation in main:\n  [region-shape] scaled: call #2")
    assert "s[0:128, 0:2] has extents [128, 2]" in str(error.value)
