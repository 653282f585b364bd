"""The kernel-writing helpers: ``axe4j.cuda.kernels.pipeline.PipelineState`` (slot index and mbarrier phase of a ring,
checked against a brute-force walk of the ring) and ``axe4j.cuda.kernels.tiles`` (tiles by coordinate, checked against
numpy's tiling of the same array)."""

import itertools

import numpy as np
import pytest

from axe4j.cuda.kernels.pipeline import PipelineState
from axe4j.cuda.kernels.tiles import local_tile, tile_bounds


def _walk(stages, steps, start_phase):
    """(slot, phase) of each iteration, counted by hand: the slot moves on by one, and the phase flips when the
    slot wraps back to 0."""
    slot, phase, out = 0, start_phase, []
    for _ in range(steps):
        out.append((slot, phase))
        slot += 1
        if slot == stages:
            slot, phase = 0, phase ^ 1
    return out


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 7, 8])
@pytest.mark.parametrize("start_phase", [0, 1])
def test_index_and_phase_follow_the_ring(stages, start_phase):
    steps = 5 * stages + 3
    got = [(PipelineState(stages, it, start_phase).index(), PipelineState(stages, it, start_phase).phase())
           for it in range(steps)]
    assert got == _walk(stages, steps, start_phase)


@pytest.mark.parametrize("stages", [1, 2, 3, 6])
def test_advance_moves_along_the_same_ring(stages):
    walk = _walk(stages, 40, 1)
    for start, n in itertools.product(range(12), range(-min(3, 12), 9)):
        if start + n < 0:
            continue
        state = PipelineState(stages, start, start_phase=1).advance(n)
        assert state.count == start + n and state.stages == stages and state.start_phase == 1
        assert (state.index(), state.phase()) == walk[start + n]
    assert PipelineState(stages, 5).advance().count == 6


def test_index_and_phase_are_the_hand_written_expressions():
    from tvm import tirx

    it = tirx.Var("it", "int32")
    state = PipelineState(6, it)
    assert str(state.index()) == str(it % 6)
    assert str(state.phase()) == str((it // 6) % 2)
    assert str(PipelineState(6, it, start_phase=1).phase()) == str(((it // 6) + 1) % 2)
    assert str(state.advance(-1).index()) == str((it - 1) % 6)


def test_bad_states_are_refused():
    with pytest.raises(ValueError, match="stages=0"):
        PipelineState(0)
    with pytest.raises(ValueError, match="start_phase=2"):
        PipelineState(2, 0, start_phase=2)


@pytest.mark.parametrize("shape,tile", [((12, 20), (3, 5)), ((8, 8), (8, 2)), ((6, 9, 4), (2, 3, 4))])
def test_local_tile_is_numpy_tiling(shape, tile):
    array = np.arange(np.prod(shape)).reshape(shape)
    grid = [s // t for s, t in zip(shape, tile)]
    # numpy: split every dim into (tiles, tile) and pick one tile per dim
    split = array.reshape([x for g, t in zip(grid, tile) for x in (g, t)])
    for coord in itertools.product(*map(range, grid)):
        want = split[tuple(x for c in coord for x in (c, slice(None)))]
        np.testing.assert_array_equal(local_tile(array, tile, coord), want)
        bounds = tile_bounds(tile, coord)
        assert bounds == [(c * t, c * t + t) for c, t in zip(coord, tile)]


def test_a_sub_box_of_a_tile_and_a_whole_dim():
    array = np.arange(16 * 8).reshape(16, 8)
    # rows tm * 8 + h * 4 .. + 4 of tile (tm, kt) of 8 x 4: the half of a tile one consumer loads
    for tm, kt, h in itertools.product(range(2), range(2), range(2)):
        got = local_tile(array, (8, 4), (tm, kt), (h * 4, None), (4, None))
        np.testing.assert_array_equal(got, array[tm * 8 + h * 4:tm * 8 + h * 4 + 4, kt * 4:kt * 4 + 4])
    np.testing.assert_array_equal(local_tile(array, (4, None), (3, None)), array[12:16, :])
    assert tile_bounds((4, None), (3, None)) == [(12, 16), None]
    with pytest.raises(ValueError, match="one entry per dim"):
        tile_bounds((4, 4), (1,))
