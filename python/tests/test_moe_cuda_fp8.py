"""The FP8 (e4m3) experts of the CUDA MoE layer (axe4j.moe.cuda_fp8, sm_90a) in the CPU interpreter of lowered CUDA
kernels, against the dequantised numpy reference (axe4j.moe.fp8.fp8_reference), at a small size: 8 experts, top-2,
hidden 256, intermediate 128 (two K tiles of 128 e4m3 in GEMM1, one in GEMM2), 16 tokens, one expert left empty."""

import tvm  # noqa: F401  (before the JVM)

import re

import ml_dtypes
import numpy as np
import pytest

from axe4j.moe import MoeShape, moe_reference
from axe4j.moe import cuda_fp8, fp8
from axe4j.moe.cuda_kernels import ROWS

pytestmark = pytest.mark.strict

SHAPE = MoeShape(experts=8, top_k=2, hidden=256, intermediate=128)
E, H, I, K = SHAPE.experts, SHAPE.hidden, SHAPE.intermediate, SHAPE.top_k
TOKENS = 16
_layer = {}


def layer():
    if not _layer:
        rng = np.random.default_rng(20261128)
        wr = rng.standard_normal((E, H)).astype("float32")
        w1 = (rng.standard_normal((E, 2 * I, H)) / np.sqrt(H)).astype("float32")
        w2 = (rng.standard_normal((E, H, I)) / np.sqrt(I)).astype("float32")
        w1[3, 5] *= 40.0                       # one channel far larger: per-channel scales, not one per tensor
        _layer["moe"] = cuda_fp8.Fp8MoeLayer(SHAPE, TOKENS, wr, w1, w2, bn1=64, bn2=128)
        _layer["w"] = (w1, w2)
    return _layer["moe"]


def routing(seed):
    """top-2 of the experts other than 6 (left empty); tokens 0-8 all on expert 1 (9 pairs, one tile)."""
    rng = np.random.default_rng(seed)
    others = [e for e in range(E) if e != 6]
    ids = np.stack([rng.choice(others, K, replace=False) for _ in range(TOKENS)]).astype("int32")
    ids[:9, 0] = 1
    ids[:9, 1] = np.where(ids[:9, 1] == 1, 2, ids[:9, 1])
    return ids, rng.random((TOKENS, K)).astype("float32")


def test_fp8_layer_matches_the_dequantised_reference_and_its_stages_are_exact(bridge):
    moe = layer()
    x = (np.random.default_rng(3).standard_normal((TOKENS, H)) * np.linspace(0.1, 4, TOKENS)[:, None]).astype(
        ml_dtypes.bfloat16)
    ids, w = routing(7)
    calls = moe.calls(x, ids, w)
    moe.launch(calls)
    args = dict(zip(("tile_expert", "tile_start", "tile_rows", "slot_token", "slot_pair", "row_weight"),
                    calls[0][1][2:8]))
    xq, xs = calls[1][1][4], calls[1][1][5]
    # quantise_x: row 64 i + r is token slot_token[tile_start[i] + r] quantised per row; rows past a tile: 0, 0
    for i in range(moe.max_tiles):
        n = args["tile_rows"][i]
        rows = slice(i * ROWS, i * ROWS + ROWS)
        if n:
            tokens = args["slot_token"][args["tile_start"][i]:args["tile_start"][i] + n]
            codes, scales = fp8.quantise_rows(x[tokens].astype(np.float32))
            assert np.array_equal(xq[rows][:n].view(np.uint8), codes.view(np.uint8)), i
            assert np.array_equal(xs[rows][:n], scales), i
        assert not xq[rows][n:].view(np.uint8).any() and not xs[rows][n:].any(), i
    # quantise_h: H's rows quantised per row, bit for bit
    h, hq, hs = calls[3][1][0], calls[3][1][4], calls[3][1][5]
    for i in range(moe.max_tiles):
        n = args["tile_rows"][i]
        codes, scales = fp8.quantise_rows(h[i * ROWS:i * ROWS + n].astype(np.float32))
        assert np.array_equal(hq[i * ROWS:i * ROWS + n].view(np.uint8), codes.view(np.uint8)), i
        assert np.array_equal(hs[i * ROWS:i * ROWS + n], scales), i
    out = calls[-1][1][-1]
    assert out.dtype == ml_dtypes.bfloat16
    want = fp8.fp8_reference(x.astype(np.float32), moe.w1q, moe.w1s, moe.w2q, moe.w2s, ids, w)
    scale = np.abs(want).max()
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=2e-2, atol=1e-2 * scale)
    # and near the unquantised layer (e4m3 keeps about 2 significant bits: a loose bound)
    w1, w2 = _layer["w"]
    exact = moe_reference(x.astype(np.float32), w1, w2, ids, w)
    assert np.abs(out.astype(np.float32) - exact).max() < 0.15 * np.abs(exact).max()
    # the per-channel scales matter: one scale per tensor for W1 moves the reference far from the kernel's output
    flat_q, flat_s = fp8.quantise_rows(fp8.dequantise(moe.w1q, moe.w1s).reshape(1, -1))
    coarse = fp8.fp8_reference(x.astype(np.float32), flat_q.reshape(moe.w1q.shape),
                               np.full(moe.w1s.shape, flat_s[0], np.float32), moe.w2q, moe.w2s, ids, w)
    assert np.abs(out.astype(np.float32) - coarse).max() > 5 * np.abs(out.astype(np.float32) - want).max()
    # bad arguments of the built layer are named before anything runs
    with pytest.raises(ValueError, match=r"ids \(16, 1\) and weights \(16, 2\) must both be \(16, 2\)"):
        moe.calls(x, ids[:, :1], w)
    with pytest.raises(ValueError, match=r"x has shape \(16, 128\), expected \(16, 256\)"):
        moe.calls(x[:, :128], ids, w)


def test_fp8_ptx_multiplies_e4m3_with_wgmma_k32(bridge):
    from tvm.support import nvcc

    moe = layer()
    for name in ("gemm1", "gemm2"):
        source = moe._exe[name].mod.imports[0].inspect_source("cuda")
        with cuda_fp8.target():
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k32\.f32\.e4m3\.e4m3", ptx), name
        assert "cp.async.bulk.tensor.2d" in ptx, name


def test_fp8_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"hidden \(192\) must be a multiple of the e4m3 K tile 128"):
        cuda_fp8.kernels(MoeShape(experts=8, top_k=2, hidden=192, intermediate=128), 4)
    with pytest.raises(ValueError, match=r"dtype 'float32' .* must be one of"):
        cuda_fp8.kernels(SHAPE, 4, dtype="float32")
    with pytest.raises(ValueError, match=r"bn1=24 must be a multiple of 16"):
        cuda_fp8.kernels(SHAPE, 4, bn1=24)


def test_quantise_rows_bounds_its_codes_and_keeps_zero_rows():
    a = np.array([[0, 0, 0], [1, -2, 4], [1e-3, 0, -1e-3]], np.float32)
    codes, scales = fp8.quantise_rows(a)
    assert scales.tolist() == [1.0, np.float32(4) / np.float32(448), np.float32(1e-3) / np.float32(448)]
    assert codes.astype(np.float32)[1].tolist() == [112.0, -224.0, 448.0]
    assert not codes[0].astype(np.float32).any()
    np.testing.assert_allclose(fp8.dequantise(codes, scales), a, rtol=1 / 16)
