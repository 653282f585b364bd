"""The interpreter's CUDA math functions (``axe4j.cuda.interp._math``): every map op in float32, float16 and bfloat16
lowered through the CUDA rules runs interpreted and matches numpy, and every extern function TVM's CUDA intrinsic
rules can emit is modelled (or refused with the reason nvcc would give), so a new one fails here first."""

import tvm  # noqa: F401  (before the JVM)

import os
import re

import ml_dtypes
import numpy as np
import pytest
from tvm import tirx
from tvm.script import tirx as T
from tvm.tirx.layout import S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j.cuda import interp as cuda_interp
from axe4j.cuda.interp import _math

# op -> numpy reference on float64 operands x (in (0.1, 4)), y (in (0.5, 2)), z (normal)
OPS = {
    "exp": lambda x, y, z: np.exp(x), "exp2": lambda x, y, z: np.exp2(x), "log2": lambda x, y, z: np.log2(x),
    "sqrt": lambda x, y, z: np.sqrt(x), "reciprocal": lambda x, y, z: 1 / x,
    "silu": lambda x, y, z: x / (1 + np.exp(-x)), "add": lambda x, y, z: x + y, "sub": lambda x, y, z: x - y,
    "mul": lambda x, y, z: x * y, "fdiv": lambda x, y, z: x / y, "maximum": lambda x, y, z: np.maximum(x, y),
    "minimum": lambda x, y, z: np.minimum(x, y), "fma": lambda x, y, z: x * y + z,
}
# a few ulp of each type (a 16-bit op may round twice: silu's product, fma's product and sum)
RTOL = {"float32": 4e-6, "float16": 3 * 2.0 ** -10, "bfloat16": 3 * 2.0 ** -7}
NUMPY = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


# where the operands live: (shape, scope, layout of a tile, layout of the 13 result tiles, op namespace, threads)
PLACES = {
    # shared tiles, CTA scope: the vector rule
    "shared": ((4, 32), "shared", lambda shape: TileLayout(S[shape]), lambda n, shape: TileLayout(S[(n,) + shape]),
               Tx.cta, 128),
    # register tiles, a row per lane, warp scope: the register rule
    "registers": ((32, 4), "local", lambda shape: TileLayout(S[shape:(1 @ laneid, 1)]),
                  lambda n, shape: TileLayout(S[(n,) + shape:(shape[1], 1 @ laneid, 1)]), Tx.warp, 32),
}


def _all_maps(dtype, place):
    """X, Y, Z (A, B, C in shared or registers) -> each map op into its own tile of W -> O."""
    n = len(OPS)
    shape, scope, tile, tiles, ns, threads = PLACES[place]

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, O_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, shape, dtype)
        C = T.match_buffer(C_ptr, shape, dtype)
        O = T.match_buffer(O_ptr, (n,) + shape, dtype)
        T.device_entry()
        T.cta_id([1])
        T.warp_id([threads // 32])
        T.lane_id([32])
        T.thread_id([threads])
        X = T.alloc_buffer(shape, dtype, scope=scope, layout=tile(shape))
        Y = T.alloc_buffer(shape, dtype, scope=scope, layout=tile(shape))
        Z = T.alloc_buffer(shape, dtype, scope=scope, layout=tile(shape))
        W = T.alloc_buffer((n,) + shape, dtype, scope=scope, layout=tiles(n, shape))
        ns.copy(X[:, :], A[:, :])
        ns.copy(Y[:, :], B[:, :])
        ns.copy(Z[:, :], C[:, :])
        T.cuda.cta_sync()
        ns.exp(W[0, :, :], X[:, :])
        ns.exp2(W[1, :, :], X[:, :])
        ns.log2(W[2, :, :], X[:, :])
        ns.sqrt(W[3, :, :], X[:, :])
        ns.reciprocal(W[4, :, :], X[:, :])
        ns.silu(W[5, :, :], X[:, :])
        ns.add(W[6, :, :], X[:, :], Y[:, :])
        ns.sub(W[7, :, :], X[:, :], Y[:, :])
        ns.mul(W[8, :, :], X[:, :], Y[:, :])
        ns.fdiv(W[9, :, :], X[:, :], Y[:, :])
        ns.maximum(W[10, :, :], X[:, :], Y[:, :])
        ns.minimum(W[11, :, :], X[:, :], Y[:, :])
        ns.fma(W[12, :, :], X[:, :], Y[:, :], Z[:, :])
        T.cuda.cta_sync()
        ns.copy(O[:, :, :], W[:, :, :])

    return kernel


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("dtype", list(NUMPY))
def test_every_map_op_runs_interpreted_and_matches_numpy(dtype, place):
    axe4j.use_pip_nvcc()
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    kernel = _all_maps(dtype, place)
    rule = {"shared": "axe4j-cuda-vector", "registers": "axe4j-cuda-register"}[place]
    report = axe4j.explain(kernel, target, file=open(os.devnull, "w"))
    chosen = dict(re.findall(r"T\.\w+\.(\w+)\(.*\n(?:  .*\n)*?  ([\w-]+) \(prio=\d+\): accepted <- chosen", report))
    assert {op: chosen.get(op) for op in OPS} == {op: rule for op in OPS}, report
    executable = axe4j.compile(kernel, target)
    shape = PLACES[place][0]
    rng = np.random.default_rng(45)
    x, y, z = (rng.uniform(0.1, 4, shape), rng.uniform(0.5, 2, shape), rng.standard_normal(shape))
    x, y, z = (v.astype(NUMPY[dtype]) for v in (x, y, z))
    out = np.zeros((len(OPS),) + shape, NUMPY[dtype])
    cuda_interp.run(executable, x, y, z, out)
    x, y, z = (v.astype(np.float64) for v in (x, y, z))
    for i, (op, ref) in enumerate(OPS.items()):
        np.testing.assert_allclose(out[i].astype(np.float64), ref(x, y, z), rtol=RTOL[dtype], atol=1e-30,
                                   err_msg=f"{op} {dtype} in {place}")


# ---- the extern table against what TVM's CUDA rules emit ------------------------------------------------------------

TWO_ARGUMENTS = {"tirx.fmod": 2}   # registered with one input, though fmod(x, y) takes two


def _lowered_math_ops():
    """Every op with a CUDA or default intrinsic lowering (or legalisation) that computes a value of its argument
    type, with its argument count (warp shuffles and fixed-point ops excluded: they lower to no math extern)."""
    out = []
    for name in sorted(tvm.ir.Op.list_op_names()):
        op = tvm.ir.Op.get(name)
        if name.startswith(("tirx.tvm_warp", "tirx.q_multiply")) or op.num_inputs < 1:
            continue
        if any(op.get_attr(key) is not None
               for key in ("cuda.FLowerIntrinsic", "default.FLowerIntrinsic", "default.FLegalize")):
            out.append((name, TWO_ARGUMENTS.get(name, op.num_inputs)))
    return out


INTEGER_OPS = {"prim.clz", "tirx.popcount"}


def _emitted_externs():
    """{(extern name, dtype): op} of LowerIntrin for the cuda target over each math op and float type."""
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    found = {}
    for dtype in ("float16", "bfloat16", "float32", "float64", "int32", "int64"):
        for name, arity in _lowered_math_ops():
            if (name in INTEGER_OPS) != dtype.startswith("int"):
                continue
            args = [tirx.Var(f"a{i}", dtype) for i in range(arity)]
            func = tirx.PrimFunc(args, tirx.Evaluate(tirx.call_intrin(dtype, name, *args)))
            mod = tvm.IRModule({"f": func.with_attr("target", target).with_attr("global_symbol", "f")})
            text = tirx.transform.LowerIntrin()(mod)["f"].script()
            for ty, extern in re.findall(r'call_(?:pure_)?extern\("(\w+)", "(\w+)"', text):
                found[(extern, ty)] = name
    return found


def test_every_extern_the_cuda_rules_emit_is_modelled_or_refused_with_the_reason():
    emitted = _emitted_externs()
    names = {name for name, _ in emitted}
    # the enumeration itself reaches the functions the map ops use
    assert {"hlog2", "hexp", "hexp2", "hsqrt", "expf", "exp2f", "log2f", "sqrtf", "log2", "__clz"} <= names
    missing = sorted(f"{name} ({ty}, from {op})" for (name, ty), op in emitted.items()
                     if name not in _math.EXTERNS and name not in _math.UNDEFINED)
    assert not missing, f"extern functions TVM's CUDA rules emit that the interpreter does not model: {missing}"
    rng = np.random.default_rng(8)
    for (name, ty), op in sorted(emitted.items()):
        arity = dict(_lowered_math_ops())[op]
        values = [rng.uniform(0.25, 0.75, 16).astype(NUMPY.get(ty, ty)) for _ in range(arity)]
        if name in _math.UNDEFINED:
            with pytest.raises(cuda_interp.NotModelled, match=f"extern function {name}: .*nvcc rejects"):
                _math.call(name, values, ty)
            continue
        out = _math.call(name, values, ty)
        assert out.dtype == np.dtype(NUMPY.get(ty, ty)) and out.shape == (16,), (name, ty)


def test_16_bit_functions_compute_in_float32_and_round_once():
    """hlog2 / hexp / hsqrt / hrcp of every finite positive float16 and bfloat16 = the float32 function rounded to
    the 16-bit type (no rounding of intermediate values in 16 bits)."""
    for np_type, ty in ((np.float16, "float16"), (ml_dtypes.bfloat16, "bfloat16")):
        x = np.arange(1, 0x7C00 if ty == "float16" else 0x7F80, dtype=np.uint16).view(np_type)
        wide = x.astype(np.float32)
        with np.errstate(all="ignore"):
            for name, ref in (("hlog2", np.log2), ("hexp", np.exp), ("hsqrt", np.sqrt), ("hrcp", lambda v: 1 / v)):
                want = ref(wide).astype(np_type)
                assert np.array_equal(_math.call(name, [x], ty).view(np.uint16), want.view(np.uint16)), (name, ty)


def test_an_unknown_extern_is_named():
    with pytest.raises(cuda_interp.NotModelled, match="extern function no_such_fn"):
        _math.call("no_such_fn", [np.ones(2, np.float32)], "float32")
