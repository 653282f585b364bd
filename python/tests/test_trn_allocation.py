"""SBUF allocation against layout spans (axe4j.trn_allocation): TVM's trn pipeline sizes SBUF buffers by element
count; a layout that reaches further (free stride 2) would overlap the next buffer and give wrong results silently,
and tiles over SBUF's bytes per partition would fail only at run time. Both are compile errors naming the buffers."""

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import F, P, S, TileLayout

from axe4j import nki_executor, trn_allocation
from axe4j.kernels import trn_gemm


def _two_tiles(a_layout, b_layout, a_cols=128, b_cols=128):
    @T.prim_func
    def kernel(A: T.Buffer((128, a_cols), "float16"), B: T.Buffer((128, b_cols), "float16"),
               C: T.Buffer((128, a_cols), "float16")):
        T.func_attr({"num_inputs": 2, "global_symbol": "k"})
        T.device_entry()
        a = T.alloc_buffer((128, a_cols), "float16", scope="trn.sbuf", layout=a_layout)
        b = T.alloc_buffer((128, b_cols), "float16", scope="trn.sbuf", layout=b_layout)
        Tx.copy(a, A)
        Tx.copy(b, B)
        Tx.copy(C, a)

    return kernel


def test_a_layout_reaching_past_its_element_count_is_refused_naming_both_buffers():
    strided = TileLayout(S[(128, 128):(1 @ P, 2 @ F)])     # 128 elements per partition, reaching 255
    dense = TileLayout(S[(128, 128):(1 @ P, 1 @ F)])
    with pytest.raises(ValueError, match=r"Trainium SBUF allocation: a \(bytes \[0, 510\) per partition, layout .*2 @ "
                                         r"Axis\.F.*\) and b \(bytes \[256, 512\) per partition.*overlap while both "
                                         r"live"):
        trn_gemm.nki_source(_two_tiles(strided, dense))


def test_dense_tiles_compile_and_copy_right():
    dense = TileLayout(S[(128, 128):(1 @ P, 1 @ F)])
    source = trn_gemm.nki_source(_two_tiles(dense, dense))
    a = (np.arange(128 * 128).reshape(128, 128) % 97).astype(np.float16)
    c = np.zeros_like(a)
    nki_executor.run(source, a, np.full_like(a, 7), c)
    np.testing.assert_array_equal(c, a)


def test_tiles_over_the_sbuf_budget_fail_at_compile_time_with_the_figures():
    cols = 50_000   # 100,000 bytes per partition each: together past 192 KiB
    with pytest.raises(ValueError, match=r"b \(bytes \[100000, 200000\) per partition.*\) ends past SBUF's 196608 "
                                         r"bytes per partition"):
        trn_gemm.nki_source(_two_tiles(TileLayout(S[(128, cols):(1 @ P, 1 @ F)]),
                                       TileLayout(S[(128, cols):(1 @ P, 1 @ F)]), cols, cols))


def test_liveness_follows_the_nki_blocks():
    source = "\n".join([
        "def k():",
        "  x_ptr = nl.ndarray(shape=[128, 64], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))",
        "  for i in nl.sequential_range(2):",
        "    y_ptr = nl.ndarray(shape=[128, 64], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=512))",
        "    y_ptr[0, 0] = 1",
        "  for j in nl.sequential_range(2):",
        "    z_ptr = nl.ndarray(shape=[128, 64], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=512))",
        "    w_ptr = nl.ndarray(shape=[128, 64], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=600))",
        "  return x_ptr",
    ])

    @T.prim_func
    def empty():
        T.evaluate(0)

    found = {b.name: b for b in trn_allocation.buffers(empty, source)}
    assert found["x_ptr"].span == 256 and found["x_ptr"].source == "declared shape [128, 64]"
    assert (found["y_ptr"].first, found["y_ptr"].last) == (3, 4)
    with pytest.raises(ValueError) as failure:   # y and z reuse bytes in different loops: fine; z and w overlap
        trn_allocation.check(empty, source)
    message = str(failure.value)
    assert "z (bytes [512, 768)" in message and "w (bytes [600, 856)" in message and "y (" not in message


def _two_bank_gemm():
    from tvm.backend.trn.layout import trainium_layout

    @T.prim_func
    def kernel(A: T.Buffer((128, 256), "float16"), B: T.Buffer((256, 1024), "float16"),
               C: T.Buffer((128, 1024), "float16")):
        T.func_attr({"num_inputs": 2, "global_symbol": "gemm2"})
        T.device_entry()
        a = T.alloc_buffer((128, 256), "float16", scope="trn.sbuf", layout=trainium_layout("FP", (128, 256)))
        b = T.alloc_buffer((256, 1024), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (256, 1024)))
        d = T.alloc_buffer((128, 1024), "float32", scope="trn.psum",
                           layout=trainium_layout("PF", (128, 1024), is_psum=True))
        c = T.alloc_buffer((128, 1024), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (128, 1024)))
        Tx.copy(b, B[:, :])
        Tx.copy(a, A[:, :])
        Tx.gemm(d, a, b, d)
        Tx.copy(c, d)
        Tx.copy(C[:, :], c)

    return kernel


def test_psum_banks_the_pipeline_reserves_count_in_the_whole_kernel_budget():
    """A 128 x 1024 float32 result spans two banks; the trn pipeline reserves all 8 for its own accumulator here, so
    the kernel needs 10: refused at compile time with each buffer's figure (the executor would stop at run time)."""
    with pytest.raises(ValueError, match=r"Trainium PSUM budget: 10 banks in use > 8: acc_psum 8 \(placed by the trn "
                                         r"pipeline\), d 2 \(its layout's Bank axis\)"):
        trn_gemm.nki_source(_two_bank_gemm())


def test_the_executor_models_shared_constants_as_device_memory():
    source = "\n".join([
        "def k_kernel(out_ptr):",
        "  ident = nl.shared_constant(np.identity(4, dtype=np.int8), dtype=nl.float32)",
        "  t = nl.ndarray(shape=[4, 4], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))",
        "  v = nl.arange(4)",
        "  t[v[:, None], v[None, :]] = nl.load(ident[v[:, None], v[None, :]])",
        "  nl.store(out_ptr[v[:, None] * 4 + v[None, :]], t[v[:, None], v[None, :]])",   # parameters are flat
    ])
    out = np.zeros((4, 4), np.float32)
    nki_executor.run(source, out)
    np.testing.assert_array_equal(out, np.identity(4, np.float32))
