"""The per-mesh-dimension redistribution of PyTorch's DTensor, as a byte count: the baseline of ``make bench-mesh``.

DTensor changes one mesh dimension at a time. Its order (facts of ``redistribute``): first from the innermost mesh
dim outwards, a dim whose target is ``Shard(d)`` goes to ``Replicate()`` instead when the mesh dims before it shard
tensor dim d differently in source and target (nested shards must be undone inside out); then from the outermost
dim inwards each dim still off target moves to it. Each move is one collective on the groups along that mesh dim:

| move | collective | bytes received by member k of a group of p |
|---|---|---|
| Partial -> Replicate | all-reduce | (p-1) b_k + n - b_k (ring; n the local elements, b_k = n/p split) |
| Partial -> Shard(d) | reduce-scatter | (p-1) x ceil(L_d/p) x rest |
| Shard(d) -> Replicate | all-gather | (p-1) x ceil(L_d/p) x rest |
| Shard(a) -> Shard(b) | all-to-all | (p-1) x ceil(L_a/p) x ceil(L_b/p) x rest |
| Replicate -> Shard / Partial, no change | local | 0 |

L is the rank's local shape with that mesh dim replicated, ``rest`` the product of its other dims; uneven dims are
padded to ``ceil(L/p)`` per block, as DTensor pads them for the collective. Local shapes follow ``torch.chunk``:
mesh dims shard a tensor dim in mesh order, each into chunks of ``ceil(n/p)`` (the last ones shorter or empty).
These are the same formulas as the planner's for one collective on one mesh dim (docs/mesh.md), which
python/tests/test_mesh_per_dim.py checks by planning each move of the schedule with axe4j.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

REPLICATE = ("R",)
PARTIAL = ("P",)


def shard(d: int) -> tuple:
    return ("S", d)


def parse(text: str) -> tuple:
    """``"[Shard(0), Partial()]"`` to ``(("S", 0), ("P",))``."""
    items = [t.strip() for t in text.strip().strip("[]").split(",") if t.strip()]
    out = []
    for t in items:
        m = re.fullmatch(r"Shard\((\d+)\)|(Replicate)\(\)|(Partial)\((?:\"sum\"|'sum')?\)", t)
        if not m:
            raise ValueError(f"placement {t!r} in {text!r}: expected Shard(d), Replicate() or Partial()")
        out.append(shard(int(m.group(1))) if m.group(1) is not None else REPLICATE if m.group(2) else PARTIAL)
    return tuple(out)


def text(places: tuple) -> str:
    names = {"R": "Replicate()", "P": "Partial()"}
    return "[" + ", ".join(f"Shard({p[1]})" if p[0] == "S" else names[p[0]] for p in places) + "]"


def chunk(n: int, p: int, k: int) -> int:
    """Length of piece k of ``torch.chunk`` of n into p (pieces of ceil(n/p), the last shorter or empty)."""
    size = -(-n // p)
    return max(0, min(n, (k + 1) * size) - k * size)


def local_shape(global_shape, mesh, places, coord) -> tuple:
    shape = list(global_shape)
    for j, pl in enumerate(places):
        if pl[0] == "S":
            shape[pl[1]] = chunk(shape[pl[1]], mesh[j], coord[j])
    return tuple(shape)


@dataclass(frozen=True)
class Move:
    mesh_dim: int
    before: tuple
    after: tuple

    @property
    def collective(self) -> str:
        a, b = self.before[self.mesh_dim], self.after[self.mesh_dim]
        if a == b or a == REPLICATE:
            return "local"
        if a == PARTIAL:
            return "all_reduce" if b == REPLICATE else "reduce_scatter"
        if b == REPLICATE:
            return "all_gather"
        if b[0] == "S":
            return "all_to_all"
        raise ValueError(f"mesh dim {self.mesh_dim}: {text(self.before)} -> {text(self.after)} is no DTensor move")


def schedule(src: tuple, dst: tuple) -> list:
    """DTensor's moves from ``src`` to ``dst`` placements, one mesh dim each."""
    if len(src) != len(dst):
        raise ValueError(f"placements {text(src)} and {text(dst)} are for meshes of different rank")
    cur = list(src)
    moves = []

    def move(j, target):
        before = tuple(cur)
        cur[j] = target
        moves.append(Move(j, before, tuple(cur)))

    for j in reversed(range(len(src))):
        target = dst[j]
        if target[0] == "S":
            d = target[1]
            if [i for i in range(j) if src[i] == shard(d)] != [i for i in range(j) if dst[i] == shard(d)]:
                target = REPLICATE
        if cur[j] != target:
            move(j, target)
    for j in range(len(src)):
        if cur[j] != dst[j]:
            move(j, dst[j])
    return moves


def move_bytes(m: Move, global_shape, mesh) -> list:
    """Bytes each rank (row-major mesh index) receives in move ``m``, in elements (multiply by element size)."""
    j = m.mesh_dim
    p = mesh[j]
    a, b = m.before[j], m.after[j]
    kind = m.collective
    if a[0] == "S" and any(m.before[i] == a for i in range(j + 1, len(mesh))):
        raise ValueError(f"mesh dim {j} of {text(m.before)}: a later mesh dim shards the same tensor dim")
    logical = m.before[:j] + (REPLICATE,) + m.before[j + 1:]
    out = []
    for rank in range(int(np.prod(mesh))):
        coord = np.unravel_index(rank, mesh)
        L = local_shape(global_shape, mesh, logical, coord)
        n = int(np.prod(L))
        if kind == "local":
            out.append(0)
        elif kind == "all_reduce":
            k = coord[j]
            bk = n // p + (1 if k < n % p else 0)
            out.append((p - 1) * bk + n - bk)
        elif kind in ("all_gather", "reduce_scatter"):
            d = a[1] if kind == "all_gather" else b[1]
            out.append((p - 1) * -(-L[d] // p) * (n // L[d] if L[d] else 0))
        else:  # all_to_all: dim a[1] gathered, dim b[1] split
            da, db = a[1], b[1]
            rest = n // (L[da] * L[db]) if L[da] and L[db] else 0
            out.append((p - 1) * -(-L[da] // p) * -(-L[db] // p) * rest)
    return out


def bytes_per_rank(request: dict) -> tuple:
    """(bytes per rank, moves) of DTensor's redistribution of a placements ``request`` (the axe4j request form)."""
    mesh = list(request["mesh"]["shape"])
    src, dst = parse(request["src"]["placements"]), parse(request["dst"]["placements"])
    if "held_at" in request["src"] or "held_at" in request["dst"]:
        raise ValueError("held_at (one holder of a Replicate() dim) has no DTensor placement")
    item = request["element_bytes"]
    total = [0] * int(np.prod(mesh))
    moves = schedule(src, dst)
    for m in moves:
        for r, e in enumerate(move_bytes(m, request["global_shape"], mesh)):
            total[r] += e * item
    return total, moves
