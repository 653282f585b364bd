"""Random layouts and regions, end to end: copy and add between random Axe layouts (tiled, padded, permuted,
offset, replicated, spread over cpu workers) and random slices, compiled through the Java CPU rules and
compared element for element with numpy's reading of the same layouts.

Each case runs with the rule dispatch picks and again with ``dispatch="axe4j-cpu-digits"`` forced (the rule
that addresses every element from the layout's digits). ``axe4j.explain`` first says whether some rule
accepts; when every rule declines, compiling must fail with TVM's dispatch report. All cases must run.
"""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import R, S, Axis, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j
from test_cpu_dispatch import SENTINEL, Mem, expect, random_mem

CASES = 40
CPU = Axis.get("cpu")


def random_layout(rng, shape, allow_replica, allow_cpu):
    """A layout over ``shape``: each dim kept whole or split in two iters; iters given compact strides in a random
    order, each stride padded by 0 or 1; sometimes an offset, a replica, or one iter on the cpu axis.
    Returns (layout, memory size the layout reaches)."""
    extents = []
    for n in shape:
        divisors = [d for d in range(2, n) if n % d == 0]
        if divisors and rng.random() < 0.5:
            d = int(rng.choice(divisors))
            extents += [n // d, d]
        else:
            extents.append(n)
    order = rng.permutation(len(extents))
    cpu_iter = int(rng.integers(len(extents))) if allow_cpu and rng.random() < 0.3 else -1
    strides = [0] * len(extents)
    step = 1
    for k in order:
        if k == cpu_iter:
            continue
        strides[k] = step
        step *= extents[k] + int(rng.integers(2))
    stride_terms = tuple(1 @ CPU if k == cpu_iter else strides[k] for k in range(len(extents)))
    spec = S[tuple(extents):stride_terms]
    span = step
    if allow_replica and rng.random() < 0.3:
        spec = spec + R[2:step]
        span = 2 * step
    offset = int(rng.integers(4)) if rng.random() < 0.5 else 0
    if offset:
        spec = spec + offset
    if cpu_iter >= 0:
        span = span * extents[cpu_iter]
    return TileLayout(spec), span + offset


def random_case(rng):
    rank = int(rng.integers(1, 4))
    extent = [int(rng.integers(1, 6)) for _ in range(rank)]
    shapes, starts = [], []
    for _ in range(3):
        pad = [int(rng.integers(0, 4)) for _ in range(rank)]
        start = [int(rng.integers(0, p + 1)) for p in pad]
        shapes.append(tuple(e + p for e, p in zip(extent, pad)))
        starts.append(start)
    return extent, shapes, starts


def region(buf, start, extent):
    return buf[tuple(slice(s, s + e) for s, e in zip(start, extent))]


def build(op, shapes, layouts, sizes, starts, extent, dispatch=None):
    (s0, s1, s2), (l0, l1, l2), (n0, n1, n2) = shapes, layouts, sizes

    if op == "copy":
        @T.prim_func
        def kernel(Af: T.Buffer((n0,), "float32"), Df: T.Buffer((n2,), "float32")):
            A = T.decl_buffer(s0, "float32", data=Af.data, layout=l0)
            D = T.decl_buffer(s2, "float32", data=Df.data, layout=l2)
            Tx.copy(region(D, starts[2], extent), region(A, starts[0], extent), dispatch=dispatch)
    else:
        @T.prim_func
        def kernel(Af: T.Buffer((n0,), "float32"), Bf: T.Buffer((n1,), "float32"), Df: T.Buffer((n2,), "float32")):
            A = T.decl_buffer(s0, "float32", data=Af.data, layout=l0)
            B = T.decl_buffer(s1, "float32", data=Bf.data, layout=l1)
            D = T.decl_buffer(s2, "float32", data=Df.data, layout=l2)
            Tx.add(region(D, starts[2], extent), region(A, starts[0], extent), region(B, starts[1], extent),
                   dispatch=dispatch)
    return kernel


def test_random_layouts_and_regions_end_to_end():
    axe4j.install()
    rng = np.random.default_rng(20261122)
    ran = declined = 0
    used = {}
    for case in range(CASES):
        op = "copy" if case % 2 == 0 else "add"
        extent, shapes, starts = random_case(rng)
        layouts, sizes = [], []
        for k, shape in enumerate(shapes):
            layout, size = random_layout(rng, shape, allow_replica=True, allow_cpu=True)
            layouts.append(layout)
            sizes.append(size)
        kernel = build(op, shapes, layouts, sizes, starts, extent)
        report = axe4j.explain(kernel, "llvm", file=open("/dev/null", "w"))
        where = f"case {case}: {op} extent {extent} shapes {shapes} starts {starts} layouts {layouts}\n{report}"
        if "<- chosen" not in report:
            declined += 1
            with pytest.raises(Exception, match="TIRx schedule dispatch failed"):
                axe4j.compile(kernel, "llvm")
            continue
        chosen = report.split("<- chosen")[0].rsplit("\n", 1)[-1].split()[0]
        mems = [random_mem(s, l, n) for s, l, n in zip(shapes, layouts, sizes)]
        fill = RNG_FILL(rng, shapes[2])
        for dispatch in (None, "axe4j-cpu-digits"):
            dst = Mem(shapes[2], layouts[2], sizes[2])
            dst.put(fill)
            before = dst.logical().copy()
            lib = axe4j.compile(build(op, shapes, layouts, sizes, starts, extent, dispatch), "llvm")
            inputs = [mems[0]] if op == "copy" else mems[:2]
            tensors = [tvm.runtime.tensor(m.data) for m in inputs] + [tvm.runtime.tensor(dst.data)]
            lib(*tensors)
            out = tensors[-1].numpy()
            sl = [tuple(slice(s, s + e) for s, e in zip(st, extent)) for st in starts]
            expected = before.copy()
            values = mems[0].logical()[sl[0]]
            if op == "add":
                values = values + mems[1].logical()[sl[1]]
            expected[sl[2]] = values
            try:
                expect(out, dst, expected)
            except AssertionError as error:
                raise AssertionError(f"dispatch={dispatch or chosen}: {where}") from error
        used[chosen] = used.get(chosen, 0) + 1
        ran += 1
    print("rules chosen:", used)
    assert ran == CASES, f"only {ran} of {CASES} random cases ran ({declined} declined by every rule)"
    assert used.get("axe4j-cpu-vector", 0) >= CASES // 3, used


def RNG_FILL(rng, shape):
    return rng.uniform(-3, 3, size=shape).astype("float32")
