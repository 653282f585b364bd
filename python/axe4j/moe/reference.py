"""The layer in numpy: the oracle of the tests and the baseline of ``make bench-moe``."""

from __future__ import annotations

import numpy as np


def route_reference(logits: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, weights), each tokens x top_k: the top_k largest logits of each row (ties to the lower expert id),
    in decreasing order, and the softmax over those k logits (softmax over all experts, then renormalized over the
    chosen ones, is the same)."""
    ids = np.argsort(-logits, axis=1, kind="stable")[:, :top_k].astype(np.int32)
    chosen = np.take_along_axis(logits, ids, axis=1).astype(np.float64)
    e = np.exp(chosen - chosen[:, :1])
    return ids, (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def silu(x):
    return x / (1.0 + np.exp(-x))


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
