"""The execution scope of a tile call, as TVM's dispatch context gives it."""

from __future__ import annotations


def threads_of(sctx) -> tuple[int, bool]:
    """Threads of the execution scope (the product of its intra-scope axis extents) and whether every one of
    them is active (no axis starts at an offset)."""
    threads, full = 1, True
    for extent, offset in dict(sctx.intra).values():
        threads *= int(extent)
        full = full and int(offset) == 0
    return threads, full
