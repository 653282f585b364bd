"""axe4j.layout at symbolic indices and region starts (TIR expressions), checked value by value against axe4j's
integer answers and TIRx's symbolic ones."""

import itertools
import random

import pytest
import tvm
from tvm.tirx.layout import Axis, Iter, S, TileLayout

import axe4j
from test_layout import base_points, expected_slice, random_layout, replica_set


def evaluate(expr, env: dict) -> int:
    """The integer value of a TIR expression with the variables bound by name (floor division, as TIR's)."""
    if isinstance(expr, int):
        return expr
    kind = type(expr).__name__
    if kind == "IntImm":
        return int(expr.value)
    if kind in ("Var", "SizeVar"):
        return env[expr.name]
    if kind == "Cast":
        return evaluate(expr.value, env)
    a, b = evaluate(expr.a, env), evaluate(expr.b, env)
    ops = {"Add": a + b, "Sub": a - b, "Mul": a * b, "Min": min(a, b), "Max": max(a, b)}
    if kind in ops:
        return ops[kind]
    if kind in ("FloorDiv", "Div"):  # Div (truncating) only meets non-negative operands here
        return a // b
    if kind in ("FloorMod", "Mod"):
        return a % b
    raise AssertionError(f"no evaluation for {kind}: {expr}")


def values(points: list, env: dict) -> list:
    """Each point's coordinates evaluated, zero coordinates dropped, as a sorted list of item tuples."""
    out = []
    for p in points:
        out.append(tuple(sorted((str(k), v) for k, v in ((k, evaluate(e, env)) for k, e in p.items()) if v != 0)))
    return sorted(out)


def test_apply_at_a_symbolic_index_is_the_integer_answer_and_tirx_s_at_every_value(bridge):
    """On 60 seeded layouts: axe4j's expression in v, at every v in range, is axe4j's integer L(v) (all replicas)
    and holds TIRx's base point (TIRx's own expression at the same v)."""
    rng = random.Random(20261128)
    v = tvm.tirx.Var("v", "int32")
    checked = 0
    for _ in range(60):
        layout = random_layout(rng)
        size = int(layout.size())
        ours = axe4j.layout.apply(layout, v)
        theirs = layout.apply(v)
        for x in range(size):
            env = {"v": x}
            assert values(ours, env) == values(axe4j.layout.apply(layout, x), {}), (layout, x, ours)
            assert values([theirs], env)[0] in values(ours, env), (layout, x, theirs, ours)
            checked += 1
    assert checked > 500


def test_apply_at_a_symbolic_coordinate_agrees_with_tirx(bridge):
    """A coordinate mixing integers and expressions, int32 and int64: every value equals TIRx's."""
    layout = TileLayout(S[(4, 4, 4):(1, 100, 10)])
    i, j = tvm.tirx.Var("i", "int64"), tvm.tirx.Var("j", "int64")
    ours = axe4j.layout.apply(layout, i, 3, j, shape=[4, 4, 4])
    theirs = layout.apply(i, 3, j, shape=[4, 4, 4])
    for a in range(4):
        for b in range(4):
            env = {"i": a, "j": b}
            assert values(ours, env) == values([theirs], env) == values(
                axe4j.layout.apply(layout, a, 3, b, shape=[4, 4, 4]), {})
    k = tvm.tirx.Var("k", "int32")
    assert axe4j.layout.count(layout, k) == 1
    assert axe4j.layout.count("S[4:1] + R[3:2@laneid]", k) == 3
    with pytest.raises(ValueError, match=r"coord\[2\] j is int64 but coord k is int32"):
        axe4j.layout.apply(layout, k, 0, j, shape=[4, 4, 4])


def test_symbolic_indices_that_have_no_expression_are_named(bridge):
    v = tvm.tirx.Var("v", "int32")
    with pytest.raises(ValueError, match=r"the address on m of Swizzle<3,5,3> o S\[256:1\] is int8 and "
                       r"Swizzle<3,5,3> needs the constant 224, which does not fit it"):
        axe4j.layout.apply("Swizzle<3,5,3> o S[256:1]", tvm.tirx.Var("i", "int8"))
    with pytest.raises(ValueError, match=r"x v is int32 and the layout needs the constant 4294967296"):
        axe4j.layout.apply("S[(2,2):(4294967296,1)]", v)
    with pytest.raises(ValueError, match=r"iter_points: the x v is symbolic"):
        list(axe4j.layout.iter_points("S[4:1]", v))
    with pytest.raises(ValueError, match=r"apply_to_shape: the index v is symbolic"):
        axe4j.layout.apply_to_shape("S[4:1]", [v], [4])
    with pytest.raises(ValueError, match=r"axe4j.layout: the shape\[1\] v is symbolic"):   # not a bare TypeError
        axe4j.layout.slice("S[4:1]", [1, v], [(0, 1), (0, 4)])
    with pytest.raises(ValueError, match=r"axe4j.layout: shape\[0\] 4.0 \(float\) is not an integer"):
        axe4j.layout.group("S[4:1]", [4.0])


def instantiate(layout, env: dict) -> TileLayout:
    """The TIRx layout with its offset evaluated at ``env``."""
    offset = {axis: evaluate(expr, env) for axis, expr in layout.offset.items()}
    return TileLayout.from_iters(list(layout.shard), list(layout.replica), offset)


def test_the_staged_buffer_slice_is_tirx_s(bridge):
    """``[stage:stage+1, :, :]`` of a (3, 128, 128) buffer: offset ``stage * 16384`` as TIRx writes it."""
    buffer = TileLayout(S[(3, 128, 128):(16384, 128, 1)])
    stage = tvm.tirx.Var("stage", "int32")
    for region in ([(stage, stage + 1), (0, 128), (0, 128)],
                   [tvm.ir.Range.from_min_extent(stage, 1), tvm.ir.Range(0, 128), tvm.ir.Range(0, 128)]):
        ours = axe4j.layout.slice(buffer, [3, 128, 128], region)
        theirs = buffer.slice([3, 128, 128], region)
        assert str(ours.offset[Axis.m]) == str(theirs.offset[Axis.m]) == "stage * 16384"
        assert axe4j.layout.to_text(ours) == "S[(128,128):(128,1)] + (16384*stage)"
    half = axe4j.layout.slice(buffer, [3, 128, 128], [(stage, stage + 1), (0, 64), (64, 128)])
    assert axe4j.layout.to_text(half) == "S[(64,64):(128,1)] + 64 + (16384*stage)"


def test_slice_at_a_symbolic_start_is_the_slice_at_every_value(bridge):
    """On 300 seeded layouts, shapes and boxes with a begin ``b + m * v``: wherever axe4j answers, its layout at
    every v that keeps the box inside the shape maps like the box; wherever TIRx is right too, the two agree."""
    rng = random.Random(20261129)
    v = tvm.tirx.Var("v", "int32")
    counts = {"answered": 0, "refused": 0, "agree with tirx": 0, "values": 0}
    for _ in range(300):
        layout = random_layout(rng) if rng.random() < 0.5 else _compact(rng)
        size = int(layout.size())
        shape = [size] if size < 4 or rng.random() < 0.4 else _split(rng, size)
        dim = rng.randrange(len(shape))
        width = rng.randint(1, shape[dim])
        step = rng.choice([1, 2, 4, width])
        base = rng.randrange(shape[dim] - width + 1)
        box = [(0, d) for d in shape]
        region = list(box)
        region[dim] = (base + step * v, base + step * v + width)
        try:
            ours = axe4j.layout.slice(layout, shape, region)
        except ValueError as e:
            assert "does not read as a translation" in str(e), e
            counts["refused"] += 1
            continue
        try:
            theirs = layout.slice(shape, region)
        except tvm.error.InternalError:
            theirs = None
        if ours is None:
            continue
        counts["answered"] += 1
        for t in range(-(base // step) - 1, (shape[dim] - width - base) // step + 2):
            begin = base + step * t
            if begin < 0 or begin + width > shape[dim]:
                continue
            concrete = list(box)
            concrete[dim] = (begin, begin + width)
            expected = expected_slice(layout, shape, concrete)
            mine = instantiate(ours, {"v": t})
            assert base_points(mine, int(mine.size())) == expected, (layout, shape, region, t, ours)
            counts["values"] += 1
            if theirs is not None:
                theirs_t = instantiate(theirs, {"v": t})
                if base_points(theirs_t, int(theirs_t.size())) == expected:
                    assert axe4j.layout.equivalent(mine, theirs_t), (layout, region, t, ours, theirs)
                    counts["agree with tirx"] += 1
    print("symbolic slice:", counts)
    assert counts["answered"] > 100 and counts["agree with tirx"] > 100 and counts["values"] > 300


def test_a_start_the_layout_does_not_translate_has_a_digit_offset(bridge):
    """Column-major (4, 4) read as 16 elements from 2v: the offset is v // 2 + 8 * (v % 2), not affine in v (TIRx
    writes v % 2 * 8 + v % 8 // 2); one body S[2:4] fits every start. From v with width 2 the body changes with
    the start (S[2:4] at 0, S[2:-11] at 3): refused, naming the region."""
    v = tvm.tirx.Var("v", "int32")
    layout = TileLayout(S[(4, 4):(1, 4)])
    ours = axe4j.layout.slice(layout, [16], [(v * 2, v * 2 + 2)])
    assert axe4j.layout.to_text(ours) == "S[2:4] + ((v // 2) + 8*(v % 2))"
    theirs = layout.slice([16], [(v * 2, v * 2 + 2)])
    for t in range(8):
        assert axe4j.layout.equivalent(instantiate(ours, {"v": t}), instantiate(theirs, {"v": t}))
    with pytest.raises(ValueError, match=r"region \[v:v \+ 2\] of shape \(16\) starts at a symbolic index that "
                       r"S\[\(4,4\):\(1,4\)\] does not read as a translation, and the slice's body changes"):
        axe4j.layout.slice(layout, [16], [(v, v + 2)])
    with pytest.raises(ValueError, match=r"no value of the variables keeps region\[0\] inside the shape"):
        axe4j.layout.slice(layout, [16], [(v * 8 + 7, v * 8 + 17)])
    with pytest.raises(ValueError, match=r"region\[0\] has a symbolic width"):
        axe4j.layout.slice(layout, [16], [(0, v)])


def test_a_digit_offset_past_the_start_check_names_the_region(bridge):
    """A start over 4096 values, width 3 across digit boundaries: too many starts to compare one by one."""
    v = tvm.tirx.Var("v", "int32")
    with pytest.raises(ValueError, match=r"region \[v:v \+ 3\] of shape \(4096\) .* more than 1024 starts"):
        axe4j.layout.slice("S[(64,64):(1,64)]", [4096], [(v, v + 3)])
    # Width 64 aligned to the inner digit: proven for all 64 starts 64v without enumeration, and read back by TIRx.
    ours = axe4j.layout.slice("S[(64,64):(1,64)]", [4096], [(v * 64, v * 64 + 64)])
    assert axe4j.layout.to_text(ours) == "S[64:64] + (v)"
    # Width 2 from 2v: the inner iter (64, 64) split as (32, 128), (2, 64) makes 2 a boundary: all 2048 starts at once.
    pairs = axe4j.layout.slice("S[(64,64):(1,64)]", [4096], [(v * 2, v * 2 + 2)])
    assert axe4j.layout.to_text(pairs) == "S[2:64] + ((v // 32) + 128*(v % 32))"
    for t in range(2048):
        start = _value(pairs.offset[Axis.m], {v: t})
        assert [start, start + 64] == [64 * (x % 64) + x // 64 for x in (2 * t, 2 * t + 1)], t
    wrapped = axe4j.layout.slice("S[(64,64):(1,64)]", [4096], [(v, v + 1)])
    assert axe4j.layout.to_text(wrapped) == "S[1:1] + ((v // 64) + 64*(v % 64))"
    assert axe4j.layout.to_text(axe4j.layout.canonicalize(wrapped)) == axe4j.layout.to_text(wrapped)
    at = {str(k): e for k, e in wrapped.apply(0).items()}   # TIRx reads the PrimExpr offset
    assert _value(at["m"], {v: 70}) == 70 // 64 + 64 * (70 % 64) == 64 * 70 % 4095


def _value(expr, bindings: dict) -> int:
    """TVM's own evaluation: the analyzer with every variable bound to its value, simplified to a constant."""
    if isinstance(expr, int):
        return expr
    analyzer = tvm.sym.Analyzer()
    for var, value in bindings.items():
        analyzer.bind(var, value)
    out = analyzer.simplify(expr)
    assert type(out).__name__ == "IntImm", (expr, bindings, out)
    return int(out.value)


def _at(layout, bindings: dict) -> TileLayout:
    offset = {axis: _value(expr, bindings) for axis, expr in layout.offset.items()}
    return TileLayout.from_iters(list(layout.shard), list(layout.replica), offset)


def _permuted(rng: random.Random) -> TileLayout:
    """Compact iters in a shuffled stride order (column-major and the like): starts rarely translate."""
    extents = [rng.choice([2, 3, 4]) for _ in range(rng.randint(2, 3))]
    order = list(range(len(extents)))
    rng.shuffle(order)
    strides, s = [0] * len(extents), 1
    for k in order:
        strides[k] = s
        s *= extents[k]
    return TileLayout.from_iters([Iter(e, st, Axis.m) for e, st in zip(extents, strides)], [], {})


def test_symbolic_starts_that_do_not_translate_are_right_at_every_value(bridge):
    """On 400 seeded layouts, shapes and boxes with one or two symbolic begins (``b + m*v``, ``b' + m'*w``): at every
    value of the variables that keeps the box inside the shape, axe4j's answer (offset evaluated by TVM's analyzer)
    maps like the box of the layout, enumerated; TIRx's answer at the same values is right or wrong, counted."""
    rng = random.Random(20261130)
    v, w = tvm.tirx.Var("v", "int32"), tvm.tirx.Var("w", "int32")
    counts = {"answered": 0, "digit offsets": 0, "refused": 0, "none": 0, "values": 0,
              "tirx right": 0, "tirx wrong": 0, "tirx none": 0, "tirx none where answered": 0,
              "refused or none where tirx is right": 0}
    for _ in range(400):
        pick = rng.random()
        layout = _permuted(rng) if pick < 0.5 else random_layout(rng) if pick < 0.8 else _compact(rng)
        size = int(layout.size())
        shape = [size] if size < 4 or rng.random() < 0.5 else _split(rng, size)
        dims = rng.sample(range(len(shape)), 2 if len(shape) > 1 and rng.random() < 0.3 else 1)
        region, ranges = [(0, d) for d in shape], []
        for var, dim in zip((v, w), dims):
            width = min(shape[dim], rng.choice([1, 1, 2, rng.randint(1, shape[dim])]))
            step = rng.choice([1, 2, 3, 4, width])
            base = rng.randrange(shape[dim] - width + 1) % step
            region[dim] = (base + step * var, base + step * var + width)
            ranges.append((var, [t for t in range(shape[dim]) if base + step * t + width <= shape[dim]], dim))
        try:
            ours = axe4j.layout.slice(layout, shape, region)
        except ValueError as e:
            assert "does not read as a translation" in str(e), e
            ours = "refused"
        try:
            theirs = layout.slice(shape, region)
        except tvm.error.InternalError:
            theirs = None
        if ours is None:
            counts["none"] += 1
            ours = "refused"
        elif ours != "refused":
            counts["answered"] += 1
            counts["digit offsets"] += any("%" in str(e) or "//" in str(e) for e in ours.offset.values())
            counts["tirx none where answered"] += theirs is None
        else:
            counts["refused"] += 1
        tirx_right_everywhere = theirs is not None
        for values in itertools.product(*[r for _, r, _ in ranges]):
            bindings = {var: t for (var, _, _), t in zip(ranges, values)}
            concrete = list(region)
            for (var, _, dim), t in zip(ranges, values):
                b, e = region[dim]
                concrete[dim] = (_value(b, {var: t}), _value(e, {var: t}))
            expected = expected_slice(layout, shape, concrete)
            if ours != "refused":
                mine = _at(ours, bindings)
                assert base_points(mine, int(mine.size())) == expected, (layout, shape, region, values, ours)
                assert replica_set(mine) == replica_set(layout), (layout, region, ours)
                counts["values"] += 1
            if theirs is None:
                continue
            theirs_t = _at(theirs, bindings)
            right = int(theirs_t.size()) == len(expected) and base_points(theirs_t, len(expected)) == expected
            counts["tirx right" if right else "tirx wrong"] += 1
            if not right:
                print("tirx wrong:", layout, shape, region, values, theirs)
            tirx_right_everywhere &= right
            if right and ours != "refused":
                assert axe4j.layout.equivalent(mine, theirs_t), (layout, region, values, ours, theirs)
        counts["tirx none"] += theirs is None
        counts["refused or none where tirx is right"] += ours == "refused" and tirx_right_everywhere
    print("symbolic starts:", counts)
    assert counts["digit offsets"] > 40 and counts["values"] > 1000 and counts["tirx right"] > 1000


def _compact(rng: random.Random) -> TileLayout:
    extents = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 3))]
    strides, s = [], rng.choice([1, 2])
    for e in reversed(extents):
        strides.insert(0, s)
        s *= e
    return TileLayout.from_iters([Iter(e, st, Axis.m) for e, st in zip(extents, strides)], [], {})


def _split(rng: random.Random, size: int) -> list:
    divisors = [d for d in range(2, size) if size % d == 0]
    if not divisors:
        return [size]
    d = rng.choice(divisors)
    return [d, size // d]
