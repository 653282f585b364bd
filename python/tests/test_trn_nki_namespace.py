"""TVM's NKI (the legacy neuronxcc.nki namespace) rewritten for the current nki namespace (axe4j_tools.nki_namespace):
the executor runs both forms, in strict mode, to the same outputs and the same per-engine cost."""

import numpy as np
import pytest

from axe4j_tools import nki_executor, nki_namespace
from axe4j.trn.kernels import gemm as trn_gemm, mha as trn_mha

from test_trn_ops import _reduce_kernel


def _same_run(legacy, arrays):
    current = nki_namespace.to_current(legacy)
    assert nki_executor.is_current_namespace(current) and not nki_executor.is_current_namespace(legacy)
    before, after = [a.copy() for a in arrays], [a.copy() for a in arrays]
    old = nki_executor.run(legacy, *before)
    new = nki_executor.run(current, *after)
    np.testing.assert_array_equal(before[-1], after[-1])
    assert old.engines == new.engines   # the same instructions, elements and bytes on every engine
    return current, new


def test_the_gemm_in_the_current_namespace():
    rng = np.random.default_rng(5)
    a, b = ((rng.random((512, 512)) - 0.5).astype(np.float16) for _ in range(2))
    current, stats = _same_run(trn_gemm.nki_source(trn_gemm.gemm(512)), [a, b, np.zeros_like(a)])
    assert current.splitlines()[:4] == nki_namespace.HEADER
    for legacy in ("neuronxcc", "nl.arange", "nl.load", "nl.store", "mod_alloc", "par_dim", "baremetal"):
        assert legacy not in current
    assert "@nki.jit\ndef gemm_kernel(A_ptr, B_ptr, C_ptr):" in current
    # B's block declared as NKI reads it: 128 partitions x 2048 elements, at TVM's address
    assert "b_ptr = nl.ndarray(shape=(128, 2048), dtype=nl.float16, buffer=nl.sbuf, address=(0, 1024))" in current
    assert ("nisa.nc_matmul(dst=d_ptr[0:128, 0:512], stationary=a_ptr[0:128, v_8 * 128:v_8 * 128 + 128], "
            "moving=b_ptr[0:128, v_8 * 512:v_8 * 512 + 512], accumulate=True)") in current
    assert "src=A_ptr.ap(pattern=[[1, 128], [512, 128]], offset=i * 65536 + v_3 * 128)" in current
    assert stats["nisa.dma_copy"] == 24 and stats["nisa.nc_matmul"] == 16
    # its declarations pass NKI's own reading, which TVM's legacy source does not
    nki_executor.run(current, a, b, np.zeros_like(a), declarations="nki")


def test_attention_in_the_current_namespace():
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((512, trn_mha.HEAD_DIM)).astype(np.float16) for _ in range(3))
    current, stats = _same_run(trn_gemm.nki_source(trn_mha.attention(512, 1)),
                               [q, k, v, np.eye(128, dtype=np.float16), np.zeros_like(q)])
    assert ("nisa.tensor_reduce(dst=mx_ptr[0:128, 0:1], data=sc_ptr[0:128, 0:512], op=nl.max, negate=False, "
            "axis=(1,), keepdims=True)") in current
    assert "nisa.reciprocal(dst=inv_ptr[0:128, 0:1], data=total_ptr[0:128, 0:1])" in current
    assert stats["nisa.activation"] == 4


def test_column_sums_in_the_current_namespace():
    from tvm.script.tirx import tile as Tx

    a = (np.random.default_rng(7).random((256, 1024)) - 0.5).astype(np.float16)
    _same_run(trn_gemm.nki_source(_reduce_kernel(Tx.sum, 0)),
              [a, np.ones((128, 1), np.float16), np.zeros((1, 1024), np.float32)])


def test_what_is_not_mapped_is_refused_by_name():
    source = "\n".join([
        "def k_kernel(out_ptr):",
        "  ident = nl.shared_constant(np.identity(4, dtype=np.int8), dtype=nl.float32)",
    ])
    with pytest.raises(NotImplementedError, match=r"nki_namespace: a statement outside MAPPED: ident = "
                                                  r"nl.shared_constant"):
        nki_namespace.to_current(source)


_ACCUMULATE = """import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k_kernel(x_ptr, out_ptr):
  a = nl.ndarray(shape=(128, 128), dtype=nl.float32, buffer=nl.sbuf, address=(0, 0))
  o = nl.ndarray(shape=(128, 128), dtype=nl.float32, buffer=nl.sbuf, address=(0, 512))
  d = nl.ndarray(shape=(128, 128), dtype=nl.float32, buffer=nl.psum)
  nisa.dma_copy(dst=a[0:128, 0:128], src=x_ptr.ap(pattern=[[128, 128], [1, 128]], offset=0))
  for k in range(2):
    nisa.nc_matmul(dst=d[0:128, 0:128], stationary=a[0:128, 0:128], moving=a[0:128, 0:128]{accumulate})
  nisa.tensor_copy(dst=o[0:128, 0:128], src=d[0:128, 0:128])
  nisa.dma_copy(dst=out_ptr.ap(pattern=[[128, 128], [1, 128]], offset=0), src=o[0:128, 0:128])
"""


def test_the_current_nc_matmul_accumulate_flag():
    """accumulate=None overwrites on the first write to PSUM and accumulates after (NKI 0.3.0); False overwrites."""
    x = np.eye(128, dtype=np.float32) * 3
    for flag, want in (("", 18), (", accumulate=False", 9)):
        out = np.zeros_like(x)
        nki_executor.run(_ACCUMULATE.format(accumulate=flag), x, out)
        np.testing.assert_array_equal(out, np.eye(128) * want)
    out = np.zeros_like(x)
    nki_executor.run(_ACCUMULATE.format(accumulate=", accumulate=True"), x, out)   # onto PSUM never cleared
    assert np.isnan(out).all()


def test_a_current_declaration_is_read_as_nki_reads_it():
    source = _ACCUMULATE.format(accumulate="").replace("shape=(128, 128), dtype=nl.float32, buffer=nl.sbuf, "
                                                       "address=(0, 0)",
                                                       "shape=(256, 64), dtype=nl.float32, buffer=nl.sbuf, "
                                                       "address=(0, 0)")
    with pytest.raises(nki_executor.NkiLimitError, match=r"a\[256, 64\]: declared \[256, 64\]: partition dimension "
                                                         r"256 > 128"):
        nki_executor.run(source, np.zeros((128, 128), np.float32), np.zeros((128, 128), np.float32))
