"""The expert-sorted tile schedule as one TIRx kernel (sm_90a): from the routing on the device (``ids``, ``weights``:
tokens x top_k) to exactly the arrays ``schedule()`` + ``tile_arrays()`` make on the host (``axe4j.moe.schedule``):
``tile_expert``, ``tile_start``, ``tile_rows`` (max_tiles, 0 past the last tile), ``slot_token``, ``slot_pair``
(pairs + rows, the ``rows`` padding slots token 0, pair 0) and ``row_weight`` (max_tiles * rows, 0 past a tile's
rows), with no copy to the host. docs/moe.md, "The schedule on the device".

One CTA of ``THREADS`` threads, a stable counting sort by expert. The P = tokens * top_k pairs are cut into G
contiguous groups of ``per`` = ceil(P / G) pairs, G = max(1, THREADS // E); thread (g, e) (tid = g E + e, so a
warp's threads read the same pair) owns the pairs of group g routed to expert e:

1. count: ``cnt[e G + g]`` = |{p in group g : ids[p] = e}| (shared memory; one scan of the group per thread).
2. scan: an inclusive prefix sum over the E G counts in expert-major order (Hillis-Steele, ping-pong shared
   buffers); its exclusive form ``cnt_incl - cnt`` at e G + g is the first slot of (e, g): the slots of expert e
   start at ``first[e]`` and hold group 0's pairs, then group 1's, ... (each in pair order) -- the stable order.
   Per expert: ``count[e]``, ``first[e]``, tiles ``ceil(count[e] / rows)`` and their inclusive prefix ``tend[e]``
   (a second scan over E).
3. place: thread (g, e) scans its group again and writes its k-th pair p to slot s = start(e, g) + k:
   slot_pair[s] = p, slot_token[s] = p // top_k, and row_weight at row rows * (tend[e] - tiles[e] + q // rows) +
   q % rows, q = s - first[e] (the slot's row in tile-padded order).
4. tiles: tile i < tend[E-1] belongs to the smallest e with tend[e] > i (a branch-free binary search); its
   start is first[e] + rows j and its rows min(rows, count[e] - rows j), j = i - (tend[e] - tiles[e]); tiles
   past the last are 0. The same search gives each row of row_weight its tile; a row past its tile's rows (or in
   no tile) is 0. Slots from the number of placed pairs on are token 0, pair 0.

Out-of-range expert ids: a pair with ids[p] outside [0, E) matches no thread, so it is placed in no slot (its row
of Y is never written: it adds nothing to its token's output), the schedule is the stable sort of the other pairs,
and ``error[0]`` is the number of such pairs (P minus the pairs placed; 0 for a valid routing). Every access stays
in bounds. ``axe4j.moe.cuda.MoeLayer.experts`` raises a ValueError naming ``ids`` when it is not 0.
"""

from __future__ import annotations

from tvm.script import tirx as T

from .schedule import TileSchedule

THREADS = 1024


def _steps(n: int) -> int:
    """Hillis-Steele steps of an n-element scan: ceil(log2 n)."""
    return max(0, (n - 1).bit_length())


def schedule_kernel(tokens: int, top_k: int, experts: int, rows: int, max_tiles: int):
    """The PrimFunc ``schedule(ids, weights, tile_expert, tile_start, tile_rows, slot_token, slot_pair, row_weight,
    error)`` for a routing of ``tokens`` x ``top_k`` over ``experts`` experts and tiles of ``rows`` rows."""
    for name, value in (("tokens", tokens), ("top_k", top_k), ("experts", experts), ("rows", rows),
                        ("max_tiles", max_tiles)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"schedule_kernel: {name} ({value!r}) must be a positive int")
    P, K, E = tokens * top_k, top_k, experts
    if max_tiles < TileSchedule.max_tiles(P, E, rows):
        raise ValueError(f"schedule_kernel: max_tiles ({max_tiles}) must be at least "
                         f"{TileSchedule.max_tiles(P, E, rows)}, the most tiles {P} pairs over {E} experts need")
    G = max(1, THREADS // E)
    N = G * E                         # (group, expert) counts
    per = -(-P // G)                  # pairs per group
    n_items = -(-N // THREADS)        # (group, expert) items per thread
    slots = P + rows
    steps_n, steps_e = _steps(N), _steps(E)
    search = _steps(E)                # binary-search halvings over E experts
    rows_total = max_tiles * rows

    @T.macro
    def scan(buf, n, steps, tid):
        """buf[0, :n] -> its inclusive prefix sum in buf[steps % 2, :n]; a barrier after each step."""
        for d in T.serial(steps):
            for w0 in T.serial(-(-n // THREADS)):
                w = w0 * THREADS + tid
                if w < n:
                    # Hillis-Steele: x_{d+1}[w] = x_d[w] + x_d[w - 2^d] (for w >= 2^d)
                    buf[1 - d % 2, w] = buf[d % 2, w] + T.Select(
                        w >= T.shift_left(1, d), buf[d % 2, T.max(w - T.shift_left(1, d), 0)], 0)
            T.cuda.cta_sync()

    @T.macro
    def owner(tend, at, i, found):
        """found[0] = the smallest e with tend[at, e] > i (E - 1 when there is none): tend is non-decreasing."""
        found[1] = 0
        found[0] = E - 1
        for _ in T.serial(search):
            mid = (found[1] + found[0]) // 2
            found[0] = T.Select(tend[at, mid] > i, mid, found[0])
            found[1] = T.Select(tend[at, mid] > i, found[1], mid + 1)

    @T.prim_func
    def schedule(ids_in: T.Buffer((tokens, K), "int32"), weights_in: T.Buffer((tokens, K), "float32"),
                 tile_expert: T.Buffer((max_tiles,), "int32"), tile_start: T.Buffer((max_tiles,), "int32"),
                 tile_rows: T.Buffer((max_tiles,), "int32"), slot_token: T.Buffer((slots,), "int32"),
                 slot_pair: T.Buffer((slots,), "int32"), row_weight: T.Buffer((rows_total,), "float32"),
                 error: T.Buffer((1,), "int32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([THREADS // 32])
        T.lane_id([32])
        tid = T.thread_id([THREADS])
        ids = T.decl_buffer((P,), "int32", data=ids_in.data)            # pair p = t top_k + j
        weights = T.decl_buffer((P,), "float32", data=weights_in.data)
        pool = T.SMEMPool()
        cnt = pool.alloc((N,), "int32", align=16)                      # per (e, g): pairs of group g on e
        incl = pool.alloc((2, N), "int32", align=16)                   # its scan, ping-pong
        ntile = pool.alloc((E,), "int32", align=16)                    # tiles per expert: ceil(count / rows)
        tiles = pool.alloc((2, E), "int32", align=16)                  # their scan, ping-pong
        count = pool.alloc((E,), "int32", align=16)
        first = pool.alloc((E,), "int32", align=16)
        pool.commit()
        k = T.alloc_local([1], "int32")
        found = T.alloc_local([2], "int32")
        # 1. count the pairs of (group g, expert e)
        for w0 in T.serial(n_items):
            w = w0 * THREADS + tid
            if w < N:
                k[0] = 0
                for j in T.serial(per):
                    p = (w // E) * per + j
                    if p < P:
                        k[0] = k[0] + T.Select(ids[p] == w % E, 1, 0)
                cnt[(w % E) * G + w // E] = k[0]
                incl[0, (w % E) * G + w // E] = k[0]
        T.cuda.cta_sync()
        # 2. slots: the inclusive scan over (e, g); per expert its count, first slot and tiles
        scan(incl, N, steps_n, tid)
        for e0 in T.serial(-(-E // THREADS)):
            e = e0 * THREADS + tid
            if e < E:
                count[e] = incl[steps_n % 2, e * G + G - 1] - incl[steps_n % 2, e * G] + cnt[e * G]
                first[e] = incl[steps_n % 2, e * G] - cnt[e * G]
                ntile[e] = (count[e] + (rows - 1)) // rows
                tiles[0, e] = ntile[e]
        T.cuda.cta_sync()
        scan(tiles, E, steps_e, tid)                                   # tiles[steps_e % 2, e] = tend[e]
        # 3. place each pair in its slot (and its weight in its row)
        for w0 in T.serial(n_items):
            w = w0 * THREADS + tid
            if w < N:
                k[0] = incl[steps_n % 2, (w % E) * G + w // E] - cnt[(w % E) * G + w // E]
                for j in T.serial(per):
                    p = (w // E) * per + j
                    if p < P:
                        if ids[p] == w % E:
                            slot_pair[k[0]] = p
                            slot_token[k[0]] = p // K
                            row_weight[(tiles[steps_e % 2, w % E] - ntile[w % E]
                                        + (k[0] - first[w % E]) // rows) * rows + (k[0] - first[w % E]) % rows] = \
                                weights[p]
                            k[0] = k[0] + 1
        # 4. tiles, padding rows of row_weight, padding slots (disjoint from what 3 writes)
        for i0 in T.serial(-(-max_tiles // THREADS)):
            i = i0 * THREADS + tid
            if i < max_tiles:
                owner(tiles, steps_e % 2, i, found)
                if i < tiles[steps_e % 2, E - 1]:
                    tile_expert[i] = found[0]
                    tile_start[i] = first[found[0]] + (i - tiles[steps_e % 2, found[0]] + ntile[found[0]]) * rows
                    tile_rows[i] = T.min(rows, count[found[0]]
                                         - (i - tiles[steps_e % 2, found[0]] + ntile[found[0]]) * rows)
                else:
                    tile_expert[i] = 0
                    tile_start[i] = 0
                    tile_rows[i] = 0
        for q0 in T.serial(-(-rows_total // THREADS)):
            q = q0 * THREADS + tid
            if q < rows_total:
                owner(tiles, steps_e % 2, q // rows, found)
                # row q is slot first[e] + rows j + q % rows of expert e's j-th tile, if that is one of e's slots
                if q // rows >= tiles[steps_e % 2, E - 1] or (
                        (q // rows - tiles[steps_e % 2, found[0]] + ntile[found[0]]) * rows + q % rows
                        >= count[found[0]]):
                    row_weight[q] = T.float32(0)
        for s0 in T.serial(-(-slots // THREADS)):
            s = s0 * THREADS + tid
            if s < slots:
                if s >= incl[steps_n % 2, N - 1]:
                    slot_pair[s] = 0
                    slot_token[s] = 0
        if tid == 0:
            error[0] = P - incl[steps_n % 2, N - 1]

    return schedule
