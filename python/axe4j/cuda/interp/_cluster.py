"""Thread-block clusters (PTX ISA: "Cluster of Cooperative Thread Arrays", "Distributed shared memory").

The CTAs of one cluster run together (``_exec.run_together``). What they share:

* **Addresses in the cluster's shared window.** ``mapa.shared::cluster`` maps a CTA's shared address to the one
  another CTA's copy of it has in the cluster window; here that address is ``CLUSTER_WINDOW | rank << RANK_SHIFT |
  offset`` (the real encoding is opaque to programs). An address below ``CLUSTER_WINDOW`` is the issuing CTA's own
  (a ``shared::cta`` address is a valid ``shared::cluster`` address of the executing CTA).
* **Remote mbarrier arrivals** (``mbarrier.arrive.shared::cluster``) and **multicast TMA loads**
  (``.multicast::cluster`` with a 16-bit CTA mask: the box lands at the same offset in every CTA of the mask and
  completes its bytes on the mbarrier at the same offset in each).
* **The cluster barrier** (``barrier.cluster.arrive`` + ``wait``, TVM's ``cluster_sync``): every thread of every CTA;
  its default release/acquire semantics make each CTA's shared writes visible.
"""

from __future__ import annotations

import numpy as np

from ._errors import KernelFault, thread_name

CLUSTER_WINDOW = 1 << 30
RANK_SHIFT = 24            # 16 MiB per CTA, above any CTA's shared memory
MAX_CLUSTER = 16           # the non-portable limit; 8 is portable


class Cluster:
    def __init__(self, launch, index, ctas):
        self.launch, self.index, self.ctas = launch, index, ctas
        self.dims = launch.cluster_dims
        size = len(ctas)
        if size > MAX_CLUSTER:
            raise KernelFault(f"kernel '{launch.kernel_name}': a cluster of {self.dims} = {size} CTAs; at most "
                              f"{MAX_CLUSTER}")
        self.arrived, self.generation, self.threads = 0, 0, []

    @property
    def size(self) -> int:
        return len(self.ctas)

    def rank(self, cta) -> int:
        return self.ctas.index(cta)

    def cta(self, rank: int, who: str):
        if not 0 <= rank < self.size:
            raise KernelFault(f"kernel '{self.launch.kernel_name}': {who} names CTA rank {rank} of a cluster of "
                              f"{self.size}")
        return self.ctas[rank]


def cluster_of(g):
    """The group's cluster, or None for a launch without clusters (a cluster of one CTA)."""
    return g.cta.cluster


def map_address(g, addr, rank):
    """mapa.shared::cluster: ``addr`` (the executing CTA's shared address) as CTA ``rank``'s copy in the window."""
    cluster = cluster_of(g)
    size = cluster.size if cluster is not None else 1
    rank = np.asarray(rank).astype(np.int64)
    bad = (rank < 0) | (rank >= size)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise KernelFault(f"kernel '{g.cta.kernel}': mapa to CTA rank {int(rank[i])} of a cluster of {size} by "
                          f"{thread_name(g.cta.block, g.tids[i])}")
    addr = np.asarray(addr).astype(np.int64)
    if (addr >= CLUSTER_WINDOW).any():
        raise KernelFault(f"kernel '{g.cta.kernel}': mapa of an address already in the cluster window")
    return (CLUSTER_WINDOW | (rank << RANK_SHIFT) | addr).astype(np.uint32)


def resolve(g, addr: int, who: str):
    """(CTA, shared offset in it) of a ``shared::cluster`` address."""
    addr = int(addr)
    if addr < CLUSTER_WINDOW:
        return g.cta, addr
    rank, offset = (addr - CLUSTER_WINDOW) >> RANK_SHIFT, addr & ((1 << RANK_SHIFT) - 1)
    cluster = cluster_of(g)
    if cluster is None:
        if rank != 0:
            raise KernelFault(f"kernel '{g.cta.kernel}': {who} names CTA rank {rank}, but the kernel is not "
                              "launched in clusters")
        return g.cta, offset
    return cluster.cta(rank, who), offset


def mask_ranks(g, mask, who: str):
    """The CTA ranks of a 16-bit multicast mask; each must exist in the cluster."""
    mask = int(mask)
    ranks = [r for r in range(16) if mask >> r & 1]
    cluster = cluster_of(g)
    size = cluster.size if cluster is not None else 1
    if not ranks or ranks[-1] >= size:
        raise KernelFault(f"kernel '{g.cta.kernel}': {who} has CTA mask {mask:#06x} for a cluster of {size} CTAs "
                          f"(by {thread_name(g.cta.block, g.tids[0])})")
    return ranks


def special_register(g, name: str):
    """The value of a cluster/grid special register (PTX ISA: "Special Registers") for the group's threads."""
    cta, launch = g.cta, g.cta.launch
    dims = launch.cluster_dims
    block = cta.block
    axis = "xyz".index(name[-1]) if name[-2:-1] == "." else None
    if name.startswith("clusterid."):
        value = block[axis] // dims[axis]
    elif name.startswith("nclusterid."):
        value = launch.grid[axis] // dims[axis]
    elif name.startswith("cluster_ctaid."):
        value = block[axis] % dims[axis]
    elif name.startswith("cluster_nctaid."):
        value = dims[axis]
    elif name == "cluster_ctarank":
        x, y, z = (block[i] % dims[i] for i in range(3))
        value = x + y * dims[0] + z * dims[0] * dims[1]
    elif name == "cluster_nctarank":
        value = dims[0] * dims[1] * dims[2]
    elif name.startswith("ctaid."):
        value = block[axis]
    elif name.startswith("nctaid."):
        value = launch.grid[axis]
    else:
        return None
    return np.full(g.n, value, dtype=np.int32)


class ClusterBarrierWait:
    """barrier.cluster.arrive + barrier.cluster.wait by a group: done when every thread of the cluster arrived."""

    def __init__(self, g):
        cluster = cluster_of(g)
        self.cluster, self.ctas = cluster, (cluster.ctas if cluster is not None else [g.cta])
        holder = cluster if cluster is not None else g.cta.async_state.setdefault("cluster_barrier", _Solo())
        self.holder = holder
        expected = sum(c.threads for c in self.ctas)
        self.what = f"the cluster barrier ({expected} threads in {len(self.ctas)} CTAs)"
        self.generation = holder.generation
        holder.arrived += g.n
        if holder.arrived > expected:
            raise KernelFault(f"kernel '{g.cta.kernel}': {holder.arrived} threads arrived at the cluster barrier, "
                              f"which expects {expected}")
        if holder.arrived == expected:
            holder.arrived = 0
            holder.generation += 1
            for cta in self.ctas:
                cta.shared.publish()

    def ready(self) -> bool:
        return self.holder.generation != self.generation


class _Solo:
    def __init__(self):
        self.arrived, self.generation = 0, 0
