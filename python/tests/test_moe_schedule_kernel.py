"""The tile schedule as a CUDA kernel (axe4j.moe.schedule_kernel, sm_90a) in the CPU interpreter of lowered CUDA
kernels, against the host schedule (axe4j.moe.schedule: ``schedule`` + ``tile_arrays``), every array compared
exactly (row_weight bit for bit), on routings: random top-8 and top-1 over 128 experts at 1, 17, 63 and 200 tokens,
all tokens on one expert, 120 of 128 experts empty, repeated experts in a token, 16 experts (more groups than
pairs), 60 experts (threads left idle) and 1100 experts (more (group, expert) counts than threads); out-of-range
expert ids (counted in ``error``, their pairs left out); the layer with the device schedule against numpy and the
host schedule (test_moe_cuda.py runs the whole layer, with the device schedule, at 1, 64 and 256 tokens)."""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest

import axe4j
from axe4j.moe import MoeShape, moe_reference, schedule
from axe4j.moe import cuda
from axe4j.moe.schedule import TileSchedule, tile_arrays
from axe4j.moe.schedule_kernel import schedule_kernel

pytestmark = pytest.mark.strict

ROWS = 64
ARRAYS = ("tile_expert", "tile_start", "tile_rows", "slot_token", "slot_pair", "row_weight")
_built = {}


def device_schedule(ids, weights, experts, rows=ROWS):
    """{array name: the kernel's result} and error[0]; every output starts at -1, a value no schedule holds."""
    from axe4j.cuda import interp as cuda_interp

    tokens, top_k = ids.shape
    max_tiles = TileSchedule.max_tiles(tokens * top_k, experts, rows)
    key = (tokens, top_k, experts, rows)
    if key not in _built:
        axe4j.use_pip_nvcc()
        _built[key] = axe4j.compile(schedule_kernel(tokens, top_k, experts, rows, max_tiles), cuda.target())
    slots = tokens * top_k + rows
    sizes = {"tile_expert": max_tiles, "tile_start": max_tiles, "tile_rows": max_tiles, "slot_token": slots,
             "slot_pair": slots, "row_weight": max_tiles * rows}
    out = {name: np.full(n, -1, np.float32 if name == "row_weight" else np.int32) for name, n in sizes.items()}
    error = np.full(1, -1, np.int32)
    cuda_interp.run(_built[key], np.ascontiguousarray(ids, np.int32), np.ascontiguousarray(weights, np.float32),
                    *(out[name] for name in ARRAYS), error)
    return out, int(error[0])


def host_schedule(ids, weights, experts, rows=ROWS):
    tokens, top_k = ids.shape
    plan = schedule(ids, weights, experts, rows)
    tiles = tile_arrays(plan, TileSchedule.max_tiles(tokens * top_k, experts, rows))
    return dict(tiles, slot_token=plan.slot_token, slot_pair=plan.slot_pair)


def assert_same(got, want):
    """Every array, exactly: same dtype and shape, int arrays equal, float arrays equal in their bits."""
    for name in ARRAYS:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape, name
        np.testing.assert_array_equal(got[name].view(np.int32), want[name].view(np.int32), err_msg=name)


def distinct(rng, tokens, top_k, experts, choices=None):
    """top_k distinct experts per token, from ``choices`` (all experts by default)."""
    choices = np.arange(experts) if choices is None else np.asarray(choices)
    return np.stack([rng.choice(choices, top_k, replace=False) for _ in range(tokens)]).astype(np.int32)


def routings():
    """(name, ids, weights, experts): the routings the kernel must schedule as the host does."""
    rng = np.random.default_rng(20261128)
    cases = []
    for tokens in (1, 17, 63, 200):
        cases.append((f"random top-8 of 128, {tokens} tokens", distinct(rng, tokens, 8, 128), 128))
    for tokens in (1, 63):
        cases.append((f"random top-1 of 128, {tokens} tokens", distinct(rng, tokens, 1, 128), 128))
    cases.append(("200 tokens all on expert 127 (top-1)", np.full((200, 1), 127, np.int32), 128))
    cases.append(("200 tokens all on expert 0 (top-1)", np.zeros((200, 1), np.int32), 128))
    cases.append(("63 tokens on the same 8 experts (top-8, ragged tiles)",
                  distinct(rng, 63, 8, 128, [5, 6, 7, 8, 9, 10, 11, 12]), 128))
    cases.append(("200 tokens, 120 of 128 experts empty (top-8)",
                  distinct(rng, 200, 8, 128, [3, 17, 40, 64, 90, 101, 126, 127]), 128))
    cases.append(("17 tokens, 120 of 128 experts empty (top-2)",
                  distinct(rng, 17, 2, 128, [0, 1, 2, 60, 61, 125, 126, 127]), 128))
    cases.append(("repeated experts in a token (top-4 of 6)", rng.integers(0, 6, (63, 4)).astype(np.int32), 6))
    cases.append(("16 experts, 1 token (top-4)", distinct(rng, 1, 4, 16), 16))
    cases.append(("16 experts, 200 tokens (top-4)", distinct(rng, 200, 4, 16), 16))
    cases.append(("60 experts, 17 tokens (top-2)", distinct(rng, 17, 2, 60), 60))
    cases.append(("1100 experts, 17 tokens (top-8)", distinct(rng, 17, 8, 1100), 1100))
    return [(name, ids, rng.random(ids.shape).astype(np.float32), experts) for name, ids, experts in cases]


ROUTINGS = routings()


@pytest.mark.parametrize("case", ROUTINGS, ids=[case[0] for case in ROUTINGS])
def test_the_device_schedule_is_the_host_schedule(bridge, case):
    _, ids, weights, experts = case
    got, error = device_schedule(ids, weights, experts)
    assert error == 0
    assert_same(got, host_schedule(ids, weights, experts))


def test_a_wrong_schedule_is_caught():
    """The comparison sees a single slot, tile or weight bit out of place."""
    ids, weights, experts = ROUTINGS[2][1], ROUTINGS[2][2], ROUTINGS[2][3]
    want = host_schedule(ids, weights, experts)
    for name in ARRAYS:
        bad = {k: v.copy() for k, v in want.items()}
        bad[name].view(np.int32)[0] ^= 1
        with pytest.raises(AssertionError, match=name):
            assert_same(bad, want)


def test_out_of_range_expert_ids_are_counted_and_their_pairs_left_out(bridge):
    """ids -1, 128 and 1000 in a routing over 128 experts: error[0] = 5 such pairs; the schedule is the stable
    sort of the other pairs (their pair numbers unchanged), as the host schedule of those pairs alone makes it."""
    rng = np.random.default_rng(7)
    ids = distinct(rng, 17, 8, 128)
    weights = rng.random(ids.shape).astype(np.float32)
    ids[0, 0], ids[3, 7], ids[16, 2], ids[16, 3], ids[9, 4] = -1, 128, 1000, -5, 128
    got, error = device_schedule(ids, weights, 128)
    assert error == 5
    valid = np.flatnonzero((ids.reshape(-1) >= 0) & (ids.reshape(-1) < 128))
    plan = schedule(ids.reshape(-1)[valid, None], weights.reshape(-1)[valid, None], 128, ROWS)
    pairs, pad = valid.size, ids.size - valid.size + ROWS
    slot_pair = np.concatenate([valid[plan.slot_pair[:pairs]], np.zeros(pad, np.int64)]).astype(np.int32)
    want = dict(tile_arrays(plan, TileSchedule.max_tiles(ids.size, 128, ROWS)), slot_pair=slot_pair,
                slot_token=slot_pair // 8)
    assert_same(got, want)


def test_the_kernel_refuses_a_max_tiles_too_small_and_non_positive_sizes():
    with pytest.raises(ValueError, match=r"max_tiles \(3\) must be at least 4"):
        schedule_kernel(4, 1, 4, 64, 3)
    with pytest.raises(ValueError, match=r"top_k \(0\) must be a positive int"):
        schedule_kernel(4, 0, 4, 64, 4)


# ---- the layer ------------------------------------------------------------------------------------------------------

SHAPE = MoeShape(experts=16, top_k=4, hidden=256, intermediate=128)
E, H, I = SHAPE.experts, SHAPE.hidden, SHAPE.intermediate


def _weights(seed=20261128):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((E, H)).astype("float32"),
            (rng.standard_normal((E, 2 * I, H)) / np.sqrt(H)).astype("float16"),
            (rng.standard_normal((E, H, I)) / np.sqrt(I)).astype("float16"))


WR, W1, W2 = _weights()


def test_the_layer_schedules_on_the_device_and_matches_numpy(bridge):
    """3 tokens (two on the same experts), the three-kernel form: ``schedule`` launches first, its outputs are the
    very arrays the expert kernels read and equal the host schedule; the output matches numpy. An expert id out of
    range is raised after the run, naming ids."""
    moe = cuda.MoeLayer(SHAPE, 3, WR, W1, W2, bn1=64, bn2=128)
    assert moe.schedule == "device" and "schedule" in moe._exe
    x = np.random.default_rng(3).standard_normal((3, H)).astype("float16")
    _, ids, w = moe.route(x)
    ids[1, :] = ids[0, :]
    calls = moe.calls(x, ids, w)
    assert [name for name, _ in calls] == ["schedule", "gemm1", "gemm2", "combine"]
    made, gemm1, gemm2 = calls[0][1], calls[1][1], calls[2][1]
    assert all(a is b for a, b in zip(made[2:5], gemm1[2:5])) and made[3] is gemm2[3]   # tile_expert/start/rows
    assert gemm1[5] is made[5] and gemm2[5] is made[6] and gemm1[6] is made[7]          # slots, row_weight
    moe.launch(calls)
    assert_same({name: made[2 + n] for n, name in enumerate(ARRAYS)}, host_schedule(ids, w, E))
    want = moe_reference(x.astype("float32"), W1.astype("float32"), W2.astype("float32"), ids, w)
    np.testing.assert_allclose(calls[-1][1][-1].astype("float32"), want, rtol=1e-2, atol=1e-2)
    bad = np.tile(np.arange(4, dtype=np.int32), (3, 1))      # 4 tiles: a short run
    bad[2, 1] = E
    with pytest.raises(ValueError, match=r"ids has 1 expert ids outside \[0, 16\); the schedule kernel left"):
        moe.experts(x, bad, w)


def test_the_layer_names_bad_routing_arguments(bridge):
    with pytest.raises(ValueError, match="schedule 'gpu' must be one of"):
        cuda.MoeLayer(SHAPE, 4, WR, W1, W2, schedule="gpu")
    moe = cuda.MoeLayer(SHAPE, 1, WR, W1, W2, bn1=64, bn2=128, schedule="host")
    assert "schedule" not in moe._exe
    x = np.zeros((1, H), "float16")
    ids, w = np.zeros((1, 4), np.int32), np.ones((1, 4), np.float32)
    with pytest.raises(ValueError, match=r"ids has shape \(2, 4\), expected \(1, 4\)"):
        moe.calls(x, np.zeros((2, 4), np.int32), w)
    with pytest.raises(ValueError, match=r"weights has shape \(1, 3\), expected \(1, 4\)"):
        moe.calls(x, ids, np.ones((1, 3)))
    with pytest.raises(ValueError, match="ids has dtype float32, expected an integer type"):
        moe.calls(x, ids.astype(np.float32), w)
    with pytest.raises(ValueError, match="weights has dtype int32, expected a floating type"):
        moe.calls(x, ids, ids)
    with pytest.raises(ValueError, match="ids has values that do not fit int32"):
        moe.calls(x, ids.astype(np.int64) + 2 ** 32, w)
    with pytest.raises(ValueError, match=r"schedule: expert ids must lie in \[0, 16\)"):   # the host: before a run
        moe.experts(x, ids - 1, w)
    ids[0] = [3, 1, 4, 0]
    given_tensors = moe.calls(x, tvm.runtime.tensor(ids), tvm.runtime.tensor(w))[0][1]   # read back for the host
    for got, want in zip(given_tensors[2:7], moe.calls(x, ids, w)[0][1][2:7]):
        np.testing.assert_array_equal(got, want)
