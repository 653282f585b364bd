"""The layer in numpy: the oracle of the tests and the baseline of ``make bench-moe``."""

from __future__ import annotations

import numpy as np


def route_reference(logits: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, weights), each tokens x top_k: the top_k largest logits of each row (ties to the lower expert id),
    in decreasing order, and the softmax over those k logits (softmax over all experts, then renormalized over the
    chosen ones, is the same). 16-bit logits are ranked in float32 (exact): numpy's own float16 sort is not
    ordered on every CPU (on AVX512_ICL it leaves inversions in long arrays)."""
    keys = logits.astype(np.float32) if logits.dtype.itemsize < 4 else logits
    ids = np.argsort(-keys, axis=1, kind="stable")[:, :top_k].astype(np.int32)
    chosen = np.take_along_axis(logits, ids, axis=1).astype(np.float64)
    e = np.exp(chosen - chosen[:, :1])
    return ids, (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def silu(x):
    return x / (1.0 + np.exp(-np.maximum(x, -80.0)))   # exp(80) fits float32; below -80 silu(x) is 0 anyway


def moe_reference(x, w1, w2, ids, weights) -> np.ndarray:
    """out[t] = sum_j weights[t, j] * expert_{ids[t, j]}(x[t]) with expert_e(v) = w2[e] (silu(g) * u),
    [g; u] = w1[e] v. Expert by expert over the tokens routed to it (two BLAS GEMMs each), each pair's result in
    its own row, summed over the k rows of each token at the end."""
    tokens, top_k = ids.shape
    intermediate = w2.shape[2]
    pairs = np.empty((tokens * top_k, x.shape[1]), np.float32)
    flat = ids.reshape(-1)
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(w1.shape[0] + 1))
    for e in range(w1.shape[0]):
        chosen = order[bounds[e]:bounds[e + 1]]
        if chosen.size == 0:
            continue
        h = x[chosen // top_k] @ w1[e].T
        act = silu(h[:, :intermediate]) * h[:, intermediate:]
        pairs[chosen] = (act @ w2[e].T) * weights.reshape(-1)[chosen, None]
    return pairs.reshape(tokens, top_k, -1).sum(axis=1, dtype=np.float32)


class NumpyLayer:
    """The whole layer in numpy with the weights stored as BLAS reads them best: each expert's matrices transposed
    once, here (hidden x 2*intermediate and intermediate x hidden, row-major), so every product is a plain
    row-major GEMM. The baseline of ``make bench-moe``."""

    def __init__(self, wr, w1, w2, top_k: int):
        self.wr_t = np.ascontiguousarray(np.asarray(wr, np.float32).T)
        self.w1_t = np.ascontiguousarray(np.asarray(w1, np.float32).transpose(0, 2, 1))
        self.w2_t = np.ascontiguousarray(np.asarray(w2, np.float32).transpose(0, 2, 1))
        self.top_k = top_k

    def route(self, x):
        return route_reference(x @ self.wr_t, self.top_k)

    def experts(self, x, ids, weights):
        tokens, top_k = ids.shape
        intermediate = self.w2_t.shape[1]
        pairs = np.empty((tokens * top_k, x.shape[1]), np.float32)
        flat = ids.reshape(-1)
        order = np.argsort(flat, kind="stable")
        bounds = np.searchsorted(flat[order], np.arange(self.w1_t.shape[0] + 1))
        for e in np.nonzero(bounds[1:] > bounds[:-1])[0]:
            chosen = order[bounds[e]:bounds[e + 1]]
            h = x[chosen // top_k] @ self.w1_t[e]
            act = silu(h[:, :intermediate]) * h[:, intermediate:]
            pairs[chosen] = (act @ self.w2_t[e]) * weights.reshape(-1)[chosen, None]
        return pairs.reshape(tokens, top_k, -1).sum(axis=1, dtype=np.float32)

    def __call__(self, x):
        ids, weights = self.route(x)
        return self.experts(x, ids, weights)
