"""Executes an ``axe4j.mesh.plan/2`` plan on one MPI rank with mpi4py and numpy (no JVM, no TVM).

Every rank runs every step: it splits the world communicator by the step's group (color = smallest rank of the
group, key = position in it), packs its send buffer from the plan's boxes, calls the MPI collective the plan
names (a reduce-scatter with per-member counts), and keeps the result as a named buffer; the final copies build the
destination. ``received_bytes`` is measured from the buffers handed to MPI (reduce-scatter and all-reduce as the
ring algorithms move data; see docs/mesh.md).

A box ``{"base": b, "extents": [e...], "strides": [s...]}`` is the offsets ``b + sum_k i_k * s_k`` in row-major
order of i; :func:`box_offsets` expands one, :func:`boxes_offsets` a list, :func:`pairs` a list of
``[from_box, to_box]`` pairs. :class:`RankPlan` decodes a rank's boxes once into index arrays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

FORMAT = "axe4j.mesh.plan/2"


def box_offsets(box: dict) -> np.ndarray:
    """The offsets of one box, row-major in its indices (last fastest)."""
    off = np.array([box["base"]], dtype=np.int64)
    for e, s in zip(box["extents"], box["strides"]):
        off = (off[:, None] + np.arange(e, dtype=np.int64) * np.int64(s)).ravel()
    return off


def boxes_offsets(boxes: list) -> np.ndarray:
    """The offsets of a list of boxes, concatenated in order (runs of stride 1 expanded in one vectorised pass)."""
    if not boxes:
        return np.zeros(0, dtype=np.int64)
    if all(len(b["extents"]) == 0 or (len(b["extents"]) == 1 and b["strides"][0] == 1) for b in boxes):
        starts = np.array([b["base"] for b in boxes], dtype=np.int64)
        lengths = np.array([b["extents"][0] if b["extents"] else 1 for b in boxes], dtype=np.int64)
        return _expand(starts, lengths)
    return np.concatenate([box_offsets(b) for b in boxes])


def pairs(box_pairs: list) -> tuple[np.ndarray, np.ndarray]:
    """``[[from_box, to_box], ...]`` to the two index arrays they encode (equal lengths)."""
    return boxes_offsets([p[0] for p in box_pairs]), boxes_offsets([p[1] for p in box_pairs])


def _expand(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    if len(starts) == 0:
        return np.zeros(0, dtype=np.int64)
    total = int(lengths.sum())
    before = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.arange(total, dtype=np.int64) + np.repeat(starts - before, lengths)


@dataclass
class RankPlan:
    """One rank's part of a plan, with every box list decoded once into index arrays.

    ``steps``: the plan's step dicts plus ``send_idx``; ``copies``: (buffer name, from offsets, to offsets);
    ``src_global``/``dst_global``/``naive_src``: (local offsets, global flat indices)."""

    rank: int
    src_size: int
    dst_size: int
    steps: list
    copies: list
    src_global: tuple
    dst_global: tuple
    naive_src: tuple
    comms: dict = field(default_factory=dict)

    @staticmethod
    def of(plan: dict, rank: int) -> "RankPlan":
        if plan.get("format") != FORMAT:
            raise ValueError(f"plan format {plan.get('format')!r}: this executor reads {FORMAT}")
        mine = plan["ranks"][rank]
        steps = []
        for st in mine["steps"]:
            s = dict(st)
            s["send_idx"] = boxes_offsets(st["send"])
            steps.append(s)
        copies = [(c["from"], *pairs(c["pairs"])) for c in mine["copies"]]
        return RankPlan(rank, int(mine["src_size"]), int(mine["dst_size"]), steps, copies, pairs(mine["src_global"]),
                        pairs(mine["dst_global"]), pairs(mine["naive_src"]))


def split_comms(rp: RankPlan, comm) -> None:
    """One sub-communicator per step (collective over the world: every rank calls Split for every step)."""
    for i, st in enumerate(rp.steps):
        group = st["group"]
        rp.comms[i] = comm.Split(color=min(group), key=group.index(rp.rank))


def execute(rp: RankPlan, comm, src: np.ndarray) -> tuple[np.ndarray, int]:
    """Runs the plan; returns this rank's destination buffer and the bytes it received from other ranks."""
    from mpi4py import MPI

    if not rp.comms:
        split_comms(rp, comm)
    bufs = {"src": src}
    received = 0
    item = src.dtype.itemsize
    for i, st in enumerate(rp.steps):
        sub = rp.comms[i]
        p = len(st["group"])
        k = st["group"].index(rp.rank)
        send = bufs[st["in"]][st["send_idx"]]
        out = np.empty(st["out_size"], dtype=src.dtype)
        kind = st["kind"]
        if kind == "reduce_scatter":
            # variable counts: member j receives the sum of block j (send = blocks of members 0..p-1 in order)
            counts = [int(c) for c in st["recv_counts"]]
            sub.Reduce_scatter(send, out, recvcounts=counts, op=MPI.SUM)
            received += (p - 1) * out.size * item
        elif kind == "all_reduce":
            sub.Allreduce(send, out, op=MPI.SUM)
            n = out.size
            bk = n // p + (1 if k < n % p else 0)
            received += ((p - 1) * bk + n - bk) * item
        elif kind == "all_gather":
            sub.Allgather(send, out)
            received += (out.size - send.size) * item
        elif kind == "broadcast":
            if k == st["root"]:
                out[:] = send
            sub.Bcast(out, root=st["root"])
            received += 0 if k == st["root"] else out.size * item
        elif kind == "all_to_all":
            sc = np.asarray(st["send_counts"], dtype=np.int64)
            rc = np.asarray(st["recv_counts"], dtype=np.int64)
            sd = np.concatenate([[0], np.cumsum(sc)[:-1]])
            rd = np.concatenate([[0], np.cumsum(rc)[:-1]])
            sub.Alltoallv([send, (sc, sd)], [out, (rc, rd)])
            received += int(rc.sum() - rc[k]) * item
        elif kind != "idle":
            raise ValueError(f"plan step {i} of rank {rp.rank}: unknown collective {kind!r}")
        bufs[st["out"]] = out
    dst = np.zeros(rp.dst_size, dtype=src.dtype)
    for name, at, to in rp.copies:
        dst[to] = bufs[name][at]
    return dst, received


def naive(rp: RankPlan, plans: list, comm, src: np.ndarray, global_size: int) -> np.ndarray:
    """Baseline: gather every contribution to rank 0, assemble (sum for partial sources), scatter each rank's part.

    ``plans`` is every rank's RankPlan (rank 0 needs their maps; every rank decodes them before timing)."""
    at, x = rp.naive_src
    values = np.ascontiguousarray(src[at])
    counts = np.array([len(p.naive_src[0]) for p in plans], dtype=np.int64)
    dst = np.empty(rp.dst_size, dtype=src.dtype)
    if comm.rank == 0:
        gathered = np.empty(int(counts.sum()), dtype=src.dtype)
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
        comm.Gatherv(values, [gathered, (counts, displs)], root=0)
        ids = np.concatenate([p.naive_src[1] for p in plans])
        whole = np.bincount(ids, weights=gathered, minlength=global_size).astype(src.dtype)
        parts = []
        for p in plans:
            part = np.zeros(p.dst_size, dtype=src.dtype)
            part[p.dst_global[0]] = whole[p.dst_global[1]]
            parts.append(part)
        sizes = np.array([p.dst_size for p in plans], dtype=np.int64)
        comm.Scatterv([np.concatenate(parts), (sizes, np.concatenate([[0], np.cumsum(sizes)[:-1]]))], dst, root=0)
    else:
        comm.Gatherv(values, None, root=0)
        comm.Scatterv(None, dst, root=0)
    return dst


def timed(comm, body, repeat: int = 9) -> float:
    """Best-of-``repeat`` wall time of ``body()`` across ranks (barrier, run, slowest rank)."""
    from mpi4py import MPI

    best = float("inf")
    for _ in range(repeat):
        comm.Barrier()
        t0 = time.perf_counter()
        body()
        local = time.perf_counter() - t0
        best = min(best, comm.allreduce(local, op=MPI.MAX))
    return best


def local_source(rp: RankPlan, plan: dict, global_values: np.ndarray, summands: np.ndarray | None) -> np.ndarray:
    """This rank's source buffer from a global reference (its partial group's summand when the source is partial).

    ``summands[k]`` is summand k of the partial group (k = row-major index of the rank's partial-dim coords)."""
    src = np.zeros(rp.src_size, dtype=global_values.dtype)
    at, x = rp.src_global
    if summands is None:
        src[at] = global_values[x]
    else:
        src[at] = summands[partial_index(plan, rp.rank)][x]
    return src


def partial_index(plan: dict, rank: int) -> int:
    """Row-major index of the rank's coordinates on the source's partial mesh dims."""
    shape = plan["mesh"]["shape"]
    coord = []
    r = rank
    for d in reversed(shape):
        coord.append(r % d)
        r //= d
    coord.reverse()
    k = 0
    for j in plan["src"]["partial_dims"]:
        k = k * shape[j] + coord[j]
    return k


def expected_destination(rp: RankPlan, global_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, values) the destination layout says this rank holds."""
    at, x = rp.dst_global
    return at, global_values[x]
