"""axe4j's tile ops and the ``llvm`` target on the new TIRx lane: tvm_tirx lowers a tile instruction only at a thread
scope of the target's own backend and has none for ``llvm``, so axe4j refuses such a kernel by name before
tvm_tirx's dispatch stops it (``axe4j.tirx._host``); plain ``llvm`` functions and CUDA kernels compile as before."""

import io

import numpy as np
import pytest
import tvm_tirx
from tvm_tirx.backend.cuda.launch import LaunchConfig
from tvm_tirx.script import tirx as T
from tvm_tirx.tirx import compilation_pipeline

import axe4j

ROWS = T.TileLayout(T.S[(4, 8):(9, 1)])   # a padded row-major tile: rows 9 elements apart


@pytest.fixture(scope="module")
def Ax():
    axe4j.install()
    from axe4j import tirx

    return tirx


def _host_kernel(Ax):
    @T.function
    def host_rows(A: T.Tensor((4, 8), "float32", layout=ROWS), B: T.Tensor((4,), "float32")):
        Ax.copy(A[0:4, 0:8], A[0:4, 0:8])
        Ax.sum(B[0:4], A[0:4, 0:8], [1], False)

    return host_rows


def test_tvm_tirx_has_thread_scopes_for_cuda_and_trn_only(Ax):
    # the reason the CPU rules have no plug point on this lane; a tvm_tirx with llvm scopes fails here, and then
    # axe4j's CPU rules can be registered as llvm tile instructions (docs/tvm-versions.md)
    assert Ax._host.scope_backends() == ["cuda", "trn"]


def test_tvm_tirx_itself_stops_an_axe4j_call_in_an_llvm_function(Ax, monkeypatch):
    # without axe4j's selector the call reaches TileDispatch, which checks the scope's backend against the target
    selectors = [s for s in compilation_pipeline._DEFAULT_PIPELINE_SELECTORS if s is not Ax._host.refuse_host_calls]
    monkeypatch.setattr(compilation_pipeline, "_DEFAULT_PIPELINE_SELECTORS", selectors)
    with pytest.raises(Exception, match="Thread scope cuda.thread does not match target llvm"):
        tvm_tirx.tirx.compile(_host_kernel(Ax), target="llvm")


def test_axe4j_refuses_each_call_by_name_with_its_layouts_and_the_way_forward(Ax):
    with pytest.raises(axe4j.DispatchRefused) as caught:
        tvm_tirx.tirx.compile(_host_kernel(Ax), target="llvm")
    lines = str(caught.value).splitlines()
    assert lines[0] == ("no dispatch case lowers axe4j.tirx.copy(A[0:4, 0:8], A[0:4, 0:8]) (thread scope) in "
                        "host_rows for target llvm: A global S[(4,8):(9,1)]")
    assert lines[1] == ("no dispatch case lowers axe4j.tirx.sum(B[0:4], A[0:4, 0:8], (1,), T.bool(False)) "
                        "(thread scope) in host_rows for target llvm: B global S[4:1], A global S[(4,8):(9,1)]")
    assert "thread scopes for cuda and trn alone, none for llvm" in lines[2]
    assert "through the 0.27 lane" in lines[3] and '"The llvm target on the new lane"' in lines[3]


def test_axe4j_compile_and_explain_give_the_same_refusal(Ax):
    with pytest.raises(axe4j.DispatchRefused, match="in host_rows for target llvm"):
        Ax.compile(_host_kernel(Ax), "llvm")
    report = Ax.explain(_host_kernel(Ax), "llvm", file=io.StringIO())
    assert "the compile failed: no dispatch case lowers axe4j.tirx.copy(A[0:4, 0:8]" in report


def test_plain_llvm_functions_and_cuda_kernels_still_compile(Ax):
    @T.function
    def add_one(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        for i in range(8):
            B[i] = A[i] + T.float32(1)

    lib = tvm_tirx.tirx.compile(add_one, target="llvm")
    x = tvm_tirx.runtime.tensor(np.arange(8, dtype="float32"))
    y = tvm_tirx.runtime.tensor(np.zeros(8, dtype="float32"))
    lib(x, y)
    np.testing.assert_array_equal(y.numpy(), np.arange(8, dtype="float32") + 1)

    @T.function
    def copy_rows(A: T.Tensor((4, 8), "float32"), B: T.Tensor((4, 8), "float32")):
        with T.device_entry(launch=LaunchConfig(grid=1, block=32)):
            Ax.copy(B[0:4, 0:8], A[0:4, 0:8], scope="cta")

    sm80 = tvm_tirx.target.Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")
    assert Ax._host.refuse_host_calls(tvm_tirx.ir.IRModule({"copy_rows": copy_rows}), sm80) is None
    assert Ax._host.refuse_host_calls(tvm_tirx.ir.IRModule({"add_one": add_one}), "llvm") is None


def test_the_selector_is_registered_once(Ax):
    Ax._host.register()
    Ax._host.register()
    assert compilation_pipeline._DEFAULT_PIPELINE_SELECTORS.count(Ax._host.refuse_host_calls) == 1
