"""The NKI executor's strict mode (the default): each strict rule refuses a kernel that breaks it, naming the tensor
and the rule, and takes the correct form; non-strict mode still runs the broken ones. The cost model's counts are
checked exactly on the 512 GEMM."""

import numpy as np
import pytest

from axe4j_tools import nki_executor
from axe4j.trn.kernels import gemm as trn_gemm


def _kernel(*body):
    return "\n".join(["def k_kernel(x_ptr, out_ptr):", *("  " + line for line in body)])


def test_strict_is_the_default():
    assert nki_executor.STRICT is True
    assert set(nki_executor.STRICT_RULES) == {"declared-extent", "declared-partitions", "tensor_tensor-psum",
                                              "activation-bias", "load-into-sbuf"}


# declared-extent (SBUF): a holds 128 float16 per partition (bytes [0, 256)); b starts right after it.
_TWO_TILES = [
    "a_ptr = nl.ndarray(shape=[128, 128], dtype=np.float16, buffer=ncc.sbuf.mod_alloc(base_addr=0))",
    "b_ptr = nl.ndarray(shape=[128, 128], dtype=np.float16, buffer=ncc.sbuf.mod_alloc(base_addr=256))",
    "p = nl.arange(128)",
    "f = nl.arange(128)",
    "b_ptr[p[:, None], f[None, :]] = nl.load(x_ptr[p[:, None] * 128 + f[None, :]])",
]


def _strided_read(stride):
    # stride 2 reaches a's free index 254: past its 128 elements, into b's bytes
    return _kernel(*_TWO_TILES,
                   f"a_ptr[p[:, None], {stride} * f[None, :]] = nisa.tensor_copy(b_ptr[p[:, None], f[None, :]])",
                   f"nl.store(out_ptr[p[:, None] * 128 + f[None, :]], b_ptr[p[:, None], f[None, :]])")


def test_an_access_past_the_declared_extent_is_refused_naming_tensor_shape_and_range():
    x = np.arange(128 * 128).reshape(128, 128).astype(np.float16)
    with pytest.raises(nki_executor.NkiLimitError) as failure:
        nki_executor.run(_strided_read(2), x, np.zeros_like(x))
    message = str(failure.value)
    assert message.startswith("a_ptr[128, 128]: access at partitions [0, 127], free elements [0, 254] outside its "
                              "declaration [128, 128] (128 partitions x 128 elements per partition)")
    assert "[strict rule declared-extent]" in message
    # without strict mode the write lands in b (as it would on the chip): b's odd columns come back overwritten
    out = np.zeros_like(x)
    nki_executor.run(_strided_read(2), x, out, strict=False)
    assert not np.array_equal(out, x)
    out = np.zeros_like(x)
    nki_executor.run(_strided_read(1), x, out)   # the correct form: within a
    np.testing.assert_array_equal(out, x)


def test_an_sbuf_declaration_reaching_past_sbuf_is_refused():
    source = _kernel("a_ptr = nl.ndarray(shape=[128, 1024], dtype=np.float32, "
                     "buffer=ncc.sbuf.mod_alloc(base_addr=195000))")
    with pytest.raises(nki_executor.NkiLimitError, match=r"a_ptr\[128, 1024\]: declared \[128, 1024\] at byte "
                                                         r"195000 reaches byte 199096 > SBUF's 196608"):
        nki_executor.run(source, np.zeros(1, np.float32), np.zeros(1, np.float32))


def test_a_partition_dimension_over_128_is_refused():
    source = _kernel("a_ptr = nl.ndarray(shape=[200, 64], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))")
    with pytest.raises(nki_executor.NkiLimitError, match=r"a_ptr\[200, 64\]: declared \[200, 64\]: a first "
                                                         r"dimension of 200 neither fits 128 partitions.*"
                                                         r"declared-partitions"):
        nki_executor.run(source, np.zeros(1, np.float32), np.zeros(1, np.float32))
    # read as NKI reads a declaration, a first dimension over 128 is refused even when it folds (TVM's [512, 512])
    folded = _kernel("a_ptr = nl.ndarray(shape=[256, 64], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))")
    nki_executor.run(folded, np.zeros(1, np.float32), np.zeros(1, np.float32))
    with pytest.raises(nki_executor.NkiLimitError, match=r"a_ptr\[256, 64\]: declared \[256, 64\]: partition "
                                                         r"dimension 256 > 128.*declared-partitions"):
        nki_executor.run(folded, np.zeros(1, np.float32), np.zeros(1, np.float32), declarations="nki")
    psum = _kernel("s_ptr = nl.ndarray(shape=[2, nl.par_dim(256), 512], dtype=np.float32, buffer=nl.psum)")
    with pytest.raises(nki_executor.NkiLimitError, match=r"s_ptr\[2, 256, 512\]: declared \[2, nl.par_dim\(256\), "
                                                         r"512\]: partition dimension 256 > 128"):
        nki_executor.run(psum, np.zeros(1, np.float32), np.zeros(1, np.float32), declarations="nki")
    # the correct form
    nki_executor.run(_kernel("s_ptr = nl.ndarray(shape=[2, nl.par_dim(128), 512], dtype=np.float32, buffer=nl.psum)"),
                     np.zeros(1, np.float32), np.zeros(1, np.float32), declarations="nki")


def _psum_copy(columns):
    return _kernel(
        "s_ptr = nl.ndarray(shape=[128, nl.par_dim(128), 128], dtype=np.float32, buffer=nl.psum)",   # TVM's form
        "o_ptr = nl.ndarray(shape=[128, 512], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))",
        "p = nl.arange(128)",
        f"f = nl.arange({columns})",
        "s_ptr[0, p[:, None], f[None, :]] = 1.0",
        "o_ptr[p[:, None], f[None, :]] = nisa.tensor_copy(s_ptr[0, p[:, None], f[None, :]])",
    )


def test_a_psum_access_past_the_declared_columns_is_refused():
    with pytest.raises(nki_executor.NkiLimitError, match=r"s_ptr\[128, 128, 128\]: access at partitions \[0, 127\], "
                                                         r"free elements \[0, 511\] \(bank \[0, 0\]\) outside its "
                                                         r"declaration \[128, nl.par_dim\(128\), 128\] \(128 "
                                                         r"partitions x 128 elements per partition\)"):
        nki_executor.run(_psum_copy(512), np.zeros(1, np.float32), np.zeros(1, np.float32))
    nki_executor.run(_psum_copy(512), np.zeros(1, np.float32), np.zeros(1, np.float32), strict=False)
    nki_executor.run(_psum_copy(128), np.zeros(1, np.float32), np.zeros(1, np.float32))


def _add(second):
    return _kernel(
        "s_ptr = nl.ndarray(shape=[128, nl.par_dim(128), 128], dtype=np.float32, buffer=nl.psum)",
        "t_ptr = nl.ndarray(shape=[128, nl.par_dim(128), 128], dtype=np.float32, buffer=nl.psum)",
        "a_ptr = nl.ndarray(shape=[128, 128], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))",
        "o_ptr = nl.ndarray(shape=[128, 128], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=512))",
        "p = nl.arange(128)",
        "f = nl.arange(128)",
        "s_ptr[0, p[:, None], f[None, :]] = 1.0",
        "t_ptr[0, p[:, None], f[None, :]] = 2.0",
        "a_ptr[p[:, None], f[None, :]] = nl.load(x_ptr[p[:, None] * 128 + f[None, :]])",
        f"o_ptr[p[:, None], f[None, :]] = nisa.tensor_tensor(s_ptr[0, p[:, None], f[None, :]], {second}, nl.add)",
        "nl.store(out_ptr[p[:, None] * 128 + f[None, :]], o_ptr[p[:, None], f[None, :]])",
    )


def test_tensor_tensor_reads_at_most_one_input_from_psum():
    x = np.full((128, 128), 5, np.float32)
    out = np.zeros_like(x)
    with pytest.raises(nki_executor.NkiLimitError, match=r"nisa.tensor_tensor reads both inputs from PSUM "
                                                         r"\(s_ptr\[128, 128, 128\], t_ptr\[128, 128, 128\]\).*"
                                                         r"tensor_tensor-psum"):
        nki_executor.run(_add("t_ptr[0, p[:, None], f[None, :]]"), x, out)
    nki_executor.run(_add("t_ptr[0, p[:, None], f[None, :]]"), x, out, strict=False)
    np.testing.assert_array_equal(out, 3)
    nki_executor.run(_add("a_ptr[p[:, None], f[None, :]]"), x, out)   # PSUM + SBUF: legal
    np.testing.assert_array_equal(out, 6)


def _load_into(buffer):
    return _kernel(
        f"a_ptr = nl.ndarray(shape=[128, nl.par_dim(128), 128], dtype=np.float32, buffer={buffer})",
        "o_ptr = nl.ndarray(shape=[128, 128], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=512))",
        "p = nl.arange(128)",
        "f = nl.arange(128)",
        "a_ptr[0, p[:, None], f[None, :]] = nl.load(x_ptr[p[:, None] * 128 + f[None, :]])",
        "o_ptr[p[:, None], f[None, :]] = nisa.tensor_copy(a_ptr[0, p[:, None], f[None, :]])",
        "nl.store(out_ptr[p[:, None] * 128 + f[None, :]], o_ptr[p[:, None], f[None, :]])",
    )


def test_nl_load_writes_sbuf_only():
    x = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)
    out = np.zeros_like(x)
    with pytest.raises(nki_executor.NkiLimitError, match=r"a_ptr\[128, 128, 128\]: nl.load writes its tile to SBUF, "
                                                         r"not psum \[strict rule load-into-sbuf\]"):
        nki_executor.run(_load_into("nl.psum"), x, out)
    nki_executor.run(_load_into("nl.psum"), x, out, strict=False)
    np.testing.assert_array_equal(out, x)
    correct = _load_into("nl.psum").replace("a_ptr = nl.ndarray(shape=[128, nl.par_dim(128), 128], dtype=np.float32, "
                                            "buffer=nl.psum)",
                                            "a_ptr = nl.ndarray(shape=[128, 128], dtype=np.float32, "
                                            "buffer=ncc.sbuf.mod_alloc(base_addr=0))").replace("a_ptr[0, ", "a_ptr[")
    out[:] = 0
    nki_executor.run(correct, x, out)
    np.testing.assert_array_equal(out, x)


def _exp(bias_shape, bias_dtype="np.float32"):
    return _kernel(
        "a_ptr = nl.ndarray(shape=[128, 64], dtype=np.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))",
        f"b_ptr = nl.ndarray(shape=[128, {bias_shape}], dtype={bias_dtype}, buffer=ncc.sbuf.mod_alloc(base_addr=256))",
        "p = nl.arange(128)",
        "f = nl.arange(64)",
        f"g = nl.arange({bias_shape})",
        "a_ptr[p[:, None], f[None, :]] = nl.load(x_ptr[p[:, None] * 64 + f[None, :]])",
        "b_ptr[p[:, None], g[None, :]] = 0",
        "a_ptr[p[:, None], f[None, :]] = nisa.activation(nl.exp, a_ptr[p[:, None], f[None, :]], "
        "bias=b_ptr[p[:, None], g[None, :]], scale=1.0)",
        "nl.store(out_ptr[p[:, None] * 64 + f[None, :]], a_ptr[p[:, None], f[None, :]])",
    )


def test_activation_bias_is_a_vector_of_float():
    x = np.zeros((128, 64), np.float32)
    out = np.zeros_like(x)
    with pytest.raises(nki_executor.NkiLimitError, match=r"nisa.activation bias b_ptr\[128, 64\] \(128, 64\) "
                                                         r"float32: a \(128, 1\) vector.*activation-bias"):
        nki_executor.run(_exp(64), x, out)
    with pytest.raises(nki_executor.NkiLimitError, match=r"nisa.activation bias b_ptr\[128, 1\] \(128, 1\) int32"):
        nki_executor.run(_exp(1, "np.int32"), x, out)
    nki_executor.run(_exp(64), x, out, strict=False)
    nki_executor.run(_exp(1), x, out)
    np.testing.assert_array_equal(out, 1)


def test_the_cost_model_counts_a_512_gemm_exactly(capsys):
    n = 512
    source = trn_gemm.nki_source(trn_gemm.gemm(n))
    a, b = np.ones((n, n), np.float16), np.ones((n, n), np.float16)
    c = np.zeros((n, n), np.float16)
    stats = nki_executor.run(source, a, b, c, report=True)
    np.testing.assert_array_equal(c, n)
    tensor, vector, scalar, dma = (stats.engines[e] for e in nki_executor.ENGINES)
    # 4 row blocks x 1 column block x 4 K steps of 128 x 128 x 512
    assert stats["nisa.nc_matmul"] == tensor.instructions == 16
    assert tensor.elements == n ** 3                                    # multiply-accumulates
    assert tensor.bytes_read == 16 * (128 * 128 + 128 * 512) * 2
    assert tensor.bytes_written == 16 * 128 * 512 * 4                   # float32 into PSUM
    # DMA: A (in 16 loads of 128 x 128) and B (4 of 128 x 512) once each, C stored in 4 blocks
    assert (stats["nl.load"], stats["nl.store"]) == (20, 4)
    assert dma.bytes_read == dma.bytes_written == a.nbytes + b.nbytes + c.nbytes
    assert dma.elements == 3 * n * n
    # VectorEngine: one memset of each PSUM tile and one copy of it to SBUF (float32 -> float16)
    assert (stats["memset"], stats["nisa.tensor_copy"]) == (4, 4)
    assert vector.bytes_read == 4 * 128 * 512 * 4
    assert vector.bytes_written == 4 * 128 * 512 * 4 + 4 * 128 * 512 * 2
    assert scalar.instructions == 0
    table = capsys.readouterr().out
    assert table == stats.table() + "\n"
    assert table.splitlines()[0].split() == ["engine", "/", "call", "instructions", "elements", "bytes", "read",
                                             "bytes", "written"]
    assert "TensorEngine                  16  134,217,728" in table


def test_tvm_declarations_break_nki_s_own_reading():
    """TVM 0.27's codegen declares each buffer with its logical shape: B's 512-row block is [512, 512] in SBUF, where
    NKI takes the first dimension as the partition dimension (at most 128). The default reading folds the rows onto
    the partitions as TVM's allocator sizes them; NKI's own reading refuses the kernel (docs/trainium.md)."""
    source = trn_gemm.nki_source(trn_gemm.gemm(512))
    assert "b_ptr = nl.ndarray(shape=[512, 512], dtype=np.float16" in source
    assert "d_ptr = nl.ndarray(shape=[128, nl.par_dim(512), 512]" in source
    arrays = [np.zeros((512, 512), np.float16) for _ in range(3)]
    with pytest.raises(nki_executor.NkiLimitError, match=r"b_ptr\[512, 512\]: declared \[512, 512\]: partition "
                                                         r"dimension 512 > 128 \(dimension 0 \(the first\) is the "
                                                         r"partition dimension\) \[strict rule declared-partitions\]"):
        nki_executor.run(source, *arrays, declarations="nki")
    nki_executor.run(source, *arrays)
