"""InferLayouts: CPU kernels whose intermediate buffers have no layout compile through ``axe4j.compile`` (which runs
verify -> infer -> canonicalize), run, and match numpy; the inferred layouts equal the hand-written ones, so both
versions lower to the same code (benchmarks/bench_infer.py times them). Explanations, conflicts, user layouts left alone."""

import tvm  # noqa: F401  (before the JVM)

import os
import re

import numpy as np
import pytest
import tvm_ffi
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j
import axe4j.transform as at
from _infer_kernels import KERNELS, build, inputs, reference

N = 16
RNG = np.random.default_rng(20261123)


@pytest.fixture(scope="module", autouse=True)
def installed():
    axe4j.install()


def _alloc_layouts(func):
    out = {}

    def walk(node):
        if isinstance(node, tvm.tirx.AllocBuffer):
            out[str(node.buffer.name)] = node.buffer.ty.layout
        for field in ("seq", "body"):
            child = getattr(node, field, None)
            if child is not None:
                for c in (child if type(child).__name__ == "Array" else [child]):
                    walk(c)

    walk(func.body)
    return out


def test_at_least_10_kernels():
    assert len(KERNELS) >= 10


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_inferred_kernel_runs_and_matches_numpy_and_the_hand_written_layouts(name):
    bare = build(name, N, hand=False)
    assert all(layout is None for layout in _alloc_layouts(bare).values())
    arrays = inputs(name, N, RNG)
    expected = reference(name, arrays)
    tensors = [tvm.runtime.tensor(a) for a in arrays]
    axe4j.compile(bare, "llvm")(*tensors)
    for t, e in zip(tensors, expected):
        np.testing.assert_allclose(t.numpy(), e, rtol=1e-4, atol=1e-4)

    inferred, notes = at.infer(bare, "llvm")
    hand = _alloc_layouts(build(name, N, hand=True))
    got = _alloc_layouts(inferred)
    assert got.keys() == hand.keys()
    for buffer, layout in hand.items():
        assert axe4j.layout.equivalent(got[buffer], layout), (buffer, str(got[buffer]), str(layout), notes)
    assert len([n for n in notes if n.startswith("[infer]")]) == len(hand)
    assert at.verify(inferred, "llvm") == []


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_inferred_and_hand_written_kernels_lower_to_the_same_code(name):
    """Same LLVM IR (object addresses aside) means the same run time; benchmarks/bench_infer.py measures both."""
    inferred = axe4j.compile(build(name, N, hand=False), "llvm")
    hand = axe4j.compile(build(name, N, hand=True), "llvm")
    assert _llvm(inferred) == _llvm(hand)


def _llvm(lib):
    return re.sub(r"0x[0-9a-f]+", "0x?", lib.mod.inspect_source("ll"))


def test_each_choice_is_explained_with_its_reason():
    inferred, notes = at.infer(build("column_major_chain", N, hand=False), "llvm")
    assert notes == [
        "[infer] k: buffer X (16, 16) float32 global: elementwise partner A has dimension order [1, 0] (outer to inner):"
        " same order, compact, from call #0 exp(X[0:16, 0:16], A[0:16, 0:16]) (layout S[(16,16):(1,16)])"]
    assert [str(s) for s in inferred.attrs["axe4j.layout_choices"]] == notes
    _, notes = at.infer(build("gemm_then_add", N, hand=False), "llvm")
    assert "gemm accumulator: row-major, the blocked rule's register tile runs along its rows, from call #0 gemm(" \
        in notes[0]


def test_user_layouts_are_left_alone_and_conflicts_reported():
    @T.prim_func
    def k(Af: T.Buffer((64,), "float32"), B: T.Buffer((8, 8), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Af.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        U = T.alloc_buffer((8, 8), "float32", layout=TileLayout(S[(8, 8):(1, 8)]))
        X = T.alloc_buffer((8, 8), "float32", layout=None)
        Tx.exp(X[:, :], A[:, :])
        Tx.add(B[:, :], X[:, :], U[:, :])

    inferred, notes = at.infer(k, "llvm")
    layouts = _alloc_layouts(inferred)
    assert layouts["U"].same_as(_alloc_layouts(k)["U"])
    assert str(layouts["X"]) == str(TileLayout(S[(8, 8):(1, 8)]))
    assert notes[1] == ("[infer-conflict] k: buffer X (8, 8) float32 global: call #1 add(B[0:8, 0:8], X[0:8, 0:8], "
                        "U[0:8, 0:8]) would want S[(8,8):(8,1)] (elementwise partner B has dimension order [0, 1] "
                        "(outer to inner): same order, compact); kept the choice of call #0 exp(X[0:8, 0:8], "
                        "A[0:8, 0:8]) (layout S[(8,8):(1,8)])")


def test_register_buffers_of_a_cuda_kernel_are_reported_not_guessed():
    @T.prim_func
    def k(A: T.Buffer((128,), "float32")) -> None:
        T.device_entry()
        T.warp_id([4])
        T.lane_id([32])
        r = T.alloc_buffer((128,), "float32", scope="local", layout=None)
        Tx.cta.copy(r[:], A[:])

    inferred, notes = at.infer(k, tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}))
    assert notes == ["[infer-unsupported] k: buffer r (128,) float32 local: no warp gemm (mma) or warpgroup "
                     "gemm_async (wgmma accumulator) uses this register buffer; give its layout"]
    assert _alloc_layouts(inferred)["r"] is None


def test_infer_runs_in_a_python_sequential_with_the_other_passes():
    mod = tvm.IRModule({"k": build("two_stage", N, hand=False)})
    out = tvm.transform.Sequential([at.VerifyLayouts("llvm"), at.InferLayouts("llvm"), at.CanonicalizeLayouts()])(mod)
    layouts = _alloc_layouts(out["k"])
    assert [str(layouts[b]) for b in ("X", "Y")] == [str(TileLayout(S[(16, 16)]))] * 2
    again = at.InferLayouts("llvm")(out)
    assert tvm_ffi.structural_equal(again, out)


def test_the_recommended_pipeline_lowers_a_kernel_without_layouts():
    """axe4j.pipeline(target): verify -> infer -> canonicalize -> allocation by span -> BindTarget -> TVM's TIRx
    lowering (axe4j dispatch)."""
    mod = tvm.IRModule({"k": build("two_stage", N, hand=False).with_attr("global_symbol", "k")})
    seq = axe4j.pipeline("llvm")
    assert [p.info.name for p in seq.passes][:5] == ["axe4j.VerifyLayouts", "axe4j.InferLayouts",
                                                       "axe4j.CanonicalizeLayouts", "axe4j.AllocateBySpan",
                                                       "tirx.BindTarget"]
    out = seq(mod)
    text = out.script()
    assert "axe4j.layout_choices" in text and "T.tile." not in text and "__tvm_ffi_k" in text


def test_a_cuda_shared_tile_gets_a_row_major_layout_and_compiles(monkeypatch):
    """The shared staging tile of a register round trip (as in test_cuda_register.py) needs no hand-written layout."""
    from tvm.tirx.layout import laneid, warpid

    def kernel(shared_layout):
        @T.prim_func
        def k(A_ptr: T.handle, B_ptr: T.handle) -> None:
            A = T.match_buffer(A_ptr, (128, 8), "float32")
            B = T.match_buffer(B_ptr, (128, 8), "float32")
            T.device_entry()
            T.cta_id([1])
            T.warpgroup_id([1])
            T.warp_id_in_wg([4])
            T.warp_id([4])
            T.lane_id([32])
            T.thread_id_in_wg([128])
            T.thread_id([128])
            r = T.alloc_buffer((128, 8), "float32", scope="local",
                               layout=TileLayout(S[(4, 32, 8):(1 @ warpid, 1 @ laneid, 1)]))
            s = T.alloc_buffer((128, 8), "float32", scope="shared", layout=shared_layout)
            Tx.cta.copy(r[:, :], A[:, :])
            Tx.cta.copy(s[:, :], r[:, :])
            T.cuda.cta_sync()
            Tx.cta.copy(B[:, :], s[:, :])
        return k

    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    inferred, notes = at.infer(kernel(None), target)
    assert notes == ["[infer] k: buffer s (128, 8) float32 shared: shared tile that no TMA copy or wgmma reads: "
                     "compact row-major, unswizzled (what the CUDA copy rules accept) (layout S[(128,8):(8,1)])"]
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))
    monkeypatch.delenv("TVM_CUDA_COMPILE_MODE", raising=False)
    axe4j.use_pip_nvcc()
    sources = [axe4j.compile(kernel(layout), target).mod.imports[0].inspect_source("cuda")
               for layout in (None, TileLayout(S[(128, 8)]))]
    assert sources[0] == sources[1]
