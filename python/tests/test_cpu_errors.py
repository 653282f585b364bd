"""Bad programs fail at compile time with an error that names the op, the operands and the reason."""

import tvm  # noqa: F401  (before the JVM)

import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j


def compile_error(kernel) -> str:
    with pytest.raises(Exception) as caught:
        axe4j.compile(kernel, "llvm")
    return str(caught.value)


def test_a_layout_that_does_not_admit_the_buffer_shape(bridge):
    @T.prim_func
    def kernel(Af: T.Buffer((64,), "float32"), B: T.Buffer((8, 8), "float32")):
        A = T.decl_buffer((8, 8), "float32", data=Af.data, layout=TileLayout(S[(4, 4):(4, 1)]))
        Tx.copy(B[:, :], A[:, :])

    message = compile_error(kernel)
    assert "op=tirx.tile.copy" in message, message
    assert "src0 (A): layout S[(4,4):(4,1)] (size 16) does not admit the buffer shape (8,8) (size 64): declare A " \
           "with the layout's shape (4,4), or give it a layout of 64 elements over (8,8)" in message
    # the layout violation first, then the dispatch failure it leads to, named by call, buffers and layouts
    assert message.startswith("VerifyLayouts: 1 layout violation in kernel:\n  [layout-shape] kernel: buffer A (8, 8)"), \
        message
    assert "fails as well:\nno dispatch case lowers T.tile.copy(B[0:8, 0:8], A[0:8, 0:8]) (thread scope, llvm): " \
           "B global S[(8,8):(8,1)], A global S[(4,4):(4,1)]" in message, message


def test_mismatched_regions(bridge):
    """TVMScript itself refuses a copy between regions of different shapes, when the kernel is parsed."""
    with pytest.raises(Exception) as caught:
        @T.prim_func
        def kernel(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
            Tx.copy(B[0:4, :], A[:, :])

        axe4j.compile(kernel, "llvm")
    assert "copy: dst region shape ['4', '8'] != src region shape ['8', '8']" in str(caught.value)


def test_mismatched_elementwise_regions(bridge):
    @T.prim_func
    def kernel(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        Tx.add(C[0:4, :], A[:, :], B[:, 0:4])

    message = compile_error(kernel)
    assert "dispatch failed: op=tirx.tile.add target=llvm" in message, message
    assert "add: region extents [8, 8] of src0 differ from [4, 8] of the destination" in message, message


def test_an_op_with_no_applicable_rule(bridge):
    @T.prim_func
    def kernel(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        Tx.warp.copy(B[:, :], A[:, :])

    message = compile_error(kernel)
    assert "dispatch failed: op=tirx.tile.copy target=llvm" in message, message
    for variant in ("axe4j-cpu-vector", "axe4j-cpu-digits", "axe4j-cpu-scalar"):
        assert variant in message, message
    assert "warp" in message, message
