"""InferLayouts on Trainium: the GEMM and attention kernels written without layouts on their SBUF/PSUM buffers get
the hand-written P/F layouts (as maps), compile through tir_pipeline="trn" to the same NKI source and match numpy in
the executor; conflicting needs are reported."""

import io

import numpy as np
import pytest
import tvm
from tvm.backend.trn.layout import trainium_layout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

import _trn_unlaid_kernels as unlaid
import axe4j
import axe4j.transform as at
from axe4j_tools import nki_executor
from axe4j.trn.kernels import gemm as trn_gemm, mha as trn_mha

TRN = tvm.target.Target(trn_gemm.TARGET)
KERNELS = {"gemm": (unlaid.gemm, trn_gemm.gemm, 512), "attention": (unlaid.attention, trn_mha.attention, 512)}


def _alloc_layouts(func):
    layouts = {}

    def walk(node):
        if isinstance(node, tvm.tirx.AllocBuffer):
            layouts[str(node.buffer.name)] = node.buffer.ty.layout
        for field in ("seq", "body", "then_case", "else_case"):
            child = getattr(node, field, None)
            if child is not None:
                for c in (child if type(child).__name__ == "Array" else [child]):
                    walk(c)

    walk(func.body)
    return layouts


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_inferred_layouts_are_the_hand_written_ones_as_maps(name):
    bare, hand, size = KERNELS[name]
    func, notes = at.infer(bare(size), TRN)
    got, want = _alloc_layouts(func), _alloc_layouts(hand(size))
    assert set(got) == set(want) and len(got) >= 4
    for buf, layout in want.items():
        assert got[buf] is not None, (buf, notes)
        assert axe4j.layout.equivalent(got[buf], layout), (buf, str(got[buf]), str(layout))
    assert all(n.startswith("[infer]") for n in notes) and len(notes) == len(want), notes


_sources = {}


def _sources_of(name):
    if name not in _sources:
        bare, hand, size = KERNELS[name]
        _sources[name] = (trn_gemm.nki_source(bare(size)), trn_gemm.nki_source(hand(size)))
    return _sources[name]


def test_gemm_without_layouts_runs_as_the_hand_written_one():
    inferred, hand = _sources_of("gemm")
    assert inferred == hand
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((512, 512)).astype(np.float16) for _ in range(2))
    c = np.zeros((512, 512), np.float16)
    counts = nki_executor.run(inferred, a, b, c)
    assert counts["nisa.nc_matmul"] == 4 * 1 * 4
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=1e-2 * np.sqrt(512))


def test_attention_without_layouts_runs_as_the_hand_written_one():
    inferred, hand = _sources_of("attention")
    assert inferred == hand
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((512, trn_mha.HEAD_DIM)).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    nki_executor.run(inferred, q, k, v, np.eye(128, dtype=np.float16), out)
    s = q.astype(np.float32) @ k.astype(np.float32).T / np.sqrt(trn_mha.HEAD_DIM)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    want = (p / p.sum(axis=-1, keepdims=True)) @ v.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=2e-2, atol=2e-3)


def test_choices_are_explained_and_listed_by_explain():
    _, notes = at.infer(unlaid.attention(512), TRN)
    by_buffer = {n.split("buffer ")[1].split(" ")[0]: n for n in notes}
    assert '"FP": gemm A stored M x K' in by_buffer["pt"] and "call #11 gemm" in by_buffer["pt"]
    assert '"FP": gemm B stored N x K' in by_buffer["kt"]
    assert '"PF": per-partition column' in by_buffer["mx"]
    assert '"PF": max source: the reduced dims [1] on F' in by_buffer["sc"]
    assert '"PF" in its PSUM form' in by_buffer["s_ps"] and "1@Bank" in by_buffer["s_ps"]
    assert '"PF": mul partner o_ps is "PF"' in by_buffer["o"]
    report = axe4j.explain(unlaid.gemm(512), TRN, file=io.StringIO())
    assert "main: layout choices (InferLayouts):" in report
    assert report.count("axe4j-trn-copy (prio=100): accepted <- chosen") == 4
    assert "axe4j-trn-matmul (prio=100): accepted <- chosen" in report


def test_a_buffer_two_gemms_want_on_different_axes_is_reported():
    _, notes = at.infer(unlaid.conflicting(), TRN)
    conflicts = [n for n in notes if n.startswith("[infer-conflict]")]
    assert len(conflicts) == 2, notes
    assert conflicts[0].startswith("[infer-conflict] conflicting: buffer x (128, 128) float16 trn.sbuf: call #3 gemm")
    assert 'would want "PF" (gemm B stored K x N' in conflicts[0] and 'kept "FP"' in conflicts[0]


def test_a_given_operand_with_k_off_the_partitions_is_reported():
    @T.prim_func
    def kernel(A: T.Buffer((128, 128), "float16"), B: T.Buffer((128, 512), "float16"),
               C: T.Buffer((128, 512), "float32")):
        T.func_attr({"num_inputs": 2, "global_symbol": "k_on_f"})
        T.device_entry()
        a = T.alloc_buffer((128, 128), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (128, 128)))
        b = T.alloc_buffer((128, 512), "float16", scope="trn.sbuf")
        d = T.alloc_buffer((128, 512), "float32", scope="trn.psum")
        Tx.copy(a, A)
        Tx.copy(b, B)
        Tx.gemm(d, a, b, d)
        Tx.copy(C, d)

    _, notes = at.infer(kernel, TRN)
    conflicts = [n for n in notes if n.startswith("[infer-conflict]")]
    assert len(conflicts) == 1, notes
    assert 'user-given layout of a is "PF", but gemm A stored M x K' in conflicts[0]
    assert "axe4j-trn-matmul will decline this call" in conflicts[0]


def test_a_sum_along_partitions_keeps_its_given_source_axes():
    """The destination of a sum along P takes the given source's axes ("PF": the unit dim on P, the kept one on
    F), as the hand-written kernel of test_trn_ops.py has it; the build runs in the executor."""
    func, notes = at.infer(unlaid.column_sums(), TRN)
    got = _alloc_layouts(func)
    want = {"ones": trainium_layout("PF", (128, 1)), "b": trainium_layout("PF", (1, 1024)),
            "ps": trainium_layout("PF", (1, 512), is_psum=True)}
    for buf, layout in want.items():
        assert axe4j.layout.equivalent(got[buf], layout), (buf, str(got[buf]), str(layout))
    assert any('"PF": sum destination: the axes of its source a ("PF")' in n for n in notes), notes
    a = (np.random.default_rng(3).random((256, 1024)) - 0.5).astype(np.float16)
    out = np.zeros((1, 1024), np.float32)
    counts = nki_executor.run(trn_gemm.nki_source(unlaid.column_sums()), a, np.ones((128, 1), np.float16), out)
    assert counts["nisa.nc_matmul"] == 4
    np.testing.assert_allclose(out, a.astype(np.float32).sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-4)
