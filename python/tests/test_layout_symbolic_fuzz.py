"""Seeded fuzz of the layout algebra's symbolic paths: random layouts (plain and swizzled, with replicas, integer and
symbolic offsets), symbolic indices, coordinates and region starts, and symbolic strides. Every answer is evaluated at
every binding of its variables and compared with a brute-force enumeration of the definition,
``L(x) = { swz(D(x) + r + O + sigma) | r in R }`` (the swizzle after every offset), computed here in Python from the
layout's fields. TIRx's own answers are compared too and their differences counted, not failed on.

Each case is classified: right, named refusal (a ``ValueError`` from ``axe4j.layout.<op>``), None (no layout), wrong,
or internal error (anything else). The test fails on any wrong answer or internal error, naming a reproducer.
``AXE4J_SYMBOLIC_CASES`` sets the number of random layouts (``make soak``-sized runs: 5000).
"""

import collections
import itertools
import os
import random

import pytest
import tvm
from tvm import tirx
from tvm.tirx.layout import Axis, ComposeLayout, Iter, TileLayout

import axe4j

CASES = int(os.environ.get("AXE4J_SYMBOLIC_CASES", "150"))
SEED = int(os.environ.get("AXE4J_SYMBOLIC_SEED", "20261207"))
TIRX_BINDINGS = 4   # TIRx's apply is compared at the first bindings of each layout (axe4j's at all of them)

OPS = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
       "FloorDiv": lambda a, b: a // b, "FloorMod": lambda a, b: a % b, "Div": lambda a, b: a // b,
       "Mod": lambda a, b: a % b, "Min": min, "Max": max, "LShift": lambda a, b: a << b,
       "RShift": lambda a, b: a >> b, "BitwiseXor": lambda a, b: a ^ b, "BitwiseAnd": lambda a, b: a & b,
       "BitwiseOr": lambda a, b: a | b}
CALLS = {"tirx.bitwise_xor": "BitwiseXor", "tirx.bitwise_and": "BitwiseAnd", "tirx.bitwise_or": "BitwiseOr",
         "tirx.shift_right": "RShift", "tirx.shift_left": "LShift"}


def evaluate(expr, env: dict) -> int:
    """An integer TIR expression with its variables bound by name (TIR's floor division, arithmetic shifts)."""
    if isinstance(expr, int):
        return expr
    kind = type(expr).__name__
    if kind == "IntImm":
        return int(expr.value)
    if kind in ("Var", "SizeVar"):
        return env[expr.name]
    if kind == "Cast":
        return evaluate(expr.value, env)
    if kind == "Let":
        return evaluate(expr.body, {**env, expr.var.name: evaluate(expr.value, env)})
    if kind == "Call":
        a, b = (evaluate(x, env) for x in expr.args)
        return OPS[CALLS[str(expr.op.name).replace("tir.", "tirx.")]](a, b)
    return OPS[kind](evaluate(expr.a, env), evaluate(expr.b, env))


# ---- the reference: a layout's map from its fields -----------------------------------------------------------------

def swizzle(address: int, sw) -> int:
    """CuTe's Swizzle<B, M, +-A>: TIRx's ComposeLayout(per_element=M, swizzle_len=B, atom_len=A, swizzle_inner)."""
    if sw is None:
        return address
    per_element, length, atom, inner = sw
    mask = ((1 << length) - 1) << per_element
    return address ^ ((address >> atom) & mask) if inner else address ^ ((address & mask) << atom)


def concrete(layout, env: dict):
    """(shard, replica, offset, swizzle) of a TIRx layout with its offset evaluated at ``env``."""
    sw = None
    if type(layout).__name__ == "ComposeLayout":
        sw = (int(layout.per_element), int(layout.swizzle_len), int(layout.atom_len), bool(layout.swizzle_inner))
        layout = layout.tile_layout
    shard = [(int(it.extent), int(it.stride), str(it.axis.name)) for it in layout.shard]
    replica = [(int(it.extent), int(it.stride), str(it.axis.name)) for it in layout.replica]
    offset = {str(k.name): evaluate(v, env) for k, v in layout.offset.items()}
    return shard, replica, offset, sw


def points(c, x: int) -> frozenset:
    """L(x) of a concrete layout: every replica, the swizzle on m after every offset; zero coordinates dropped."""
    shard, replica, offset, sw = c
    base = collections.Counter(offset)
    rest = x
    for extent, stride, axis in reversed(shard):
        base[axis] += (rest % extent) * stride
        rest //= extent
    out = set()
    for combo in itertools.product(*[range(e) for e, _, _ in replica]):
        p = collections.Counter(base)
        for (_, stride, axis), k in zip(replica, combo):
            p[axis] += k * stride
        if sw is not None:
            p["m"] = swizzle(p["m"], sw)
        out.add(frozenset((a, v) for a, v in p.items() if v != 0))
    return frozenset(out)


def size_of(c) -> int:
    n = 1
    for extent, _, _ in c[0]:
        n *= extent
    return n


def evaluated(answer: list, env: dict) -> frozenset:
    """An apply answer (a list of {axis: expr}) at ``env``, as a set of points like ``points``'s."""
    return frozenset(frozenset((str(a), v) for a, v in ((a, evaluate(e, env)) for a, e in p.items()) if v != 0)
                     for p in answer)


# ---- random layouts --------------------------------------------------------------------------------------------------

V, W, U = (tirx.Var(name, "int32") for name in ("v", "w", "u"))


def random_swizzle(rng):
    if rng.random() < 0.5:
        return rng.choice([3, 4]), rng.choice([1, 2, 3]), 3, True
    length = rng.randint(1, 3)
    return rng.randint(0, 2), length, length + rng.randint(0, 1), rng.random() < 0.7


def random_case(rng):
    """A layout (TIRx object), the shape it groups by, its symbolic offset's variables and their bindings."""
    swizzled = rng.random() < 0.55
    dims = [rng.choice([2, 4, 8]) for _ in range(rng.randint(1, 3))]
    kind = rng.choice(["compact", "padded", "permuted", "gapped", "bare"] if swizzled else
                      ["compact", "padded", "permuted", "threads"])
    strides = [0] * len(dims)
    order = list(range(len(dims)))[::-1]
    if kind == "permuted":
        rng.shuffle(order)
    s = 1
    for k in order:
        strides[k] = s
        s *= dims[k] * (2 if kind == "padded" and k != order[0] else 1)
    if kind == "gapped":
        strides = [st * rng.choice([2, 8]) for st in strides]
    axes = ["m"] * len(dims)
    if kind == "threads":
        axes[rng.randrange(len(dims))] = rng.choice(["laneid", "warpid"])
    if kind == "bare":
        dims, strides = [s], [1]
        axes = ["m"]
    shard = [Iter(e, st, Axis.get(a)) for e, st, a in zip(dims, strides, axes)]
    # the shape groups consecutive iters: a dimension read by two iters makes boxes cross digits
    groups = []
    for e in dims:
        if groups and rng.random() < 0.35 and groups[-1] * e <= 16:
            groups[-1] *= e
        else:
            groups.append(e)
    dims = groups
    replica = []
    if kind != "bare" and rng.random() < 0.25:
        replica = [Iter(rng.randint(2, 3), rng.choice([1, 3, 64, 256]), Axis.m if swizzled else Axis.get(
            rng.choice(["m", "warpid"])))]
    variables = rng.sample([V, U], rng.randint(0, 2))
    offset = rng.choice([0, 0, rng.randint(1, 40), 512])
    expr = None
    period = 1
    sw = random_swizzle(rng) if swizzled else None
    if sw:
        period = 1 << (sw[0] + sw[1] + sw[2])
    for var in variables:
        c = rng.choice([1, 2, 3, 8, 16, 64, -1, period])
        term = var * c if rng.random() < 0.75 else tirx.floormod(var, rng.choice([2, 4, 8])) * c
        expr = term if expr is None else expr + term
    if kind != "bare" or expr is not None or offset:
        off = offset if expr is None else expr + offset if offset else expr
        offsets = {Axis.m: off} if (off is not None and off != 0) else {}
    else:
        offsets = {}
    if kind == "bare" and offsets:
        kind = "bare+offset"
    if kind == "threads" and variables and rng.random() < 0.5:
        thread = next(str(it.axis.name) for it in shard if str(it.axis.name) != "m")
        offsets[Axis.get(thread)] = variables[0] * rng.choice([1, 2]) + rng.randint(0, 3)   # a lane or warp shift
    tile = TileLayout.from_iters(shard, replica, offsets)
    layout = ComposeLayout(sw[0], sw[1], sw[2], tile, sw[3]) if sw else tile
    values = {var.name: sorted({0, 1, 2, 3, 5, rng.randint(6, 40)}) for var in variables}
    return layout, dims, values, kind


def bindings(values: dict):
    names = sorted(values)
    for combo in itertools.product(*[values[n] for n in names]):
        yield dict(zip(names, combo))


# ---- classification ----------------------------------------------------------------------------------------------

def kind_of(layout) -> str:
    """"bare" for a ComposeLayout over one stride-1 iter (TIRx's swizzle of memory), else the type's name."""
    if type(layout).__name__ == "ComposeLayout":
        shard = list(layout.tile_layout.shard)
        if len(shard) == 1 and int(shard[0].stride) == 1 and not list(layout.tile_layout.replica):
            return "bare"
    return type(layout).__name__


class Tally:
    def __init__(self):
        self.counts = collections.Counter()
        self.wrong = []
        self.internal = []
        self.tirx = collections.Counter()
        self.tirx_wrong = []
        self.refusals = {}

    def call(self, op, fn):
        """(ok, answer): a ValueError from axe4j.layout.<op> is a named refusal, anything else an internal error."""
        try:
            return True, fn()
        except ValueError as e:
            text = str(e)
            if text.startswith("axe4j.layout.") and "internal error" not in text:
                self.counts[op, "refused"] += 1
                self.refusals.setdefault(op, text[:300])
            else:
                self.counts[op, "internal"] += 1
                self.internal.append((op, text[:400]))
            return False, None
        except Exception as e:  # noqa: BLE001 - every other failure is what the fuzz looks for
            self.counts[op, "internal"] += 1
            self.internal.append((op, f"{type(e).__name__}: {str(e)[:400]}"))
            return False, None

    def judge(self, op, right: bool, reproducer):
        self.counts[op, "right" if right else "wrong"] += 1
        if not right:
            self.wrong.append((op, reproducer))


def check_apply(t, layout, values, c0):
    """Integer indices at every binding; TIRx's base point compared (counted) where TIRx answers."""
    ok, answers = t.call("apply", lambda: [axe4j.layout.apply(layout, x) for x in range(size_of(c0))])
    if not ok:
        return
    bad = None
    for n, env in enumerate(bindings(values)):
        c = concrete(layout, env)
        for x, answer in enumerate(answers):
            if evaluated(answer, env) != points(c, x):
                bad = bad or (str(layout), x, env, answer)
            if n >= TIRX_BINDINGS:
                continue
            try:
                theirs = evaluated([layout.apply(x)], env)
                t.tirx["apply agree" if theirs <= points(c, x) else "apply differ"] += 1
            except Exception:  # noqa: BLE001 - TIRx's own failures are counted, not judged
                t.tirx["apply fails"] += 1
    t.judge("apply", bad is None, bad)


def check_symbolic_index(t, layout, dims, values, c0):
    """apply at a symbolic flat index w, and at a coordinate (w, j, ...) of the shape: every w, every binding."""
    size = size_of(c0)
    ok, answer = t.call("apply@symbolic", lambda: axe4j.layout.apply(layout, W))
    try:
        theirs = layout.apply(W)
    except Exception:  # noqa: BLE001 - TIRx's own failures are counted, not judged
        theirs = None
        t.tirx["apply@symbolic fails"] += 1
    if ok:
        bad = None
        for n, env in enumerate(bindings(values)):
            c = concrete(layout, env)
            for x in range(size):
                expected = points(c, x)
                if evaluated(answer, {**env, "w": x}) != expected:
                    bad = bad or (str(layout), "x = w", {**env, "w": x}, answer)
                if theirs is not None and n < TIRX_BINDINGS:
                    right = evaluated([theirs], {**env, "w": x}) <= expected
                    t.tirx["apply@symbolic " + ("agree" if right else "differ")] += 1
                    if not right:
                        t.tirx_wrong.append(("apply", str(layout), "w", {**env, "w": x}, str(theirs)))
        t.judge("apply@symbolic", bad is None, bad)
    if kind_of(layout) == "bare" and c0[2].get("m", 0) == 0:
        # a bare swizzle is the swizzle of memory: periodic past its size, the symbolic offset inside
        ok, far = t.call("apply", lambda: [axe4j.layout.apply(layout, x) for x in (size, 3 * size + 5)])
        if ok:
            bad = None
            for env in bindings(values):
                c = concrete(layout, env)
                for x, answer in zip((size, 3 * size + 5), far):
                    expected = frozenset({frozenset((a, v) for a, v in {
                        "m": swizzle(x + c[2].get("m", 0), c[3])}.items() if v != 0)})
                    if evaluated(answer, env) != expected:
                        bad = bad or (str(layout), x, env, answer)
                    try:
                        right = evaluated([layout.apply(x)], env) == expected
                    except Exception:  # noqa: BLE001
                        right = False
                    t.tirx["apply past a bare swizzle " + ("agree" if right else "differ")] += 1
            t.judge("apply past a bare swizzle", bad is None, bad)
    if len(dims) < 2:
        return
    tail = [d - 1 for d in dims[1:]]
    ok, answer = t.call("apply@coordinate", lambda: axe4j.layout.apply(layout, W, *tail, shape=dims))
    if ok:
        bad = None
        inner = size // dims[0]
        for env in bindings(values):
            c = concrete(layout, env)
            for i in range(dims[0]):
                x = i * inner + inner - 1
                if evaluated(answer, {**env, "w": i}) != points(c, x):
                    bad = bad or (str(layout), ("w", *tail), dims, {**env, "w": i}, answer)
        t.judge("apply@coordinate", bad is None, bad)


def box_flat(dims, box):
    out = []
    for coord in itertools.product(*[range(b, e) for b, e in box]):
        flat = 0
        for ck, d in zip(coord, dims):
            flat = flat * d + ck
        out.append(flat)
    return out


def check_slice(t, rng, layout, dims, values, c0):
    """An integer box, and a box whose begin on one dimension is ``b + c*w`` (w bound to every value that keeps it
    inside the shape): the answer at each binding maps the box's y-th point as the layout maps the box's y-th point."""
    box = []
    for d in dims:
        b = rng.randrange(d)
        box.append((b, rng.randint(b + 1, d)))
    ok, answer = t.call("slice", lambda: axe4j.layout.slice(layout, dims, box))
    if ok and answer is None:
        t.counts["slice", "none"] += 1
    elif ok:
        bad = None
        for env in bindings(values):
            c, a = concrete(layout, env), concrete(answer, env)
            if [points(a, y) for y in range(size_of(a))] != [points(c, x) for x in box_flat(dims, box)]:
                bad = bad or (str(layout), dims, box, env, str(answer))
        t.judge("slice", bad is None, bad)
    k = rng.randrange(len(dims))
    width = rng.randint(1, dims[k])
    coef = rng.choice([1, 1, 2, 4])
    begin = rng.randrange(max(1, dims[k] - width + 1))
    symbolic = [(b, e) for b, e in box]
    var = W if rng.random() < 0.8 or not values else tirx.Var(rng.choice(sorted(values)), "int32")
    var = next((v for v in (V, U) if v.name == var.name), W)
    start = var * coef + begin if coef != 1 else var + begin
    symbolic[k] = (start, start + width)
    try:
        theirs = layout.slice(dims, symbolic)
    except Exception:  # noqa: BLE001 - TIRx's own failures are counted, not judged
        theirs = None
        t.tirx["slice@symbolic fails"] += 1
    if theirs is not None:
        for env in bindings({**values, var.name: list(range(dims[k]))}):
            b = begin + coef * env[var.name]
            if b + width > dims[k]:
                continue
            real = list(box)
            real[k] = (b, b + width)
            try:
                a = concrete(theirs, env)
                right = [points(a, y) for y in range(size_of(a))] == [points(concrete(layout, env), x)
                                                                     for x in box_flat(dims, real)]
            except Exception:  # noqa: BLE001
                right = False
            t.tirx["slice@symbolic " + ("agree" if right else "differ")] += 1
            if not right:
                t.tirx_wrong.append(("slice", str(layout), dims, str(symbolic), env, str(theirs)))
    ok, answer = t.call("slice@symbolic", lambda: axe4j.layout.slice(layout, dims, symbolic))
    if ok and answer is None:
        t.counts["slice@symbolic", "none"] += 1
        return
    if not ok:
        return
    bad = None
    checked = 0
    for env in bindings({**values, var.name: list(range(dims[k]))}):
        b = begin + coef * env[var.name]
        if b + width > dims[k]:
            continue
        real = list(box)
        real[k] = (b, b + width)
        c, a = concrete(layout, env), concrete(answer, env)
        checked += 1
        if [points(a, y) for y in range(size_of(a))] != [points(c, x) for x in box_flat(dims, real)]:
            bad = bad or (str(layout), dims, str(symbolic), env, str(answer))
    t.judge("slice@symbolic", bad is None and checked > 0, bad)


def check_group_canonical_span(t, layout, dims, values, c0):
    """group and canonicalize keep the map at every binding; span is one past the largest m coordinate."""
    size = size_of(c0)
    for op, fn in (("group", lambda: axe4j.layout.group(layout, dims)[0]),
                   ("canonicalize", lambda: axe4j.layout.canonicalize(layout))):
        ok, answer = t.call(op, fn)
        if not ok:
            continue
        bad = None
        for env in bindings(values):
            c, a = concrete(layout, env), concrete(answer, env)
            if [points(a, x) for x in range(size)] != [points(c, x) for x in range(size)]:
                bad = bad or (str(layout), dims, env, str(answer))
        t.judge(op, bad is None, bad)
    ok, answer = t.call("span", lambda: axe4j.layout.span(layout, "m"))
    if ok:
        bad = None
        for env in bindings(values):
            c = concrete(layout, env)
            top = max(dict(p).get("m", 0) for x in range(size) for p in points(c, x)) + 1
            if evaluate(answer, env) != top:
                bad = bad or (str(layout), env, answer, top)
        t.judge("span", bad is None, bad)


def check_equivalent(t, layout, values, c0):
    """A layout is equivalent to its canonical form; one whose map differs at some binding is not."""
    ok, canon = t.call("canonicalize", lambda: axe4j.layout.canonicalize(layout))
    if ok:
        ok, same = t.call("equivalent", lambda: axe4j.layout.equivalent(layout, canon))
        if ok:
            t.judge("equivalent", bool(same), (str(layout), str(canon)))
    moved = moved_by_one(layout)
    ok, same = t.call("equivalent", lambda: axe4j.layout.equivalent(layout, moved))
    if ok:
        t.judge("equivalent", not same, (str(layout), str(moved)))


def moved_by_one(layout):
    """The layout with 1 more on its m offset: a different map at every binding (a swizzle is one-to-one)."""
    tile = layout.tile_layout if type(layout).__name__ == "ComposeLayout" else layout
    offset = dict(tile.offset)
    offset[Axis.m] = offset[Axis.m] + 1 if Axis.m in offset else 1
    moved = TileLayout.from_iters(list(tile.shard), list(tile.replica), offset)
    if tile is layout:
        return moved
    return ComposeLayout(int(layout.per_element), int(layout.swizzle_len), int(layout.atom_len), moved,
                         bool(layout.swizzle_inner))


def check_symbolic_strides(t, rng):
    """Iters with a symbolic extent or stride have no axe4j form: every operation refuses, naming the field."""
    n = tirx.Var("n", "int32")
    which = rng.choice(["stride", "extent"])
    it = Iter(4, n, Axis.m) if which == "stride" else Iter(n, 4, Axis.m)
    layout = TileLayout.from_iters([it, Iter(4, 1, Axis.m)], [], {})
    for op, fn in (("apply", lambda: axe4j.layout.apply(layout, 1)),
                   ("slice", lambda: axe4j.layout.slice(layout, [4, 4], [(0, 2), (0, 4)])),
                   ("canonicalize", lambda: axe4j.layout.canonicalize(layout))):
        try:
            fn()
            t.judge("symbolic " + which, False, (op, str(layout), "answered"))
        except ValueError as e:
            named = str(e).startswith("axe4j.layout." + op) and which in str(e) and "is n" in str(e)
            t.judge("symbolic " + which, named, (op, str(layout), str(e)[:300]))


def test_symbolic_paths_are_right_at_every_binding(bridge):
    rng = random.Random(SEED)
    t = Tally()
    kinds = collections.Counter()
    for _ in range(CASES):
        layout, dims, values, kind = random_case(rng)
        kinds[kind, bool(values)] += 1
        c0 = concrete(layout, {name: 0 for name in values})
        check_apply(t, layout, values, c0)
        check_symbolic_index(t, layout, dims, values, c0)
        check_slice(t, rng, layout, dims, values, c0)
        check_group_canonical_span(t, layout, dims, values, c0)
        check_equivalent(t, layout, values, c0)
        if rng.random() < 0.1:
            check_symbolic_strides(t, rng)
    print("symbolic fuzz:", dict(sorted(t.counts.items())), "TIRx:", dict(t.tirx), "kinds:", dict(kinds))
    print("TIRx differs from the definition, first cases:", t.tirx_wrong[:4])
    print("a refusal per operation:", t.refusals)
    assert not t.internal, f"{len(t.internal)} internal errors, first: {t.internal[:3]}"
    assert not t.wrong, f"{len(t.wrong)} wrong answers, first: {t.wrong[:3]}"
    for op in ("apply", "apply@symbolic", "apply@coordinate", "slice", "slice@symbolic", "group", "canonicalize",
               "span", "equivalent"):
        assert t.counts[op, "right"] > 0, (op, t.counts)


def test_a_symbolic_offset_is_swizzled_with_the_rest_of_the_address(bridge):
    """``ComposeLayout(3,3,3, S[(8,8):(64,1)] + high*64 + low%8 + 16)``: at every one of the 1,024 (index, binding)
    pairs, apply is swz(D(x) + offset) (80 at high = 1, low = 0, index 0 swizzles to 88), as the definition and TIRx
    say; so are apply at a symbolic index and the slice at a symbolic start. Its span has no closed form and is refused
    by name. An offset term that is a multiple of the period (512) passes the swizzle and stays a plain sum."""
    high, low = tirx.Var("high", "int32"), tirx.Var("low", "int32")
    layout = ComposeLayout(3, 3, 3, TileLayout.from_iters([Iter(8, 64, Axis.m), Iter(8, 1, Axis.m)], [],
                                                          {Axis.m: high * 64 + tirx.floormod(low, 8) + 16}), True)
    answers = [axe4j.layout.apply(layout, x) for x in range(64)]
    at_w = axe4j.layout.apply(layout, W)
    sliced = axe4j.layout.slice(layout, [8, 8], [(W, W + 1), (0, 8)])
    pairs = 0
    for env in bindings({"high": range(4), "low": range(4)}):
        c = concrete(layout, env)
        sliced_c = concrete(sliced, {**env, "w": 0})
        for x, answer in enumerate(answers):
            expected = points(c, x)
            assert evaluated(answer, env) == expected == evaluated([layout.apply(x)], env), (x, env, answer)
            assert evaluated(at_w, {**env, "w": x}) == expected, (x, env, at_w)
            pairs += 1
        for w in range(8):
            sliced_c = concrete(sliced, {**env, "w": w})
            assert [points(sliced_c, y) for y in range(8)] == [points(c, 8 * w + y) for y in range(8)], (env, w)
    assert pairs == 1024
    assert evaluated(axe4j.layout.apply(layout, 0), {"high": 1, "low": 0}) == frozenset({frozenset({("m", 88)})})
    with pytest.raises(ValueError, match=r"axe4j.layout.span: Swizzle<3,3,3> o .* is swizzled after a symbolic "
                       r"offset whose term 64\*high is not a multiple of the swizzle's period 512"):
        axe4j.layout.span(layout)
    stage = tirx.Var("stage", "int32")
    staged = ComposeLayout(3, 3, 3, TileLayout.from_iters([Iter(8, 64, Axis.m), Iter(8, 1, Axis.m)], [],
                                                          {Axis.m: stage * 16384}), True)
    assert str(axe4j.layout.apply(staged, 8)[0]["m"]) == "stage * 16384 + 72"
    assert str(axe4j.layout.span(staged)) == "stage * 16384 + 512"
