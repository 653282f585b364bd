"""The block-aligned sort of (token, expert) pairs that a grouped GEMM over sorted blocks reads (docs/moe.md,
"Triton fused-MoE peer"), in numpy (the reference) and in torch ops on the GPU (no host synchronisation).

For P = T k pairs (pair p = t k + j, expert ids[t, j]) and blocks of ``bm`` rows: expert e's pairs, in pair order,
fill ceil(n_e / bm) whole blocks starting at ``start[e]`` = sum_{f < e} bm ceil(n_f / bm); the rows of a block past
its expert's pairs hold the sentinel P. Outputs:

* ``sorted_pairs`` (capacity,) int32: row -> pair, P where no pair;
* ``block_expert`` (capacity / bm,) int32: block -> its expert (E - 1 for blocks past the last, which are skipped);
* ``used_rows`` (1,) int32: sum_e bm ceil(n_e / bm); blocks from ``used_rows / bm`` on are empty.

``capacity`` = bm ceil((P + min(E, P) (bm - 1)) / bm): at most min(E, P) experts are non-empty, each pads fewer than
bm rows, so the array sizes depend only on (P, E, bm) and the grid of the GEMMs is fixed (a CUDA graph can hold it).
"""

from __future__ import annotations

import numpy as np


def capacity(pairs: int, experts: int, bm: int) -> int:
    rows = pairs + min(experts, pairs) * (bm - 1)
    return -(-rows // bm) * bm


def block_sort(ids, experts: int, bm: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted_pairs, block_expert, used_rows) in numpy. Expert ids must lie in [0, experts)."""
    flat = np.asarray(ids).reshape(-1).astype(np.int64)
    if bm < 1:
        raise ValueError(f"block_sort: bm ({bm}) must be positive")
    if flat.size and (flat.min() < 0 or flat.max() >= experts):
        raise ValueError(f"block_sort: ids has values outside [0, {experts})")
    pairs = flat.size
    counts = np.bincount(flat, minlength=experts)
    padded = -(-counts // bm) * bm
    ends = np.cumsum(padded)
    first = np.cumsum(counts) - counts                      # the expert's first pair in expert-sorted order
    order = np.argsort(flat, kind="stable")
    experts_sorted = flat[order]
    rows = capacity(pairs, experts, bm)
    sorted_pairs = np.full(rows, pairs, np.int32)
    sorted_pairs[ends[experts_sorted] - padded[experts_sorted] + np.arange(pairs) - first[experts_sorted]] = order
    block_expert = np.minimum(np.searchsorted(ends, np.arange(rows // bm) * bm, side="right"), experts - 1)
    return sorted_pairs, block_expert.astype(np.int32), ends[-1:].astype(np.int32)


def block_sort_torch(torch, ids, experts: int, bm: int):
    """The same arrays as ``block_sort`` from torch ops on ``ids``' device: a scatter-add histogram, cumulative sums,
    a stable argsort, a scatter and a searchsorted; nothing is read back to the host."""
    flat = ids.reshape(-1).to(torch.int64)
    pairs = flat.numel()
    counts = torch.zeros(experts, dtype=torch.int64, device=flat.device).scatter_add_(0, flat, torch.ones_like(flat))
    padded = (counts + bm - 1) // bm * bm
    ends = torch.cumsum(padded, 0)
    first = torch.cumsum(counts, 0) - counts
    order = torch.argsort(flat, stable=True)
    experts_sorted = flat[order]
    rows = capacity(pairs, experts, bm)
    sorted_pairs = torch.full((rows,), pairs, dtype=torch.int32, device=flat.device)
    where = ends[experts_sorted] - padded[experts_sorted] + torch.arange(pairs, device=flat.device) \
        - first[experts_sorted]
    sorted_pairs.scatter_(0, where, order.to(torch.int32))
    starts = torch.arange(rows // bm, device=flat.device, dtype=torch.int64) * bm
    block_expert = torch.searchsorted(ends, starts, right=True).clamp_(max=experts - 1).to(torch.int32)
    return sorted_pairs, block_expert, ends[-1:].to(torch.int32)
