"""``axe4j.tirx.explain`` and strict mode on the new TIRx lane: the report names each axe4j call, every CUDA rule's
decision (the chosen one as the lowering chose it), the plan, and the explicit tile calls with their views; a call
no rule lowers is reported with the compile's refusal and no fallback. Strict mode refuses hand-written tile calls
(which no axe4j rule lowers) and accepts kernels of axe4j ops only."""

import pytest
import tvm_tirx
from tvm_tirx.backend.cuda.axis import laneid
from tvm_tirx.backend.cuda.launch import LaunchConfig
from tvm_tirx.script import tirx as T

import axe4j

TARGET = tvm_tirx.target.Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")
QUADS = T.TileLayout(T.S[(8, 4, 4):(4 @ laneid, 1 @ laneid, 1)])
QUADS_SUM = T.TileLayout(T.S[(8,):(4 @ laneid,)] + T.R[4:1 @ laneid])


@pytest.fixture(scope="module")
def Ax():
    axe4j.install()
    from axe4j import tirx

    return tirx


def _row_sums(Ax):
    @T.function
    def kernel(A: T.Tensor((8, 16), "float32"), B: T.Tensor((8,), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=32)):
            r = T.alloc_local((8, 16), "float32", layout=QUADS)
            s = T.alloc_local((8,), "float32", layout=QUADS_SUM)
            Ax.copy(r[:, :], A[:, :], scope="warp")
            Ax.sum(s[:], r[:, :], [1], False, scope="warp")
            Ax.copy(B[:], s[:], scope="warp")

    return kernel


def test_explain_names_each_rule_the_chosen_plan_and_the_explicit_calls(Ax):
    before = len(Ax.LOWERED)
    report = Ax.explain(_row_sums(Ax), TARGET)
    chosen = [row.variant for row in Ax.LOWERED[before:]]
    assert chosen == ["axe4j-cuda-register", "axe4j-cuda-shuffle-reduce", "axe4j-cuda-register"]
    calls = report.split("\n#")
    assert len(calls) == 3
    for text, variant in zip(calls, chosen):
        assert f"  {variant} (prio=111): accepted <- chosen" in text
    assert "axe4j-cuda-vector (prio=110): declined: copy: dst=r[0:8, 0:16] float32" in calls[0]
    assert ("plan: cuda-register: partition dst S[(8,4,4):(4@laneid,1@laneid,1)]: 4 register slots per thread"
            in calls[0])
    assert 'emits T.cuda.tile.apply("ld.global.v4.f32", (axe4j_dst[0:4], axe4j_src0[' in calls[0]
    assert "plan: cuda-shuffle-reduce: 1 output per thread, 4 register terms folded each" in calls[1]
    assert "T.cuda.__shfl_xor_sync(T.uint32(4294967295), axe4j_acc[0], 2, 32)" in calls[1]
    assert 'emits T.cuda.tile.apply("st.global.f32", (axe4j_dst[' in calls[2]
    assert "compile failed" not in report


def test_explain_reports_a_call_no_rule_lowers_with_no_fallback(Ax):
    @T.function
    def kernel(A: T.Tensor((32,), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=32)):
            r = T.alloc_local((32,), "float32", layout=T.TileLayout(T.S[32:1 @ laneid]))
            s = T.alloc_local((32,), "float32", layout=T.TileLayout(T.S[(2, 16):(1 @ laneid, 2 @ laneid)]))
            Ax.copy(s[:], r[:], scope="warp")

    report = Ax.explain(kernel, TARGET)
    assert report.startswith("#0: axe4j.tirx.copy(s[0:32], r[0:32]) (warp scope)")
    assert "axe4j-cuda-register (prio=111): declined: copy: src0=r[0:32] float32 S[32:1@laneid]" in report
    assert "NO RULE: no axe4j rule accepts this call, and the new TIRx lane has no TVM case to fall back to" in report
    assert "the compile failed: " in report and "no dispatch case lowers axe4j.tirx.copy(s[0:32], r[0:32])" in report
    assert "emits" not in report


def _hand_written(Ax):
    @T.function
    def kernel(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=32)):
            r = T.alloc_local((4,), "float32", layout=T.TileLayout(T.S[4]))
            tx = T.cuda.thread_idx("x")
            T.cuda.tile.apply(T.ptx["ld.global.v4.f32"], r[0:4], A[tx * 4:tx * 4 + 4], scope="thread")
            Ax.copy(B[:], A[:], scope="warp")

    return kernel


def test_strict_mode_refuses_hand_written_tile_calls_and_accepts_axe4j_ops(Ax, monkeypatch):
    kernel = _hand_written(Ax)
    with pytest.raises(axe4j.StrictError) as refused:
        Ax.compile(kernel, TARGET, strict=True)
    message = str(refused.value)
    assert message.startswith("strict mode: these tile calls are explicit tvm_tirx instructions, not lowered by an "
                              "axe4j rule:")
    assert 'T.cuda.tile.apply("ld.global.v4.f32"' in message and "axe4j_copy" not in message
    Ax.compile(kernel, TARGET, strict=False)   # lowered by tvm_tirx's own pattern
    monkeypatch.setenv("AXE4J_STRICT", "1")
    with pytest.raises(axe4j.StrictError):
        Ax.compile(kernel, TARGET)
    Ax.compile(_row_sums(Ax), TARGET)   # axe4j ops only: strict mode has nothing to refuse
