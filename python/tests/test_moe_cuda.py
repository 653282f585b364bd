"""The fused MoE layer on CUDA (axe4j.moe.cuda, sm_90a, FP16 and BF16) in the CPU interpreter of lowered CUDA kernels,
against numpy, at small sizes: 16 experts, top-4, hidden 256, intermediate 128 (GEMM1 in two chunks of 64, GEMM2 in
two of 128), tiles of 64 rows, 1 to 256 tokens. Routings: the host router, one with an empty expert and a
single-pair one, every token on the same experts (several full tiles each), an expert with a ragged last tile; the
layers make their schedule with the ``schedule`` kernel (the default; test_moe_schedule_kernel.py checks it against
the host schedule). Each stage is also a GPU case (``gpu_cases``) with its own numpy reference, run on a GPU where
one is lent."""

import tvm  # noqa: F401  (before the JVM)

import re

import numpy as np
import pytest

import axe4j
from axe4j.moe import MoeShape, moe_reference, schedule
from axe4j.moe import cuda
from axe4j.moe.cuda_kernels import ROWS
from axe4j.moe.reference import silu

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

SHAPE = MoeShape(experts=16, top_k=4, hidden=256, intermediate=128)
BN1, BN2 = 64, 128
E, H, I = SHAPE.experts, SHAPE.hidden, SHAPE.intermediate


def weights(seed=20261126):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((E, H)).astype("float32"),
            (rng.standard_normal((E, 2 * I, H)) / np.sqrt(H)).astype("float16"),
            (rng.standard_normal((E, H, I)) / np.sqrt(I)).astype("float16"))


WR, W1, W2 = weights()
_layers = {}


def layer(tokens):
    if tokens not in _layers:
        _layers[tokens] = cuda.MoeLayer(SHAPE, tokens, WR, W1, W2, bn1=BN1, bn2=BN2, fused=True)
    return _layers[tokens]


def check(out, x, ids, w):
    """FP16 output of FP16 operands with FP32 accumulation against the FP32 reference of the same FP16 values."""
    assert out.dtype == np.float16
    want = moe_reference(x.astype("float32"), W1.astype("float32"), W2.astype("float32"), ids, w)
    np.testing.assert_allclose(out.astype("float32"), want, rtol=1e-2, atol=1e-2)


def tokens_of(n, seed):
    return np.random.default_rng(seed).standard_normal((n, H)).astype("float16")


def routing(tokens, seed, crowded=(), empty=(7,), single=5):
    """top_k distinct experts per token, never from ``empty``; the first 3/4 of the tokens take every expert of
    ``crowded``; expert ``single`` holds exactly one pair (token 0's last)."""
    rng = np.random.default_rng(seed)
    others = [e for e in range(E) if e not in empty and e != single]
    free = [e for e in others if e not in crowded]
    ids = np.stack([rng.choice(others, SHAPE.top_k, replace=False) for _ in range(tokens)]).astype("int32")
    for t in range(tokens * 3 // 4 if crowded else 0):
        ids[t] = list(crowded) + list(rng.choice(free, SHAPE.top_k - len(crowded), replace=False))
    if single is not None:
        ids[0, -1] = single
    return ids, rng.random((tokens, SHAPE.top_k)).astype("float32")


def test_the_three_kernel_form_matches_numpy(bridge):
    """fused=False (the default): the schedule, GEMM1 over all tiles, then GEMM2, then the combine."""
    moe = cuda.MoeLayer(SHAPE, 64, WR, W1, W2, bn1=BN1, bn2=BN2)
    assert sorted(moe._exe) == ["combine", "gemm1", "gemm2", "schedule"]
    assert sorted(layer(64)._exe) == ["combine", "experts", "schedule"]
    x = tokens_of(64, 9)
    _, ids, w = moe.route(x)
    check(moe.experts(x, ids, w), x, ids, w)


def test_the_fused_kernel_leaves_its_counters_at_zero_for_the_next_launch(bridge):
    """The last CTA of ``experts`` resets ``sync``: the same arguments launched twice give the same output."""
    moe = layer(64)
    x = tokens_of(64, 10)
    _, ids, w = moe.route(x)
    calls = moe.calls(x, ids, w)
    moe.launch(calls)
    assert [name for name, _ in calls] == ["schedule", "experts", "combine"]
    sync = calls[1][1][-1]
    assert sync.shape == (moe.max_tiles + 2,) and not sync.any()
    first = calls[-1][1][-1].copy()
    calls[-1][1][-1][:] = 0
    moe.launch(calls)
    np.testing.assert_array_equal(calls[-1][1][-1], first)
    check(first, x, ids, w)


@pytest.mark.parametrize("tokens", [1, 64, 256])
def test_the_layer_routes_and_matches_numpy(bridge, tokens):
    x = tokens_of(tokens, tokens)
    moe = layer(tokens)
    out = moe(x)
    logits, ids, w = moe.route(x)
    np.testing.assert_allclose(logits, x.astype("float32") @ WR.T, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-5)
    check(out, x, ids, w)


def test_bf16_tokens_and_weights(bridge):
    """The same kernels on BF16 (wgmma .f32.bf16.bf16): 64 tokens, the host router, the output in BF16."""
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    moe = cuda.MoeLayer(SHAPE, 64, WR, W1.astype(bf16), W2.astype(bf16), bn1=BN1, bn2=BN2, dtype="bfloat16",
                        fused=True)
    x = tokens_of(64, 11).astype(bf16)
    out = moe(x)
    _, ids, w = moe.route(x)
    assert out.dtype == bf16
    want = moe_reference(x.astype("float32"), W1.astype(bf16).astype("float32"), W2.astype(bf16).astype("float32"),
                         ids, w)
    np.testing.assert_allclose(out.astype("float32"), want, rtol=2e-2, atol=2e-2)
    source = moe._exe["experts"].mod.imports[0].inspect_source("cuda")
    assert "bf16" in source and "wgmma" in source


def test_an_empty_expert_a_single_pair_and_a_crowded_one(bridge):
    x = tokens_of(64, 1)
    ids, w = routing(64, 1, crowded=(0,))
    plan = schedule(ids, w, E, ROWS)
    counts = np.bincount(ids.reshape(-1), minlength=E)
    assert counts[7] == 0 and counts[5] == 1 and counts[0] >= 48 and 7 not in plan.tile_expert
    check(layer(64).experts(x, ids, w), x, ids, w)


def test_experts_spanning_several_tiles_with_a_ragged_last_one(bridge):
    x = tokens_of(256, 2)
    ids, w = routing(256, 2, crowded=(3, 0, 15))
    counts = np.bincount(ids.reshape(-1), minlength=E)
    assert counts[3] > 3 * ROWS and counts[3] % ROWS    # 4 tiles, the last one ragged
    check(layer(256).experts(x, ids, w), x, ids, w)
    ids = np.tile(np.array([3, 0, 15, 9], "int32"), (256, 1))   # four experts of 256 rows: 4 full tiles each
    check(layer(256).experts(x, ids, w), x, ids, w)


def test_row_weights_are_the_slot_weights_in_tile_padded_order():
    ids, w = routing(64, 3, crowded=(2,))
    plan = schedule(ids, w, E, ROWS)
    max_tiles = plan.max_tiles(64 * SHAPE.top_k, E, ROWS)
    tiles = cuda.tile_arrays(plan, max_tiles)
    weight = tiles["row_weight"]
    rows = np.concatenate([i * ROWS + np.arange(m) for i, m in enumerate(plan.tile_rows)])
    np.testing.assert_array_equal(weight[rows], plan.slot_weight[:64 * SHAPE.top_k])   # slot s's weight in its row
    assert np.count_nonzero(weight) == rows.size                                       # 0 in every padding row
    assert (tiles["tile_rows"][plan.tiles:] == 0).all() and tiles["tile_rows"].size == max_tiles


def test_ptx_has_wgmma_and_tma_and_explain_names_the_rules(bridge):
    from tvm.support import nvcc

    axe4j.use_pip_nvcc()
    funcs = cuda.kernels(SHAPE, 64, BN1, BN2)
    for name in ("gemm1", "gemm2", "experts"):
        source = _stage_build(name).mod.imports[0].inspect_source("cuda")
        with cuda.target():
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.f16\.f16", ptx), name
        assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx, name
        if name != "gemm2":   # the gather: 16 bytes per thread and row, at a run-time row
            assert re.search(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16;", ptx)
        if name != "gemm1":   # the scatter to pair order: 16 bytes per lane and row, at a run-time row
            assert re.search(r"st\.global\.v4\.(f32|u32|b32)", ptx)
        if name == "experts":  # tickets and ready counts: global atomics, a GPU-scope fence, the proxy fence
            assert re.search(r"atom\.global\.add\.u32|red\.global\.add\.u32|atom\.add\.u32", ptx), name
            assert "membar.gl" in ptx or "fence.sc.gpu" in ptx or "fence.acq_rel.gpu" in ptx
            assert "fence.proxy.async.global" in ptx
    chosen = {}
    for name in ("gemm1", "gemm2"):
        lines = axe4j.explain(funcs[name], cuda.target(), file=open("/dev/null", "w")).splitlines()
        calls = [n for n, line in enumerate(lines) if line.startswith("main #")] + [len(lines)]
        chosen.update({f"{name} {lines[a]}": next((line for line in lines[a + 1:b] if "chosen" in line), "")
                       for a, b in zip(calls, calls[1:])})
    assert all("axe4j-cuda-" in rule for rule in chosen.values()), \
        [call for call, rule in chosen.items() if "axe4j-cuda-" not in rule]   # every tile op by an axe4j rule
    rules = {call: rule.split()[0] for call, rule in chosen.items()}
    assert rules[next(c for c in rules if "X[slot_token" in c)] == "axe4j-cuda-cp-async"        # the gather
    assert rules[next(c for c in rules if "Y[slot_pair" in c)] == "axe4j-cuda-vector"           # the scatter
    assert [r for c, r in rules.items() if "gemm_async" in c] == ["axe4j-cuda-wgmma"] * 3
    assert [r for c, r in rules.items() if "copy_async" in c and "X[" not in c] == ["axe4j-cuda-tma"] * 8


def test_reading_gathered_rows_before_their_cp_async_completes_is_caught(bridge):
    """The interpreter as the check of the gather ring: without the wait for the next K tile's cp.async group, the
    next wgmma reads rows that may not have landed."""
    import faults
    from axe4j.cuda import interp as cuda_interp

    axe4j.use_pip_nvcc()
    with faults.planted("moe-gather-unwaited"):
        executable = axe4j.compile(_stage_kernel("gemm1"), cuda.target())
    with pytest.raises(cuda_interp.KernelFault, match=r"a wgmma\.mma_async of warpgroup 0 .* touches shared byte "
                                                      r"\d+ while a cp\.async of 16 bytes .* is unfinished"):
        cuda_interp.run(executable, *_stage_args("gemm1"))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="w1 has shape"):
        cuda.MoeLayer(SHAPE, 4, WR, W2, W2)
    with pytest.raises(ValueError, match="BN1=40"):
        cuda.kernels(SHAPE, 4, bn1=40)
    with pytest.raises(ValueError, match=r"hidden \(200\)"):
        cuda.kernels(MoeShape(4, 2, 200, 64), 4)
    with pytest.raises(ValueError, match="dtype 'float32' must be one of"):
        cuda.kernels(SHAPE, 4, dtype="float32")
    with pytest.raises(ValueError, match="device 'tpu'"):
        cuda.MoeLayer(SHAPE, 4, WR, W1, W2, device="tpu")
    with pytest.raises(ValueError, match="x has shape"):
        layer(1).experts(np.zeros((2, H), "float16"), np.zeros((2, 4), "int32"), np.ones((2, 4)))


# ---- each stage as a GPU case: its kernel, inputs and numpy reference --------------------------------------------

CASE_TOKENS = 64


def _case_plan():
    ids, w = routing(CASE_TOKENS, 4, crowded=(0,))
    plan = schedule(ids, w, E, ROWS)
    max_tiles = plan.max_tiles(CASE_TOKENS * SHAPE.top_k, E, ROWS)
    return plan, max_tiles, cuda.tile_arrays(plan, max_tiles)


def _gemm1_expected(x, w1, tile_expert, tile_start, tile_rows, slot_token, row_weight, h):
    """The rows of each used tile; 0 past tile_rows and in unused tiles."""
    out = np.zeros_like(h, dtype="float32")
    for i in np.nonzero(tile_rows)[0]:
        m = tile_rows[i]
        g = x[slot_token[tile_start[i] + np.arange(m)]].astype("float32") @ w1[tile_expert[i]].astype("float32").T
        out[i * ROWS:i * ROWS + m] = silu(g[:, :I]) * g[:, I:] * row_weight[i * ROWS:i * ROWS + m, None]
    return [out.astype("float16")]


def _gemm2_expected(h, w2, tile_expert, tile_start, tile_rows, slot_pair, y):
    """Row r < tile_rows of tile i's product in Y's row slot_pair[tile_start + r]; rows of no pair stay 0."""
    out = np.zeros_like(y)
    for i in np.nonzero(tile_rows)[0]:
        m = tile_rows[i]
        out[slot_pair[tile_start[i] + np.arange(m)]] = h[i * ROWS:i * ROWS + m].astype("float32") @ \
            w2[tile_expert[i]].astype("float32").T
    return [out]


def _stage_args(stage):
    plan, max_tiles, tiles = _case_plan()
    rng = np.random.default_rng(5)
    if stage == "gemm1":
        return [tokens_of(CASE_TOKENS, 4), W1.copy(), tiles["tile_expert"], tiles["tile_start"], tiles["tile_rows"],
                plan.slot_token, tiles["row_weight"], np.zeros((max_tiles * ROWS, I), "float16")]
    if stage == "gemm2":
        h = (rng.standard_normal((max_tiles * ROWS, I))).astype("float16")
        return [h, W2.copy(), tiles["tile_expert"], tiles["tile_start"], tiles["tile_rows"], plan.slot_pair,
                np.zeros((CASE_TOKENS * SHAPE.top_k, H), "float32")]
    if stage == "experts":
        return [tokens_of(CASE_TOKENS, 4), W1.copy(), W2.copy(), tiles["tile_expert"], tiles["tile_start"],
                tiles["tile_rows"], plan.slot_token, plan.slot_pair, tiles["row_weight"],
                np.zeros((max_tiles * ROWS, I), "float16"), np.zeros((CASE_TOKENS * SHAPE.top_k, H), "float32"),
                np.zeros(max_tiles + 2, "int32")]
    y = rng.standard_normal((CASE_TOKENS * SHAPE.top_k, H)).astype("float32")
    return [y, np.zeros((CASE_TOKENS, H), "float16")]


def _experts_expected(x, w1, w2, tile_expert, tile_start, tile_rows, slot_token, slot_pair, row_weight, h, y, sync):
    """H as GEMM1 writes it, Y as GEMM2 computes it from that H, and the counters back at 0."""
    (h_want,) = _gemm1_expected(x, w1, tile_expert, tile_start, tile_rows, slot_token, row_weight, h)
    (y_want,) = _gemm2_expected(h_want, w2, tile_expert, tile_start, tile_rows, slot_pair, y)
    return [h_want, y_want, np.zeros_like(sync)]


def _stage_expected(stage):
    if stage == "gemm1":
        return lambda args: _gemm1_expected(*args)
    if stage == "gemm2":
        return lambda args: _gemm2_expected(*args)
    if stage == "experts":
        return lambda args: _experts_expected(*args)
    return lambda args: [args[0].reshape(CASE_TOKENS, SHAPE.top_k, H).sum(axis=1).astype("float16")]


_built = {}


def _stage_kernel(stage):
    return cuda.kernels(SHAPE, CASE_TOKENS, BN1, BN2, fused=stage == "experts")[stage]


def _stage_build(stage):
    if stage not in _built:
        axe4j.use_pip_nvcc()
        _built[stage] = axe4j.compile(_stage_kernel(stage), cuda.target())
    return _built[stage]


STAGES = ("gemm1", "gemm2", "combine", "experts")


def gpu_cases():
    """The kernels of the layer at 64 tokens (sm_90a): GEMM1 (gather, gate/up, SiLU-and-mul, weight), GEMM2,
    combine, and GEMM1 + GEMM2 fused (``experts``), each on inputs of its own and checked against numpy."""
    import _gpu_cases

    return [_gpu_cases.GpuCase(
        name=f"moe_cuda/{stage}_64_tokens", arch="sm_90a", build=lambda stage=stage: _stage_build(stage),
        kernel=lambda stage=stage: _stage_kernel(stage), target=cuda.target(),
        args=lambda stage=stage: _stage_args(stage),
        outputs={"gemm1": (7,), "gemm2": (6,), "combine": (1,), "experts": (9, 10, 11)}[stage],
        expected=_stage_expected(stage), rtol=1e-2, atol=1e-2) for stage in STAGES]


@pytest.mark.parametrize("name", [f"{stage}_64_tokens" for stage in STAGES])
def test_stage_matches_numpy_when_interpreted(bridge, name):
    import _gpu_cases
    from axe4j.cuda import interp as cuda_interp

    case = next(c for c in gpu_cases() if c.name == f"moe_cuda/{name}")
    args = case.args()
    cuda_interp.run(case.build(), *args)
    _gpu_cases.check(case, [args[i] for i in case.outputs])


@pytest.mark.gpu
@pytest.mark.parametrize("name", [f"{stage}_64_tokens" for stage in STAGES])
def test_stage_results_on_a_gpu(name):
    import _gpu_cases

    _gpu_cases.run_on_gpu(_gpu_cases.for_device(gpu_cases(), f"moe_cuda/{name}"))


@pytest.mark.gpu
def test_the_layer_on_a_gpu():
    if _gpu_arch() != "sm_90a":
        pytest.skip("the layer is sm_90a code")
    x = tokens_of(256, 9)
    moe = cuda.MoeLayer(SHAPE, 256, WR, W1, W2, device="gpu", bn1=BN1, bn2=BN2)
    _, ids, w = moe.route(x)
    check(moe(x), x, ids, w)


def _gpu_arch():
    import _gpu_cases

    return _gpu_cases.device_arch()


def test_the_gpu_bench_makes_fp16_weights_and_names_missing_peers():
    import types

    from axe4j.moe import cuda_bench, peers

    wr, w1, w2 = cuda_bench._weights(MoeShape(4, 2, 64, 32))
    assert (wr.dtype, w1.dtype, w2.dtype) == (np.float32, np.float16, np.float16)
    assert w1.shape == (4, 64, 64) and w2.shape == (4, 64, 32) and 0.05 < float(np.std(w1.astype("float32"))) < 0.3
    # a PyTorch without grouped_mm: that peer is named as missing with the reason, the per-expert loop always runs
    old_torch = types.SimpleNamespace(__version__="1.0", nn=types.SimpleNamespace(functional=types.SimpleNamespace()))
    found, missing = peers.peers(old_torch)
    names = [name for name, _ in found]
    assert names[-1] == "PyTorch per-expert loop (cuBLAS)" and "PyTorch grouped_mm (CUTLASS)" not in names
    assert "neither torch.nn.functional.grouped_mm nor _grouped_mm" in missing["PyTorch grouped_mm (CUTLASS)"]
    for name in ("vLLM fused_experts (Triton)", "SGLang fused_experts (Triton)"):
        assert (name in names) != (name in missing), name


def test_sass_reads_no_accumulator_while_its_wgmma_is_in_flight(bridge):
    """What ptxas scheduled (the interpreter runs TIR, before ptxas): no read of an HGMMA's accumulator registers
    before the WARPGROUP.DEPBAR that retires it (axe4j_tools.sass, as test_sass.py checks the GEMM kernels)."""
    from axe4j_tools import sass
    from axe4j_tools.cuda_corpus import build as corpus_build

    axe4j.use_pip_nvcc()
    for name in ("gemm1", "gemm2", "experts"):
        binary, _ = sass.cubin(corpus_build.cuda_source(_stage_build(name)), "sm_90a")
        instructions = sass.disassemble(binary)
        assert any(text.startswith("HGMMA.") for _, text in instructions), name
        assert sass.accumulator_reads_in_flight(instructions) == [], name


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_the_qwen3_shapes_compile_to_an_sm90a_binary(bridge, dtype):
    """128 experts, top-8, hidden 2048, intermediate 768 at 1024 tokens: 640 tiles of 64 rows at most, GEMM1 in 6
    chunks of 128, GEMM2 in 16 (compiled only: too large for the interpreter)."""
    from tvm.support import nvcc

    from axe4j.moe import QWEN3_30B_A3B

    axe4j.use_pip_nvcc()
    short = {"float16": "f16", "bfloat16": "bf16"}[dtype]
    for name, func in cuda.kernels(QWEN3_30B_A3B, 1024, dtype=dtype).items():
        source = axe4j.compile(func, cuda.target()).mod.imports[0].inspect_source("cuda")
        with cuda.target():
            binary = bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        assert binary[:4] == bytes.fromhex("50ed55ba") and set(re.findall(rb"sm_[0-9]+a?", binary)) == {b"sm_90a"}, name
        if name != "combine":
            assert f"wgmma.mma_async.sync.aligned.m64n128k16.f32.{short}.{short}" in ptx, name


@pytest.mark.parametrize("tickets", [True, False])
def test_fused_kernel_measurement_variants_compute_the_same_and_leave_the_counters_to_the_caller(bridge, tickets):
    """experts_kernel(reset=False) (with tickets, or work by block index) gives the same H and Y; its counters stay
    raised for the caller to zero (the ticket counter counts every CTA when tickets are taken)."""
    from axe4j.cuda import interp as cuda_interp
    from axe4j.moe.cuda_kernels import experts_kernel

    axe4j.use_pip_nvcc()
    plan, max_tiles, _ = _case_plan()
    executable = axe4j.compile(experts_kernel(SHAPE, CASE_TOKENS, max_tiles, BN1, BN2, tickets=tickets, reset=False),
                               cuda.target())
    args = _stage_args("experts")
    cuda_interp.run(executable, *args)
    h_want, y_want, _ = _experts_expected(*_stage_args("experts"))
    np.testing.assert_allclose(args[9].astype("float32"), h_want.astype("float32"), rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(args[10], y_want, rtol=1e-2, atol=1e-2)
    ctas = (I // BN1 + H // BN2) * max_tiles
    assert args[11][max_tiles] == (ctas if tickets else 0) and args[11][:max_tiles].any()
