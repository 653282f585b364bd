"""The persistent, warp-specialised Hopper GEMM with wgmma in flight (``axe4j.cuda.kernels.hopper_gemm_pipelined``):
its PTX keeps a wgmma group in flight inside the K loop (``wgmma.wait_group 1``), splits registers between
producer and consumers (``setmaxnreg``) and stores through swizzled shared memory with a TMA store; run in the CPU
interpreter it matches numpy for 128x256 and 256x128 tiles, several tiles per CTA, grouped rasterization and ragged
M, N and K (down to M = 1), and releasing a ring slot too early is caught."""

import tvm  # noqa: F401  (before the JVM)

import re

import ml_dtypes
import numpy as np
import pytest

import axe4j
from axe4j.cuda import interp as cuda_interp
from axe4j.cuda.kernels.epilogue import Epilogue
from axe4j.cuda.kernels.gemm_tuning import sweep_cases, sweep_cases_bf16, sweep_cases_fp8
from axe4j.cuda.kernels.hopper_gemm_pipelined import hopper_gemm_pipelined, split_k_workspace, stages_for, tile_order

import faults

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

FATBIN_MAGIC = bytes.fromhex("50ed55ba")
TARGET = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")

CASES = {
    "128x256_tiles_3_ctas": ((256, 512, 256), dict(bm=128, bn=256, sms=3, group_m=2)),
    "256x128_tiles_2_ctas": ((512, 256, 192), dict(bm=256, bn=128, sms=2, group_m=1)),
    "128x128_tiles_bf16": ((384, 256, 128), dict(bm=128, bn=128, sms=4, group_m=2, dtype="bfloat16")),
    "128x256_two_stages": ((256, 512, 512), dict(bm=128, bn=256, sms=2, stages=2)),
    # thread-block clusters: two CTAs share the B (2x1) or A (1x2) tile through TMA multicast; one cluster walks
    # several cluster tiles, so the ring phases and the cluster-wide slot releases carry across tiles
    "128x256_cluster_2x1": ((512, 512, 256), dict(bm=128, bn=256, sms=2, group_m=2, cluster=(2, 1))),
    "128x128_cluster_1x2": ((256, 512, 192), dict(bm=128, bn=128, sms=2, group_m=1, cluster=(1, 2), stages=2)),
    # ragged shapes: edge tiles whose TMA loads read zeros past M, N or K and whose TMA stores clip there, down to a
    # single row (M = 1 inside one 64-row wgmma block); multicast clusters over a ragged grid
    "ragged_200x136x72_128x128": ((200, 136, 72), dict(bm=128, bn=128, sms=3, group_m=2)),
    "ragged_1x264x72_128x256": ((1, 264, 72), dict(bm=128, bn=256, sms=2)),
    "ragged_17x264x200_256x128": ((17, 264, 200), dict(bm=256, bn=128, sms=2)),
    "ragged_63x200x136_cluster_1x2": ((63, 200, 136), dict(bm=128, bn=128, sms=2, cluster=(1, 2))),
    "ragged_200x136x72_cluster_2x1": ((200, 136, 72), dict(bm=128, bn=128, sms=2, cluster=(2, 1), stages=2)),
    # decode and small-M strategies: 64-row tiles (one consumer warpgroup), swap-AB (D^T = B A^T, N on the tile's rows,
    # M on a 16..64-wide wgmma n, stored through the transposed staging layout) and split-K (FP32 partials, the
    # tile's last unit sums them), on ragged M, N and K
    "64x128_one_consumer_63x136x200": ((63, 136, 200), dict(bm=64, bn=128, sms=2)),
    "64x256_bf16_17x264x72": ((17, 264, 72), dict(bm=64, bn=256, sms=2, dtype="bfloat16")),
    "swap_128x16_1x136x200": ((1, 136, 200), dict(bm=128, bn=16, sms=2, swap_ab=True)),
    "swap_64x64_bf16_63x200x72": ((63, 200, 72), dict(bm=64, bn=64, sms=3, swap_ab=True, dtype="bfloat16")),
    "swap_128x32_split2_17x136x256": ((17, 136, 256), dict(bm=128, bn=32, sms=3, swap_ab=True, split_k=2)),
    "64x128_split4_bf16_63x136x200": ((63, 136, 200), dict(bm=64, bn=128, sms=3, split_k=4, dtype="bfloat16")),
}

# The benchmark sweep (axe4j.cuda.kernels.gemm_tuning: every applicable tile configuration of every shape), timed against
# cuBLAS by the GPU bundle; too large for the interpreter.
LARGE = {f"{m}x{n}x{k}_{config.label}": ((m, n, k), config.options()) for (m, n, k), config in sweep_cases()}
LARGE.update({f"{m}x{n}x{k}_{config.label}_bf16": ((m, n, k), {**config.options(), "dtype": "bfloat16"})
              for (m, n, k), config in sweep_cases_bf16()})
LARGE_FP8 = {f"{m}x{n}x{k}_{config.label}_fp8": ((m, n, k), {**config.options("float8_e4m3fn"),
                                                               "dtype": "float8_e4m3fn", "scale": True})
             for (m, n, k), config in sweep_cases_fp8()}

# The fused epilogue D = act(alpha A B^T + beta C + bias): small cases run in the interpreter, the large one is timed.
FUSED = {
    "128x256_tiles_fused_silu": ((256, 512, 128), dict(bm=128, bn=256, sms=2), Epilogue(0.5, 0.25, True, "silu")),
    "256x128_tiles_fused_relu": ((512, 256, 128), dict(bm=256, bn=128, sms=1), Epilogue(1.0, 0.0, True, "relu")),
    "128x128_tiles_fused_beta": ((256, 256, 192), dict(bm=128, bn=128, sms=3), Epilogue(-1.0, 2.0, False, None)),
}
# ... and at every shape the GEMM serves: edge tiles (C and the bias by TMA, boxes that clip), 64-row tiles, swap-AB
# (C read transposed, the bias down the tile's rows), split-K (the epilogue once, after the sum), FP16 and BF16; the
# whole-tile swap-AB and split-K kernels read C and the bias with register loads
FUSED.update({
    "ragged_200x136x72_128x128_fused_silu": ((200, 136, 72), dict(bm=128, bn=128, sms=3, group_m=2),
                                             Epilogue(0.5, 0.25, True, "silu")),
    "ragged_17x264x72_64x256_fused_beta_silu": ((17, 264, 72), dict(bm=64, bn=256, sms=2),
                                                Epilogue(1.0, -0.5, False, "silu")),
    "ragged_63x136x256_64x128_split4_bf16_fused_relu": ((63, 136, 256), dict(bm=64, bn=128, sms=3, split_k=4,
                                                                             dtype="bfloat16"),
                                                        Epilogue(2.0, 0.0, True, "relu")),
    "swap_128x16_split2_1x136x256_fused_beta_bias": ((1, 136, 256), dict(bm=128, bn=16, sms=2, swap_ab=True,
                                                                         split_k=2), Epilogue(1.0, 1.0, True, None)),
    "swap_128x16_1x256x128_bf16_fused_silu": ((1, 256, 128), dict(bm=128, bn=16, sms=2, swap_ab=True,
                                                                  dtype="bfloat16"), Epilogue(0.5, 0.0, True, "silu")),
    "swap_64x64_63x200x72_bf16_fused_silu": ((63, 200, 72), dict(bm=64, bn=64, sms=3, swap_ab=True,
                                                                 dtype="bfloat16"), Epilogue(1.0, 0.5, True, "silu")),
    "swap_128x16_whole_16x256x128_fused_relu": ((16, 256, 128), dict(bm=128, bn=16, sms=2, swap_ab=True),
                                                Epilogue(1.0, 0.5, True, "relu")),
    "128x128_split2_whole_128x128x128_fused_silu": ((128, 128, 128), dict(bm=128, bn=128, sms=2, split_k=2),
                                                    Epilogue(1.0, 0.5, True, "silu")),
})
FUSED_LARGE = {"8192x4096x4096_128x256_fused": ((8192, 4096, 4096), dict(bm=128, bn=256),
                                                Epilogue(0.5, 0.25, True, "silu"))}


# FP8 (wgmma k32): e4m3 and e5m2 operands, per-tensor scales (D = Scale[0] Scale[1] A B^T), BF16 or FP16 out, ragged
FP8 = {
    "fp8_e4m3_256x256x256": ((256, 256, 256), dict(bm=128, bn=128, sms=2, dtype="float8_e4m3fn")),
    "fp8_e4m3_e5m2_200x136x160_scaled_fp16": ((200, 136, 160), dict(bm=128, bn=128, sms=2, dtype="float8_e4m3fn",
                                                                    dtype_b="float8_e5m2", scale=True,
                                                                    out_dtype="float16")),
    "fp8_e5m2_1x264x256_scaled": ((1, 264, 256), dict(bm=128, bn=256, sms=2, dtype="float8_e5m2", scale=True)),
    # swapped, B (e5m2) is wgmma's A side and A (e4m3) its B side; split-K with the scales applied after the sum
    "fp8_swap_128x16_split2_e4m3_e5m2_1x136x256": ((1, 136, 256), dict(bm=128, bn=16, sms=2, dtype="float8_e4m3fn",
                                                                      dtype_b="float8_e5m2", swap_ab=True, split_k=2,
                                                                      scale=True)),
}


def _workspace(shape, options):
    """Split-K's W (float32) and Count (int32, zeros: the kernel leaves them zeros) arrays; [] without split-K."""
    if options.get("split_k", 1) == 1:
        return []
    w, count = split_k_workspace(shape[0], shape[1], options["bm"], options["bn"], options["split_k"],
                                 options.get("swap_ab", False))
    return [np.zeros(w, np.float32), np.zeros(count, np.int32)]


def _d_index(options):
    """D's argument position: after A, B, [Scale], [W, Count]."""
    return 2 + bool(options.get("scale")) + 2 * (options.get("split_k", 1) > 1)


def _with_workspace(args, shape, options):
    """The kernel's arguments: ``args`` (inputs, [Scale], D) with split-K's W and Count inserted before D."""
    return args[:-1] + _workspace(shape, options) + args[-1:]


def _fp8_operands(shape, options, seed=0):
    """A, B (integers in [-3, 3], exact in FP8), [Scale (0.5, 0.25)], D zeros; and D's exact value: the FP32 product
    (exact: small integers), scaled by 1/8 (exact), rounded once to D's type."""
    m, n, k = shape
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (m, k)).astype("float32")
    b = rng.integers(-3, 4, (n, k)).astype("float32")
    out = ml_dtypes.bfloat16 if options.get("out_dtype", "bfloat16") == "bfloat16" else np.float16
    args = [a.astype(getattr(ml_dtypes, options["dtype"])),
            b.astype(getattr(ml_dtypes, options.get("dtype_b", options["dtype"])))]
    product = a @ b.T
    if options.get("scale"):
        args.append(np.array([0.5, 0.25], np.float32))
        product = product * np.float32(0.125)
    return args + [np.zeros((m, n), out)], product.astype(out)


def _operands(shape, dtype, seed=0):
    m, n, k = shape
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (m, k)).astype("float32")
    b = rng.integers(-2, 3, (n, k)).astype("float32")
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    return a.astype(np_dtype), b.astype(np_dtype), np.zeros((m, n), np_dtype), a @ b.T


_built: dict = {}


def _kernel(name):
    if name in FP8 or name in LARGE_FP8:
        shape, options = {**FP8, **LARGE_FP8}[name]
        return hopper_gemm_pipelined(*shape, **options)
    if name in FUSED or name in FUSED_LARGE:
        shape, options, epilogue = {**FUSED, **FUSED_LARGE}[name]
        return hopper_gemm_pipelined(*shape, epilogue=epilogue, **options)
    shape, options = {**CASES, **LARGE}[name]
    return hopper_gemm_pipelined(*shape, **options)


def _build(name):
    if name not in _built:
        axe4j.use_pip_nvcc()
        _built[name] = axe4j.compile(_kernel(name), TARGET)
    return _built[name]


def _fused_operands(shape, options=None, seed=0):
    """A, B (small integers), C (D's type, normal), Bias (float32, normal), [split-K's W, Count] and D (zeros)."""
    m, n, k = shape
    options = options or {}
    np_dtype = ml_dtypes.bfloat16 if options.get("dtype") == "bfloat16" else np.float16
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (m, k)).astype(np_dtype)
    b = rng.integers(-2, 3, (n, k)).astype(np_dtype)
    return [a, b, rng.standard_normal((m, n)).astype(np_dtype), rng.standard_normal(n).astype("float32")] + \
        _workspace(shape, options) + [np.zeros((m, n), np_dtype)]


def gpu_cases():
    """One case per CASES entry (sm_90a), exact results (small-integer inputs)."""
    import _gpu_cases

    cases = []
    for name, (shape, options) in sorted(CASES.items()):
        dtype = options.get("dtype", "float16")
        cases.append(_gpu_cases.GpuCase(
            name=f"hopper_gemm_pipelined/{name}", arch="sm_90a", build=lambda name=name: _build(name),
            kernel=lambda shape=shape, options=options: hopper_gemm_pipelined(*shape, **options), target=TARGET,
            args=lambda shape=shape, dtype=dtype, options=options: _with_workspace(list(_operands(shape, dtype)[:3]),
                                                                                   shape, options),
            outputs=(_d_index(options),),
            expected=lambda args, dtype=dtype: [(args[0].astype("float32") @ args[1].astype("float32").T)
                                                 .astype(args[-1].dtype)],
            rtol=0.0, atol=0.0, check_exact=True))
    for name, (shape, options, epilogue) in sorted({**FUSED, **FUSED_LARGE}.items()):
        cases.append(_gpu_cases.GpuCase(
            name=f"hopper_gemm_pipelined/{name}", arch="sm_90a", build=lambda name=name: _build(name),
            kernel=lambda name=name: _kernel(name), target=TARGET,
            args=lambda shape=shape, options=options: _fused_operands(shape, options),
            outputs=(4 + 2 * (options.get("split_k", 1) > 1),),
            expected=lambda args, e=epilogue: [e.reference(args[0], args[1], args[2], args[3], args[-1].dtype)],
            rtol=1e-2, atol=1e-2, size="large" if name in FUSED_LARGE else "small",
            epilogue={"alpha": epilogue.alpha, "beta": epilogue.beta, "bias": epilogue.bias,
                      "activation": epilogue.activation}))
    for name, (shape, options) in sorted({**FP8, **LARGE_FP8}.items()):
        cases.append(_gpu_cases.GpuCase(
            name=f"hopper_gemm_pipelined/{name}", arch="sm_90a", build=lambda name=name: _build(name),
            kernel=lambda name=name: _kernel(name), target=TARGET,
            args=lambda shape=shape, options=options: _with_workspace(_fp8_operands(shape, options)[0], shape,
                                                                      options),
            outputs=(_d_index(options),),
            expected=lambda args, shape=shape, options=options: [_fp8_operands(shape, options)[1]],
            rtol=0.0, atol=0.0, check_exact=True, size="large" if name in LARGE_FP8 else "small"))
    for name, (shape, options) in sorted(LARGE.items()):
        dtype = options.get("dtype", "float16")
        cases.append(_gpu_cases.GpuCase(
            name=f"hopper_gemm_pipelined/{name}", arch="sm_90a", build=lambda name=name: _build(name),
            kernel=lambda shape=shape, options=options: hopper_gemm_pipelined(*shape, **options), target=TARGET,
            args=lambda shape=shape, dtype=dtype, options=options: _with_workspace(list(_operands(shape, dtype)[:3]),
                                                                                   shape, options),
            outputs=(_d_index(options),),
            expected=lambda args: [(args[0].astype("float32") @ args[1].astype("float32").T).astype(args[-1].dtype)],
            rtol=2e-3, atol=1e-2, size="large"))
    return cases


@pytest.mark.parametrize("name", sorted(CASES))
def test_interpreted_results_match_numpy(name):
    shape, options = CASES[name]
    a, b, d, expected = _operands(shape, options.get("dtype", "float16"))
    workspace = _workspace(shape, options)
    cuda_interp.run(_build(name), a, b, *workspace, d)
    np.testing.assert_array_equal(d.astype("float32"), expected)
    if workspace:   # every tile's last unit put its counts back: the next launch starts from zeros
        assert not workspace[1].any(), workspace[1]


@pytest.mark.parametrize("name", sorted(FP8))
def test_fp8_results_match_numpy_when_interpreted(name):
    shape, options = FP8[name]
    args, expected = _fp8_operands(shape, options)
    args = _with_workspace(args, shape, options)
    cuda_interp.run(_build(name), *args)
    np.testing.assert_array_equal(args[-1].astype("float32"), expected.astype("float32"))


def test_fp8_runs_k32_wgmma_from_128_byte_rows_and_bad_types_are_named():
    from tvm.support import nvcc

    plans = axe4j.explain(_kernel("fp8_e4m3_e5m2_200x136x160_scaled_fp16"), TARGET)
    assert "m64n128k32 e4m3xe5m2" in plans and "TMA load of 16384 bytes: 1 x 2-d box [128, 128]" in plans
    axe4j.use_pip_nvcc()
    source = _build("fp8_e4m3_256x256x256").mod.imports[0].inspect_source("cuda")
    with TARGET:
        ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
    assert "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3" in ptx
    with pytest.raises(ValueError, match=r"BK=64 is not a multiple of the 128-byte swizzle row \(128 elements\)"):
        hopper_gemm_pipelined(256, 256, 256, bm=128, bn=128, bk=64, dtype="float8_e4m3fn")
    with pytest.raises(ValueError, match="dtype float8_e4m3fn x float16: wgmma here multiplies"):
        hopper_gemm_pipelined(256, 256, 256, dtype="float8_e4m3fn", dtype_b="float16")
    with pytest.raises(ValueError, match="out_dtype float8_e4m3fn: D is float16 or bfloat16"):
        hopper_gemm_pipelined(256, 256, 256, dtype="float8_e4m3fn", out_dtype="float8_e4m3fn")
    with pytest.raises(ValueError, match=r"K=200: .* a multiple of 16 float8_e4m3fn elements"):
        hopper_gemm_pipelined(256, 256, 200, dtype="float8_e4m3fn")
    with pytest.raises(ValueError, match="scale=True and a fused epilogue together"):
        hopper_gemm_pipelined(256, 256, 256, dtype="float8_e4m3fn", scale=True, epilogue=Epilogue())


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_epilogue_matches_numpy_when_interpreted(name):
    shape, options, epilogue = FUSED[name]
    args = _fused_operands(shape, options)
    cuda_interp.run(_build(name), *args)
    np.testing.assert_allclose(args[-1].astype("float32"),
                               epilogue.reference(*args[:4], args[-1].dtype).astype("float32"), rtol=1e-2, atol=1e-2)
    if options.get("split_k", 1) > 1:   # the epilogue ran once per tile, in the unit that summed; counts back to 0
        assert not args[5].any(), args[5]


def test_ragged_edges_are_tma_boxes_past_the_end_and_unaligned_rows_are_named():
    """The edge tiles are the same TMA boxes as inner ones (the tensor map has the real M, N, K; TMA clips), and
    what TMA cannot address is refused with the shape to pad to; a fused epilogue's C and bias are TMA boxes too."""
    plans = axe4j.explain(hopper_gemm_pipelined(1, 264, 72, bm=128, bn=256, sms=2), TARGET)
    assert "tensor map dims [72, 1]" in plans and "tensor map dims [72, 264]" in plans   # A and B: real dims
    assert "tensor map dims [264, 1]" in plans   # D: 1 row, the 64-row store box clipped
    with pytest.raises(ValueError, match=r"K=100: TMA needs A's and B's rows of a multiple of 16 bytes .* pad K to 104"):
        hopper_gemm_pipelined(128, 256, 100)
    with pytest.raises(ValueError, match=r"N=250: TMA needs D's rows .* pad N to 256"):
        hopper_gemm_pipelined(128, 250, 128)
    fused = axe4j.explain(hopper_gemm_pipelined(200, 136, 72, bm=128, bn=128, sms=3,
                                                epilogue=Epilogue(1.0, 1.0, True, None)), TARGET)
    assert "tensor map dims [136, 200]" in fused   # C's box like D's, clipped at M and N
    assert "tensor map dims [136]" in fused        # the bias box, clipped at N


def test_fused_kernels_take_c_and_bias_and_refuse_what_they_cannot_chunk():
    kernel = FUSED["128x256_tiles_fused_silu"]
    names = [p.name for p in _kernel("128x256_tiles_fused_silu").params]
    assert len(names) == 5 and len(_kernel("128x256_tiles_3_ctas").params) == 3
    with pytest.raises(ValueError, match="BN=200: the fused epilogue works on 32-column chunks"):
        hopper_gemm_pipelined(256, 400, 128, bm=128, bn=200, sms=2, epilogue=kernel[2])
    with pytest.raises(ValueError, match="activation 'gelu' is not one of"):
        Epilogue(activation="gelu")


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES) + sorted(LARGE) + sorted(FUSED) + sorted(FUSED_LARGE) + sorted(FP8)
                         + sorted(LARGE_FP8))
def test_results_on_a_gpu(name):
    import _gpu_cases

    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"hopper_gemm_pipelined/{name}"))


def test_ptx_keeps_a_wgmma_group_in_flight_and_splits_registers():
    from tvm.support import nvcc

    axe4j.use_pip_nvcc()
    executable = axe4j.compile(hopper_gemm_pipelined(256, 512, 256), TARGET)
    source = executable.mod.imports[0].inspect_source("cuda")
    with TARGET:
        ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16", ptx)
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx), "no wgmma group kept in flight"
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+0;", ptx), "no drain before the epilogue"
    assert "setmaxnreg.dec.sync.aligned.u32" in ptx and "setmaxnreg.inc.sync.aligned.u32" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    # epilogue: registers -> swizzled shared with stmatrix -> global with a TMA store
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert re.search(r"cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta\.tile\.bulk_group", ptx)
    assert "cp.async.bulk.wait_group.read" in ptx
    with TARGET:
        binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
    assert binary[:4] == FATBIN_MAGIC and set(re.findall(rb"sm_[0-9]+a?", binary)) == {b"sm_90a"}


def test_ptx_of_the_decode_strategies_is_accepted_by_ptxas():
    """64-row tiles launch one consumer warpgroup (256 threads, m64n128k16); swap-AB runs B through wgmma's A side
    with the small M as n (m64n16k16) and stores D through the transposed staging tile with the same TMA store;
    split-K counts units with atom.global.add behind a fence. ptxas builds each into an sm_90a cubin."""
    from tvm.support import nvcc

    axe4j.use_pip_nvcc()
    for shape, options, wgmma in (((64, 4096, 4096), dict(bm=64, bn=128), "m64n128k16"),
                                  ((1, 4096, 4096), dict(bm=128, bn=16, swap_ab=True, split_k=4), "m64n16k16"),
                                  ((16, 4096, 4096), dict(bm=64, bn=16, swap_ab=True, dtype="bfloat16"),
                                   "m64n16k16")):
        source = axe4j.compile(hopper_gemm_pipelined(*shape, **options), TARGET).mod.imports[0].inspect_source("cuda")
        with TARGET:
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
            binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
        assert binary[:4] == FATBIN_MAGIC, options
        assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.{wgmma}\.f32\.(f16\.f16|bf16\.bf16)", ptx), options
        assert re.search(r"\.maxntid 256, 1, 1" if options["bm"] == 64 else r"\.maxntid 384, 1, 1", ptx), options
        assert re.search(r"cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta\.tile\.bulk_group", ptx), options
        assert ("atom.global.add" in ptx) == ("split_k" in options), options
        if "split_k" in options:
            assert "membar.gl" in ptx or "fence.sc.gpu" in ptx or "fence.acq_rel.gpu" in ptx


def test_decode_strategies_refuse_what_they_cannot_lower():
    with pytest.raises(ValueError, match=r"swap_ab with BM=256: each consumer's 128 N columns"):
        hopper_gemm_pipelined(16, 512, 256, bm=256, bn=16, swap_ab=True)
    with pytest.raises(ValueError, match=r"swap_ab with BN=20: the M side is whole 8-row swizzle atoms"):
        hopper_gemm_pipelined(16, 512, 256, bm=128, bn=20, swap_ab=True)
    with pytest.raises(ValueError, match=r"BM=64 with cluster=\(1, 2\): one consumer warpgroup"):
        hopper_gemm_pipelined(64, 512, 256, bm=64, bn=128, cluster=(1, 2))
    with pytest.raises(ValueError, match=r"BM=96: two consumer warpgroups .* \(or BM=64: one consumer warpgroup\)"):
        hopper_gemm_pipelined(64, 512, 256, bm=96, bn=128)
    with pytest.raises(ValueError, match=r"split_k=3 must be a positive divisor of the 4 K tiles"):
        hopper_gemm_pipelined(64, 512, 256, bm=64, bn=128, split_k=3)
    with pytest.raises(ValueError, match=r"split_k=2 with a cluster is not written"):
        hopper_gemm_pipelined(256, 512, 256, split_k=2, cluster=(2, 1))


def test_explain_shows_the_wait_depth():
    report = axe4j.explain(hopper_gemm_pipelined(256, 512, 256), TARGET, file=open("/dev/null", "w"))
    assert "axe4j-cuda-wgmma (prio=110): accepted <- chosen" in report
    assert "wgmma.wait_group 1 (groups kept in flight)" in report
    assert "4 x m64n256k16 (64x256x64)" in report


def test_releasing_a_slot_while_its_wgmma_is_in_flight_is_caught():
    axe4j.use_pip_nvcc()
    with faults.planted("early-release") as faulty:
        executable = axe4j.compile(faulty.hopper_gemm_pipelined(256, 512, 512, sms=2, stages=2), TARGET)
    a, b, d, _ = _operands((256, 512, 512), "float16")
    with pytest.raises(cuda_interp.KernelFault, match=r"a TMA load .* touches shared byte \d+ while a "
                                                      r"wgmma\.mma_async of warpgroup \d .*is unfinished"):
        cuda_interp.run(executable, a, b, d)


def test_ptx_multicasts_the_shared_tile_in_clusters():
    from tvm.support import nvcc

    axe4j.use_pip_nvcc()
    for cluster, box in (((2, 1), "B"), ((1, 2), "A")):
        kernel = hopper_gemm_pipelined(512, 512, 256, cluster=cluster)
        report = axe4j.explain(kernel, TARGET, file=open("/dev/null", "w"))
        assert report.count("multicast: the box lands at the same shared offset") == 1, box   # the shared operand
        executable = axe4j.compile(kernel, TARGET)
        source = executable.mod.imports[0].inspect_source("cuda")
        with TARGET:
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        assert re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes"
                         r"\.multicast::cluster", ptx), cluster
        assert "mapa.shared::cluster.u32" in ptx and "mbarrier.arrive.shared::cluster.b64" in ptx
        assert "barrier.cluster.arrive" in ptx and "barrier.cluster.wait" in ptx


def test_releasing_a_slot_only_in_its_own_cta_is_caught_in_a_cluster():
    """The peer's multicast writes into this CTA's slot too: a release that does not reach the peer's producer lets
    it overwrite operands a wgmma here still reads."""
    axe4j.use_pip_nvcc()
    with faults.planted("cluster-local-release"):
        executable = axe4j.compile(hopper_gemm_pipelined(512, 512, 256, bm=128, bn=256, sms=2, group_m=2,
                                                         cluster=(2, 1), stages=2), TARGET)
    a, b, d, _ = _operands((512, 512, 256), "float16")
    with pytest.raises(cuda_interp.KernelFault, match=r"a TMA load .* of block \(\d, 0, 0\) \(multicast\) touches "
                                                      r"shared byte \d+ while a wgmma\.mma_async .*is unfinished"):
        cuda_interp.run(executable, a, b, d)


def test_clusters_are_checked_against_the_tile_grid():
    with pytest.raises(ValueError, match=r"cluster=\(2, 2\): one of \(1, 1\), \(2, 1\), \(1, 2\)"):
        hopper_gemm_pipelined(512, 512, 256, cluster=(2, 2))
    with pytest.raises(ValueError, match=r"cluster=\(2, 1\): 3 tile rows are not a multiple of 2"):
        hopper_gemm_pipelined(384, 512, 256, cluster=(2, 1))
    with pytest.raises(ValueError, match=r"cluster=\(1, 2\): sms=1 holds no whole cluster"):
        hopper_gemm_pipelined(256, 512, 256, cluster=(1, 2), sms=1)


def test_grouped_order_visits_every_tile_once_group_by_group():
    for tiles_m, tiles_n, group in ((5, 3, 2), (4, 4, 8), (1, 7, 3), (6, 2, 1)):
        order = [tile_order(t, tiles_m, tiles_n, group) for t in range(tiles_m * tiles_n)]
        assert sorted(order) == [(i, j) for i in range(tiles_m) for j in range(tiles_n)]
        for t, (i, _) in enumerate(order):   # tile t lies in its group's rows
            first = (t // (group * tiles_n)) * group
            assert first <= i < first + group


def test_stages_fill_the_shared_memory_and_bad_parameters_are_named():
    assert stages_for(128, 256, 64) == 3 and stages_for(128, 128, 64) == 6 and stages_for(64, 64, 64) == 8
    with pytest.raises(ValueError, match=r"N=202: TMA needs D's rows of a multiple of 16 bytes"):
        hopper_gemm_pipelined(256, 202, 256)
    with pytest.raises(ValueError, match=r"BN=264: one wgmma covers N <= 256"):
        hopper_gemm_pipelined(256, 528, 256, bn=264)
    with pytest.raises(ValueError, match=r"need \d+ bytes of shared memory"):
        hopper_gemm_pipelined(256, 512, 256, stages=6)
    with pytest.raises(ValueError, match=r"256 accumulator registers per consumer thread"):
        hopper_gemm_pipelined(512, 512, 256, bm=256, bn=256)


# ---- what ptxas scheduled: no accumulator read while its wgmma group is in flight -----------------------------------

def _sass(name, kind=None):
    from axe4j_tools import sass
    from axe4j_tools.cuda_corpus import build as corpus_build

    shape, options = LARGE[name]
    axe4j.use_pip_nvcc()
    if kind:
        with faults.planted(kind) as faulty:
            executable = axe4j.compile(faulty.hopper_gemm_pipelined(*shape, **options), TARGET)
    else:
        executable = _build(name)
    binary, report = sass.cubin(corpus_build.cuda_source(executable), "sm_90a")
    return sass.disassemble(binary), report


@pytest.mark.parametrize("name", ["8192x4096x4096_128x256", "8192x4096x4096_256x128", "8192x4096x4096_128x128",
                                  "1x4096x4096_swap_128x16_split4", "64x4096x4096_64x128_split4"])
def test_sass_reads_no_accumulator_before_its_wait_and_keeps_groups_in_flight(name):
    """On an H200 the unpeeled loop lost the last K tile of one accumulator pair (docs/cuda-interp.md, "Found on a
    GPU"); the peeled last tile with its register fence keeps every read after WARPGROUP.DEPBAR.LE gsb0, 0x0, and
    ptxas keeps a group in flight (DEPBAR.LE gsb0, 0x1 in the loop) without serializing the wgmma."""
    from axe4j_tools import sass

    instructions, report = _sass(name)
    assert sass.accumulator_reads_in_flight(instructions) == []
    texts = [t for _, t in instructions]
    assert any(t.startswith("HGMMA.64x") for t in texts)
    assert any("WARPGROUP.DEPBAR.LE gsb0, 0x1" in t for t in texts)
    assert "serialized" not in report, report


def test_sass_check_finds_the_read_ptxas_hoisted_in_the_unpeeled_loop():
    from axe4j_tools import sass

    instructions, _ = _sass("8192x4096x4096_128x256", "unpeeled-k-loop")
    early = sass.accumulator_reads_in_flight(instructions)
    assert early and all("F2FP" in e for e in early), early


def test_sass_reads_come_from_the_operands_after_the_destination():
    from axe4j_tools import sass

    flight = [(0x10, "HGMMA.64x64x16.F32 R24, gdesc[UR4], R24, gsb0"),
              (0x20, "WARPGROUP.DEPBAR.LE gsb0, 0x1"),
              (0x30, "F2FP.F16.F32.PACK_AB R6, R55, R54"),     # reads R54, R55: in flight
              (0x40, "MOV R24, R2"),                            # writes R24 only
              (0x50, "STS [R24], R3"),                          # the address R24 is read
              (0x60, "WARPGROUP.DEPBAR.LE gsb0, 0x0"),
              (0x70, "F2FP.F16.F32.PACK_AB R6, R25, R24")]
    assert sass.accumulator_reads_in_flight(flight) == ["/*0030*/ F2FP.F16.F32.PACK_AB R6, R55, R54",
                                                        "/*0050*/ STS [R24], R3"]


def test_the_served_gemm_example_in_the_docs_runs(tmp_path, monkeypatch):
    """docs/cuda-gemm.md, "A served GEMM, end to end": the block as written (tuned GEMM + bias + SiLU at 200x136x72,
    compiled for sm_90a, checked against numpy in the interpreter, exported with its fatbin)."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "cuda-gemm.md").read_text()
    section = doc[doc.index("## A served GEMM, end to end"):]
    block = section[section.index("```python\n") + len("```python\n"):section.index("\n```\n")]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/cuda-gemm.md", "exec"), {"__name__": "served_gemm_example"})
    assert (tmp_path / "gemm_bias_silu.so").is_file()
    assert list((tmp_path / "gemm_bias_silu.so.fatbins").glob("*.fatbin"))
