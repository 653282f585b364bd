"""The passes give the same results from a Python TVM pipeline and from Java in a JVM-hosted TVM.

Four kernels are built here in TVMScript; axe-passes' JvmHostedPassesTest builds the very same functions with TVM's
constructors from Java, runs the passes on an IRModule through ``transform.Sequential``/``transform.RunPass`` in a
JVM that loaded TVM itself, and compares with the same file, axe-passes/src/test/resources/jvm-hosted-passes.json.
This test checks the Python results against that file (``AXE4J_REGENERATE=1`` rewrites it)."""

import tvm  # noqa: F401  (before the JVM)

import json
import os

import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import axe4j
import axe4j.transform as at

EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "axe-passes", "src", "test",
                        "resources", "jvm-hosted-passes.json")


def three_at_once():
    @T.prim_func
    def k(Sf: T.Buffer((40,), "float32"), B: T.Buffer((8, 8), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Sf.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        Y = T.alloc_buffer((8, 4), "float32", layout=TileLayout(S[(8, 8):(8, 1)]))
        Tx.exp(B[:, :], A[:, :])
        Tx.add(B[:, :], B[:, :], Y[:, 0:3])
    return k


def lanes():
    @T.prim_func
    def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        r = T.alloc_buffer((64,), "float32", scope="local", layout=TileLayout(S[(64,):(1 @ laneid,)]))
        Tx.warp.copy(r[:], A[:])
        Tx.warp.copy(B[:], r[:])
    return k


def two_stage():
    @T.prim_func
    def k(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        X = T.alloc_buffer((8, 8), "float32", layout=None)
        Y = T.alloc_buffer((8, 8), "float32", layout=None)
        Tx.add(X[:, :], A[:, :], B[:, :])
        Tx.exp(Y[:, :], X[:, :])
        Tx.mul(C[:, :], Y[:, :], A[:, :])
    return k


def column_major():
    @T.prim_func
    def k(Af: T.Buffer((64,), "float32"), B: T.Buffer((8, 8), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Af.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        X = T.alloc_buffer((8, 8), "float32", layout=None)
        Tx.exp(X[:, :], A[:, :])
        Tx.add(B[:, :], X[:, :], A[:, :])
    return k


KERNELS = {"three_at_once": three_at_once, "lanes": lanes, "two_stage": two_stage, "column_major": column_major}


def _layouts(func):
    """Every buffer's layout as axe4j text (``none`` without one), parameters first, by buffer name."""
    out = {}
    for p in func.params:
        out[str(p.name)] = p.ty.layout
    def walk(node):
        if isinstance(node, (tvm.tirx.AllocBuffer, tvm.tirx.DeclBuffer)):
            out[str(node.buffer.name)] = node.buffer.ty.layout
        for field in ("seq", "body"):
            child = getattr(node, field, None)
            if child is not None:
                for c in (child if type(child).__name__ == "Array" else [child]):
                    walk(c)
    walk(func.body)
    return {n: "none" if l is None else axe4j.layout.to_text(l) for n, l in out.items()}


def results():
    """Per kernel: VerifyLayouts' error text (or ``ok``), then after Sequential(Infer, Canonicalize): layouts, notes."""
    out = {}
    for name, make in KERNELS.items():
        mod = tvm.IRModule({"k": make()})
        try:
            at.VerifyLayouts("llvm")(mod)
            verified = "ok"
        except ValueError as error:
            verified = str(error)
        after = tvm.transform.Sequential([at.InferLayouts("llvm"), at.CanonicalizeLayouts()])(mod)["k"]
        notes = after.attrs["axe4j.layout_choices"] if after.attrs is not None and \
            "axe4j.layout_choices" in after.attrs else []
        out[name] = {"verify": verified, "layouts": _layouts(after), "notes": [str(n) for n in notes]}
    return out


@pytest.fixture(scope="module", autouse=True)
def installed():
    axe4j.install()


def test_python_results_equal_the_file_the_jvm_hosted_test_checks():
    got = results()
    if os.environ.get("AXE4J_REGENERATE") == "1":
        with open(EXPECTED, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
    with open(EXPECTED) as f:
        expected = json.load(f)
    assert got == expected
    assert expected["three_at_once"]["verify"].startswith("VerifyLayouts: 3 layout violations in k:")
    assert expected["lanes"]["verify"].count("[thread-extent]") == 1
    assert expected["two_stage"]["layouts"]["X"] == "S[(8,8):(8,1)]"
    assert expected["column_major"]["layouts"]["X"] == "S[(8,8):(1,8)]"
