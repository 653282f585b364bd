"""CanonicalizeLayouts: every CPU test kernel (test_cpu_dispatch.py, test_cpu_random_layouts.py) gives the same
numbers with and without it, its layouts keep their maps (checked by enumeration with TIRx's apply) and it is
idempotent; see _canonical_twin.py. Also: the pass in a Sequential, and layouts already canonical stay the same
objects."""

import tvm  # noqa: F401  (before the JVM)

import json
import os
import subprocess
import sys

import pytest
import tvm_ffi
from tvm.script import tirx as T
from tvm.tirx.layout import R, S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j
import axe4j.transform as at

HERE = os.path.dirname(os.path.abspath(__file__))


def test_every_cpu_test_kernel_gives_the_same_numbers_after_canonicalization(tmp_path):
    report = tmp_path / "twin.json"
    env = dict(os.environ, AXE4J_TWIN_REPORT=str(report),
               PYTHONPATH=os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "_canonical_twin", "-p", "no:cacheprovider",
                          os.path.join(HERE, "test_cpu_dispatch.py"), os.path.join(HERE, "test_cpu_random_layouts.py")],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    counts = json.loads(report.read_text())
    assert counts["compiled"] >= 80, counts
    assert counts["runs"] >= 80, counts
    assert counts["layouts_changed"] >= 10, counts  # the check compares real rewrites, not only identities
    assert counts["elements_checked"] > 10000, counts


@pytest.fixture(scope="module")
def installed():
    axe4j.install()


def _kernel():
    @T.prim_func
    def k(Sf: T.Buffer((64,), "float32"), B: T.Buffer((4, 16), "float32")):
        A = T.decl_buffer((4, 16), "float32", data=Sf.data, layout=TileLayout(S[(4, 2, 8):(16, 8, 1)]))
        X = T.alloc_buffer((4, 16), "float32", layout=TileLayout(S[(4, 16):(16, 1)] + R[1:5]))
        Y = T.alloc_buffer((4, 16), "float32", layout=TileLayout(S[64:1]))
        Tx.exp(X[:, :], A[:, :])
        Tx.add(B[:, :], X[:, :], Y[:, :])
    return k


def test_the_pass_rewrites_to_canonical_form_in_a_sequential_and_is_idempotent(installed):
    mod = tvm.IRModule({"k": _kernel()})
    once = tvm.transform.Sequential([at.CanonicalizeLayouts()])(mod)
    twice = at.CanonicalizeLayouts()(once)
    assert tvm_ffi.structural_equal(once, twice)
    text = once["k"].script()
    # (4,2,8):(16,8,1) fuses to the row-major (4,16); the unit replica goes; S[64:1] is grouped by its shape (4,16):
    # all three are then the default layout, which the printer leaves out
    assert "A = Sf.view(4, 16)\n" in text
    assert "X = T.alloc_buffer((4, 16))\n" in text
    assert "Y = T.alloc_buffer((4, 16))\n" in text
    assert "R[" not in text and "layout=" not in text


def test_layouts_already_canonical_keep_their_objects(installed):
    k = _kernel()
    out = tvm.get_global_func("axe4j.passes.canonicalize")(k)
    assert k.params[1].ty.layout.same_as(out.params[1].ty.layout)  # B: row-major (4, 16), canonical already
    for n in (0, 1, 2):  # A (fused), X (unit replica), Y (S[64:1] grouped by its shape)
        assert not k.body.seq[n].buffer.ty.layout.same_as(out.body.seq[n].buffer.ty.layout)
