"""``exp`` of a float32 as arithmetic LLVM keeps in vector registers, for the CPU emitters.

TVM lowers ``exp`` on llvm to the ``llvm.exp.f32`` intrinsic, and LLVM turns a vector of it into one libm ``expf``
call per lane (16 calls per AVX-512 vector): a row softmax then ran at a tenth of ONNX Runtime's. Written out:

    n = round(x log2(e))                          x clamped to [-104, 89] first: n in [-150, 128]
    r = (x - n ln2_hi) - n ln2_lo                 |r| <= ln2 / 2; ln2_hi = 355/512 has 9 bits, so n ln2_hi is exact
    e^r = p(r)                                    degree 7, fitted at Chebyshev nodes (degree 6 gave 3 ulp)
    e^x = (p(r) * 2^a) * 2^(n - a),  a = floor(n / 2)       on AVX-512: ldexp(p(r), n), one vscalefps

n is rounded by adding 1.5 * 2^23, where a float's unit is 1: the sum's low bits are n, read as an integer (then
converted back; subtracting 1.5 * 2^23 again would be folded away by TVM's simplifier). Each power
of two is built from its exponent bits (``(a + 127) << 23``) and is a normal float for n in [-150, 128], so a result
past FLT_MAX becomes inf and a subnormal one is rounded once, by the last product. Only x's lower clamp enters r
(above 89, r >= 0.28 and p(r) 2^128 is inf anyway), by a compare that is false for NaN, so NaN stays NaN (``isnan``
would keep TVM from vectorizing the loop). Within 2 ulp of numpy's float32 ``exp`` over the whole range
(``test_cpu_vector_exp.py``).

On AVX-512 the scaling is LLVM's ``ldexp``, which its x86 backend lowers to ``vscalefps`` at any vector width: p(r) 2^n
rounded once, the same bits as the two products (each power of two is exact and the first product is a normal
float), in 1 instruction where the two products take 9 (shift, add and multiply twice, and the halving). Elsewhere
``ldexp`` would be a libm call per lane, so AVX2 and SSE keep the two products.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from tvm import tirx

LN2_HI = 0.693359375                   # 355/512
LN2_LO = math.log(2.0) - LN2_HI        # -2.1219444005469058e-4
CLAMP = (-104.0, 89.0)
ROUNDER = 1.5 * 2.0 ** 23              # x + ROUNDER rounds x to an integer, for |x| < 2^22
ROUNDER_BITS = 0x4B400000              # its float32 bits


def _coefficients(degree: int = 7) -> list[float]:
    """p(r) ~ e^r on [-ln2/2, ln2/2]: a least-squares fit at Chebyshev nodes, low order first."""
    half = math.log(2.0) / 2
    nodes = half * np.cos((2 * np.arange(64) + 1) * np.pi / 128)
    fit = np.polynomial.chebyshev.Chebyshev.fit(nodes, np.exp(nodes), degree, domain=[-half, half])
    return [float(c) for c in fit.convert(kind=np.polynomial.Polynomial).coef]


COEFFICIENTS = _coefficients()


def exp_f32(x, isa: str = ""):
    """e^x for a float32 expression ``x``; any other dtype keeps TVM's ``exp``. ``isa``: the target's vector ISA
    (``axe4j.cpu.target.isa_of``); ``avx512`` scales by ``ldexp``."""
    if str(x.ty) != "float32":
        return tirx.exp(x)

    def f(v):
        return tirx.const(v, "float32")

    def i32(v):
        return tirx.const(v, "int32")

    lo, hi = f(CLAMP[0]), f(CLAMP[1])
    xc = tirx.Select(x < lo, lo, x)                              # NaN: the compare is false, x stays NaN
    t = tirx.min(tirx.max(x, lo), hi) * f(1.0 / math.log(2.0)) + f(ROUNDER)   # NaN -> lo: n always finite
    ni = tirx.reinterpret("int32", t) - i32(ROUNDER_BITS)
    n = tirx.Cast("float32", ni)                                 # not t - ROUNDER, which TVM folds to the product
    r = (xc - n * f(LN2_HI)) - n * f(LN2_LO)
    p = f(COEFFICIENTS[-1])
    for c in reversed(COEFFICIENTS[:-1]):
        p = p * r + f(c)
    if isa == "avx512":
        return tirx.call_llvm_pure_intrin("float32", "llvm.ldexp", p, ni)   # vscalefps: p 2^n, rounded once
    a = tirx.shift_right(ni, i32(1))                             # floor(n / 2): an arithmetic shift
    b = ni - a
    two_a = tirx.reinterpret("float32", tirx.shift_left(a + i32(127), i32(23)))
    two_b = tirx.reinterpret("float32", tirx.shift_left(b + i32(127), i32(23)))
    return (p * two_a) * two_b


def exp_for(request):
    """The e^x the CPU emitters use for ``request``: ``exp_f32`` for the vector ISA of its target."""
    isa = str((request.params or {}).get("cpu", {}).get("isa", ""))
    return functools.partial(exp_f32, isa=isa)
