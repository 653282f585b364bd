"""FP16 GEMM through tir_pipeline="trn" with the axe4j rules; the NKI source runs in the numpy executor."""

import os

import numpy as np
import pytest

import tvm
from tvm.backend.trn.layout import trainium_layout
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import F, P, S, TileLayout

from axe4j_tools import nki_executor
from axe4j.trn.kernels import gemm as trn_gemm

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

# CI runs the two smaller sizes; AXE4J_TRN_FULL=1 (make test-trn-full) runs all four.
SIZES = trn_gemm.SIZES if os.environ.get("AXE4J_TRN_FULL") else (512, 1024)


@pytest.mark.parametrize("n", SIZES)
def test_gemm_matches_numpy(n):
    source = trn_gemm.nki_source(trn_gemm.gemm(n))
    assert "nisa.nc_matmul" in source and "nl.load" in source
    rng = np.random.default_rng(n)
    a = (rng.random((n, n)) - 0.5).astype(np.float16)
    b = (rng.random((n, n)) - 0.5).astype(np.float16)
    c = np.zeros((n, n), np.float16)
    counts = nki_executor.run(source, a, b, c)
    # the maximal tile: 128 x 128 x 512 instructions, K/128 of them per PSUM tile
    assert counts["nisa.nc_matmul"] == (n // 128) * (n // 512) * (n // 128)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), expected, rtol=1e-2, atol=1e-2 * np.sqrt(n))


def test_executor_rejects_an_oversized_matmul():
    source = trn_gemm.nki_source(trn_gemm.gemm(512))
    lines = source.splitlines()
    at = next(i for i, line in enumerate(lines) if "+= nisa.nc_matmul" in line)
    assert "nl.arange(512)" in lines[at - 1]
    lines[at - 1] = lines[at - 1].replace("512", "1024")   # the moving free size, past 512 and past a bank
    with pytest.raises(nki_executor.NkiLimitError, match="PSUM bank|moving"):
        nki_executor.run("\n".join(lines), *(np.zeros((512, 512), np.float16) for _ in range(3)))


def test_executor_catches_an_unzeroed_psum_accumulation():
    source = trn_gemm.nki_source(trn_gemm.gemm(512))
    lines = [line for line in source.splitlines() if not line.strip().startswith("d_ptr[0,") or "+=" in line]
    c = np.zeros((512, 512), np.float16)
    nki_executor.run("\n".join(lines), np.ones((512, 512), np.float16), np.ones((512, 512), np.float16), c)
    assert np.isnan(c.astype(np.float32)).all()   # PSUM starts as NaN: accumulating without a memset shows


def test_256_partitions_fail_at_compile_time():
    bad = TileLayout(S[(256, 128):(1 @ P, 1 @ F)])

    @T.prim_func
    def kernel(A: T.Buffer((256, 128), "float16"), C: T.Buffer((256, 128), "float16")):
        T.func_attr({"num_inputs": 1, "global_symbol": "bad"})
        T.device_entry()
        a = T.alloc_buffer((256, 128), "float16", scope="trn.sbuf", layout=bad)
        Tx.copy(a, A)
        Tx.copy(C, a)

    with pytest.raises(Exception) as error:
        trn_gemm.nki_source(kernel)
    assert "256 partitions > 128" in str(error.value)


def test_the_builder_refuses_what_the_kernel_or_the_rules_cannot_take():
    with pytest.raises(ValueError, match=r"trn_gemm.gemm\(n=640\): the kernel tiles C in 128 x 512 blocks"):
        trn_gemm.gemm(640)
    # B's 512-column block of 65536 rows is 512 KiB per partition: the rules decline it, naming the SBUF limit
    with pytest.raises(ValueError) as failure:
        trn_gemm.gemm(65536)
    message = str(failure.value)
    assert message.startswith("trn_gemm.gemm(n=65536): axe4j's rules do not lower every tile call of the kernel")
    assert "axe4j-trn-copy: copy: breaks a Trainium hardware limit: SBUF tile b (65536,512)" in message


def test_every_rule_chose_for_the_gemm_kernel():
    import axe4j

    text = axe4j.explain(trn_gemm.gemm(512), tvm.target.Target(trn_gemm.TARGET))
    assert "axe4j-trn-matmul (prio=100): accepted <- chosen" in text
    assert "128 (K, P) x 128 (stationary A) x 512 (moving B)" in text
    assert text.count("axe4j-trn-copy (prio=100): accepted <- chosen") == 4
