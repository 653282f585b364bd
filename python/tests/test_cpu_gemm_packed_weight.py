"""A GEMM weight stored once in the blocked GEMM's panel layout (``axe4j.cpu.packed_weight``, docs/cpu-dispatch.md
"A weight packed once"): the packer's memory equals numpy's panels, the GEMM reading it equals numpy's product at the
bench shapes and others, its code allocates no V panel (no workspace buffer the size of a K block of B's panels,
which the packing GEMM allocates), and a layout packed for other blocks is declined with both layouts named (the naive
rule computes it)."""

import tvm  # noqa: F401  (before the JVM)

import os
import re
from pathlib import Path

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j.cpu import packed_weight, weight_packer

RNG = np.random.default_rng(20261207)
ZNVER3 = {"kind": "llvm", "mcpu": "znver3"}   # AVX2: kc = min(256, K), nv = 16 fp32 whatever the caches


def _panels(K, N, kc, nv):
    """The packed layout written out: ((kb*panels + p)*kc + k')*nv + j holds B[kb*kc + k', p*nv + j]."""
    return TileLayout(S[(K // kc, kc, N // nv, nv):((N // nv) * kc * nv, nv, kc * nv, 1)])


def _linear(M, N, K, layout, b_dtype="float32", beta=0.0):
    @T.prim_func
    def linear(A: T.Buffer((M, K), "float32"), Bp_flat: T.Buffer((K * N,), b_dtype), C: T.Buffer((M, N), "float32"),
               D: T.Buffer((M, N), "float32")):
        Bp = T.decl_buffer((K, N), b_dtype, data=Bp_flat.data, layout=layout)
        Tx.gemm(D[:, :], A[:, :], Bp[:, :], C[:, :], False, False, T.float32(1.5), T.float32(beta))

    return linear


def _plain(M, N, K):
    @T.prim_func
    def plain(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((M, N), "float32"),
              D: T.Buffer((M, N), "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, False, T.float32(1.5), T.float32(0.0))

    return plain


def _explain(kernel, target="cpu"):
    return axe4j.explain(kernel, target, file=open(os.devnull, "w"))


def _workspace_sizes(lib):
    """The byte sizes of the module's ``TVMBackendAllocWorkspace`` calls, one per call site LLVM kept (it may keep a
    loop body twice, so sites are not counted)."""
    return [int(b) for b in re.findall(r"call ptr %\d+\(i32 1, i32 %dev_id, i64 (\d+),", lib.mod.inspect_source("ll"))]


# (M, N, K, B dtype, beta): the bench's square shapes, a non-square one with ragged u tiles, a skinny M (the row kernel
# for a row-major B on AVX-512; a packed B takes the tile), a float16 B widened where the micro-kernel reads it
SHAPES = [(512, 512, 512, "float32", 0.0), (2048, 2048, 2048, "float32", 0.0), (100, 96, 768, "float32", 0.5),
          (4, 64, 512, "float32", 1.0), (40, 64, 256, "float16", 0.0)]


@pytest.mark.parametrize("M,N,K,b_dtype,beta", SHAPES, ids=[f"{m}x{n}x{k}_{t}" for m, n, k, t, _ in SHAPES])
def test_gemm_reads_the_packed_weight_in_place_and_equals_numpy(M, N, K, b_dtype, beta):
    try:
        pw = packed_weight(K, N, b_dtype, "cpu", accumulator_dtype="float32")
    except ValueError as refused:
        # a host whose K block does not divide K (an L1d of 64 KiB gives kc = 293 at K = 2048; 32 and 48 KiB give
        # 128 and 256): the weight cannot be packed in whole blocks, and the refusal says so by name
        assert f"packed weight ({K}, {N}) {b_dtype}" in str(refused) and f"K={K}" in str(refused), refused
        return
    assert str(pw.layout) == str(_panels(K, N, pw.kc, pw.nv))
    kernel = _linear(M, N, K, pw.layout, b_dtype, beta)
    report = _explain(kernel)
    assert "axe4j-cpu-gemm-blocked (prio=10): accepted <- chosen" in report, report
    assert f"B already packed (layout S[({K // pw.kc},{pw.kc},{N // pw.nv},{pw.nv})" in report, report
    assert f"K block {pw.kc}" in report and f"x{pw.nv} vector dim n" in report, report
    a = RNG.standard_normal((M, K)).astype("float32")
    b = RNG.standard_normal((K, N)).astype(b_dtype)
    c = RNG.standard_normal((M, N)).astype("float32")
    b_packed = tvm.runtime.tensor(np.zeros(K * N, b_dtype))
    axe4j.compile(weight_packer(K, N, b_dtype, "cpu", accumulator_dtype="float32"), "cpu")(tvm.runtime.tensor(b),
                                                                                           b_packed)
    panels = b.reshape(K // pw.kc, pw.kc, N // pw.nv, pw.nv).transpose(0, 2, 1, 3).ravel()
    np.testing.assert_array_equal(b_packed.numpy(), panels)
    d = tvm.runtime.tensor(np.zeros((M, N), "float32"))
    axe4j.compile(kernel, "cpu")(tvm.runtime.tensor(a), b_packed, tvm.runtime.tensor(c), d)
    expected = 1.5 * (a @ b.astype("float32")) + beta * c
    np.testing.assert_allclose(d.numpy(), expected, rtol=1e-4, atol=1e-4 * np.sqrt(K))


@pytest.mark.parametrize("target", ["cpu", ZNVER3], ids=["host", "znver3"])
def test_the_packed_gemm_allocates_no_v_panel(target):
    """Code only (znver3 need not run here): the packing GEMM takes a U and a V panel from the workspace per K block,
    the packed one only U panels, and has no loop storing B into a panel. N = 96 makes a K block of V's panels
    (96 columns) a size no U panel has (64 rows)."""
    M, N, K = 64, 96, 512
    pw = packed_weight(K, N, "float32", target)
    v_panel = pw.kc * N * 4
    plain, packed = _workspace_sizes(axe4j.compile(_plain(M, N, K), target)), \
        _workspace_sizes(axe4j.compile(_linear(M, N, K, pw.layout), target))
    assert v_panel in plain and any(size != v_panel for size in plain), (v_panel, plain)
    assert packed and v_panel not in packed, (v_panel, packed)
    assert "B packed per K block" in _explain(_plain(M, N, K), target)
    assert "B packed per K block" not in _explain(_linear(M, N, K, pw.layout), target)


def _assert_declined(report, layout_text, plan_text):
    blocked = next(line for line in report.splitlines() if "axe4j-cpu-gemm-blocked" in line)
    assert "declined" in blocked and layout_text in blocked and plan_text in blocked, blocked
    assert "axe4j.cpu.packed_weight_layout" in blocked, blocked
    assert "axe4j-cpu-gemm-naive (prio=0): accepted <- chosen" in report, report


def test_a_weight_packed_for_other_blocks_is_declined_and_runs_naive_on_the_host():
    M, N, K = 12, 64, 512
    pw = packed_weight(K, N)
    wrong = _panels(K, N, pw.kc // 2, pw.nv)    # half the host plan's K block
    kernel = _linear(M, N, K, wrong)
    report = _explain(kernel)
    _assert_declined(report, f"S[({2 * K // pw.kc},{pw.kc // 2},", f"K block kc={pw.kc}, panels nv={pw.nv} wide")
    a = RNG.standard_normal((M, K)).astype("float32")
    b = RNG.standard_normal((K, N)).astype("float32")
    flat = b.reshape(2 * K // pw.kc, pw.kc // 2, N // pw.nv, pw.nv).transpose(0, 2, 1, 3).ravel()
    d = tvm.runtime.tensor(np.zeros((M, N), "float32"))
    axe4j.compile(kernel, "cpu")(tvm.runtime.tensor(a), tvm.runtime.tensor(flat),
                                 tvm.runtime.tensor(np.zeros((M, N), "float32")), d)
    np.testing.assert_allclose(d.numpy(), 1.5 * (a @ b), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("kc,nv", [(256, 32), (128, 16)], ids=["avx512_panel_width", "half_k_block"])
def test_a_weight_packed_for_other_blocks_is_declined_for_znver3(kc, nv):
    """The AVX2 plan (kc = 256, nv = 16) on any host: a 32-wide (AVX-512) or 128-deep packing is not read in place."""
    M, N, K = 12, 64, 512
    pw = packed_weight(K, N, "float32", ZNVER3)
    assert (pw.kc, pw.nv, pw.isa) == (256, 16, "avx2")
    report = _explain(_linear(M, N, K, _panels(K, N, kc, nv)), ZNVER3)
    _assert_declined(report, f"S[({K // kc},{kc},{N // nv},{nv})", "this plan's packed weight S[(2,256,4,16)")


def test_shapes_that_do_not_split_into_whole_blocks_are_refused_by_name():
    with pytest.raises(ValueError, match=r"packed weight \(300, 64\).*K=300, N=64, kc=256, nv=16"):
        packed_weight(300, 64, "float32", ZNVER3)
    with pytest.raises(ValueError, match=r"packed weight \(512, 40\).*N=40, kc=256, nv=16"):
        packed_weight(512, 40, "float32", ZNVER3)
    with pytest.raises(ValueError, match="not a CPU"):
        packed_weight(512, 64, "float32", {"kind": "cuda", "arch": "sm_90a"})


def test_the_packed_weight_example_in_the_docs_runs(tmp_path):
    """docs/cpu-dispatch.md, "A weight packed once": the block as written, run from a file (TVMScript reads the
    kernel's source)."""
    import runpy

    doc = (Path(__file__).resolve().parents[2] / "docs" / "cpu-dispatch.md").read_text()
    section = doc[doc.index("### A weight packed once"):]
    block = section[section.index("```python\n") + len("```python\n"):section.index("\n```\n")]
    (tmp_path / "packed_weight_example.py").write_text(block)
    runpy.run_path(str(tmp_path / "packed_weight_example.py"), run_name="packed_weight_example")


def test_the_plan_names_the_layout_it_reads():
    pw = packed_weight(256, 64)
    assert re.search(r"K block kb at offset kb\*\d+", _explain(_linear(16, 64, 256, pw.layout)))
