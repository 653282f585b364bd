"""Faults planted in the CUDA emitters on request, for tests only: each shows that the CPU interpreter of lowered
kernels (``axe4j.cuda.interp``) catches that kind of emitter bug. Nothing is planted unless a test asks, inside a
``planted(...)`` block, in its own thread."""

from __future__ import annotations

import contextlib
import threading

KINDS = {
    "wrong-swizzle": "TMA tensor maps get the next smaller swizzle mode than the plan's",
    "missing-barrier": "the cross-warp tree reduction leaves out the barrier between its scratch writes and reads",
    "lane-off-by-one": "ldmatrix/stmatrix row addresses come from lane + 1",
    "ldmatrix-trans": "ldmatrix/stmatrix get .trans where the plan has none",
    "wgmma-descriptor-stride": "wgmma shared-memory descriptors get twice the plan's stride byte offset",
    "missing-proxy-fence": "wgmma/tcgen05.mma rules leave out fence.proxy.async.shared::cta before reading operands "
                           "that threads stored",
    "unpeeled-k-loop": "the pipelined Hopper GEMM waits for its last K tile after the loop, with no register fence "
                       "(ptxas then converts an accumulator pair before the wait)",
    "early-release": "the pipelined Hopper GEMM releases a ring slot while the wgmma group reading it is in flight",
    "moe-gather-unwaited": "the CUDA MoE layer's GEMM1 does not wait for the cp.async gather of the next K tile's "
                           "rows before the barrier after the wgmma",
    "cluster-local-release": "the clustered Hopper GEMM releases a ring slot only in its own CTA, though its peer's "
                             "multicast loads write into it too",
}

_local = threading.local()


def active(kind: str) -> bool:
    return kind in getattr(_local, "kinds", ())


@contextlib.contextmanager
def planted(kind: str):
    if kind not in KINDS:
        raise ValueError(f"unknown planted fault {kind!r}; known: {', '.join(sorted(KINDS))}")
    before = getattr(_local, "kinds", frozenset())
    _local.kinds = before | {kind}
    try:
        yield
    finally:
        _local.kinds = before
