"""broadcast, permute_dims, is_trivial, is_swizzle, is_trainium, get_scope, trainium and to_psum of axe4j.layout
against TIRx's own methods on many random layouts: the same iters (these operations only move, insert or relabel
iters), the same predicate, or an error on both sides. Where axe4j answers differently on purpose (an error where TIRx
builds an invalid layout, asserts, clamps or loops), the case is checked here as docs/divergences.md lists it."""

import random

import pytest
import tvm
from tvm.tirx.layout import Axis, ComposeLayout, Iter, TileLayout

import axe4j
from axe4j import layout as al

THREADS = ["laneid", "warpid", "tx", "wgid", "tid_in_wg", "wid_in_wg", "cbx", "cby"]


def iters(layout) -> tuple:
    """(shard, replica, offset) of a TileLayout, as plain values; zero offsets dropped (axe4j keeps none)."""
    def listed(its):
        return [(int(it.extent), int(it.stride), str(it.axis.name)) for it in its]
    offset = {str(k.name): int(v) for k, v in layout.offset.items() if int(v) != 0}
    return listed(layout.shard), listed(layout.replica), offset


def described(layout) -> tuple:
    """iters(), with a ComposeLayout's swizzle in front."""
    if isinstance(layout, ComposeLayout):
        swizzle = (int(layout.per_element), int(layout.swizzle_len), int(layout.atom_len), bool(layout.swizzle_inner))
        return ("compose", swizzle, iters(layout.tile_layout))
    return ("tile", iters(layout))


def outcome(fn):
    """("ok", value) or ("error", None): what a call does, an exception of any kind being an error."""
    try:
        return "ok", fn()
    except Exception:  # noqa: BLE001 - TIRx raises AssertionError, InternalError, IndexError ...
        return "error", None


def random_tile(rng: random.Random, axes=("m", "m", "laneid", "warpid"), replica=0.2, offset=0.3) -> TileLayout:
    shard = []
    compact = 1
    for _ in range(rng.randint(0, 4)):
        extent = rng.choice([1, 2, 3, 4, 8])
        stride = rng.choice([compact, compact, rng.randint(0, 9), 1 << rng.randint(0, 4), -rng.randint(1, 4)])
        shard.insert(0, Iter(extent, stride, Axis.get(rng.choice(axes))))
        compact *= extent
    reps = [Iter(rng.randint(1, 3), rng.randint(1, 8), Axis.get(rng.choice(axes)))] if rng.random() < replica else []
    off = {Axis.get(rng.choice(axes)): rng.randint(1, 20)} if rng.random() < offset else {}
    return TileLayout.from_iters(shard, reps, off)


def random_swizzled(rng: random.Random) -> ComposeLayout:
    """A swizzle over a tile of m iters (the swizzle acts on m), sometimes trivial (a bare swizzle)."""
    if rng.random() < 0.3:
        tile = TileLayout.from_iters([Iter(rng.choice([256, 512, 1024]), 1, Axis.m)], [], {})
    else:
        tile = random_tile(rng, axes=("m",), replica=0.0, offset=0.2)
        if not tile.shard:
            tile = TileLayout.from_iters([Iter(8, 64, Axis.m), Iter(64, 1, Axis.m)], [], {})
    return ComposeLayout(3, rng.randint(1, 3), 3, tile, rng.random() < 0.8)


@pytest.fixture(scope="module")
def jvm():
    axe4j.install()


def test_broadcast_inserts_the_same_iter_as_tirx(jvm):
    rng = random.Random(36)
    agreed = swizzled = 0
    for case in range(400):
        layout = random_swizzled(rng) if case % 4 == 3 else random_tile(rng)
        tile = layout.tile_layout if isinstance(layout, ComposeLayout) else layout
        n = len(tile.shard)
        num = rng.randint(1, 5)
        position = rng.randint(-(n + 1), n)
        axis = "m" if isinstance(layout, ComposeLayout) else rng.choice(["m", "laneid", "F"])
        mine = al.broadcast(layout, num, position, axis if rng.random() < 0.5 else Axis.get(axis))
        assert described(mine) == described(layout.broadcast(num, position, axis)), (layout, num, position, axis)
        agreed += 1
        swizzled += isinstance(layout, ComposeLayout)
    assert agreed == 400 and swizzled >= 90
    # the defaults: appended on m
    layout = TileLayout.from_iters([Iter(8, 2, Axis.m), Iter(2, 1, Axis.m)], [], {})
    assert described(al.broadcast(layout, 4)) == described(layout.broadcast(4))


def test_broadcast_refuses_what_tirx_builds_wrongly(jvm):
    layout = TileLayout.from_iters([Iter(8, 2, Axis.m), Iter(2, 1, Axis.m)], [], {})
    # TIRx clamps (7 -> appended), wraps (-4 -> before the last iter) and builds extents 0 and -1
    assert described(layout.broadcast(4, 7)) == described(layout.broadcast(4, 2))
    assert iters(layout.broadcast(4, -4))[0][1] == (4, 0, "m")
    for args, named in [((4, 7), "position"), ((4, -4), "position"), ((0,), "num"), ((-1,), "num")]:
        with pytest.raises(ValueError, match=named):
            al.broadcast(layout, *args)
    with pytest.raises(ValueError, match="axis"):
        al.broadcast(layout, 2, -1, 3)
    with pytest.raises(ValueError, match="axis must be m"):
        al.broadcast(ComposeLayout(3, 3, 3, layout, True), 2, -1, "laneid")


def test_permute_dims_reorders_the_shard_as_tirx(jvm):
    rng = random.Random(3636)
    agreed = 0
    for case in range(300):
        layout = random_tile(rng)
        perm = list(range(len(layout.shard)))
        rng.shuffle(perm)
        assert described(al.permute_dims(layout, perm)) == described(layout.permute_dims(perm)), (layout, perm)
        agreed += 1
    assert agreed == 300
    # a ComposeLayout (TIRx has no permute_dims there): its tile permuted, the swizzle kept
    for case in range(50):
        layout = random_swizzled(rng)
        perm = list(range(len(layout.tile_layout.shard)))
        rng.shuffle(perm)
        want = ComposeLayout(layout.per_element, layout.swizzle_len, layout.atom_len,
                             layout.tile_layout.permute_dims(perm), layout.swizzle_inner)
        assert described(al.permute_dims(layout, perm)) == described(want)
    layout = TileLayout.from_iters([Iter(8, 2, Axis.m), Iter(2, 1, Axis.m)], [], {})
    assert iters(layout.permute_dims([0, 0]))[0] == [(8, 2, "m"), (8, 2, "m")]  # TIRx: any list of the length
    for perm in ([0, 0], [0], [0, 2], [1, -1]):
        with pytest.raises(ValueError, match="perm"):
            al.permute_dims(layout, perm)


def _trivial_candidates(rng: random.Random):
    """Row-major chains on one axis (often trivial), broken by a stride, an axis, an extent-1 iter, a replica or an
    offset now and then, and plain random layouts."""
    for _ in range(300):
        if rng.random() < 0.3:
            yield random_tile(rng, axes=("m", "F", "P", "laneid", "warpid"))
            continue
        axis = rng.choice(["m", "m", "F", "P", "laneid", "TCol"])
        extents = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(0, 4))]
        strides, s = [], 1
        for e in reversed(extents):
            strides.insert(0, s)
            s *= e
        shard = [[e, st, axis] for e, st in zip(extents, strides)]
        if shard and rng.random() < 0.3:
            k = rng.randrange(len(shard))
            if rng.random() < 0.5:
                shard[k][1] = rng.choice([0, 2, 5, -1])
            else:
                shard[k][2] = rng.choice(["m", "F", "laneid"])
        if rng.random() < 0.2:
            shard.insert(rng.randint(0, len(shard)), [1, rng.randint(0, 9), rng.choice(["m", "laneid", "F"])])
        reps = [Iter(rng.randint(1, 2), 3, Axis.m)] if rng.random() < 0.1 else []
        off = {Axis.m: rng.randint(1, 3)} if rng.random() < 0.1 else {}
        yield TileLayout.from_iters([Iter(e, st, Axis.get(a)) for e, st, a in shard], reps, off)


def test_is_trivial_is_swizzle_is_trainium_as_tirx(jvm):
    rng = random.Random(36_000)
    agreed = trivial = swizzles = trainium = 0
    for layout in _trivial_candidates(rng):
        assert al.is_trivial(layout) == layout.is_trivial(), layout
        assert al.is_swizzle(layout) is False and layout.is_swizzle() is False
        assert al.is_trainium(layout) == layout.is_trainium(), layout
        swizzled = ComposeLayout(3, 3, 3, layout, True)
        assert al.is_swizzle(swizzled) == swizzled.is_swizzle(), swizzled
        assert al.is_trivial(swizzled) is False and swizzled.is_trivial() is False
        assert al.is_trainium(swizzled) is False and swizzled.is_trainium() is False
        agreed += 1
        trivial += layout.is_trivial()
        swizzles += swizzled.is_swizzle()
        trainium += layout.is_trainium()
    assert agreed == 300 and 40 <= trivial <= 260 and swizzles == trivial and 30 <= trainium <= 270, (
        agreed, trivial, trainium)
    for layout in [TileLayout.from_iters([], [], {}), TileLayout.from_iters([Iter(1, 7, Axis.m)], [], {}),
                   TileLayout.from_iters([Iter(1, 1, Axis.laneid)], [], {}),
                   TileLayout.from_iters([Iter(8, 1, Axis.m)], [Iter(1, 3, Axis.m)], {})]:
        assert al.is_trivial(layout) == layout.is_trivial(), layout


def test_is_trivial_answers_where_tirx_raises(jvm):
    # thread axes that do not chain (TIRx's canonicalize asks for their scope first)
    layout = TileLayout.from_iters([Iter(4, 1, Axis.wgid), Iter(32, 1, Axis.laneid)], [], {})
    with pytest.raises(Exception, match="disconnected scope chain"):
        layout.is_trivial()
    assert al.is_trivial(layout) is False
    # an axis TIRx has not registered is a memory axis to axe4j; TIRx cannot tell thread from memory
    layout = TileLayout.from_iters([Iter(8, 1, Axis.get("w36_unregistered"))], [], {})
    with pytest.raises(Exception, match="Attribute thread has not been registered"):
        layout.is_trivial()
    assert al.is_trivial(layout) is True


def _scoped(rng: random.Random) -> TileLayout:
    shard = [Iter(rng.choice([1, 2, 4]), rng.choice([0, 1, 2]), Axis.get(rng.choice(THREADS + ["m"])))
             for _ in range(rng.randint(0, 3))]
    reps = [Iter(2, 1, Axis.get(rng.choice(THREADS)))] if rng.random() < 0.25 else []
    off = {Axis.get(rng.choice(THREADS)): rng.randint(0, 3)} if rng.random() < 0.25 else {}  # 0 counts too
    return TileLayout.from_iters(shard, reps, off)


def test_get_scope_as_tirx(jvm):
    rng = random.Random(360)
    answered = errors = none = 0
    for _ in range(400):
        layout = _scoped(rng)
        want = outcome(layout.get_scope)
        mine = outcome(lambda: al.get_scope(layout))
        assert mine[0] == want[0], (layout, want, mine)
        if want[0] == "ok" and want[1] is not None:
            assert (mine[1][0].name, mine[1][1].name) == (want[1][0].name, want[1][1].name), layout
            answered += 1
        elif want[0] == "ok":
            assert mine[1] is None, layout
            none += 1
        else:
            errors += 1
    assert answered >= 80 and errors >= 30 and none >= 30, (answered, errors, none)
    # a ComposeLayout (TIRx has no get_scope there) answers for its tile: no thread axis
    assert al.get_scope(ComposeLayout(3, 3, 3, TileLayout.from_iters([Iter(512, 1, Axis.m)], [], {}))) is None


def test_get_scope_refuses_grid_axes(jvm):
    # TIRx's table gives bx the scope "thread": bx alone answers (cta, thread); bx with tx would loop forever
    bx = TileLayout.from_iters([Iter(4, 1, Axis.bx)], [], {})
    assert [s.name for s in bx.get_scope()] == ["cta", "thread"]
    for layout in [bx, TileLayout.from_iters([Iter(4, 1, Axis.bx), Iter(32, 1, Axis.tx)], [], {})]:
        with pytest.raises(ValueError, match="grid axis bx"):
            al.get_scope(layout)


ANNOTATION_EXTENTS = [1, 2, 3, 4, 32, 64, 100, 128, 200, 256, 384, 512, 1024]


def test_trainium_builds_tirx_layouts(jvm):
    rng = random.Random(36_36)
    built = refused = psum = big_p = 0
    for _ in range(400):
        annotation = "".join(rng.choice("PF") for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.1:
            annotation = rng.choice(["PF", "FP", "PPF"])
        shape = [rng.choice(ANNOTATION_EXTENTS) for _ in annotation]
        is_psum = rng.random() < 0.4
        want = outcome(lambda: TileLayout.trainium(annotation, tuple(shape), is_psum))
        mine = outcome(lambda: al.trainium(annotation, shape, is_psum))
        assert mine[0] == want[0], (annotation, shape, is_psum, want, mine)
        if want[0] == "ok":
            assert iters(mine[1]) == iters(want[1]), (annotation, shape, is_psum)
            built += 1
            psum += is_psum
            big_p += annotation.count("P") == 1 and shape[annotation.index("P")] > 128
        else:
            refused += 1
    assert built >= 150 and refused >= 40 and psum >= 50 and big_p >= 20, (built, refused, psum, big_p)
    for bad, named in [(("PX", [2, 3]), "annotation"), (("PF", [3]), "annotation"), (("PF", [200, 3]), "200"),
                       (("PPF", [64, 4, 2]), "256"), ((7, [2]), "annotation")]:
        with pytest.raises(ValueError, match=named):
            al.trainium(*bad)


def test_to_psum_as_tirx(jvm):
    rng = random.Random(3_600)
    converted = refused = 0
    for _ in range(400):
        shard = [Iter(rng.choice([1, 2, 3, 4, 8, 64, 128, 512, 1024]),
                      rng.choice([0, 1, 2, 3, 4, 64, 256, 512, 1024, 1536, -512]),
                      Axis.get(rng.choice(["F", "F", "P", "Bank", "m"]))) for _ in range(rng.randint(0, 3))]
        layout = TileLayout.from_iters(shard, [], {})
        want = outcome(layout.to_psum)
        mine = outcome(lambda: al.to_psum(layout))
        assert mine[0] == want[0], (layout, want, mine)
        if want[0] == "ok":
            assert iters(mine[1]) == iters(want[1]), layout
            converted += 1
        else:
            refused += 1
    assert converted >= 200 and refused >= 10, (converted, refused)


def test_to_psum_keeps_other_replicas_and_offsets_and_refuses_those_on_f(jvm):
    layout = TileLayout.from_iters([Iter(128, 1, Axis.P), Iter(1024, 1, Axis.F)], [Iter(2, 1, Axis.laneid)],
                                   {Axis.P: 3})
    assert iters(layout.to_psum()) == ([(128, 1, "P"), (2, 1, "Bank"), (512, 1, "F")], [], {})  # TIRx drops them
    assert iters(al.to_psum(layout)) == ([(128, 1, "P"), (2, 1, "Bank"), (512, 1, "F")], [(2, 1, "laneid")],
                                         {"P": 3})
    for on_f in [TileLayout.from_iters([Iter(1024, 1, Axis.F)], [Iter(2, 1, Axis.F)], {}),
                 TileLayout.from_iters([Iter(1024, 1, Axis.F)], [], {Axis.F: 5})]:
        with pytest.raises(ValueError, match="offset on F"):
            al.to_psum(on_f)
    with pytest.raises(ValueError, match="no PSUM form"):
        al.to_psum(TileLayout.from_iters([Iter(1000, 1, Axis.F)], [], {}))


def test_the_upstream_test_files_cases(jvm):
    """apache/tvm tests/python/tirx/test_layout.py: trainium_layout_tests, test_trainium_psum_layout_0 and the
    get_scope asserts of test_scope_connected, through axe4j.layout."""
    P, F, laneid, warpid, wid_in_wg = Axis.P, Axis.F, Axis.laneid, Axis.warpid, Axis.wid_in_wg
    layout = al.trainium("PF", (128, 128))
    assert al.size(layout, "P") == 128 and al.size(layout, "F") == 128
    assert iters(al.trainium("FPF", (32, 512, 512))) == iters(TileLayout.from_iters(
        [Iter(32, 512, F), Iter(4, 512 * 32, F), Iter(128, 1, P), Iter(512, 1, F)], [], {}))
    assert iters(al.trainium("FPPF", (2, 4, 32, 512))) == iters(TileLayout.from_iters(
        [Iter(2, 512, F), Iter(4, 32, P), Iter(32, 1, P), Iter(512, 1, F)], [], {}))
    psum = al.to_psum(TileLayout.from_iters([Iter(1024, 1, F), Iter(8, 1, P)], [], {}))
    for i in range(0, 1024, 3):
        for j in range(8):
            (point,) = al.apply(psum, i, j, shape=[1024, 8])
            assert (point.get("Bank", 0), point.get("P", 0), point.get("F", 0)) == (i // 512, j, i % 512)
    for shard, replica, want in [
        ([(8, 4, laneid), (4, 1, laneid), (2, 1, Axis.m)], [], ("thread", "warp")),
        ([(8, 4, laneid)], [(4, 1, laneid)], ("thread", "warp")),
        ([(2, 2, warpid), (8, 4, laneid), (2, 1, warpid), (4, 1, laneid), (2, 1, Axis.m)], [], ("thread", "cta")),
        ([(2, 2, wid_in_wg), (8, 4, laneid), (2, 1, wid_in_wg), (4, 1, laneid), (2, 1, Axis.m)], [],
         ("thread", "warpgroup")),
    ]:
        layout = TileLayout.from_iters([Iter(*it) for it in shard], [Iter(*it) for it in replica], {})
        assert tuple(s.name for s in al.get_scope(layout)) == want


def test_symbolic_offsets_are_kept_and_counted(jvm):
    n = tvm.tirx.Var("n", "int32")
    layout = TileLayout.from_iters([Iter(8, 2, Axis.m), Iter(2, 1, Axis.m)], [], {Axis.m: n * 16, Axis.laneid: n})
    assert str(al.broadcast(layout, 3, 1)) == str(layout.broadcast(3, 1))
    assert str(al.permute_dims(layout, [1, 0])) == str(layout.permute_dims([1, 0]))
    lanes = TileLayout.from_iters([Iter(32, 1, Axis.laneid)], [], {Axis.warpid: n})
    assert [s.name for s in al.get_scope(lanes)] == [s.name for s in lanes.get_scope()] == ["thread", "cta"]
    offset = TileLayout.from_iters([Iter(8, 1, Axis.m)], [], {Axis.m: n})
    assert al.is_trivial(offset) is offset.is_trivial() is False


@pytest.mark.parametrize("call, named", [
    (lambda L: al.permute_dims(L, 5), "perm 5"),
    (lambda L: al.permute_dims(L, [0, 1.5]), r"perm\[1\]"),
    (lambda L: al.trainium("PF", None), "shape None"),
    (lambda L: al.trainium(["P"], [2]), "annotation"),
    (lambda L: al.trainium("PF", [2, 3], is_psum="yes"), "is_psum"),
    (lambda L: al.broadcast(L, 2.5), "num"),
    (lambda L: al.broadcast(L, 2, "x"), "position"),
    (lambda L: al.broadcast(L, 2, -1, 7), "axis"),
    (lambda L: al.get_scope(None), "layout"),
    (lambda L: al.is_trivial(3), "layout"),
])
def test_bad_arguments_are_value_errors_naming_them(jvm, call, named):
    layout = TileLayout.from_iters([Iter(8, 2, Axis.m), Iter(2, 1, Axis.m)], [], {})
    with pytest.raises(ValueError, match=named):
        call(layout)
