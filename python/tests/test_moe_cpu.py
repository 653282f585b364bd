"""The fused MoE layer on the CPU (axe4j.moe.cpu) against numpy, at small sizes: 16 experts, top-4, hidden 256,
intermediate 128 (two GEMM1 -> GEMM2 chunks of 64), tiles of at most 16 rows (so experts span several tiles, the
last one ragged), 1 to 512 tokens. Routings: the layer's own router, and random ones with empty experts, every
token on the same experts, one expert taking a single pair."""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest

import axe4j
from axe4j.moe import MoeShape, moe_reference, route_reference, schedule
from axe4j.moe import cpu

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

SHAPE = MoeShape(experts=16, top_k=4, hidden=256, intermediate=128)
ROWS, CHUNK = 16, 64
RNG = np.random.default_rng(20261126)


def weights(shape, rng):
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    return (rng.standard_normal((E, H)).astype("float32"),
            (rng.standard_normal((E, 2 * I, H)) / np.sqrt(H)).astype("float32"),
            (rng.standard_normal((E, H, I)) / np.sqrt(I)).astype("float32"))


WR, W1, W2 = weights(SHAPE, RNG)
_layers = {}


def layer(tokens):
    if tokens not in _layers:
        axe4j.install()
        _layers[tokens] = cpu.MoeLayer(SHAPE, tokens, WR, W1, W2, target="llvm", rows=ROWS, chunk=CHUNK)
    return _layers[tokens]


def check(out, x, ids, w):
    np.testing.assert_allclose(out, moe_reference(x, W1, W2, ids, w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tokens", [1, 64, 512])
def test_the_layer_routes_and_matches_numpy(bridge, tokens):
    x = RNG.standard_normal((tokens, SHAPE.hidden)).astype("float32")
    moe = layer(tokens)
    out = moe(x)
    logits, ids, w = moe.route(x)
    np.testing.assert_allclose(logits, x @ WR.T, rtol=1e-4, atol=1e-3)
    want_ids, want_w = route_reference(logits, SHAPE.top_k)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(w, want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-5)
    check(out, x, ids, w)


def random_routing(tokens, rng, experts):
    """top_k distinct experts per token drawn from ``experts`` (the others stay empty), random weights."""
    ids = np.stack([rng.choice(experts, SHAPE.top_k, replace=False) for _ in range(tokens)]).astype("int32")
    return ids, rng.random((tokens, SHAPE.top_k)).astype("float32")


@pytest.mark.parametrize("seed", range(6))
def test_random_routings_with_empty_and_crowded_experts(bridge, seed):
    rng = np.random.default_rng(seed)
    tokens = [64, 512][seed % 2]
    used = rng.choice(SHAPE.experts, rng.integers(SHAPE.top_k, SHAPE.experts + 1), replace=False)
    x = rng.standard_normal((tokens, SHAPE.hidden)).astype("float32")
    ids, w = random_routing(tokens, rng, used)
    plan = schedule(ids, w, SHAPE.experts, ROWS)
    assert plan.tiles == sum(-(-int((ids == e).sum()) // ROWS) for e in range(SHAPE.experts))
    check(layer(tokens).experts(x, ids, w), x, ids, w)


def test_every_token_on_the_same_experts_and_a_single_token(bridge):
    x = RNG.standard_normal((512, SHAPE.hidden)).astype("float32")
    ids = np.tile(np.array([3, 0, 15, 7], "int32"), (512, 1))
    w = RNG.random((512, SHAPE.top_k)).astype("float32")
    check(layer(512).experts(x, ids, w), x, ids, w)   # 4 experts of 512 rows: 32 full tiles each
    ids[5] = [1, 2, 4, 5]                             # experts 1, 2, 4 and 5 hold one pair each
    check(layer(512).experts(x, ids, w), x, ids, w)
    one = x[:1]
    check(layer(1).experts(one, np.array([[9, 2, 11, 4]], "int32"), w[:1]), one, np.array([[9, 2, 11, 4]]), w[:1])


def test_schedule_covers_each_pair_once_in_expert_order():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        tokens, rows = int(rng.integers(1, 60)), int(rng.integers(1, 9))
        ids, w = random_routing(tokens, rng, rng.choice(SHAPE.experts, SHAPE.top_k + 2, replace=False))
        plan = schedule(ids, w, SHAPE.experts, rows)
        pairs = tokens * SHAPE.top_k
        covered = np.concatenate([np.arange(s, s + n) for s, n in zip(plan.tile_start, plan.tile_rows)])
        np.testing.assert_array_equal(covered, np.arange(pairs))            # tiles cover the slots in order
        np.testing.assert_array_equal(np.sort(plan.slot_pair[:pairs]), np.arange(pairs))
        np.testing.assert_array_equal(plan.slot_token[:pairs], plan.slot_pair[:pairs] // SHAPE.top_k)
        np.testing.assert_array_equal(plan.slot_weight[:pairs], w.reshape(-1)[plan.slot_pair[:pairs]])
        for s, n, e in zip(plan.tile_start, plan.tile_rows, plan.tile_expert):
            assert 1 <= n <= rows and (ids.reshape(-1)[plan.slot_pair[s:s + n]] == e).all()
        assert plan.tiles <= plan.max_tiles(pairs, SHAPE.experts, rows)
        assert plan.slot_pair.size == pairs + rows and (plan.slot_weight[pairs:] == 0).all()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="top_k"):
        MoeShape(4, 5, 8, 8)
    with pytest.raises(ValueError, match=r"expert ids must lie in \[0, 16\)"):
        schedule(np.array([[16, 0, 1, 2]]), np.ones((1, 4)), 16, 4)
    with pytest.raises(ValueError, match="w2 has shape"):
        cpu.MoeLayer(SHAPE, 4, WR, W1, W1, target="llvm")
    with pytest.raises(ValueError, match="x has shape"):
        layer(1).experts(np.zeros((2, SHAPE.hidden), "float32"), np.zeros((2, 4), "int32"), np.ones((2, 4)))


def test_the_numpy_baseline_equals_the_reference():
    from axe4j.moe import NumpyLayer

    x = RNG.standard_normal((40, SHAPE.hidden)).astype("float32")
    baseline = NumpyLayer(WR, W1, W2, SHAPE.top_k)
    ids, w = baseline.route(x)
    np.testing.assert_array_equal((ids, w)[0], route_reference(x @ WR.T, SHAPE.top_k)[0])
    np.testing.assert_allclose(baseline(x), moe_reference(x, W1, W2, ids, w), rtol=1e-5, atol=1e-5)


def test_default_tiles_run_their_gemms_serially_inside_the_parallel_tile_loop(bridge):
    """128-row tiles: each tile GEMM is big enough for the blocked rule's own parallel u blocks, which TVM cannot
    nest in the tile loop; the kernel's gemms say parallel=False."""
    moe = cpu.MoeLayer(SHAPE, 40, WR, W1, W2, target="llvm")
    x = RNG.standard_normal((40, SHAPE.hidden)).astype("float32")
    ids, w = random_routing(40, RNG, np.arange(5))   # 32 rows each: one ragged tile per expert
    check(moe.experts(x, ids, w), x, ids, w)
