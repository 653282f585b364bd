"""Multi-head attention without a causal mask (head dim 128) through tir_pipeline="trn"; the NKI source runs in the
executor."""

import io
import os

import numpy as np
import pytest

import tvm

import axe4j
from axe4j_tools import nki_executor
from axe4j.trn.kernels import gemm as trn_gemm, mha as trn_mha

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

# (sequence length, heads): CI runs the two shorter sequences; AXE4J_TRN_FULL=1 (make test-trn-full) runs all four.
CASES = [(s, 2) for s in trn_mha.SIZES] if os.environ.get("AXE4J_TRN_FULL") else [(512, 2), (1024, 1)]


def _reference(q, k, v):
    s = q.astype(np.float32) @ k.astype(np.float32).T / np.sqrt(trn_mha.HEAD_DIM)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v.astype(np.float32)


@pytest.mark.parametrize("s,heads", CASES)
def test_attention_matches_numpy(s, heads):
    source = trn_gemm.nki_source(trn_mha.attention(s, heads))
    rng = np.random.default_rng(s + heads)
    q, k, v = (rng.standard_normal((heads * s, trn_mha.HEAD_DIM)).astype(np.float16) for _ in range(3))
    out = np.zeros((heads * s, trn_mha.HEAD_DIM), np.float16)
    counts = nki_executor.run(source, q, k, v, np.eye(128, dtype=np.float16), out)
    blocks = heads * (s // 128)
    # per query block: S/512 score matmuls, S/128 transposes, S/128 p V steps
    assert counts["nisa.nc_matmul"] == blocks * (s // 512 + 2 * (s // 128))
    assert counts["nisa.activation"] == blocks and counts["nisa.tensor_reduce"] == 2 * blocks
    head = [slice(h * s, (h + 1) * s) for h in range(heads)]
    want = np.concatenate([_reference(q[r], k[r], v[r]) for r in head])
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=2e-2, atol=2e-3)


def test_every_call_is_an_axe4j_rule():
    text = axe4j.explain(trn_mha.attention(1024), tvm.target.Target(trn_gemm.TARGET), file=io.StringIO())
    calls = text.count("\nmain #") + text.startswith("main #")
    assert calls > 0 and text.count("<- chosen") == calls
    assert "default (prio=10): accepted <- chosen" not in text
    # p (queries on P) to p^T (keys on P): copies that became TensorEngine transposes
    assert f"{1024 // 128} x transpose of 128 x 128 through the TensorEngine" in text
