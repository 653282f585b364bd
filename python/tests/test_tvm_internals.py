"""The private parts of TVM axe4j relies on (axe4j._tvm_internals), each assumption checked on its own against the
installed TVM, and the check itself shown to fail when an assumption breaks."""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j import _tvm_internals as internals


def test_every_assumption_holds_in_the_installed_tvm():
    assert internals.check() == []
    internals.require()


def test_the_dispatch_table_maps_op_and_target_kind_to_cases_axe4j_registered():
    axe4j.install()
    from axe4j import dispatch

    dispatch.register()
    table = internals.dispatch_table()
    copy_llvm = internals.cases("tirx.tile.copy", "llvm")
    assert copy_llvm and all(hasattr(c, a) for c in copy_llvm for a in ("variant", "priority", "impl"))
    assert any(c.variant.startswith("axe4j-") for c in copy_llvm)
    assert all(isinstance(k, tuple) and len(k) == 2 for k in table)


def test_run_dispatch_is_looked_up_at_each_call():
    """Replacing the module attribute traces the next compile's dispatches (what cuda_choices.recording does)."""
    axe4j.install()
    seen = []
    original = internals.run_dispatch()

    def traced(op_call, sctx):
        seen.append(str(op_call.op.name))
        return original(op_call, sctx)

    @T.prim_func
    def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        X = T.alloc_buffer((8,), "float32", layout=TileLayout(S[8]))
        Tx.copy(X[:], A[:])
        Tx.copy(B[:], X[:])

    internals.set_run_dispatch(traced)
    try:
        executable = axe4j.compile(k, "llvm")
    finally:
        internals.set_run_dispatch(original)
    assert seen.count("tirx.tile.copy") == 2
    a, b = tvm.runtime.tensor(np.arange(8, dtype="float32")), tvm.runtime.tensor(np.zeros(8, "float32"))
    executable(a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8))


def test_the_build_hooks_the_interpreter_wraps_exist_with_their_arity():
    build = internals.build_module()
    assert callable(build.split_host_device_mods) and callable(build.tir_to_runtime)


def test_a_broken_assumption_is_named(monkeypatch):
    monkeypatch.setattr(internals.dispatcher(), "_DISPATCH_TABLE", [], raising=True)
    problems = internals.check()
    assert problems and problems[0].startswith("1: ") and "_DISPATCH_TABLE is list" in problems[0]
    with pytest.raises(internals.TvmChanged, match=r"differs from what axe4j was built against .*assumption 1"):
        internals.require()
    monkeypatch.undo()
    monkeypatch.setattr(internals.build_module(), "tir_to_runtime", lambda host: host)
    assert any(p.startswith("3: tvm.tirx.build.tir_to_runtime") for p in internals.check())


def test_the_trn_pipeline_list_is_read_from_tvm_and_a_changed_one_is_named(monkeypatch):
    """Assumption 4: trn_pipeline()'s pass builds Sequential(passes) from its own list; axe4j reads the list (and
    restores Sequential); a pipeline without TilePrimitiveDispatch is named."""
    import importlib

    passes, finalize_host, finalize_device = internals.trn_passes()
    names = [p.info.name for p in passes]
    assert "TrnPrivateBufferAlloc" in names and names.index("TrnPrivateBufferAlloc") < \
        names.index("tirx.TilePrimitiveDispatch") and "tirx.MakePackedAPI" in names
    assert tvm.ir.transform.Sequential.__name__ == "Sequential" and callable(finalize_host) and callable(finalize_device)
    pipeline = importlib.import_module(internals.TRN_PIPELINE)
    original = pipeline.trn_pipeline

    def without_dispatch():
        run, host, device = original()

        @tvm.transform.module_pass(opt_level=0)
        def shortened(mod, _ctx):
            return tvm.ir.transform.Sequential([tvm.tirx.transform.StmtSimplify()])(mod)

        return shortened, host, device

    monkeypatch.setattr(pipeline, "trn_pipeline", without_dispatch)
    assert any(p.startswith("4: ") and "without ['TrnPrivateBufferAlloc', 'tirx.TilePrimitiveDispatch']" in p
               for p in internals.check())
