"""Register-tile copies and maps whose region crosses a layout digit part way, run in the CUDA interpreter against
numpy: ``axe4j-cuda-register`` cuts them into boxes at digit boundaries (plan ``cuda-register-boxes``) when there
are few, else ``axe4j-cuda-register-digits`` visits each slot of each thread (plan ``cuda-register-digits``).

Random cases, seeded: a warp loads a region of a (N,) global view with a permuted, tiled or padded layout into a
register tile over the lanes and stores it back whole; or stores a register tile into such a region (the rest of
the destination must keep its values); or reads into part of a register tile whose region crosses the tile's own
digits. The reference evaluates each layout S[(e_0..e_k):(s_0..s_k)] as sum_k digit_k(i) * s_k, digits of i in the
row-major mixed radix of the extents. Every call must be lowered by axe4j's cases.
"""

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j.cuda import interp
from _lowered import assert_axe4j_lowered

TARGET = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
CASES = 30


def _address(extents, strides, n):
    """The memory offset of each of the layout's n elements (row-major digits of the index)."""
    index = np.arange(n)
    out = np.zeros(n, dtype=np.int64)
    for e, s in zip(reversed(extents), reversed(strides)):
        out += (index % e) * s
        index //= e
    return out


def _memory_layout(rng, n):
    """A (N,) view over memory, N >= 2n: digits of extents 2, 4 or 8 in a random order of strides, maybe padded."""
    extents = [int(x) for x in rng.choice([2, 4, 8], size=int(rng.integers(2, 4)))]
    while int(np.prod(extents)) < 2 * n:
        extents.append(int(rng.choice([2, 4])))
    order = rng.permutation(len(extents))          # order[k]: rank of digit k's stride, 0 = innermost
    strides, step = [0] * len(extents), 1
    for k in sorted(range(len(extents)), key=lambda k: order[k]):
        strides[k] = step
        step *= extents[k] + (1 if rng.random() < 0.3 else 0)   # padding between digits
    span = int(_address(extents, strides, int(np.prod(extents))).max()) + 1
    return extents, strides, span


def _register_layout(rng, n):
    """An (n,) register tile over 32 lanes, n = 32 * slots: lane digits and register digits interleaved."""
    slots = n // 32
    lane = list([(32,), (4, 8), (8, 4), (2, 16)][int(rng.integers(4))])
    regs = [2] * (slots.bit_length() - 1) if rng.random() < 0.5 else ([slots] if slots > 1 else [])
    pieces = [("lane", e) for e in lane] + [("reg", e) for e in regs]
    rng.shuffle(pieces)
    extents, strides = [], []
    lane_step, reg_step = 1, 1
    for kind, e in reversed(pieces):   # innermost last: lane digits in mixed radix of laneid, inner first
        extents.insert(0, e)
        if kind == "lane":
            strides.insert(0, lane_step @ laneid)
            lane_step *= e
        else:
            strides.insert(0, reg_step)
            reg_step *= e
    return TileLayout(S[tuple(extents):tuple(strides)])


def _header():
    T.device_entry()
    T.cta_id([1])
    T.warp_id([1])
    T.lane_id([32])
    T.thread_id([32])


def _load(mem, span, start, reg, n):
    """r <- At[start:start + n]; B <- r."""
    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (span,), "float32")
        B = T.match_buffer(B_ptr, (n,), "float32")
        _header()
        At = T.decl_buffer((int(np.prod(mem[0])),), "float32", data=A.data, layout=TileLayout(S[tuple(mem[0]):tuple(mem[1])]))
        r = T.alloc_buffer((n,), "float32", scope="local", layout=reg)
        Tx.warp.copy(r[:], At[start:start + n])
        Tx.warp.copy(B[:], r[:])

    return kernel


def _store(mem, span, start, reg, n):
    """r <- A; Bt[start:start + n] <- exp(r)."""
    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (n,), "float32")
        B = T.match_buffer(B_ptr, (span,), "float32")
        _header()
        Bt = T.decl_buffer((int(np.prod(mem[0])),), "float32", data=B.data, layout=TileLayout(S[tuple(mem[0]):tuple(mem[1])]))
        r = T.alloc_buffer((n,), "float32", scope="local", layout=reg)
        Tx.warp.copy(r[:], A[:])
        Tx.warp.exp(Bt[start:start + n], r[:])

    return kernel


def _partial(reg, n, start, count):
    """r <- A (whole); r[start:start + count] <- B[0:count]; C <- r: the region crosses the tile's own digits."""
    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (n,), "float32")
        B = T.match_buffer(B_ptr, (count,), "float32")
        C = T.match_buffer(C_ptr, (n,), "float32")
        _header()
        r = T.alloc_buffer((n,), "float32", scope="local", layout=reg)
        Tx.warp.copy(r[:], A[:])
        Tx.warp.copy(r[start:start + count], B[:])
        Tx.warp.copy(C[:], r[:])

    return kernel


def _run(kernel, *arrays):
    executable = axe4j.compile(kernel, TARGET)
    assert_axe4j_lowered(executable)
    interp.run(executable, *arrays)
    return executable


def _crossing_start(rng, extents, n):
    """A start whose region [start, start + n) crosses the innermost digit part way."""
    size = int(np.prod(extents))
    inner = extents[-1]
    while True:
        start = int(rng.integers(0, size - n + 1))
        if start % inner:
            return start


@pytest.mark.parametrize("seed", range(CASES))
def test_a_region_across_digits_is_cut_into_boxes_and_right(seed):
    rng = np.random.default_rng(4500 + seed)
    kind = ["load", "store", "partial"][seed % 3]
    n = 32 * int(rng.choice([1, 2, 4]))
    reg = _register_layout(rng, n)
    if kind == "partial":
        count = int(rng.integers(2, n - 1))
        start = int(rng.integers(1, n - count + 1))
        a = rng.standard_normal(n).astype("float32")
        b = rng.standard_normal(count).astype("float32")
        c = np.full(n, np.nan, "float32")
        executable = _run(_partial(reg, n, start, count), a, b, c)
        expected = a.copy()
        expected[start:start + count] = b
        np.testing.assert_array_equal(c, expected, err_msg=f"{reg} [{start}:{start + count}]")
        assert executable.lowered[1].variant in ("axe4j-cuda-register", "axe4j-cuda-register-digits")
        return
    extents, strides, span = _memory_layout(rng, n)
    start = _crossing_start(rng, extents, n)
    where = _address(extents, strides, int(np.prod(extents)))[start:start + n]
    if kind == "load":
        a = rng.standard_normal(span).astype("float32")
        b = np.full(n, np.nan, "float32")
        executable = _run(_load((extents, strides), span, start, reg, n), a, b)
        np.testing.assert_array_equal(b, a[where], err_msg=f"S[{extents}:{strides}] [{start}:{start + n}], {reg}")
    else:
        a = rng.standard_normal(n).astype("float32")
        b = np.full(span, -7.0, "float32")
        executable = _run(_store((extents, strides), span, start, reg, n), a, b)
        expected = np.full(span, -7.0, "float32")
        expected[where] = np.exp(a)
        np.testing.assert_allclose(b, expected, rtol=1e-6, err_msg=f"S[{extents}:{strides}] [{start}:{start + n}]")
    crossing = executable.lowered[0 if kind == "load" else 1]   # cut into boxes when few, else one element per slot
    assert (crossing.variant == "axe4j-cuda-register" and "boxes cut at digit boundaries" in " ".join(crossing.notes)
            or crossing.variant == "axe4j-cuda-register-digits"), str(crossing)


def test_the_issue_example_loads_the_transposed_view():
    # r S[32:1@laneid] <- At[4:36], At a (64,) view S[(8,8):(1,8)]: TVM's scalar fallback gave [28, nan, ...]
    a = np.arange(64, dtype="float32")
    b = np.full(32, np.nan, "float32")
    executable = _run(_load(([8, 8], [1, 8]), 64, 4, TileLayout(S[32:1 @ laneid]), 32), a, b)
    np.testing.assert_array_equal(b, a.reshape(8, 8).T.reshape(-1)[4:36])
    assert b[:5].tolist() == [32, 40, 48, 56, 1]
    notes = [n for row in executable.lowered for n in row.notes]
    assert "the region crosses layout digits part way: 3 boxes cut at digit boundaries" in notes


def test_a_run_time_start_that_may_cross_a_digit_is_right_at_every_value():
    # At S[(16,8):(1,16)] (a transposed view), r S[(8,4,2):(4@laneid,1@laneid,1)]: r <- At[5i + 3 : 5i + 67]
    iters, n = 6, 64
    layout = TileLayout(S[(16, 8):(1, 16)])
    reg = TileLayout(S[(8, 4, 2):(4 @ laneid, 1 @ laneid, 1)])

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (128,), "float32")
        B = T.match_buffer(B_ptr, (iters, n), "float32")
        _header()
        At = T.decl_buffer((128,), "float32", data=A.data, layout=layout)
        r = T.alloc_buffer((n,), "float32", scope="local", layout=reg)
        for i in T.serial(iters):
            Tx.warp.copy(r[:], At[5 * i + 3:5 * i + 3 + n])
            Tx.warp.copy(B[i, :], r[:])

    a = np.random.default_rng(45).standard_normal(128).astype("float32")
    b = np.full((iters, n), np.nan, "float32")
    executable = _run(kernel, a, b)
    view = a.reshape(8, 16).T.reshape(-1)
    np.testing.assert_array_equal(b, np.stack([view[5 * i + 3:5 * i + 3 + n] for i in range(iters)]))
    assert executable.lowered[0].variant == "axe4j-cuda-register-digits", str(executable.lowered[0])
