"""A Java rule that throws is a bug, not a decline (docs/cuda-dispatch.md, "Rule errors"): axe4j.compile refuses the
kernel with axe4j.RuleError naming the rule, the call and the exception, and explain shows it. The error is planted
through the Java system property the rules read for this test (Rule.PLANTED_ERROR_PROPERTY)."""

import tvm  # noqa: F401  (before the JVM)

import contextlib

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import axe4j

TARGET = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")


def _kernel():
    @T.prim_func
    def kernel(A: T.Buffer((32, 8), "float32"), B: T.Buffer((32, 8), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        T.thread_id([32])
        R = T.alloc_buffer((32, 8), "float32", scope="local", layout=TileLayout(S[(32, 8):(1 @ laneid, 1)]))
        Tx.warp.copy(R[:, :], A[:, :])
        Tx.warp.copy(B[:, :], R[:, :])

    return kernel


@contextlib.contextmanager
def _planted(variant):
    import jpype

    axe4j.install()
    system = jpype.JClass("java.lang.System")
    system.setProperty("axe4j.rules.planted-error", variant)
    try:
        yield
    finally:
        system.clearProperty("axe4j.rules.planted-error")


def test_a_rule_that_throws_fails_the_compile_naming_rule_call_and_error():
    axe4j.use_pip_nvcc()
    with _planted("axe4j-cuda-register"):
        with pytest.raises(axe4j.RuleError) as caught:
            axe4j.compile(_kernel(), TARGET)
    text = str(caught.value)
    assert "axe4j-cuda-register: IllegalStateException: planted rule error" in text
    assert "call: copy" in text and "bugs in axe4j's rules or emitters, not declines" in text


def test_explain_shows_the_rule_error():
    with _planted("axe4j-cuda-register"):
        report = axe4j.explain(_kernel(), TARGET, file=open("/dev/null", "w"))
    assert "axe4j-cuda-register (prio=111): RULE ERROR (a bug in the rule; compile refuses the kernel): " \
           "IllegalStateException: planted rule error" in report


def test_without_the_planted_error_the_same_kernel_compiles_and_runs():
    from axe4j.cuda import interp as cuda_interp

    axe4j.use_pip_nvcc()
    executable = axe4j.compile(_kernel(), TARGET)
    a, b = np.arange(256, dtype="float32").reshape(32, 8), np.zeros((32, 8), "float32")
    cuda_interp.run(executable, a, b)
    np.testing.assert_array_equal(a, b)


def test_an_emitter_that_raises_on_an_accepted_plan_fails_the_compile(monkeypatch):
    """TVM's dispatcher tries its next case after an exception; without the record the kernel would compile through
    TVM's own copy and the bug would go unseen (the last test shows the same kernel compiles)."""
    from axe4j import dispatch

    real = dispatch.emit

    def broken(request, plan):
        if plan.kind == "cuda-register":
            raise KeyError("planted emitter error")
        return real(request, plan)

    axe4j.use_pip_nvcc()
    monkeypatch.setattr(dispatch, "emit", broken)
    with pytest.raises(axe4j.RuleError) as caught:
        axe4j.compile(_kernel(), TARGET)
    text = str(caught.value)
    assert "the emitter of plan kind 'cuda-register' raised on the copy call: KeyError: 'planted emitter error'" in text
