"""Expert-sorted tiles: which (token, expert) pairs each tile of the grouped GEMMs computes.

Pair p = t * top_k + j is token t's j-th expert. Sorting the pairs by expert (stably) gives slots: slot s holds
pair ``slot_pair[s]``, whose token is ``slot_token[s]`` and routing weight ``slot_weight[s]``. The slots of expert
e are contiguous and cut into tiles of at most ``rows`` rows; tile i covers slots
``[tile_start[i], tile_start[i] + tile_rows[i])`` of expert ``tile_expert[i]``. An expert no token chose has no
tile. The slot arrays have ``rows`` padding slots at the end (token 0, weight 0), so a tile-sized window at any
tile start stays inside them.

These functions are the reference: ``axe4j.moe.schedule_kernel`` computes the same arrays on the device (the CUDA
layer's default), equal to ``schedule`` + ``tile_arrays`` element for element.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TileSchedule:
    rows: int
    tile_expert: np.ndarray
    tile_start: np.ndarray
    tile_rows: np.ndarray
    slot_token: np.ndarray
    slot_pair: np.ndarray
    slot_weight: np.ndarray

    @property
    def tiles(self) -> int:
        return int(self.tile_expert.shape[0])

    @staticmethod
    def max_tiles(pairs: int, experts: int, rows: int) -> int:
        """The most tiles ``pairs`` pairs over ``experts`` experts can need: sum_e ceil(n_e / rows)."""
        return min(pairs, experts + pairs // rows)


def schedule(ids: np.ndarray, weights: np.ndarray, experts: int, rows: int) -> TileSchedule:
    """The tile schedule of a routing (``ids``, ``weights``: tokens x top_k)."""
    ids = np.asarray(ids)
    if ids.ndim != 2 or np.shape(weights) != ids.shape:
        raise ValueError(f"schedule: ids {ids.shape} and weights {np.shape(weights)} must both be tokens x top_k")
    if ids.size and (ids.min() < 0 or ids.max() >= experts):
        raise ValueError(f"schedule: expert ids must lie in [0, {experts}); got [{ids.min()}, {ids.max()}]")
    if rows < 1:
        raise ValueError(f"schedule: rows ({rows}) must be >= 1")
    top_k = ids.shape[1]
    flat = ids.reshape(-1).astype(np.int64)
    order = np.argsort(flat, kind="stable")
    counts = np.bincount(flat, minlength=experts)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    per_expert = -(-counts // rows)
    tile_expert = np.repeat(np.arange(experts), per_expert)
    index_in_expert = np.arange(tile_expert.size) - np.repeat(np.cumsum(per_expert) - per_expert, per_expert)
    tile_start = first[tile_expert] + index_in_expert * rows
    tile_rows = np.minimum(rows, counts[tile_expert] - index_in_expert * rows)
    pad = np.zeros(rows, np.int64)
    return TileSchedule(
        rows=rows,
        tile_expert=tile_expert.astype(np.int32),
        tile_start=tile_start.astype(np.int32),
        tile_rows=tile_rows.astype(np.int32),
        slot_token=np.concatenate([order // top_k, pad]).astype(np.int32),
        slot_pair=np.concatenate([order, pad]).astype(np.int32),
        slot_weight=np.concatenate([np.asarray(weights, np.float32).reshape(-1)[order], pad]).astype(np.float32))


def tile_arrays(plan: TileSchedule, max_tiles: int) -> dict:
    """The schedule as the kernels read it: the tile arrays padded to ``max_tiles`` (a padded tile has 0 rows and
    its CTAs return at once), and ``row_weight``: the routing weight of each row of H in its tile-padded order (row
    plan.rows * i + r is slot tile_start[i] + r), 0 past a tile's rows."""
    rows = plan.rows
    if plan.tiles > max_tiles:
        raise ValueError(f"tile_arrays: the schedule has {plan.tiles} tiles, more than max_tiles ({max_tiles})")

    def padded(a):
        return np.concatenate([a, np.zeros(max_tiles - a.size, np.int32)]).astype(np.int32)

    row_weight = np.zeros(max_tiles * rows, np.float32)
    for i in range(plan.tiles):
        s, m = int(plan.tile_start[i]), int(plan.tile_rows[i])
        row_weight[i * rows:i * rows + m] = plan.slot_weight[s:s + m]
    return {"tile_expert": padded(plan.tile_expert), "tile_start": padded(plan.tile_start),
            "tile_rows": padded(plan.tile_rows), "row_weight": row_weight}
