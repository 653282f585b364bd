"""Tiles of a buffer by tile coordinate, as CuTe's ``local_tile(tensor, tile_shape, coord)``: the region of tile
``coord`` of a ``tile_shape`` tiling, optionally a sub-box of it.

Plain Python evaluated while TVMScript parses a kernel: ``Tx.copy_async(A_smem[s, :, :], local_tile(A, (bm, bk),
(tm, kt)))`` is the region ``A[tm * bm:tm * bm + bm, kt * bk:kt * bk + bk]``, built from the same expressions the
slice would be (start ``coord * tile + offset``, end ``start + extent``, step 1, as the parser gives a slice inside
a call), so the generated code is the same as with the slice written out.
"""

from __future__ import annotations


def tile_bounds(tile_shape, coord, offset=None, extent=None):
    """(start, end) of each dim of tile ``coord``: start = coord * tile (+ offset), end = start + extent (the tile's
    size unless ``extent`` gives one); ``None`` for a dim whose tile is ``None`` (taken whole). ``offset`` and
    ``extent`` hold one entry per dim (``None``: no offset, the whole tile). Works on ints and TIR expressions."""
    rank = len(tile_shape)
    offset = tuple(offset) if offset is not None else (None,) * rank
    extent = tuple(extent) if extent is not None else (None,) * rank
    if not len(coord) == len(offset) == len(extent) == rank:
        raise ValueError(f"tile_bounds: tile_shape {tuple(tile_shape)}, coord {tuple(coord)}, offset {offset} and "
                         f"extent {extent} must have one entry per dim")
    bounds = []
    for tile, c, o, e in zip(tile_shape, coord, offset, extent):
        if tile is None:
            bounds.append(None)
            continue
        start = c * tile if o is None else c * tile + o
        bounds.append((start, start + (tile if e is None else e)))
    return bounds


def local_tile(buffer, tile_shape, coord, offset=None, extent=None):
    """The region of ``buffer`` of tile ``coord`` (see ``tile_bounds``): ``buffer[start:end, ...]``."""
    return buffer[tuple(slice(None) if b is None else slice(b[0], b[1], 1)
                        for b in tile_bounds(tile_shape, coord, offset, extent))]
