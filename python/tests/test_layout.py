"""axe4j.layout from Python: Java's algebra on TIRx layout objects, checked against TIRx and enumeration."""

import itertools
import random

import pytest
import tvm
from tvm.tirx.layout import Axis, ComposeLayout, Iter, R, S, TileLayout, laneid

import axe4j

AXES = ["m", "m", "laneid", "warpid"]


def random_layout(rng: random.Random) -> TileLayout:
    """Up to 3 shard iters over m/laneid/warpid, sometimes a replica and an offset."""
    shard = []
    compact = 1
    for _ in range(rng.randint(1, 3)):
        extent = rng.choice([1, 2, 3, 4, 4, 5, 8])
        stride = rng.choice([compact, compact, rng.randint(0, 9), 1 << rng.randint(0, 4)])
        shard.insert(0, Iter(extent, stride, getattr(Axis, rng.choice(AXES))))
        compact *= extent
    replica = [Iter(rng.randint(2, 3), rng.randint(1, 8), Axis.warpid)] if rng.random() < 0.2 else []
    offset = {Axis.m: rng.randint(0, 20)} if rng.random() < 0.3 else {}
    return TileLayout.from_iters(shard, replica, offset)


def base_points(layout, size: int) -> list:
    """TIRx's apply on every flat index: the base point D(x) + O as {axis: int}, zeros dropped."""
    out = []
    for x in range(size):
        point = {str(k): int(v) for k, v in layout.apply(x).items()}
        out.append({k: v for k, v in point.items() if v != 0})
    return out


def random_box(rng: random.Random, shape: list) -> list:
    box = []
    for dim in shape:
        begin = rng.randrange(dim)
        box.append((begin, rng.randint(begin + 1, dim)))
    return box


def box_points(shape: list, box: list) -> list:
    """Flat indices of the box's points in the box's own row-major order."""
    out = []
    for coord in itertools.product(*[range(b, e) for b, e in box]):
        flat = 0
        for c, dim in zip(coord, shape):
            flat = flat * dim + c
        out.append(flat)
    return out


def expected_slice(layout, shape, box) -> list:
    """What a slice must map y to: the original's base point at the y-th point of the box."""
    whole = base_points(layout, int(layout.size()))
    return [whole[x] for x in box_points(shape, box)]


def replica_set(layout) -> set:
    return {(str(it.axis.name), int(it.extent), int(it.stride)) for it in layout.replica}


def test_slice_matches_tirx_wherever_tirx_is_right(bridge):
    """On 400 seeded layouts and boxes: where TIRx's slice is right, axe4j's induces the same map."""
    rng = random.Random(20261122)
    counts = {"both right": 0, "tirx wrong": 0, "tirx none": 0, "axe4j none": 0}
    for _ in range(400):
        layout = random_layout(rng)
        size = int(layout.size())
        shape = [size] if rng.random() < 0.4 or size < 4 else _factor(rng, size)
        box = random_box(rng, shape)
        expected = expected_slice(layout, shape, box)
        try:
            theirs = layout.slice(shape, box)
        except tvm.error.InternalError:  # TIRx raises where the layout cannot be grouped by the shape
            theirs = None
        ours = axe4j.layout.slice(layout, shape, box)
        if ours is None:
            counts["axe4j none"] += 1
        else:
            assert isinstance(ours, TileLayout)
            assert base_points(ours, int(ours.size())) == expected, (layout, shape, box, ours)
            assert replica_set(ours) == replica_set(layout)
        if theirs is None:
            counts["tirx none"] += 1
            continue
        if base_points(theirs, int(theirs.size())) != expected:
            counts["tirx wrong"] += 1
            continue
        assert ours is not None, f"TIRx slices {layout} by {box} of {shape} correctly, axe4j does not"
        assert axe4j.layout.equivalent(ours, theirs), (layout, box, ours, theirs)
        counts["both right"] += 1
    print("slice vs TIRx:", counts)
    assert counts["both right"] > 100


def _factor(rng: random.Random, size: int) -> list:
    divisors = [d for d in range(2, size) if size % d == 0]
    if not divisors:
        return [size]
    d = rng.choice(divisors)
    return [d, size // d]


def test_the_tirx_slice_defect_is_not_copied(bridge):
    """TIRx answers S[(2,2):(80,10)] + 321 for elements 30..33 of S[(4,4,4):(1,100,10)]; 32 is at 102."""
    layout = TileLayout(S[(4, 4, 4):(1, 100, 10)])
    ours = axe4j.layout.slice(layout, [64], [(30, 34)])
    assert base_points(ours, 4) == expected_slice(layout, [64], [(30, 34)])
    assert base_points(layout.slice([64], [(30, 34)]), 4) != expected_slice(layout, [64], [(30, 34)])


def test_every_global_answers_on_tirx_objects(bridge):
    tiled = TileLayout(S[(2, 4, 2, 4):(32, 4, 16, 1)])  # S[(2,2):(2,1)] tiled by S[(4,4):(4,1)]
    outer = axe4j.layout.parse("S[(2,2):(2,1)]")
    inner = axe4j.layout.parse("S[(4,4):(4,1)]")
    assert axe4j.layout.equivalent(axe4j.layout.tile(inner, outer, [2, 2], [4, 4]), tiled)
    found_outer = axe4j.layout.is_tile_inner(inner, tiled, [8, 8], [4, 4])
    assert found_outer is not None and axe4j.layout.equivalent(found_outer, outer)
    found_inner = axe4j.layout.is_tile_outer(outer, tiled, [8, 8], [2, 2])
    assert found_inner is not None and axe4j.layout.equivalent(found_inner, inner)
    assert axe4j.layout.is_tile_inner("S[(4,4):(1,4)]", tiled, [8, 8], [4, 4]) is None
    grouped, seps = axe4j.layout.group(TileLayout(S[64:1]), [4, 16])
    assert seps == [0, 1, 2] and [int(i.extent) for i in grouped.shard] == [4, 16]
    summed = axe4j.layout.direct_sum("S[4:1@laneid]", "S[2:1]", [2], [4])
    assert axe4j.layout.to_text(summed) == "S[(2,4):(1,1@laneid)]"
    canon = axe4j.layout.canonicalize(TileLayout(S[(2, 4):(4, 1)]))
    assert axe4j.layout.to_text(canon) == "S[8:1]"
    assert axe4j.layout.apply("S[4:1] + R[2:4@warpid]", 3) == [{"m": 3, "warpid": 0}, {"m": 3, "warpid": 4}]
    assert axe4j.layout.apply("S[(4,8):(8,1)]", [2, 3], [4, 8]) == [{"m": 19}]
    assert axe4j.layout.size("S[(4,8):(8,1@laneid)]", "laneid") == 8
    assert axe4j.layout.image_span("S[(4,8):(8,1)] + 5") == {"m": 32}
    assert axe4j.layout.span("S[(4,8):(8,1)] + 5") == int(TileLayout(S[(4, 8):(8, 1)] + 5).span()) == 37


def test_swizzled_and_symbolic_layouts_round_trip(bridge):
    swizzled = ComposeLayout(3, 3, 3, TileLayout(S[(8, 64):(64, 1)]), True)
    assert axe4j.layout.to_text(swizzled) == "Swizzle<3,3,3> o S[(8,64):(64,1)]"
    for x in range(512):
        assert axe4j.layout.apply(swizzled, x) == [{"m": int(swizzled.apply(x)["m"])}]
    assert axe4j.layout.equivalent(axe4j.layout.parse(axe4j.layout.to_text(swizzled)), swizzled)
    n = tvm.tirx.Var("n", "int32")
    symbolic = TileLayout.from_iters([Iter(8, 1, Axis.m)], [], {Axis.m: n * 4 + 2})
    sliced = axe4j.layout.slice(symbolic, [8], [(3, 6)])
    assert axe4j.layout.to_text(sliced) == "S[3:1] + 5 + (4*n)"
    point = axe4j.layout.apply(sliced, 1)[0]["m"]
    assert str(point) == "n * 4 + 6" and point.a.a.same_as(n)


def test_errors_name_the_function_and_the_layout(bridge):
    with pytest.raises(ValueError, match=r"axe4j.layout.slice: cannot parse layout: expected '\)'"):
        axe4j.layout.slice("S[(4,8):(8,1", [32], [(0, 3)])
    with pytest.raises(ValueError, match=r"axe4j.layout.group: .*S\[\(4,8\):\(8,1\)\]"):
        axe4j.layout.group("S[(4,8):(8,1)]", [5, 7])
    with pytest.raises(ValueError, match=r"axe4j.layout.tile: .*swizzled"):
        axe4j.layout.tile("S[4:1]", "Swizzle<1,0,1> o S[2:1]", [2], [4])
    with pytest.raises(ValueError, match=r"role must be \"inner\" or \"outer\""):
        axe4j.layout.tile_of("S[4:1]", "S[8:1]", [8], [4], "middle")


def test_apply_takes_tirx_arguments(bridge):
    L = TileLayout(S[(4, 8):(8, 1)])
    for i in range(4):
        for j in range(8):
            want = [{"m": int(L.apply(i, j, shape=[4, 8])["m"])}]
            assert axe4j.layout.apply(L, i, j, shape=[4, 8]) == want         # TIRx: L.apply(*coord, shape=)
            assert axe4j.layout.apply(L, [i, j], shape=(4, 8)) == want
            assert axe4j.layout.apply(L, [i, j], [4, 8]) == want               # the older (coordinate, shape)
    assert axe4j.layout.apply(L, tvm.tirx.IntImm("int32", 9)) == [{"m": 9}]
    n = tvm.tirx.Var("n", "int32")
    assert str(axe4j.layout.apply(L, n)[0]["m"]) == str(L.apply(n)["m"]) == "n"   # symbolic: test_layout_symbolic
    with pytest.raises(ValueError, match=r"a coordinate of 2 indices needs shape="):
        axe4j.layout.apply(L, 1, 2)
    with pytest.raises(ValueError, match=r"index 1.5 \(float\) is not an integer"):
        axe4j.layout.apply(L, 1.5)


def test_extents_only_and_leading_offsets_read_as_tirx_writes_them(bridge):
    for text, tirx in [("S[2,3,4]", TileLayout(S[2, 3, 4])), ("S[8]", TileLayout(S[8])),
                       ("S[(4,6)] + R[2:1@laneid]", TileLayout(S[(4, 6):(6, 1)] + R[2:1 @ laneid]))]:
        assert axe4j.layout.equivalent(axe4j.layout.parse(text), tirx), text
    led = axe4j.layout.parse("64 + S[2,3,4]")
    assert axe4j.layout.to_text(led) == "S[(2,3,4):(12,4,1)] + 64"
    for x in range(24):
        assert axe4j.layout.apply(led, x) == [{"m": 64 + x}]


def _memory_layout(rng):
    """1-3 shard iters on m with positive strides (what TIRx's pack/unpack are defined on)."""
    n = rng.randint(1, 3)
    extents = [rng.choice([1, 2, 3, 4, 8]) for _ in range(n)]
    strides = [rng.choice([1, 2, 4, 8, 16, 32]) for _ in range(n)]
    return TileLayout(S[tuple(extents):tuple(strides)]), extents


def _same_map(a, b, size):
    """axe4j layout ``a`` and TIRx layout ``b`` map every x < size to the same point (zero coordinates dropped:
    axe4j names only the axes a point moves on)."""
    def nonzero(point):
        return {str(k): int(v) for k, v in point.items() if int(v) != 0}
    return all([nonzero(p) for p in axe4j.layout.apply(a, x)] == [nonzero(b.apply(x))] for x in range(size))


def test_unpack_pack_storage_and_tile_to_agree_with_tirx(bridge):
    rng = random.Random(20261128)
    for _ in range(60):
        layout, extents = _memory_layout(rng)
        size = 1
        for e in extents:
            size *= e
        num = rng.choice([1, 2, 4])
        unpacked = axe4j.layout.unpack(layout, num)
        assert _same_map(unpacked, layout.unpack(num), size * num), (layout, num)
        assert axe4j.layout.equivalent(axe4j.layout.pack(unpacked, num), layout)          # pack undoes unpack
        tirx_packed = layout.unpack(num).pack(num)
        assert _same_map(axe4j.layout.pack(unpacked, num), tirx_packed, size)
        shape = extents
        to = [e * rng.choice([1, 2, 3]) for e in shape]
        tiled = axe4j.layout.tile_to(layout, to, shape)
        total = 1
        for t in to:
            total *= t
        assert _same_map(tiled, layout.tile_to(to, shape), total), (layout, to, shape)
    threads = TileLayout(S[(2, 8, 4, 2):(1 @ laneid, 4, 8 @ laneid, 1)])
    assert axe4j.layout.to_text(axe4j.layout.storage(threads)) == "S[(8,2):(4,1)]"
    assert axe4j.layout.equivalent(axe4j.layout.storage(threads), threads.storage())


def test_packing_names_what_stops_it(bridge):
    with pytest.raises(ValueError, match=r"axe4j.layout.pack: .*innermost iter .* must be stride 1 on m"):
        axe4j.layout.pack("S[(4,8):(1,4)]", 2)
    with pytest.raises(ValueError, match=r"the stride of .* is not a multiple of 4"):
        axe4j.layout.pack("S[(3,8):(6,1)]", 4)
    with pytest.raises(ValueError, match=r"dim 1 of \(8,12\) is not a multiple of 8"):
        axe4j.layout.tile_to("S[(4,8):(8,1)]", [8, 12], [4, 8])
    # unpack keeps thread strides (TIRx would scale them): a lane stays a lane
    assert axe4j.layout.to_text(axe4j.layout.unpack("S[(4,8):(1@laneid,1)] + 3", 2)) == \
        "S[(4,8,2):(1@laneid,2,1)] + 6"


def _split_shape(rng, layout):
    """A shape of 1-2 dims with the layout's size (a divisor split), or None for an empty layout."""
    size = int(layout.size())
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    if rng.random() < 0.3:
        return [size]
    d = rng.choice(divisors)
    return [d, size // d]


def test_apply_to_shape_agrees_with_tirx(bridge):
    """On 150 random layouts, every coordinate of a random shape: the values are TIRx's, and they give L's point."""
    rng = random.Random(20261201)
    checked = 0
    for _ in range(150):
        layout = random_layout(rng)
        shape = _split_shape(rng, layout)
        for flat in range(int(layout.size())):
            coord = [flat // shape[1], flat % shape[1]] if len(shape) == 2 else [flat]
            ours = axe4j.layout.apply_to_shape(layout, coord, shape)
            assert ours == [int(v) for v in layout.apply_to_shape(coord, shape)], (layout, coord, shape)
            checked += 1
    assert checked > 1000
    with pytest.raises(ValueError, match=r"axe4j.layout.apply_to_shape: .*coordinate \[1, 6\] is outside shape "
                                         r"\(4,6\)"):
        axe4j.layout.apply_to_shape("S[(4,6):(6,1)]", [1, 6], [4, 6])
    with pytest.raises(ValueError, match=r"does not admit input_shape \(4,4\)"):
        axe4j.layout.apply_to_shape("S[(4,6):(6,1)]", [1, 1], [4, 4])


def test_permute_by_groups_agrees_with_tirx(bridge):
    """On 200 random layouts grouped by a random shape: the permuted layout is TIRx's, point by point."""
    rng = random.Random(20261202)
    done = 0
    for _ in range(200):
        layout = random_layout(rng)
        shape = _split_shape(rng, layout)
        try:
            grouped, seps = layout.group(shape)
        except tvm.error.InternalError:
            continue
        seps = [int(s) for s in seps]
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        ours = axe4j.layout.permute_by_groups(grouped, seps, perm)
        theirs = grouped.permute_by_groups(seps, perm)
        assert isinstance(ours, TileLayout)
        assert axe4j.layout.equivalent(ours, theirs), (grouped, seps, perm)
        assert base_points(ours, int(ours.size())) == base_points(theirs, int(theirs.size()))
        done += 1
    assert done > 100
    # TIRx takes overlapping groups, repeating iter 1 and dropping iter 2: S[(2,3,3):(12,4,4)], 18 elements of 24
    with pytest.raises(ValueError, match=r"axe4j.layout.permute_by_groups: .*seps \[0, 2, 1, 2\] must start at 0"):
        axe4j.layout.permute_by_groups(TileLayout(S[(2, 3, 4):(12, 4, 1)]), [0, 2, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match=r"perm \[1, 1\] is not a permutation of 0..1"):
        axe4j.layout.permute_by_groups("S[(2,3,4):(12,4,1)]", [0, 1, 3], [1, 1])


def _direct_sum_case(rng):
    rank = rng.randint(1, 2)
    left_shape = [rng.choice([1, 2, 2, 3, 4]) for _ in range(rank)]
    right_shape = [rng.choice([1, 2, 2, 3, 4]) for _ in range(rank)]

    def grouped(shape):
        iters = []
        compact = 1
        for dim in reversed(shape):
            stride = rng.choice([compact, rng.randint(0, 9), 1 << rng.randint(0, 4)])
            iters.insert(0, Iter(dim, stride, getattr(Axis, rng.choice(AXES))))
            compact *= dim
        replica = [Iter(rng.randint(2, 3), rng.randint(1, 8), Axis.warpid)] if rng.random() < 0.2 else []
        offset = {Axis.m: rng.randint(0, 20)} if rng.random() < 0.3 else {}
        return TileLayout.from_iters(iters, replica, offset)

    left, right = grouped(left_shape), grouped(right_shape)
    interleaved = [d for pair in zip(left_shape, right_shape) for d in pair]
    return left, left_shape, right, right_shape, interleaved


def _sum_points(left, left_shape, right, right_shape):
    """{a + b} at every coordinate of the interleaved domain, by enumeration (axe4j's apply: every replica)."""
    out = []
    rank = len(left_shape)
    total = 1
    for a, b in zip(left_shape, right_shape):
        total *= a * b
    for flat in range(total):
        z, rest = [], flat
        for a, b in reversed(list(zip(left_shape, right_shape))):
            z.insert(0, rest % (a * b))
            rest //= a * b
        x = [z[k] // right_shape[k] for k in range(rank)]
        y = [z[k] % right_shape[k] for k in range(rank)]
        points = set()
        for p in axe4j.layout.apply(left, x, shape=left_shape):
            for q in axe4j.layout.apply(right, y, shape=right_shape):
                keys = set(p) | set(q)
                points.add(tuple(sorted((k, p.get(k, 0) + q.get(k, 0)) for k in keys if p.get(k, 0) + q.get(k, 0))))
        out.append(points)
    return out


def _points_of(layout):
    return [{tuple(sorted((k, v) for k, v in p.items() if v)) for p in axe4j.layout.apply(layout, x)}
            for x in range(int(layout.size()))]


def test_is_direct_sum_right_and_left_agree_with_tirx_where_tirx_is_right(bridge):
    """On 150 random sums A + B: axe4j recovers each addend (rebuilding the sum point by point); where TIRx
    answers, its addend equals axe4j's as a map whenever TIRx's rebuilds the sum."""
    rng = random.Random(20261203)
    counts = {"both": 0, "tirx none": 0, "tirx wrong": 0}
    for _ in range(150):
        left, left_shape, right, right_shape, interleaved = _direct_sum_case(rng)
        summed = right.direct_sum(left, left_shape, right_shape)
        want = _points_of(summed)
        found_left = axe4j.layout.is_direct_sum_right(right, summed, interleaved, right_shape)
        assert found_left is not None, (summed, right)
        assert _sum_points(found_left, left_shape, right, right_shape) == want
        found_right = axe4j.layout.is_direct_sum_left(left, summed, interleaved, left_shape)
        assert found_right is not None, (summed, left)
        assert _sum_points(left, left_shape, found_right, right_shape) == want
        for theirs, ours, rebuild in [
                (right.is_direct_sum_right(summed, interleaved, right_shape), found_left,
                 lambda a: _sum_points(a, left_shape, right, right_shape)),
                (left.is_direct_sum_left(summed, interleaved, left_shape), found_right,
                 lambda b: _sum_points(left, left_shape, b, right_shape))]:
            if theirs is None:
                counts["tirx none"] += 1
            elif rebuild(theirs) != want:
                counts["tirx wrong"] += 1
            else:
                assert rebuild(ours) == rebuild(theirs)
                counts["both"] += 1
    print("is_direct_sum vs TIRx:", counts)
    assert counts["both"] > 100


def test_is_direct_sum_names_bad_shapes_and_answers_none(bridge):
    whole = TileLayout(S[16:1])
    found = axe4j.layout.is_direct_sum_right(TileLayout(S[(2, 2):(4, 1)]), whole, [2, 2, 2, 2], [2, 2])
    assert axe4j.layout.equivalent(found, TileLayout(S[(2, 2):(8, 2)]))
    # TIRx answers S[2:2] here, ignoring the replica of B that the sum does not have
    b = TileLayout(S[2:1] + R[2:4 @ Axis.warpid])
    assert axe4j.layout.is_direct_sum_right(b, TileLayout(S[4:1]), [2, 2], [2]) is None
    assert b.is_direct_sum_right(TileLayout(S[4:1]), [2, 2], [2]) is not None
    with pytest.raises(ValueError, match=r"axe4j.layout.is_direct_sum_right: .*interleaved_shape \(4,4\) has rank 2, "
                                         r"not twice the rank 2 of right_shape"):
        axe4j.layout.is_direct_sum_right("S[4:1]", whole, [4, 4], [2, 2])
    with pytest.raises(ValueError, match=r"axe4j.layout.is_direct_sum_left: .*entry 0 of interleaved_shape "
                                         r"\(4,4\) is 4, but left_shape \(2\) has 2"):
        axe4j.layout.is_direct_sum_left("S[2:1]", whole, [4, 4], [2])


def _thread_layout(rng, names):
    shard = [Iter(2, rng.randint(1, 4), Axis.get(n)) for n in rng.sample(names, rng.randint(1, 3))]
    replica = [Iter(2, 1, Axis.get(rng.choice(names)))] if rng.random() < 0.3 else []
    return TileLayout.from_iters(shard, replica, {})


def test_verify_well_formed_agrees_with_tirx(bridge):
    """On 300 random layouts whose shard has a thread axis: axe4j says well-formed exactly where TIRx does
    (TIRx raises where the scopes conflict or do not chain; axe4j answers False)."""
    rng = random.Random(20261204)
    names = ["laneid", "warpid", "wid_in_wg", "wgid", "tx", "cbx", "m"]
    counts = {True: 0, False: 0}
    for _ in range(300):
        layout = _thread_layout(rng, names)
        if not any(it.axis.is_thread() for it in layout.shard):
            continue
        try:
            theirs = bool(layout.verify_well_formed())
        except tvm.error.InternalError as e:
            assert "Ill-formed tile layout" in str(e)
            theirs = False
        assert axe4j.layout.verify_well_formed(layout) == theirs, layout
        counts[theirs] += 1
    print("verify_well_formed:", counts)
    assert counts[True] > 30 and counts[False] > 30
    assert axe4j.layout.verify_well_formed(TileLayout(S[8:1]))
    # TIRx looks at scopes only when the shard has a thread axis: this passes there
    assert not axe4j.layout.verify_well_formed("S[4:1] + R[2:1@laneid] + 1@wgid")
