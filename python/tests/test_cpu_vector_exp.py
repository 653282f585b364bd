"""``Tx.exp`` on the CPU: float32 ``exp`` as arithmetic in vector registers (``axe4j.cpu.vector_exp``), not a libm
``expf`` call per lane, and within 2 ulp of numpy's ``exp`` over the whole float32 range: overflow to inf past
88.72, subnormal results down to -103.97, 0 below, inf, -inf and NaN."""

import tvm  # noqa: F401  (before the JVM)

import os
import re

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j

SPECIALS = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, -1e-30, 88.72, 88.7228, 88.73, 89.0, 1e30,
            -87.33, -87.34, -100.0, -103.97, -103.98, -104.0, -104.5, -1e30]


def exp_kernel(n):
    @T.prim_func
    def k(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        Tx.exp(B[:], A[:])

    return k


def ordered(x):
    """float32 bits as integers that count ulps across zero (negative floats mirrored below 0)."""
    i = x.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def _flags():
    return open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""


def avx512_host() -> bool:
    return " avx512f" in _flags()


def targets():
    """This host's target, AVX2's (haswell) where the host runs AVX2 code, and two AVX-512 cores' (Skylake server,
    Zen 4: the ``vscalefps`` scaling) where it runs AVX-512 code."""
    flags = _flags()
    avx2 = ["haswell"] if " avx2" in flags and " fma" in flags else []
    return ["host"] + avx2 + (["skylake-avx512", "znver4"] if avx512_host() else [])


def target_of(name):
    return axe4j.host_target() if name == "host" else {"kind": "llvm", "mcpu": name}


@pytest.mark.parametrize("target", targets())
def test_exp_is_within_two_ulp_of_numpy_over_the_float32_range(target):
    axe4j.install()
    sweep = np.linspace(-110, 95, 1 << 20, dtype="float32")   # 2e-4 apart: a 3-ulp corner of a weaker fit shows
    x = np.concatenate([sweep, np.array(SPECIALS, "float32")])
    x = np.concatenate([x, np.zeros((-len(x)) % 16, "float32")])
    lib = axe4j.compile(exp_kernel(len(x)), target_of(target))
    out = tvm.runtime.tensor(np.zeros_like(x))
    lib["main"](tvm.runtime.tensor(x), out)
    got = out.numpy()
    with np.errstate(over="ignore"):
        want = np.exp(x)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    ulps = np.abs(ordered(got[finite]) - ordered(want[finite]))
    worst = int(ulps.argmax())
    assert ulps.max() <= 2, (f"exp({x[finite][worst]!r}) = {got[finite][worst]!r}, numpy {want[finite][worst]!r}: "
                             f"{ulps.max()} ulp")
    assert np.array_equal(np.isinf(got), np.isinf(want))
    assert got[x == -np.inf][0] == 0 and got[x == np.inf][0] == np.inf


@pytest.mark.parametrize("target", targets())
def test_exp_runs_in_vector_registers_without_a_libm_call(target):
    axe4j.install()
    lib = axe4j.compile(exp_kernel(4096), target_of(target))
    asm = lib.mod.inspect_source("asm")
    assert "expf" not in asm, "a libm expf call per lane: exp is not computed in vector registers"
    assert re.search(r"\b(vfmadd\w*|v?mulps)\b", asm), "no packed float multiply in the exp kernel"



@pytest.mark.parametrize("mcpu", ["skylake-avx512", "znver4"])
def test_avx512_scales_by_vscalefps_and_other_isas_by_two_products(mcpu):
    """AVX-512 computes p(r) 2^n with one ``vscalefps`` (LLVM's ldexp), AVX2 with the two products: neither calls
    libm. Where the host runs AVX-512, both give the same bits on every input (p(r) 2^n rounded once either way)."""
    axe4j.install()
    x = np.concatenate([np.linspace(-110, 95, 1 << 16, dtype="float32"), np.array(SPECIALS, "float32")])
    x = np.concatenate([x, np.zeros((-len(x)) % 16, "float32")])
    lib512 = axe4j.compile(exp_kernel(len(x)), {"kind": "llvm", "mcpu": mcpu})
    asm512 = lib512.mod.inspect_source("asm")
    assert re.search(r"\bvscalefps\b", asm512) and "ldexp" not in asm512 and "expf" not in asm512
    lib2 = axe4j.compile(exp_kernel(len(x)), {"kind": "llvm", "mcpu": "haswell"})
    asm2 = lib2.mod.inspect_source("asm")
    assert "vscalef" not in asm2 and "ldexp" not in asm2 and "expf" not in asm2
    if not avx512_host():
        pytest.skip("the bit comparison runs AVX-512 code: this host has no avx512f (the code checks above ran)")
    got = []
    for lib in (lib512, lib2):
        out = tvm.runtime.tensor(np.zeros_like(x))
        lib["main"](tvm.runtime.tensor(x), out)
        got.append(out.numpy())
    assert np.array_equal(got[0].view(np.int32), got[1].view(np.int32))


def test_float64_exp_keeps_tvms_exp():
    axe4j.install()
    n = 64

    @T.prim_func
    def k(A: T.Buffer((n,), "float64"), B: T.Buffer((n,), "float64")):
        Tx.exp(B[:], A[:])

    x = np.linspace(-700, 700, n)
    lib = axe4j.compile(k, axe4j.host_target())
    out = tvm.runtime.tensor(np.zeros(n))
    lib["main"](tvm.runtime.tensor(x), out)
    np.testing.assert_allclose(out.numpy(), np.exp(x), rtol=1e-15)


def test_silu_takes_the_vector_exp_and_matches_numpy():
    """silu = v / (1 + e^-v) through the same exp: within 4 ulp of float64's where e^-v is finite; where it overflows
    (v < -88.7) the result is 0 of v's sign, as with TVM's sigmoid (the true value is below 1e-36 there)."""
    axe4j.install()
    n = 1 << 16

    @T.prim_func
    def k(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        Tx.silu(B[:], A[:])

    lib = axe4j.compile(k, axe4j.host_target())
    assert "expf" not in lib.mod.inspect_source("asm")
    x = np.linspace(-110, 95, n, dtype="float32")
    x[:3] = [np.nan, np.inf, 0.0]
    out = tvm.runtime.tensor(np.zeros_like(x))
    lib["main"](tvm.runtime.tensor(x), out)
    got = out.numpy()
    with np.errstate(over="ignore"):
        want = (x.astype("float64") / (1 + np.exp(-x.astype("float64")))).astype("float32")
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == 0
    finite = (x > -88.7) & np.isfinite(x) & (x != 0)
    ulps = np.abs(ordered(got[finite]) - ordered(want[finite]))
    assert ulps.max() <= 4, f"silu({x[finite][ulps.argmax()]!r}): {ulps.max()} ulp"
    assert np.all(np.abs(got[x < -88.7]) < 1e-30)
