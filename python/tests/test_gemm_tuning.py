"""Tile configurations of the pipelined Hopper GEMM (axe4j.cuda.kernels.gemm_tuning): the sweep, the choice from GPU
timings or from the stated rule, the import of a bundle run's timings (tools/import_tuning.py), and explain showing the
choice."""

import tvm  # noqa: F401  (before the JVM)

import json
import subprocess
import sys
from pathlib import Path

import pytest

import axe4j
from axe4j.cuda.kernels import gemm_tuning
from axe4j.cuda.kernels.hopper_gemm_pipelined import check, stages_for

ROOT = Path(__file__).resolve().parents[2]
TARGET = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")


def test_every_swept_configuration_is_one_the_builder_accepts_and_no_other():
    for (m, n, k) in gemm_tuning.SWEEP:
        offered = {c.label for c in gemm_tuning.applicable(m, n, k)}
        for bm, bn, cluster in gemm_tuning.CONFIGS:
            try:
                check(m, n, k, bm, bn, gemm_tuning.BK, stages_for(bm, bn, gemm_tuning.BK), 8, 132, "float16",
                      cluster)
                accepted = bm <= -(-m // 128) * 128
            except ValueError:
                accepted = False
            label = f"{bm}x{bn}" + ("" if cluster == (1, 1) else f"_c{cluster[0]}x{cluster[1]}")
            assert (label in offered) == accepted, (m, n, k, bm, bn, cluster)
    assert len(set(gemm_tuning.SWEEP)) == len(gemm_tuning.SWEEP)


def test_clustered_configurations_need_whole_clusters_of_tiles():
    labels = {c.label for c in gemm_tuning.applicable(128, 6144, 4096)}   # one tile row: no 2x1 cluster
    assert labels == {"128x256", "128x128", "128x256_c1x2", "128x256_split4", "128x128_split2"}   # (no cluster split)
    big = {c.label for c in gemm_tuning.applicable(8192, 8192, 8192)}
    assert {"128x256_c2x1", "128x256_c1x2", "128x128_c2x1"} <= big
    assert gemm_tuning.Config(128, 256, (2, 1)).options()["cluster"] == (2, 1)
    assert "cluster" not in gemm_tuning.Config(128, 256).options()


def test_the_committed_cache_has_an_applicable_choice_for_every_swept_shape():
    entries = gemm_tuning.load()
    for (m, n, k) in gemm_tuning.SERVED:   # not measured yet: the rule decides, and says so
        assert (gemm_tuning.key("sm_90a", m, n, k, "float16") in entries) != ((m, n, k) in gemm_tuning.UNMEASURED)
        if (m, n, k) in gemm_tuning.UNMEASURED:
            assert gemm_tuning.choose(m, n, k).reason.startswith("rule (no measurement")
    for (m, n, k) in gemm_tuning.SWEEP:
        entry = entries[gemm_tuning.key("sm_90a", m, n, k, "float16")]
        assert entry["choice"] in {c.label for c in gemm_tuning.applicable(m, n, k)}
        best = max(entry["measured"], key=lambda r: r["tflops"])
        assert best["config"] == entry["choice"]
        choice = gemm_tuning.choose(m, n, k)
        assert choice.config.label == entry["choice"] and choice.reason.startswith("measured on NVIDIA H200")


def test_without_a_measurement_the_rule_fills_the_sms_first(tmp_path):
    empty = tmp_path / "none.json"
    choice = gemm_tuning.choose(8192, 4096, 4096, path=empty)
    assert choice.config.label == "128x256" and "1024 tiles fill the 132 SMs" in choice.reason
    choice = gemm_tuning.choose(128, 4096, 4096, path=empty)   # 32 tiles at most: K split 4 ways fills 128 SMs
    assert choice.config.label == "128x128_split4" and "most tiles (32)" in choice.reason
    assert "split-K 4 (128 units of 16 K tiles" in choice.reason
    assert gemm_tuning.choose(256, 384, 128, path=empty).config.label == "128x128"   # 384 is no multiple of 256


def test_any_m_n_k_is_tiled_and_rows_tma_cannot_address_are_padded():
    empty = Path("/nonexistent/gemm_tuning.json")
    assert gemm_tuning.choose(100, 4096, 4096, path=empty).config.label == "128x128_split4"   # 32 ragged tiles
    decode = gemm_tuning.choose(1, 4096, 4096, path=empty)   # swap-AB: N on the 128-row side, M = 1 on BN = 16
    assert decode.config.label == "swap_128x16_split4" and "M=1 <= 64: swap-AB" in decode.reason
    assert gemm_tuning.tiles(1000, 4000, gemm_tuning.Config(128, 256)) == 8 * 16
    with pytest.raises(ValueError, match=r"runs M=100, N=4096, K=4090: .*pad K to 4096"):
        gemm_tuning.choose(100, 4096, 4090)
    padded = gemm_tuning.padded_gemm(100, 4090, 4090)
    assert (padded.n_padded, padded.k_padded) == (4096, 4096)
    assert 'B: T.Buffer((4096, 4096), "float16")' in padded.kernel.script()


def test_the_padded_fallback_runs_and_matches_numpy_when_interpreted():
    """N = 36 and K = 20 are no multiples of 8: the kernel of (M, 40, 24) on zero-padded copies gives the exact D."""
    import numpy as np
    from axe4j.cuda import interp as cuda_interp

    padded = gemm_tuning.padded_gemm(100, 36, 20)
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (100, 20)).astype(np.float16)
    b = rng.integers(-3, 4, (36, 20)).astype(np.float16)
    a2, b2, d2 = padded.pad(a, b)
    assert a2.shape == (100, 24) and b2.shape == (40, 24) and not a2[:, 20:].any() and not b2[36:].any()
    axe4j.use_pip_nvcc()
    cuda_interp.run(axe4j.compile(padded.kernel, TARGET), a2, b2, d2)
    d = padded.unpad(d2)
    assert d.shape == (100, 36)
    np.testing.assert_array_equal(d.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32).T)


def _summary(tmp_path, timings):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"device": "NVIDIA X, compute capability 9.0", "arch": "sm_90a", "date": "2026-01-02",
                                "timings": timings}))
    return path


def _timing(shape, label, tflops, ok=True):
    m, n, k = shape
    return {"name": f"hopper_gemm_pipelined/{m}x{n}x{k}_{label}", "m": m, "n": n, "k": k, "tflops": tflops,
            "median_ms": 1.0, "matches_numpy": ok, "cublas": {"tflops": 100.0}}


def test_import_takes_the_fastest_configuration_that_matched_numpy(tmp_path):
    cache = tmp_path / "cache.json"
    cache.write_text(json.dumps({"entries": {"sm_90a/float16/1x2x3": {"choice": "kept"}}}))
    shape = (2048, 2048, 2048)
    summary = _summary(tmp_path, [_timing(shape, "128x256", 90.0), _timing(shape, "256x128", 120.0, ok=False),
                                  _timing(shape, "128x128", 95.0),
                                  {**_timing(shape, "128x256_fused", 300.0), "epilogue": {"alpha": 1.0}},
                                  {"name": "hopper_gemm/8192x4096x4096", "tflops": 500.0, "matches_numpy": True}])
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "import_tuning.py"), str(summary), "--cache", str(cache)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    entries = json.loads(cache.read_text())["entries"]
    assert entries["sm_90a/float16/1x2x3"] == {"choice": "kept"}
    entry = entries["sm_90a/float16/2048x2048x2048"]
    assert entry["choice"] == "128x128" and entry["device"] == "NVIDIA X" and entry["date"] == "2026-01-02"
    assert [r["config"] for r in entry["measured"]] == ["128x256", "128x128"]
    assert "| 2048x2048x2048 | 128x256: 90.0, 128x128: 95.0 | 128x128 | 100.0 | 0.950 |" in out.stdout
    chosen = gemm_tuning.choose(*shape, path=cache)
    assert chosen.config.label == "128x128" and "NVIDIA X (2026-01-02)" in chosen.reason


def test_import_of_a_run_without_usable_timings_changes_nothing(tmp_path):
    cache = tmp_path / "cache.json"
    summary = _summary(tmp_path, [_timing((2048, 2048, 2048), "128x256", 90.0, ok=False)])
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "import_tuning.py"), str(summary), "--cache", str(cache)],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "cache is unchanged" in out.stdout and not cache.exists()


def test_explain_shows_the_tuning_choice():
    kernel = gemm_tuning.hopper_gemm_tuned(2048, 2048, 2048)
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    report = axe4j.explain(kernel, target, file=open("/dev/null", "w"))
    first = report.splitlines()[0]
    assert first.startswith("main: hopper_gemm_pipelined tiles 128x128 in 2x1 clusters: measured on NVIDIA H200 "
                            "(2026-11-26)")
    assert "128x128_c2x1 630" in first and "cuBLAS 645" in first
    assert "multicast: the box lands" in report   # the clustered kernel's TMA loads, as explain shows them


# ---- decode and small-M strategies -----------------------------------------------------------------------------------

def test_decode_configurations_are_labelled_and_built_with_their_options():
    swap = gemm_tuning.Config(128, 16, swap_ab=True, split_k=4)
    assert swap.label == "swap_128x16_split4" and swap.strategy == "swap-AB + split-K 4"
    assert swap.options() == {"bm": 128, "bn": 16, "bk": 64, "group_m": 8, "sms": 132, "swap_ab": True, "split_k": 4}
    assert swap.workspace(1, 4096) == ((4, 32, 128, 16), (64,))   # 4096 / 128 tiles, two consumers each
    assert gemm_tuning.Config(64, 128).label == "64x128" and gemm_tuning.Config(64, 128).strategy == "64-row tiles"
    assert gemm_tuning.Config(64, 128).workspace(1, 4096) == ()
    assert [gemm_tuning.swap_bn(m) for m in (1, 16, 17, 33, 64)] == [16, 16, 32, 64, 64]


def test_split_k_takes_the_largest_split_that_fits_one_wave_with_full_splits():
    """split_for against its definition, by enumeration over shapes and configurations."""
    for m, n, k in ((1, 4096, 4096), (64, 6144, 4096), (128, 4096, 14336), (1, 28672, 4096), (16, 4096, 512)):
        for config in (gemm_tuning.Config(128, 16, swap_ab=True), gemm_tuning.Config(128, 128),
                       gemm_tuning.Config(64, 128)):
            k_tiles, count = -(-k // 64), gemm_tuning.tiles(m, n, config)
            fits = [s for s in range(2, 9) if s in gemm_tuning.SPLITS and k_tiles % s == 0 and k_tiles // s >= 8
                    and count * s <= 132]
            assert gemm_tuning.split_for(m, n, k, config) == max(fits, default=1), (m, n, k, config.label)
    assert gemm_tuning.split_for(1, 28672, 4096, gemm_tuning.Config(128, 16, swap_ab=True)) == 1   # 224 tiles


def test_decode_shapes_offer_64_row_tiles_swap_ab_and_split_k_and_larger_m_does_not():
    labels = [c.label for c in gemm_tuning.applicable(16, 4096, 4096)]
    assert labels == ["128x256", "128x128", "128x256_c1x2", "64x256", "64x128", "swap_128x16", "swap_64x16",
                      "128x256_split8", "128x128_split4", "64x256_split8", "64x128_split4", "swap_128x16_split4",
                      "swap_64x16_split2"]
    assert not [c for c in gemm_tuning.applicable(128, 4096, 4096) if c.bm == 64 or c.swap_ab]
    assert [c.label for c in gemm_tuning.decode_picks(1, 28672, 4096)] == ["swap_128x16", "swap_64x16"]
    assert [c.label for c in gemm_tuning.decode_picks(64, 4096, 14336)] == ["swap_128x64_split4", "64x128_split4"]
    for config in gemm_tuning.applicable(17, 4096, 4096):   # every offered configuration is one the builder takes
        options = config.options()
        check(17, 4096, 4096, options["bm"], options["bn"], 64, stages_for(config.bm, config.bn, 64), 8, 132,
              "float16", config.cluster, swap_ab=config.swap_ab)
    # the sweep times two decode strategies per served shape with M <= 64, and none elsewhere
    decode = [(shape, c) for shape, c in gemm_tuning.sweep_cases() if not gemm_tuning.plain(c)]
    assert len(decode) == 2 * len([s for s in gemm_tuning.SERVED if s[0] <= 64])
    assert all(shape[0] <= 64 and shape in gemm_tuning.SERVED for shape, _ in decode)
    assert [c.label for s, c in gemm_tuning.sweep_cases_fp8() if s == (16, 4096, 4096)] == [
        "128x256", "128x128", "swap_128x16_split4", "swap_64x16_split2"]


def test_import_and_choice_read_decode_labels(tmp_path):
    cache = tmp_path / "cache.json"
    shape = (16, 4096, 4096)
    summary = _summary(tmp_path, [_timing(shape, "128x128", 10.0), _timing(shape, "swap_128x16_split4", 40.0),
                                  _timing(shape, "swap_64x16_split2", 30.0)])
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "import_tuning.py"), str(summary), "--cache", str(cache)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(cache.read_text())["entries"]["sm_90a/float16/16x4096x4096"]["choice"] == "swap_128x16_split4"
    chosen = gemm_tuning.choose(*shape, path=cache)
    assert chosen.config == gemm_tuning.Config(128, 16, swap_ab=True, split_k=4)
    assert chosen.reason.startswith("measured on NVIDIA X")


def test_explain_shows_the_decode_strategy_and_the_tuned_swap_kernel_runs():
    """M = 5 is a decode shape: the rule takes swap-AB; the tuned kernel (on padded copies: N = 36, K = 20) equals
    numpy in the interpreter, D written through the transposed staging tile."""
    import numpy as np
    from axe4j.cuda import interp as cuda_interp

    padded = gemm_tuning.padded_gemm(5, 36, 20)
    assert padded.config == gemm_tuning.Config(128, 16, swap_ab=True) and padded.workspace() == []
    report = axe4j.explain(padded.kernel, TARGET, file=open("/dev/null", "w"))
    first = report.splitlines()[0]
    assert first.startswith("main: hopper_gemm_pipelined swap-AB tiles 128x16 (N x M): rule (no measurement")
    assert "M=5 <= 64: swap-AB" in first and "m64n16k16" in report
    rng = np.random.default_rng(4)
    a = rng.integers(-3, 4, (5, 20)).astype(np.float16)
    b = rng.integers(-3, 4, (36, 20)).astype(np.float16)
    a2, b2, d2 = padded.pad(a, b)
    axe4j.use_pip_nvcc()
    cuda_interp.run(axe4j.compile(padded.kernel, TARGET), a2, b2, d2)
    np.testing.assert_array_equal(padded.unpad(d2).astype(np.float32), a.astype(np.float32) @ b.astype(np.float32).T)


# ---- the fused epilogue at every shape the GEMM serves ---------------------------------------------------------------

def test_every_served_shape_has_a_configuration_that_runs_the_fused_epilogue():
    """The epilogue's shared memory (the bias boxes and their mbarriers) leaves every configuration in place, so the
    chooser takes the same one with an epilogue as without, and the builder accepts it."""
    from axe4j.cuda.kernels.epilogue import Epilogue
    from axe4j.cuda.kernels.hopper_gemm_pipelined import hopper_gemm_pipelined

    epilogue = Epilogue(0.5, 0.25, True, "silu")
    small = ((200, 136, 72), (63, 136, 200), (17, 264, 72), (1, 256, 128), (1, 136, 256))
    for shape in gemm_tuning.SWEEP + gemm_tuning.SERVED + small:
        options = gemm_tuning.applicable(*shape, epilogue=epilogue)
        assert options == gemm_tuning.applicable(*shape), shape
        assert gemm_tuning.choose(*shape, epilogue=epilogue) == gemm_tuning.choose(*shape), shape
    for shape in small + ((1, 4096, 4096), (64, 4096, 4096)):
        config = gemm_tuning.choose(*shape, epilogue=epilogue).config
        kernel = hopper_gemm_pipelined(*shape, epilogue=epilogue, **config.options())
        assert len(kernel.params) == 4 + (2 if config.split_k > 1 else 0) + 1, (shape, config.label)


def test_explain_says_how_the_tuned_kernel_runs_its_epilogue():
    from axe4j.cuda.kernels.epilogue import Epilogue

    epilogue = Epilogue(bias=True, activation="silu")
    ragged = gemm_tuning.hopper_gemm_tuned(200, 136, 72, epilogue=epilogue)
    first = axe4j.explain(ragged, TARGET, file=open("/dev/null", "w")).splitlines()[0]
    assert first.startswith("main: hopper_gemm_pipelined tiles 128x128: rule"), first
    assert first.endswith("; fused epilogue (alpha=1,beta=0,bias,silu): the bias by TMA (edge tiles clip); "
                          "32-column chunks"), first
    decode = str(gemm_tuning.hopper_gemm_tuned(1, 4096, 4096, epilogue=epilogue).attrs["axe4j.tuning"])
    assert decode.startswith("hopper_gemm_pipelined swap-AB tiles 128x16 (N x M), split-K 4: rule"), decode
    assert decode.endswith("fused epilogue (alpha=1,beta=0,bias,silu): the bias down the rows by TMA (edge tiles "
                           "clip); 16-column chunks, once per tile, after the sum of the 4 split-K partials"), decode
    whole = str(gemm_tuning.hopper_gemm_tuned(2048, 2048, 2048, epilogue=Epilogue(1.0, 1.0)).attrs["axe4j.tuning"])
    assert whole.endswith("fused epilogue (alpha=1,beta=1): C by register loads (whole tiles); 32-column chunks"), \
        whole
    swapped = gemm_tuning.hopper_gemm_tuned(16, 256, 128, epilogue=Epilogue(1.0, 0.5, True)).attrs["axe4j.tuning"]
    assert str(swapped).endswith("C transposed and the bias down the rows by register loads (whole tiles); "
                                 "16-column chunks"), swapped
