"""Shrinks a failing program to a smaller one that fails the same way (the same outcome signature), greedily: each
pass tries every simplification below and keeps the first that still fails alike, until none does or the budget of
compiles is spent.

Simplifications, roughly largest first: one round instead of a loop; no accumulation; a scalar for a second operand;
an operand used straight from global memory instead of staged (CUDA); a layout made compact (no padding, split,
permutation, swizzle, broadcast, replica or offset), its region started at 0 and its buffer the region's size; a
smaller extent (a dimension dropped, set to 1, or halved) once the operands it touches are compact.
"""

from __future__ import annotations

from dataclasses import replace

from . import execute
from .generate import BINARY, REDUCE
from .spec import Operand, Program, compact


def _is_compact(operand: Operand) -> bool:
    lay = operand.layout
    return lay == compact(lay.shape) and not any(operand.start)


def _compacted(operand: Operand, extent) -> Operand:
    return replace(operand, layout=compact(tuple(extent)), start=(0,) * len(extent))


def _dst_extent(extent, axes):
    return tuple(e for d, e in enumerate(extent) if d not in axes) or (1,)


def _global_extent(p: Program, extent, is_dst):
    ext = _dst_extent(extent, p.axes) if is_dst else tuple(extent)
    return (ext[0] * p.repeat, *ext[1:])


def _resized(p: Program, extent, axes):
    """``p`` over a new extent, every operand compact (None if some operand is not, or a register tile)."""
    if any(t is not None and t.memory == "local" for t in p.tiles):
        return None
    if not all(_is_compact(o) for o in (*p.srcs, p.dst)):
        return None
    if any(t is not None and not _is_compact(t) for t in p.tiles):
        return None
    q = replace(p, extent=tuple(extent), axes=tuple(axes))
    srcs = tuple(_compacted(o, _global_extent(q, extent, False)) for o in p.srcs)
    dst = _compacted(p.dst, _global_extent(q, extent, True))
    tiles = tuple(None if t is None else _compacted(t, _dst_extent(extent, axes) if k == len(p.tiles) - 1
                                                    else extent) for k, t in enumerate(p.tiles))
    if p.cuda and len(extent) != 2 and any(t is not None and k < len(p.tiles) - 1 for k, t in enumerate(p.tiles)):
        return None
    return replace(q, srcs=srcs, dst=dst, tiles=tiles)


def candidates(p: Program):
    """(what was simplified, the smaller program) for each program one simplification away from ``p``."""
    if p.repeat > 1 and p.scope != "thread":   # at thread scope the rounds are the threads
        q = replace(p, repeat=1)
        if p.cuda:
            yield "one round", replace(q, srcs=tuple(_compacted(o, p.extent) for o in p.srcs),
                                       dst=_compacted(p.dst, _dst_extent(p.extent, p.axes)))
        else:
            yield "one round", q
    if p.accum:
        yield "no accumulation", replace(p, accum=False)
    if p.op in BINARY and p.scalar is None and len(p.srcs) == 2:
        yield "a scalar second operand", replace(p, srcs=p.srcs[:1], scalar=2.0,
                                                 tiles=p.tiles[:1] + p.tiles[2:] if p.tiles else ())
    for k, tile in enumerate(p.tiles[:-1]):
        if tile is not None:
            yield f"source {k} from global memory", replace(p, tiles=p.tiles[:k] + (None,) + p.tiles[k + 1:])
    for k, tile in enumerate(p.tiles):
        if tile is not None and tile.memory == "shared" and not _is_compact(tile):
            ext = _dst_extent(p.extent, p.axes) if k == len(p.tiles) - 1 else p.extent
            yield f"tile {k} compact", replace(p, tiles=p.tiles[:k] + (_compacted(tile, ext),) + p.tiles[k + 1:])
    operands = (*p.srcs, p.dst)
    for k, operand in enumerate(operands):
        if operand.memory != "global" or _is_compact(operand):
            continue
        lay = operand.layout
        simpler = []
        if lay.replica:
            simpler.append(("no replica", replace(operand, layout=replace(lay, replica=()))))
        if lay.offset:
            simpler.append(("no offset", replace(operand, layout=replace(lay, offset=0))))
        simpler.append(("compact", replace(operand, layout=compact(lay.shape))))
        ext = _dst_extent(p.extent, p.axes) if k == len(operands) - 1 else p.extent
        simpler.append(("compact at 0", _compacted(operand, _global_extent(p, ext, k == len(operands) - 1))))
        name = "destination" if k == len(operands) - 1 else f"source {k}"
        for what, s in simpler:
            if k == len(operands) - 1:
                yield f"{name} {what}", replace(p, dst=s)
            else:
                yield f"{name} {what}", replace(p, srcs=p.srcs[:k] + (s,) + p.srcs[k + 1:])
    rank = len(p.extent)
    for d in range(rank):
        shapes = []
        if rank > 1 and (p.op not in REDUCE or d not in p.axes):
            axes = tuple(a - (a > d) for a in p.axes)
            shapes.append((p.extent[:d] + p.extent[d + 1:], axes))
        if p.extent[d] > 1:
            shapes.append((p.extent[:d] + (1,) + p.extent[d + 1:], p.axes))
            shapes.append((p.extent[:d] + (p.extent[d] // 2,) + p.extent[d + 1:], p.axes))
        for extent, axes in shapes:
            q = _resized(p, extent, axes)
            if q is not None:
                yield f"extent {extent}", q


def shrink(p: Program, signature: str, budget: int = 60):
    """(the smallest program found that fails with ``signature``, its outcome); the program's ``notes`` list the
    simplifications kept."""
    best = p
    best_outcome = None
    spent = 0
    improved = True
    while improved and spent < budget:
        improved = False
        for what, q in candidates(best):
            if spent >= budget:
                break
            if q == replace(best, notes=q.notes):   # a simplification with nothing left to simplify
                continue
            spent += 1
            try:
                outcome = execute.execute([q])[0]
            except Exception:   # noqa: BLE001  (a candidate the harness cannot build is no smaller failure)
                continue
            if outcome.signature == signature:
                best, best_outcome, improved = replace(q, notes=q.notes + (what,)), outcome, True
                break
    if best_outcome is None:
        best_outcome = execute.execute([best])[0]
    return best, best_outcome
