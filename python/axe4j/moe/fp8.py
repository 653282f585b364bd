"""FP8 (e4m3) experts in numpy: the quantisation the FP8 kernels use and the dequantised reference they are checked
against (docs/moe.md, "FP8 experts").

Weights: e4m3 with one FP32 scale per output channel (row of W1's 2I x hidden, row of W2's hidden x I):
``w ~ q * scale``, ``scale = max |row| / 448`` (448 is e4m3's largest finite value). Activations: e4m3 with one
scale per row (per token for X, per pair for the intermediate H), the same formula. A zero row has scale 1 and
codes 0. numpy only (ml_dtypes for the e4m3 type): the GPU bundle carries it.
"""

from __future__ import annotations

import numpy as np

from .reference import silu

E4M3_MAX = 448.0
DTYPE = "float8_e4m3fn"


def e4m3():
    import ml_dtypes

    return ml_dtypes.float8_e4m3fn


def quantise_rows(a) -> tuple[np.ndarray, np.ndarray]:
    """(codes, scales) of ``a`` (..., n) quantised along its last dim: scales (...,) float32 = max |row| / 448 (1
    for a zero row), codes = e4m3(row / scale), so |row / scale| <= 448 and no code saturates."""
    a = np.asarray(a, np.float32)
    amax = np.abs(a).max(axis=-1)
    scales = np.where(amax > 0, amax / np.float32(E4M3_MAX), np.float32(1)).astype(np.float32)
    return (a / scales[..., None]).astype(e4m3()), scales


def dequantise(codes, scales) -> np.ndarray:
    """codes (..., n) e4m3 times their row scales (...,): FP32."""
    return np.asarray(codes).astype(np.float32) * np.asarray(scales, np.float32)[..., None]


def fp8_reference(x, w1q, w1s, w2q, w2s, ids, weights, h_dtype="bfloat16") -> np.ndarray:
    """The FP8 layer in FP32 arithmetic on dequantised values, step for step as the kernels: X quantised per token;
    [g; u] = deq(x) deq(W1[e])^T; a = silu(g) u w rounded to ``h_dtype`` (the kernels' H), quantised per pair row;
    y = deq(a) deq(W2[e])^T; out[t] = sum_j y[t, j]. FP32 (tokens x hidden)."""
    import ml_dtypes

    xq, xs = quantise_rows(x)
    xd = dequantise(xq, xs)
    w1d, w2d = dequantise(w1q, w1s), dequantise(w2q, w2s)
    tokens, top_k = ids.shape
    inter = w2d.shape[2]
    rounding = ml_dtypes.bfloat16 if h_dtype == "bfloat16" else np.dtype(h_dtype)
    out = np.zeros((tokens, x.shape[1]), np.float32)
    for t in range(tokens):
        for j in range(top_k):
            e = int(ids[t, j])
            h = w1d[e] @ xd[t]
            a = (silu(h[:inter]) * h[inter:] * np.float32(weights[t, j])).astype(rounding)
            aq, a_s = quantise_rows(a[None, :])
            out[t] += w2d[e] @ dequantise(aq, a_s)[0]
    return out
