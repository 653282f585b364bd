"""Random ``Tx.gemm`` calls on the CPU against numpy, for the AVX2 and AVX-512 plans (haswell, znver4) and this host.

The differential fuzzer (``axe4j_tools.fuzz``) generates no GEMM, so this slice does: shapes from 1 to 700 (mostly
small, ragged on every dim), A and/or B transposed, float32/float16/bfloat16 operands into a float32 or a 16-bit D,
alpha and beta, C a buffer of its own or D itself, and each operand a region inside a larger buffer. Every program
must compile in the default mode and match numpy; no element of D outside its region may change.

Inputs are small integers, so every float32 sum is exact: a float32 D must match to one rounding of the result. A
16-bit D may also round the partial sums it accumulates (its own type, when no rule widens it): the bound adds one
16-bit ulp of ``K * max|A| * max|B|``. Kernels run where this machine has the target's ISA and only compile elsewhere.
"""

import ml_dtypes
import numpy as np
import pytest
import tvm
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j
from test_cpu_gemm_isa import NEEDS, host_flags

SEED = 20261208
PER_TARGET = 32
NUMPY = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
ULP = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
ZNVER4_NEEDS = NEEDS["skylake-avx512"] | {"avx512_bf16", "avx512vbmi", "avx512_vnni", "avx512ifma", "avx512_vbmi2",
                                          "avx512_bitalg", "avx512_vpopcntdq", "gfni", "vaes", "vpclmulqdq"}
TARGETS = {"host": None, "haswell": NEEDS["haswell"], "znver4": ZNVER4_NEEDS}


def program(seed, index):
    """The ``index``-th random GEMM: a dict of its parameters (a pure function of ``(seed, index)``)."""
    rng = np.random.default_rng([seed, index])
    r = rng.random()
    top = 64 if r < 0.7 else 300 if r < 0.95 else 700
    m, n, k = (int(rng.integers(1, top + 1)) for _ in range(3))
    ab = ("float32", "float32", "float16", "bfloat16")[int(rng.integers(4))]
    p = dict(m=m, n=n, k=k, trans_a=bool(rng.integers(2)), trans_b=bool(rng.integers(2)), ab=ab,
             d=ab if rng.random() < 0.2 else "float32", alpha=float(rng.choice([1.0, 1.5, -0.5])),
             beta=float(rng.choice([0.0, 1.0, 0.5])), c_is_d=bool(rng.random() < 0.3))
    logical = {"A": (k, m) if p["trans_a"] else (m, k), "B": (n, k) if p["trans_b"] else (k, n), "C": (m, n),
               "D": (m, n)}
    for role, shape in logical.items():   # a region at a random start inside a buffer up to 3 larger a dim
        pad = [int(rng.integers(0, 4)) if rng.random() < 0.3 else 0 for _ in shape]
        start = tuple(int(rng.integers(0, e + 1)) for e in pad)
        p[role] = (tuple(s + e for s, e in zip(shape, pad)), start, shape)
    return p


def kernel(p):
    (a_shape, a0, a_ext), (b_shape, b0, b_ext) = p["A"], p["B"]
    (c_shape, c0, _), (d_shape, d0, _) = p["C"], p["D"]
    m, n, ab, dd = p["m"], p["n"], p["ab"], p["d"]
    ta, tb, alpha, beta, c_is_d = p["trans_a"], p["trans_b"], p["alpha"], p["beta"], p["c_is_d"]

    @T.prim_func
    def gemm(A: T.Buffer(a_shape, ab), B: T.Buffer(b_shape, ab), C: T.Buffer(c_shape, dd),
             D: T.Buffer(d_shape, dd)):
        if c_is_d:
            Tx.gemm(D[d0[0]:d0[0] + m, d0[1]:d0[1] + n], A[a0[0]:a0[0] + a_ext[0], a0[1]:a0[1] + a_ext[1]],
                    B[b0[0]:b0[0] + b_ext[0], b0[1]:b0[1] + b_ext[1]], D[d0[0]:d0[0] + m, d0[1]:d0[1] + n],
                    ta, tb, T.float32(alpha), T.float32(beta))
        else:
            Tx.gemm(D[d0[0]:d0[0] + m, d0[1]:d0[1] + n], A[a0[0]:a0[0] + a_ext[0], a0[1]:a0[1] + a_ext[1]],
                    B[b0[0]:b0[0] + b_ext[0], b0[1]:b0[1] + b_ext[1]], C[c0[0]:c0[0] + m, c0[1]:c0[1] + n],
                    ta, tb, T.float32(alpha), T.float32(beta))

    return gemm


def region(x, spec):
    _, start, ext = spec
    return x[start[0]:start[0] + ext[0], start[1]:start[1] + ext[1]]


def reference(p, arrays):
    """(alpha * op(A) @ op(B) + beta * C over the regions in float64, A's region, B's region)."""
    a, b, c, d = (x.astype(np.float64) for x in arrays)
    av, bv = region(a, p["A"]), region(b, p["B"])
    cv = region(d if p["c_is_d"] else c, p["D"] if p["c_is_d"] else p["C"])
    return p["alpha"] * ((av.T if p["trans_a"] else av) @ (bv.T if p["trans_b"] else bv)) + p["beta"] * cv, av, bv


def check(p, arrays, got):
    """None if ``got`` (D after the call) is right, else what is wrong."""
    expect, av, bv = reference(p, arrays)
    ulp = ULP[p["d"]]
    bound = ulp * np.maximum(1.0, np.abs(expect))
    if p["d"] != "float32":
        bound = bound + ulp * p["k"] * np.abs(av).max(initial=0) * np.abs(bv).max(initial=0)
    result = region(got, p["D"]).astype(np.float64)
    bad = np.argwhere(np.abs(result - expect) > bound)
    if len(bad):
        at = tuple(bad[0])
        return f"{len(bad)} elements off, first at {at}: {result[at]} against {expect[at]}"
    outside = got.copy()
    region(outside, p["D"])[...] = region(arrays[3], p["D"])
    if not np.array_equal(outside.view(np.uint8), arrays[3].view(np.uint8)):
        return "an element of D outside its region changed"
    return None


def target_of(name):
    return axe4j.host_target() if name == "host" else tvm.target.Target({"kind": "llvm", "mcpu": name})


@pytest.mark.parametrize("name", list(TARGETS))
def test_random_gemms_match_numpy(name):
    runs = TARGETS[name] is None or TARGETS[name] <= host_flags()
    failures = []
    for index in range(PER_TARGET):
        p = program(SEED + list(TARGETS).index(name), index)
        try:
            lib = axe4j.compile(kernel(p), target_of(name))
        except Exception as error:   # noqa: BLE001  (every failure is collected and reported with its program)
            failures.append(f"#{index} {p}: does not compile: {type(error).__name__}: {str(error)[:300]}")
            continue
        if not runs:
            continue
        rng = np.random.default_rng([SEED, index, 1])
        arrays = [rng.integers(-span, span + 1, p[role][0]).astype(NUMPY[dtype])
                  for role, dtype, span in (("A", p["ab"], 3), ("B", p["ab"], 3), ("C", p["d"], 4), ("D", p["d"], 4))]
        tensors = [tvm.runtime.tensor(x) for x in arrays]
        lib(*tensors)
        wrong = check(p, arrays, tensors[3].numpy())
        if wrong:
            failures.append(f"#{index} {p}: {wrong}")
    assert not failures, "\n".join(failures)


def test_the_check_rejects_a_wrong_product_and_a_stray_write():
    p = next(q for q in (program(SEED, i) for i in range(100)) if q["d"] == "float32" and q["m"] > 1 and q["k"] > 1
             and q["D"][1] != (0, 0))
    rng = np.random.default_rng(0)
    arrays = [rng.integers(-3, 4, p[role][0]).astype(NUMPY[p["ab"] if role in "AB" else p["d"]]) for role in "ABCD"]
    right = arrays[3].copy()
    region(right, p["D"])[...] = reference(p, arrays)[0]
    assert check(p, arrays, right) is None
    off = right.copy()
    region(off, p["D"])[-1, -1] += 1.0
    assert "1 elements off" in check(p, arrays, off)
    stray = right.copy()
    stray[0, 0] += 1.0   # outside: the region starts past (0, 0)
    assert check(p, arrays, stray) == "an element of D outside its region changed"
