"""Seeded layout cases for the axe4j.layout globals, the same on both TVM lanes (docs/tvm-versions.md).

Every case is plain data (iters as ``(extent, stride, axis)``), built into the running lane's TIRx layouts, so that the
0.27 venv and the tvm_tirx venv ask Java the same questions. ``answers()`` is what each lane answers, as JSON (the
tvm_tirx tests compare theirs with what ``_ask_027.py`` prints in the 0.27 venv).
"""

from __future__ import annotations

import json
import random

from axe4j import _lane
from axe4j import layout as al

CASES_PER_OP = 40


def tile(spec):
    """A TileLayout from ``{"shard": [(e, s, axis)], "replica": [...], "offset": {axis: o}}``."""
    L = _lane.layout_module()

    def iters(items):
        return [L.Iter(e, s, L.Axis.get(a)) for e, s, a in items]

    offset = {L.Axis.get(a): o for a, o in spec.get("offset", {}).items()}
    return L.TileLayout.from_iters(iters(spec["shard"]), iters(spec.get("replica", [])), offset)


def build(spec):
    """``tile(spec)``, or a ComposeLayout where the spec has a ``swizzle`` (per_element, swizzle_len, atom_len)."""
    if "swizzle" not in spec:
        return tile(spec)
    L = _lane.layout_module()
    per_element, swizzle_len, atom_len = spec["swizzle"]
    return L.ComposeLayout(per_element, swizzle_len, atom_len, tile(spec), True)


def random_spec(rng: random.Random, iters=(1, 4), axes=("m",), offset=0.0, extents=(1, 2, 3, 4)):
    """Shard iters from the inside out, each stride compact (the product of the extents inside) or drawn."""
    shard = []
    compact = 1
    for _ in range(rng.randint(*iters)):
        extent = rng.choice(extents)
        axis = rng.choice(axes)
        stride = compact if rng.random() < 0.6 else rng.randint(1, 12)
        shard.insert(0, (extent, stride, axis))
        compact *= extent
    spec = {"shard": shard}
    if rng.random() < offset:
        spec["offset"] = {"m": rng.randint(1, 9)}
    return spec


def size(spec) -> int:
    n = 1
    for e, _, _ in spec["shard"]:
        n *= e
    return n


def grouping(rng: random.Random, spec, dims: int):
    """A shape the shard groups into: products of consecutive extents, ``dims`` of them (fewer iters: fewer dims)."""
    extents = [e for e, _, _ in spec["shard"]] or [1]
    dims = max(1, min(dims, len(extents)))
    cuts = sorted(rng.sample(range(1, len(extents)), dims - 1)) if dims > 1 else []
    bounds = [0] + cuts + [len(extents)]
    shape = []
    for a, b in zip(bounds, bounds[1:]):
        p = 1
        for e in extents[a:b]:
            p *= e
        shape.append(p)
    return shape


def text(layout):
    """Java's text of a layout answer, None for None."""
    return None if layout is None else al.to_text(layout)


def outcome(fn):
    """What a call answers, as JSON: its value, or ``"error"`` (messages may name lane-specific types)."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - the other lane must fail too; the message is not compared
        return "error"


def slice_cases(seed=4601):
    rng = random.Random(seed)
    cases = []
    for _ in range(CASES_PER_OP):
        spec = random_spec(rng, iters=(2, 4), axes=("m", "m", "laneid"), offset=0.3)
        if rng.random() < 0.2:
            spec = {"shard": [(8, 8, "m"), (8, 1, "m")], "swizzle": (0, rng.randint(1, 3), 3)}
        shape = grouping(rng, spec, 2)
        region = []
        for d in shape:
            begin = rng.randrange(d)
            region.append((begin, rng.randint(begin + 1, d)))
        cases.append({"spec": spec, "shape": shape, "region": region})
    return cases


def symbolic_slice_cases(seed=4602):
    """Dim 0 sliced ``[w*v, w*v + w)`` for a TIR variable v, dim 1 by constants."""
    rng = random.Random(seed)
    cases = []
    while len(cases) < CASES_PER_OP:
        spec = random_spec(rng, iters=(2, 4), offset=0.3)
        shape = grouping(rng, spec, 2)
        if len(shape) < 2 or shape[0] < 2:
            continue
        widths = [w for w in range(1, shape[0]) if shape[0] % w == 0]
        width = rng.choice(widths)
        begin = rng.randrange(shape[1])
        cases.append({"spec": spec, "shape": shape, "width": width, "cols": (begin, rng.randint(begin + 1, shape[1]))})
    return cases


def tile_cases(seed=4603):
    """Inner and outer layouts of the same rank and TIRx's own tiling of them."""
    rng = random.Random(seed)
    cases = []
    for _ in range(CASES_PER_OP):
        inner = random_spec(rng, iters=(1, 3))
        outer = random_spec(rng, iters=(1, 3))
        dims = rng.randint(1, 2)
        inner_shape = grouping(rng, inner, dims)
        outer_shape = grouping(rng, outer, len(inner_shape))
        if len(outer_shape) < len(inner_shape):
            inner_shape = [size(inner)]
        cases.append({"inner": inner, "outer": outer, "inner_shape": inner_shape, "outer_shape": outer_shape})
    return cases


def direct_sum_cases(seed=4604):
    rng = random.Random(seed)
    cases = []
    for _ in range(CASES_PER_OP):
        left = random_spec(rng, iters=(1, 3), axes=("m", "m", "laneid"))
        right = random_spec(rng, iters=(1, 3), axes=("m", "m", "laneid"))
        dims = rng.randint(1, 2)
        left_shape = grouping(rng, left, dims)
        right_shape = grouping(rng, right, len(left_shape))
        if len(right_shape) < len(left_shape):
            left_shape = [size(left)]
        cases.append({"left": left, "right": right, "left_shape": left_shape, "right_shape": right_shape})
    return cases


def group_many_cases(seed=4605):
    rng = random.Random(seed)
    cases = []
    for _ in range(CASES_PER_OP):
        spec = random_spec(rng, iters=(2, 5), axes=("m", "m", "laneid"))
        cases.append({"spec": spec, "shapes": [grouping(rng, spec, rng.randint(1, 3)) for _ in range(2)]})
    return cases


def storage_cases(seed=4606):
    rng = random.Random(seed)
    cases = []
    for _ in range(CASES_PER_OP):
        spec = random_spec(rng, iters=(2, 5), axes=("m", "laneid", "warpid"), offset=0.3)
        if rng.random() < 0.3:
            spec.setdefault("offset", {})["laneid"] = rng.randint(1, 7)
        cases.append({"spec": spec})
    return cases


def pack_cases(seed=4607):
    rng = random.Random(seed)
    cases = []
    for _ in range(CASES_PER_OP):
        spec = random_spec(rng, iters=(1, 3), axes=("m", "m", "laneid"), offset=0.3)
        cases.append({"spec": spec, "num": rng.choice([2, 4])})
    return cases


def span_cases(seed=4608):
    rng = random.Random(seed)
    return [{"spec": random_spec(rng, iters=(1, 4), axes=("m", "m", "laneid"), offset=0.4)}
            for _ in range(CASES_PER_OP)]


def symbolic_region(case, v):
    w = case["width"]
    return [(w * v, w * v + w), case["cols"]]


def answers() -> dict:
    """Every case's answer on this lane: layout texts, seps, spans; ``"error"`` where the call raises."""
    tirx = _lane.tvm().tirx
    out = {}
    out["slice"] = [outcome(lambda c=c: text(al.slice(build(c["spec"]), c["shape"], c["region"])))
                    for c in slice_cases()]
    v = tirx.Var("v", "int32")
    out["symbolic_slice"] = [outcome(lambda c=c: text(al.slice(build(c["spec"]), c["shape"], symbolic_region(c, v))))
                             for c in symbolic_slice_cases()]
    tiles = []
    for c in tile_cases():
        inner, outer = tile(c["inner"]), tile(c["outer"])
        tiled = inner.tile(outer, c["outer_shape"], c["inner_shape"])
        tiled_shape = [o * i for o, i in zip(c["outer_shape"], c["inner_shape"])]
        tiles.append([outcome(lambda: text(al.tile(inner, outer, c["outer_shape"], c["inner_shape"]))),
                      outcome(lambda: text(al.tile_of(inner, tiled, tiled_shape, c["inner_shape"], "inner"))),
                      outcome(lambda: text(al.tile_of(outer, tiled, tiled_shape, c["outer_shape"], "outer"))),
                      # a layout that is no tiling of the part: None, or a factor as good as any
                      outcome(lambda: text(al.tile_of(outer, inner.tile(inner, c["inner_shape"], c["inner_shape"]),
                                                      [i * i for i in c["inner_shape"]], c["outer_shape"],
                                                      "outer")))])
    out["tile_of"] = tiles
    out["direct_sum"] = [outcome(lambda c=c: text(al.direct_sum(tile(c["right"]), tile(c["left"]), c["left_shape"],
                                                                c["right_shape"])))
                         for c in direct_sum_cases()]

    def grouped(c):
        split, seps = al.group_many(tile(c["spec"]), c["shapes"])
        return [text(split), seps]

    out["group_many"] = [outcome(lambda c=c: grouped(c)) for c in group_many_cases()]
    out["storage"] = [outcome(lambda c=c: text(al.storage(tile(c["spec"])))) for c in storage_cases()]
    out["pack"] = [[outcome(lambda c=c: text(al.unpack(tile(c["spec"]), c["num"]))),
                    outcome(lambda c=c: text(al.pack(tile(c["spec"]), c["num"]))),
                    outcome(lambda c=c: text(al.pack(al.unpack(tile(c["spec"]), c["num"]), c["num"])))]
                   for c in pack_cases()]
    out["span"] = [[outcome(lambda c=c: int(al.span(tile(c["spec"])))),
                    outcome(lambda c=c: int(al.span(tile(c["spec"]), "m")))] for c in span_cases()]
    return out

