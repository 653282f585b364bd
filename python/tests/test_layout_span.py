"""axe4j.layout.span with TIRx's meaning, image_span with axe4j's, and layouts whose span leaves 64 bits."""

import random

import pytest
import tvm
from tvm.tirx.layout import Axis, ComposeLayout, Iter, S, TileLayout

import axe4j
from test_layout import random_layout


def test_span_is_tirx_s_and_image_span_axe4j_s(bridge):
    """span: one past the largest coordinate (offset counted; memory axes added without an axis), equal to TIRx's on
    seeded layouts with non-negative strides; image_span: max - min + 1."""
    rng = random.Random(20261130)
    compared = 0
    for _ in range(200):
        layout = random_layout(rng)
        if any(int(it.stride) < 0 for it in list(layout.shard) + list(layout.replica)):
            continue
        for axis in ["m", "laneid", "warpid"]:
            assert axe4j.layout.span(layout, axis) == int(layout.span(axis)), (layout, axis)
        assert axe4j.layout.span(layout) == int(layout.span()), layout
        compared += 1
    assert compared > 100
    n = tvm.tirx.Var("n", "int32")
    shifted = TileLayout.from_iters([Iter(4, 2, Axis.m)], [], {Axis.m: n * 16})
    assert str(axe4j.layout.span(shifted)) == str(shifted.span()) == "n * 16 + 7"
    # Where TIRx's figure is not the largest coordinate plus one: a negative stride, a swizzle.
    assert axe4j.layout.span("S[4:-2] + 10") == 11
    assert int(TileLayout.from_iters([Iter(4, -2, Axis.m)], [], {Axis.m: 10}).span()) == 5
    swizzled = ComposeLayout(3, 3, 3, TileLayout(S[(2, 3):(64, 1)]), True)
    largest = max(p["m"] for x in range(6) for p in axe4j.layout.apply(swizzled, x))
    assert axe4j.layout.span(swizzled) == largest + 1 == 75 and int(swizzled.span()) == 67
    assert axe4j.layout.image_span("S[4:-2] + 10", "m") == 7
    assert axe4j.layout.image_span("S[(4,8):(8,1)] + 5") == {"m": 32}


def test_a_layout_whose_span_overflows_applies_where_its_points_fit(bridge):
    """S[2:2^63-1]: x = 1 is 2^63-1; its span (2^63) and a point past 64 bits are refused naming the layout."""
    big = "S[2:9223372036854775807]"
    assert axe4j.layout.apply(big, 1) == [{"m": 2**63 - 1}]
    assert axe4j.layout.apply(big, 0) == [{"m": 0}]
    assert axe4j.layout.to_text(axe4j.layout.parse(big)) == big
    with pytest.raises(ValueError, match=r"image_span: span of S\[2:9223372036854775807\] on axis m overflows 64"):
        axe4j.layout.image_span(big, "m")
    with pytest.raises(ValueError, match=r"span: span of S\[2:9223372036854775807\] .*overflows 64 bits"):
        axe4j.layout.span(big)
    with pytest.raises(ValueError, match=r"layout S\[2:4611686018427387904\] \+ 4611686018427387904 reaches "
                                         r"9223372036854775808 at x = 1 on axis m: a coordinate overflows 64 bits"):
        axe4j.layout.parse("S[2:4611686018427387904] + 4611686018427387904")
