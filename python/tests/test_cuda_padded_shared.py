"""Padded on-chip layouts: a shared or register tile whose layout reaches past its shape's elements (bank-conflict
padding, ``S[(16,48):(56,1)]``) is allocated by the layout's span (``axe4j.transform.AllocateBySpan``), compiled
through axe4j's rules and run in the CPU interpreter of CUDA kernels against numpy. The generated CUDA source must
declare the span's elements; without the resizing the interpreter faults (the negative control)."""

import tvm  # noqa: F401  (before the JVM)

import re

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j import transform
from axe4j.cuda import interp as cuda_interp

ARCH = "sm_90a"


def _target(arch=ARCH):
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def _compile(kernel, arch=ARCH):
    axe4j.use_pip_nvcc()
    executable = axe4j.compile(kernel, _target(arch), strict=True)
    return executable, executable.mod.imports[0].inspect_source()


def _shared_arrays(source):
    """{name: elements} of the static shared arrays the CUDA source declares."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"__shared__[^;]*?\b(\w+)\[(\d+)\];", source)}


def _copy_through_padded(shape=(16, 48), pitch=56, dtype="float32", threads=128):
    """global -> shared X -> shared Y -> global, both tiles with rows ``pitch`` elements apart."""
    layout = TileLayout(S[shape:(pitch, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, dtype), B: T.Buffer(shape, dtype)):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id([threads])
        X = T.alloc_buffer(shape, dtype, scope="shared", layout=layout)
        Y = T.alloc_buffer(shape, dtype, scope="shared", layout=layout)
        Tx.cta.copy(X[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(Y[:, :], X[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], Y[:, :])

    return kernel


def test_a_padded_shared_tile_is_allocated_by_its_span_and_copies_exactly():
    executable, source = _compile(_copy_through_padded())
    assert _shared_arrays(source) == {"X_ptr": 888, "Y_ptr": 888}, source   # 15 * 56 + 48, not 16 * 48 = 768
    a = np.random.default_rng(0).standard_normal((16, 48)).astype("float32")
    b = np.zeros_like(a)
    cuda_interp.run(executable, a, b)
    np.testing.assert_array_equal(b, a)


def test_the_padding_is_where_the_layout_puts_it():
    """The row pitch reaches the code: every shared address is row * 56 + column (a compact tile would use 48), and
    the accesses stay float4 (the padding keeps rows 16-byte aligned)."""
    _, source = _compile(_copy_through_padded())
    shared = [line for line in source.splitlines() if re.search(r"[XY]_ptr \+", line)]
    assert len(shared) == 3, shared   # X written; Y written from X; Y read
    assert all("/ 48) * 56)" in line and "float4" in line for line in shared), shared


def test_without_allocation_by_span_the_interpreter_faults(monkeypatch):
    """The negative control: the same kernel with TVM's own allocation (the shape's 768 elements per tile) lets X's
    padded rows run into Y and Y's past the CTA's shared memory, which the interpreter reports (as a race on the
    bytes both tiles use, or out of bounds); so the tests above would see a wrong allocation."""
    monkeypatch.setattr(transform, "AllocateBySpan", lambda: tvm.transform.Sequential([], name="none"))
    executable, source = _compile(_copy_through_padded())
    assert _shared_arrays(source) == {"X_ptr": 768, "Y_ptr": 768}
    a = np.ones((16, 48), "float32")
    with pytest.raises(cuda_interp.KernelFault, match="data race on shared memory|out-of-bounds"):
        cuda_interp.run(executable, a, np.zeros_like(a))


def test_a_view_with_the_tile_s_padded_layout_compiles_and_reads_the_tile():
    """A decl_buffer view of a padded shared tile's memory, with the tile's own layout S[(4,8):(9,1)]: checked against
    the allocation's span (35 elements), not the tile's shape (32); the copy through it is exact."""
    layout = TileLayout(S[(4, 8):(9, 1)])

    @T.prim_func
    def kernel(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        X = T.alloc_buffer((4, 8), "float32", scope="shared", layout=layout)
        V = T.decl_buffer((4, 8), "float32", data=X.data, layout=layout)
        Tx.cta.copy(X[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], V[:, :])

    executable, source = _compile(kernel)
    assert _shared_arrays(source) == {"X_ptr": 35}, source
    a = np.random.default_rng(1).standard_normal((4, 8)).astype("float32")
    b = np.zeros_like(a)
    cuda_interp.run(executable, a, b)
    np.testing.assert_array_equal(b, a)


# ---- ldmatrix / mma from padded shared tiles ------------------------------------------------------------------------

def _a_layout(m, k):
    bm, bk = m // 16, k // 16
    return TileLayout(S[(bm, 2, 8, bk, 2, 4, 2):(8 * bk, 2, 4 @ laneid, 8, 4, 1 @ laneid, 1)])


def _bt_layout(n, k):
    bn, bk = n // 8, k // 16
    return TileLayout(S[(bn, 8, bk, 2, 4, 2):(4 * bk, 4 @ laneid, 4, 2, 1 @ laneid, 1)])


def _c_layout(m, n):
    bm, bn = m // 16, n // 8
    return TileLayout(S[(bm, 2, 8, bn, 4, 2):(4 * bn, 2, 4 @ laneid, 4, 1 @ laneid, 1)])


def _padded_mma(m, n, k, pitch):
    """D = A @ B^T through shared tiles whose rows are ``pitch`` halves apart (pitch > k), ldmatrix into the mma
    fragments, one warp."""

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (m, k), "float16")
        B = T.match_buffer(B_ptr, (n, k), "float16")
        D = T.match_buffer(D_ptr, (m, n), "float32")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        A_smem = T.alloc_buffer((m, k), "float16", scope="shared", layout=TileLayout(S[(m, k):(pitch, 1)]))
        B_smem = T.alloc_buffer((n, k), "float16", scope="shared", layout=TileLayout(S[(n, k):(pitch, 1)]))
        A_reg = T.alloc_buffer((m, k), "float16", scope="local", layout=_a_layout(m, k))
        B_reg = T.alloc_buffer((n, k), "float16", scope="local", layout=_bt_layout(n, k))
        D_reg = T.alloc_buffer((m, n), "float32", scope="local", layout=_c_layout(m, n))
        Tx.cta.copy(A_smem[:, :], A[:, :])
        Tx.cta.copy(B_smem[:, :], B[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(A_reg[:, :], A_smem[:, :])
        Tx.warp.copy(B_reg[:, :], B_smem[:, :])
        Tx.warp.gemm(D_reg[:, :], A_reg[:, :], B_reg[:, :], D_reg[:, :], False, True, 1.0, 0.0)
        Tx.warp.copy(D[:, :], D_reg[:, :])

    return kernel


@pytest.mark.parametrize("m,n,k,pitch,arch", [(16, 8, 16, 24, "sm_80"), (32, 16, 32, 40, "sm_90a")])
def test_ldmatrix_and_mma_read_padded_shared_tiles(m, n, k, pitch, arch):
    executable, source = _compile(_padded_mma(m, n, k, pitch), arch)
    span = lambda rows: (rows - 1) * pitch + k  # noqa: E731
    assert _shared_arrays(source) == {"A_smem_ptr": span(m), "B_smem_ptr": span(n)}, source
    assert re.search(r"ldmatrix\.sync\.aligned\.m8n8\.x[124]\.shared\.b16", source)
    assert "mma.sync.aligned.m16n8k16" in source
    rng = np.random.default_rng(1)
    a = rng.integers(-2, 3, (m, k)).astype("float16")
    b = rng.integers(-2, 3, (n, k)).astype("float16")
    d = np.zeros((m, n), "float32")
    cuda_interp.run(executable, a, b, d)
    np.testing.assert_array_equal(d, a.astype("float32") @ b.astype("float32").T)


def test_ldmatrix_and_stmatrix_round_trip_through_padded_shared_tiles():
    """The padded 8x32 ldmatrix tile written as the layout it is, S[(8,32):(40,1)], instead of an (8, 40) buffer."""
    layout = TileLayout(S[(8, 32):(40, 1)])
    fragment = TileLayout(S[(8, 4, 4, 2):(4 @ laneid, 2, 1 @ laneid, 1)])

    @T.prim_func
    def kernel(A: T.Buffer((8, 32), "float16"), B: T.Buffer((8, 32), "float16")) -> None:
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        A_smem = T.alloc_buffer((8, 32), "float16", scope="shared", layout=layout)
        B_smem = T.alloc_buffer((8, 32), "float16", scope="shared", layout=layout)
        R = T.alloc_buffer((8, 32), "float16", scope="local", layout=fragment)
        Tx.warp.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(R[:, :], A_smem[:, :])
        Tx.warp.copy(B_smem[:, :], R[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(B[:, :], B_smem[:, :])

    executable, source = _compile(kernel)
    assert _shared_arrays(source) == {"A_smem_ptr": 312, "B_smem_ptr": 312}, source
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in source
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" in source
    a = np.arange(256, dtype="float16").reshape(8, 32)
    b = np.zeros_like(a)
    cuda_interp.run(executable, a, b)
    np.testing.assert_array_equal(b, a)


def test_a_padded_register_tile_holds_its_span_per_lane():
    """Registers: 8 values per lane two groups of 4 apart by 5 (a gap of one register); TIRx sizes local storage by
    the layout's span per thread (9), which axe4j leaves as it is."""
    layout = TileLayout(S[(32, 2, 4):(1 @ laneid, 5, 1)])

    @T.prim_func
    def kernel(A: T.Buffer((32, 8), "float32"), B: T.Buffer((32, 8), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        R = T.alloc_buffer((32, 8), "float32", scope="local", layout=layout)
        Tx.warp.copy(R[:, :], A[:, :])
        Tx.warp.copy(B[:, :], R[:, :])

    executable, source = _compile(kernel)
    assert re.search(r"float R\w*\[9\];", source), source
    a = np.random.default_rng(2).standard_normal((32, 8)).astype("float32")
    b = np.zeros_like(a)
    cuda_interp.run(executable, a, b)
    np.testing.assert_array_equal(b, a)


def _copy_through_padded_pool(by_span: bool, shape=(16, 48), pitch=56, dtype="float32", threads=128):
    """As ``_copy_through_padded`` with X and Y carved from one ``T.SMEMPool``: by the shape (TIRx's ``pool.alloc``,
    whose bump cursor then starts Y inside X's padding) or by the span (``axe4j.cuda.alloc_by_span``)."""
    from axe4j.cuda import alloc_by_span

    layout = TileLayout(S[shape:(pitch, 1)])

    @T.prim_func
    def kernel(A: T.Buffer(shape, dtype), B: T.Buffer(shape, dtype)):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id([threads])
        pool = T.SMEMPool()
        if by_span:
            X = alloc_by_span(pool, shape, dtype, layout=layout, align=16)
            Y = alloc_by_span(pool, shape, dtype, layout=layout, align=16)
        else:
            X = pool.alloc(shape, dtype, layout=layout, align=16)
            Y = pool.alloc(shape, dtype, layout=layout, align=16)
        pool.commit()
        Tx.cta.copy(X[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(Y[:, :], X[:, :])
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], Y[:, :])

    return kernel


def test_a_padded_pool_tile_is_named_and_alloc_by_span_carves_its_footprint():
    """T.SMEMPool carves by the shape: the padded X runs into Y, which VerifyLayouts names (pool-span) before
    anything runs; axe4j.cuda.alloc_by_span carves the layout's 888 elements, and the copy is exact."""
    report = transform.verify(_copy_through_padded_pool(False), _target())
    text = str(report)
    assert "pool-span" in text and "past the 768 elements SMEMPool.alloc carves for shape (16, 48)" in text, text
    assert "into Y (byte 3072)" in text and "buffer Y" not in text   # Y is the last: nothing after it to run into
    assert "axe4j.cuda.alloc_by_span" in text
    assert transform.verify(_copy_through_padded_pool(True), _target()) == []
    executable, source = _compile(_copy_through_padded_pool(True))
    a = np.random.default_rng(4).standard_normal((16, 48)).astype("float32")
    b = np.zeros_like(a)
    cuda_interp.run(executable, a, b)
    np.testing.assert_array_equal(b, a)
