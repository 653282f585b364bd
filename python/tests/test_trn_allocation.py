"""SBUF allocation against layout spans (axe4j.trn.allocation): TVM's trn pipeline sizes SBUF buffers by element
count; a layout that reaches further (free stride 2) would overlap the next buffer and give wrong results silently,
and tiles over SBUF's bytes per partition would fail only at run time. Both are compile errors naming the buffers."""

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import F, P, S, TileLayout

from axe4j.trn import allocation as trn_allocation
from axe4j_tools import nki_executor
from axe4j.trn.kernels import gemm as trn_gemm


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


def test_a_padded_tile_whose_span_overlaps_nothing_runs_end_to_end():
    """Free stride 2 (every other column of the partition, reaching 255) after a dense tile: VerifyLayouts lets it
    through (Trainium layouts have no memory axis m), the SBUF check finds its bytes [256, 766) clear of the dense
    tile's, and the copy through it matches numpy in the NKI executor."""
    from axe4j import transform

    strided = TileLayout(S[(128, 128):(1 @ P, 2 @ F)])
    dense = TileLayout(S[(128, 128):(1 @ P, 1 @ F)])

    @T.prim_func
    def kernel(A: T.Buffer((128, 128), "float16"), B: T.Buffer((128, 128), "float16"),
               C: T.Buffer((128, 128), "float16")):
        T.func_attr({"num_inputs": 2, "global_symbol": "k"})
        T.device_entry()
        d = T.alloc_buffer((128, 128), "float16", scope="trn.sbuf", layout=dense)
        p = T.alloc_buffer((128, 128), "float16", scope="trn.sbuf", layout=strided)
        Tx.copy(d, B)
        Tx.copy(p, A)
        Tx.copy(C, p)

    assert transform.verify(kernel, "trn") == []
    source = trn_gemm.nki_source(kernel)
    a = (np.arange(128 * 128).reshape(128, 128) % 89).astype(np.float16)
    c = np.zeros_like(a)
    nki_executor.run(source, a, np.full_like(a, 3), c)
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


def _two_bank_gemm(transpose_a: bool = False):
    """C = A B with a 128 x 1024 float32 result (two PSUM banks), A loaded A^T-style (FP: K on partitions). With
    ``transpose_a`` also AT = A through an SBUF -> SBUF transposing copy, which goes through the TensorEngine with
    the identity and the 8-bank acc_psum TVM's private allocator added: those stay."""
    from tvm.backend.trn.layout import trainium_layout

    @T.prim_func
    def kernel(A: T.Buffer((128, 256), "float16"), B: T.Buffer((256, 1024), "float16"),
               C: T.Buffer((128, 1024), "float16"), AT: T.Buffer((128, 256), "float16")):
        T.func_attr({"num_inputs": 2, "global_symbol": "gemm2"})
        T.device_entry()
        a = T.alloc_buffer((128, 256), "float16", scope="trn.sbuf", layout=trainium_layout("FP", (128, 256)))
        b = T.alloc_buffer((256, 1024), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (256, 1024)))
        d = T.alloc_buffer((128, 1024), "float32", scope="trn.psum",
                           layout=trainium_layout("PF", (128, 1024), is_psum=True))
        c = T.alloc_buffer((128, 1024), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (128, 1024)))
        at = T.alloc_buffer((128, 256), "float16", scope="trn.sbuf", layout=trainium_layout("PF", (128, 256)))
        Tx.copy(b, B[:, :])
        Tx.copy(a, A[:, :])
        Tx.gemm(d, a, b, d)
        Tx.copy(c, d)
        Tx.copy(C[:, :], c)
        if transpose_a:
            Tx.copy(at, a)
            Tx.copy(AT[:, :], at)

    return kernel


def test_a_two_bank_gemm_result_runs_end_to_end():
    """A 128 x 1024 float32 result spans two PSUM banks. TVM's private allocator gives the transposing load of A an
    identity and an 8-bank acc_psum; axe4j's rule loads A with a strided DMA, so axe4j's pipeline drops both after
    dispatch (axe4j.trn.pipeline) and the kernel fits: it runs in the executor and matches numpy."""
    source = trn_gemm.nki_source(_two_bank_gemm())
    assert "acc_psum" not in source and "shared_constant" not in source and "identity" not in source
    rng = np.random.default_rng(26)
    a = rng.standard_normal((128, 256)).astype(np.float16)
    b = rng.standard_normal((256, 1024)).astype(np.float16)
    c = np.zeros((128, 1024), np.float16)
    counts = nki_executor.run(source, a, b, c, np.zeros((128, 256), np.float16))
    assert counts["nisa.nc_matmul"] == 4                          # 2 banks x 2 K steps of 128
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-3)


def test_psum_banks_the_pipeline_reserves_count_in_the_whole_kernel_budget():
    """Private PSUM buffers a rule uses stay, and count in the whole-kernel budget: acc_psum's 8 banks (both copies
    TVM placed on banks 0-7 count once) + the result's 2 = 10 > 8, refused at compile time with each figure."""
    with pytest.raises(ValueError, match=r"Trainium PSUM budget: 10 banks in use > 8: acc_psum 8 \(placed by the trn "
                                         r"pipeline on banks 0-7\), .*d 2 \(its layout's Bank axis\)"):
        trn_gemm.nki_source(_two_bank_gemm(transpose_a=True))


def test_the_pipeline_is_tvms_with_the_pruning_pass_after_dispatch():
    """axe4j-trn runs TVM's Trainium passes in TVM's order (read from TVM, not copied), with the pass that remembers
    the declared buffers before TrnPrivateBufferAlloc and the pruning pass right after TilePrimitiveDispatch."""
    from axe4j import _tvm_internals
    from axe4j.trn import pipeline as trn_pipeline

    tvm_names = [p.info.name for p in _tvm_internals.trn_passes()[0]]
    assert tvm_names[:3] == ["TrnPrivateBufferAlloc", "TrnNaiveAllocator", "tirx.TilePrimitiveDispatch"]
    names = []
    real = tvm.ir.transform.Sequential

    class Capture:
        def __init__(self, passes, *args, **kwargs):
            names.extend(p.info.name for p in passes)

        def __call__(self, mod):
            return mod

    run, _, _ = trn_pipeline.pipeline()
    tvm.ir.transform.Sequential = Capture
    try:
        run(tvm.IRModule({}))
    finally:
        tvm.ir.transform.Sequential = real
    assert names == (["axe4j.RememberDeclaredBuffers"] + tvm_names[:3] + ["axe4j.PrunePrivateBuffers"]
                     + tvm_names[3:])


def test_pruning_drops_only_unused_buffers_the_private_allocator_added():
    """prune() on the two-bank GEMM after dispatch: identity (used only by its own fill) and acc_psum go, the
    kernel's own buffers stay even when unused (a buffer named in ``declared`` is never removed)."""
    from axe4j import _tvm_internals
    from axe4j.trn import pipeline as trn_pipeline
    from axe4j.transform import run_layout_passes

    passes = _tvm_internals.trn_passes()[0]
    target = tvm.target.Target(trn_gemm.TARGET)
    with target:
        mod = tvm.tirx.transform.BindTarget(target)(run_layout_passes(tvm.IRModule({"main": _two_bank_gemm()}),
                                                                      target))
        declared = trn_pipeline._allocations(mod["main"])
        for p in passes[:3]:
            mod = p(mod)
    func = mod["main"]
    assert {"identity", "acc_psum"} <= trn_pipeline._allocations(func) - declared
    pruned, removed = trn_pipeline.prune(func, declared)
    assert removed == ["acc_psum", "identity"]
    assert trn_pipeline._allocations(pruned) == declared and "nki.identity" not in pruned.script()
    kept, removed = trn_pipeline.prune(func, declared | {"identity", "acc_psum"})
    assert removed == [] and kept.same_as(func)


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
