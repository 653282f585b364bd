"""DTensor's per-mesh-dim redistribution as the baseline of make bench-mesh (axe4j_tools.mesh_peers.per_dim): its order of
moves, torch.chunk's local shapes, and each move's bytes against axe4j's planner on the same single-dim move."""

import tvm  # noqa: F401  (TVM before the JVM)

import random

import numpy as np
import pytest

from axe4j import mesh
from axe4j_tools.mesh_peers import per_dim
from axe4j_tools.mesh_peers.per_dim import PARTIAL, REPLICATE, Move, parse, schedule, shard


def test_parse_and_text_round_trip():
    places = parse("[Shard(1), Partial(), Replicate()]")
    assert places == (shard(1), PARTIAL, REPLICATE)
    assert per_dim.text(places) == "[Shard(1), Partial(), Replicate()]"
    with pytest.raises(ValueError, match="Shard\\(x\\)"):
        parse("[Shard(x)]")


@pytest.mark.parametrize("n", range(0, 20))
@pytest.mark.parametrize("p", [1, 2, 3, 4, 8])
def test_chunk_is_torch_chunk(n, p):
    size = -(-n // p) if n else 0
    pieces = [list(range(n))[k * size:(k + 1) * size] if size else [] for k in range(p)]
    assert [per_dim.chunk(n, p, k) for k in range(p)] == [len(piece) for piece in pieces]


def test_swapped_shards_undo_the_inner_dim_first():
    """[S(0), S(1)] -> [S(1), S(0)]: mesh dim 1 goes to Replicate (the dims before it shard tensor dim 0
    differently), mesh dim 0 all-to-all, then mesh dim 1 slices."""
    moves = schedule(parse("[Shard(0), Shard(1)]"), parse("[Shard(1), Shard(0)]"))
    assert [(m.mesh_dim, m.collective) for m in moves] == [(1, "all_gather"), (0, "all_to_all"), (1, "local")]
    assert moves[-1].after == parse("[Shard(1), Shard(0)]")


def test_partial_to_shard_on_the_inner_dim_slices_before_reducing():
    """[P, R] -> [R, S(1)]: the slice on mesh dim 1 comes first, so the all-reduce on mesh dim 0 carries 1/4."""
    req = {"mesh": {"shape": [2, 4]}, "global_shape": [64, 64], "element_bytes": 4,
           "src": {"placements": "[Partial(), Replicate()]"}, "dst": {"placements": "[Replicate(), Shard(1)]"}}
    per_rank, moves = per_dim.bytes_per_rank(req)
    assert [(m.mesh_dim, m.collective) for m in moves] == [(1, "local"), (0, "all_reduce")]
    assert per_rank == [64 * 16 * 4] * 8  # ring over 2: b_k + (n - b_k) = n, n = 64 x 16


def test_uneven_rows_are_padded_to_the_chunk():
    req = {"mesh": {"shape": [8]}, "global_shape": [61, 4], "element_bytes": 4,
           "src": {"placements": "[Shard(0)]"}, "dst": {"placements": "[Replicate()]"}}
    per_rank, _ = per_dim.bytes_per_rank(req)
    assert per_rank == [7 * 8 * 4 * 4] * 8  # chunks of ceil(61/8) = 8 rows


def _random_placements(rng, mesh, ndim, partial):
    out = []
    for _ in mesh:
        pick = rng.randrange(4 if partial else 3)
        out.append(PARTIAL if pick == 3 else REPLICATE if pick == 0 else shard(rng.randrange(ndim)))
    return tuple(out)


def test_each_move_moves_what_the_planner_moves_for_it():
    """Random placement pairs on meshes 8, 2x4, 4x2 (even shapes): every move of DTensor's schedule is planned by
    axe4j on its own; a single collective on one mesh dim moves the same bytes in both models."""
    rng = random.Random(20261126)
    checked = refused = below = 0
    for trial in range(60):
        mesh_shape = rng.choice([[8], [2, 4], [4, 2]])
        shape = [16, 32][:rng.choice([1, 2])] if len(mesh_shape) == 1 else [16, 32]
        src = _random_placements(rng, mesh_shape, len(shape), True)
        dst = _random_placements(rng, mesh_shape, len(shape), False)
        for m in schedule(src, dst):
            if m.collective == "local":
                continue
            req = {"mesh": {"shape": mesh_shape}, "global_shape": shape, "element_bytes": 4,
                   "src": {"placements": per_dim.text(m.before)}, "dst": {"placements": per_dim.text(m.after)}}
            if PARTIAL in m.after:
                refused += 1  # a partial destination: the planner takes non-partial destinations only
                continue
            want = mesh.plan(req)["bytes_total"]
            got = sum(per_dim.move_bytes(m, shape, mesh_shape)) * 4
            if PARTIAL in m.before:
                # a partial source: the planner slices before it reduces and reduces each element in one group
                # only, so it may move less than DTensor's collective, never more
                assert want <= got, (trial, req, m.collective, got, want)
                below += want < got
            else:
                assert got == want, (trial, req, m.collective, got, want)
            checked += 1
    assert checked >= 40, (checked, refused)
    assert below > 0, "no partial move where the planner beats DTensor's collective"


def test_move_of_an_unchanged_dim_is_local():
    m = Move(0, parse("[Shard(0)]"), parse("[Shard(0)]"))
    assert m.collective == "local"
    assert per_dim.move_bytes(m, [8, 8], [8]) == [0] * 8
    assert np.sum(per_dim.move_bytes(Move(0, parse("[Replicate()]"), parse("[Shard(1)]")), [8, 8], [8])) == 0
