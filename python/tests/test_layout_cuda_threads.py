"""CUDA thread axes under a ``cuda`` target (tx = 32 warpid + laneid, ...), compared by map with TIRx.

Under ``with tvm.target.Target("cuda")`` TIRx's canonicalize writes every thread axis on the axis of the layout's
scope pair; axe4j's ``canonicalize`` and ``is_tile_*`` globals read the same current target. The reference is the
identification itself, applied to TIRx's ``apply`` of the original layout.
"""

import random

import tvm
from tvm.tirx.layout import Axis, Iter, R, S, TileLayout

import axe4j

UNIT = {"laneid": 1, "tid_in_wg": 1, "tx": 1, "wid_in_wg": 32, "warpid": 32, "wgid": 128}
OUTER = {"laneid": 1, "tid_in_wg": 2, "tx": 3, "wid_in_wg": 2, "warpid": 3, "wgid": 3}  # warp, warpgroup, CTA
AXIS_OF = {(1, 3): "tx", (1, 2): "tid_in_wg", (1, 1): "laneid", (32, 3): "warpid", (32, 2): "wid_in_wg",
           (128, 3): "wgid"}
CHAINS = [["laneid", "warpid"], ["laneid", "wid_in_wg"], ["laneid", "wid_in_wg", "wgid"], ["tid_in_wg", "wgid"],
          ["wid_in_wg", "wgid"], ["laneid"], ["warpid"]]
WITHIN = {"laneid": 32, "tid_in_wg": 128, "wid_in_wg": 4, "warpid": 8, "wgid": 2}


def random_threads(rng: random.Random) -> TileLayout:
    chain = rng.choice(CHAINS)
    shard = []
    for name in chain:
        stride = 1 << rng.randint(0, 2)
        extent = max(1, WITHIN[name] // stride // (1 << rng.randint(0, 1)))
        shard.insert(rng.randint(0, len(shard)), Iter(extent, stride, getattr(Axis, name)))
    if rng.random() < 0.5:
        shard.insert(rng.randint(0, len(shard)), Iter(rng.randint(1, 3), rng.randint(1, 4), Axis.m))
    replica = [Iter(2, 1, getattr(Axis, rng.choice(chain)))] if rng.random() < 0.3 else []
    offset = {getattr(Axis, chain[0]): rng.randint(1, 2)} if rng.random() < 0.3 else {}
    return TileLayout.from_iters(shard, replica, offset)


def point(layout, x: int) -> dict:
    return {str(k): int(v) for k, v in layout.apply(x).items() if int(v) != 0}


def identified(p: dict, names: list) -> dict:
    """Every thread coordinate summed onto the axis of the layout's scope pair, in units of its inner unit."""
    unit = min(UNIT[n] for n in names)
    target = AXIS_OF[(unit, max(OUTER[n] for n in names))]
    out = {}
    for axis, v in p.items():
        key, value = (target, v * UNIT[axis] // unit) if axis in UNIT else (axis, v)
        out[key] = out.get(key, 0) + value
    return {k: v for k, v in out.items() if v != 0}


def thread_names(layout) -> list:
    """The thread axes that set the scope pair: extent-1 shard iters do not count (TIRx drops them first)."""
    names = {it.axis.name for it in list(layout.shard) + list(layout.replica) if int(it.extent) > 1}
    names |= {a.name for a in layout.offset}
    return sorted(n for n in names if n in UNIT) or ["laneid"]  # none: nothing to identify


def test_canonicalize_under_cuda_identifies_thread_axes(bridge):
    rng = random.Random(36)
    agree = raised = 0
    tirx_wrong = []
    with tvm.target.Target("cuda"):
        for _ in range(60):
            layout = random_threads(rng)
            size = int(layout.size())
            expected = [identified(point(layout, x), thread_names(layout)) for x in range(size)]
            ours = axe4j.layout.canonicalize(layout)
            assert [point(ours, x) for x in range(size)] == expected, (layout, ours)
            try:
                theirs = layout.canonicalize()
            except tvm.error.InternalError as e:
                # TIRx drops extent-1 iters before reading the scopes: a chain missing its middle axis is refused.
                assert "disconnected scope chain" in str(e) and any(int(it.extent) == 1 for it in layout.shard)
                raised += 1
                continue
            if [point(theirs, x) for x in range(size)] == expected:
                agree += 1
            else:
                tirx_wrong.append((layout, theirs, ours))
    # TIRx writes wgid (in a warp pair) on wgid with stride 4 and keeps one of two fused offsets (docs/algebra.md).
    assert agree >= 30 and agree + raised + len(tirx_wrong) == 60, (agree, raised, tirx_wrong[:3])
    for layout, theirs, _ in tirx_wrong:
        names = thread_names(layout)
        assert ("wgid" in names and "tid_in_wg" not in names and "laneid" not in names) or len(layout.offset) > 0 \
            or any(it.axis.name != names[0] for it in layout.replica), (layout, theirs)


def test_without_a_target_thread_axes_stay_apart(bridge):
    layout = TileLayout(S[(2, 32):(1 @ Axis.warpid, 1 @ Axis.laneid)])
    assert str(axe4j.layout.to_text(axe4j.layout.canonicalize(layout))) == "S[(2,32):(1@warpid,1@laneid)]"
    with tvm.target.Target("cuda"):
        assert axe4j.layout.to_text(axe4j.layout.canonicalize(layout)) == "S[64:1@tx]"
    with tvm.target.Target("llvm"):
        assert axe4j.layout.to_text(axe4j.layout.canonicalize(layout)) == "S[(2,32):(1@warpid,1@laneid)]"


def test_is_tile_agrees_with_tirx_on_warp_atoms_tiled_into_a_cta(bridge):
    rng = random.Random(37)
    atoms = [TileLayout(S[32:1 @ Axis.laneid]), TileLayout(S[(8, 4):(4 @ Axis.laneid, 1 @ Axis.laneid)]),
             TileLayout(S[(8, 4, 2):(4 @ Axis.laneid, 1 @ Axis.laneid, 1 @ Axis.m)])]
    checked = 0
    with tvm.target.Target("cuda"):
        for _ in range(12):
            atom = rng.choice(atoms)
            atom_shape = [8, 4] if len(atom.shard) == 2 else [32] if len(atom.shard) == 1 else [8, 8]
            warps = rng.choice([2, 4])
            outer_shape = [warps] + [1] * (len(atom_shape) - 1)
            outer = TileLayout.from_iters([Iter(warps, 1, Axis.warpid)] + [Iter(1, 1, Axis.m)] * (len(atom_shape) - 1),
                                          [], {})
            tiled_shape = [o * i for o, i in zip(outer_shape, atom_shape)]
            tiled = atom.tile(outer, outer_shape, atom_shape).canonicalize()  # on tx
            assert "tx" in str(tiled), tiled
            ours = axe4j.layout.is_tile_inner(atom, tiled, tiled_shape, atom_shape)
            theirs = atom.is_tile_inner(tiled, tiled_shape, atom_shape)
            assert ours is not None and theirs is not None, (atom, tiled, ours, theirs)
            assert [point(ours, x) for x in range(warps)] == [point(theirs, x) for x in range(warps)]
            ours_inner = axe4j.layout.is_tile_outer(outer, tiled, tiled_shape, outer_shape)
            assert ours_inner is not None, (outer, tiled)
            size = int(atom.size())
            assert [point(ours_inner, x) for x in range(size)] == [point(atom, x) for x in range(size)]
            checked += 1
    assert checked == 12


def test_where_tirx_fuses_wrongly(bridge):
    """TIRx's wgid fuser (warp pair) writes wgid, not warpid; fused offsets overwrite instead of adding up."""
    with tvm.target.Target("cuda"):
        warps = TileLayout(S[(2, 4):(1 @ Axis.wgid, 1 @ Axis.wid_in_wg)])
        assert axe4j.layout.to_text(axe4j.layout.canonicalize(warps)) == "S[8:1@warpid]"
        assert point(warps.canonicalize(), 4) == {"wgid": 4}  # warpgroup 1, warp 0 is warp 4, not warpgroup 4
        lanes = TileLayout(S[32:1 @ Axis.laneid] + 1 @ Axis.warpid + 3 @ Axis.laneid)
        assert axe4j.layout.to_text(axe4j.layout.canonicalize(lanes)) == "S[32:1@tx] + 35@tx"
        assert point(lanes.canonicalize(), 0) == {"tx": 3}  # warp 1, lane 3 is thread 35
