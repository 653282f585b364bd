"""make bench-gemm's parts that run without a GPU: the no-GPU exit with the recorded figures, the runner's input
kinds (random-normal, and the cuBLAS harness's formula), its per-kind summary and what the import keeps of it, and
the PNG chart writer. Reading the timings into choices is tested in test_gemm_tuning.py."""

import tvm  # noqa: F401  (before the JVM)

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from axe4j_tools import chart

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "gpu-bundle"))
import run as bundle_runner  # noqa: E402


def _gpu() -> bool:
    try:
        return bool(tvm.cuda(0).exist)
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(_gpu(), reason="a GPU is present: the benchmark would run")
def test_without_a_gpu_it_prints_the_recorded_figures_and_builds_nothing():
    from axe4j.cuda.kernels import gemm_tuning

    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_gemm.py")], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "no GPU:" in out.stdout and not (ROOT / "out" / "bench-gemm" / "summary.json").exists()
    rows = {line.split("|")[1].strip(): line.split("|") for line in out.stdout.splitlines()
            if line.startswith("| ") and "x" in line.split("|")[1]}
    for key, entry in gemm_tuning.load().items():   # every recorded shape, with its device, date and input kind
        row = rows[key.split("/")[-1]]
        assert row[2].strip() == entry["choice"] and row[7].strip() == entry["device"]
        assert row[8].strip() == entry["date"] and row[9].strip() == entry.get("inputs", "structured")
        best = max(r["tflops"] for r in entry["measured"])
        assert row[5].strip() == f"{best / entry['cublas_tflops']:.3f}"
    assert "No GPU figures yet for" in out.stdout and "1x4096x4096" in out.stdout


def _distinct(values) -> int:
    """Distinct values of a float16 array, sorted in float32 (exact): numpy 2.4's float16 sort on AVX512_ICL (Zen 4,
    Ice Lake) leaves inversions in arrays of about 16,000 elements and more, so ``np.unique`` miscounts there."""
    return len(np.unique(np.asarray(values).astype(np.float32)))


def test_distinct_values_do_not_depend_on_numpys_float16_sort():
    """Under numpy's AVX512_ICL sort (this CPU's AVX512_SPR path switched off where it has one), the 64 x 256
    structured A has its nine values; ``np.unique`` of the float16 array itself counts 13 there."""
    from numpy._core._multiarray_umath import __cpu_features__

    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES="AVX512_SPR") if __cpu_features__.get("AVX512_SPR") else None
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import run as r; import numpy as np; "
            "s, _ = r.gemm_inputs('structured', 64, 48, 256); print(len(np.unique(s.astype(np.float32))))")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "tools" / "gpu-bundle")], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0 and out.stdout.split() == ["9"], (out.stdout, out.stderr[-2000:])


def test_numpys_float16_sorts_are_refused_under_the_tests():
    """conftest installs ``_no_float16_sort``: a float16 sort fails on every host, not only where it is unordered."""
    for sort in (np.sort, np.unique, np.argsort, np.median):
        with pytest.raises(TypeError, match="float16 array: .*widen to float32"):
            sort(np.ones(3, np.float16))
    assert _distinct(np.array([1, 2, 2], np.float16)) == 2 and len(np.unique(np.ones(3, np.float32))) == 1


def test_random_and_structured_inputs_are_what_they_say():
    a, b = bundle_runner.gemm_inputs("randn", 64, 48, 256)
    a2, _ = bundle_runner.gemm_inputs("randn", 64, 48, 256)
    assert a.dtype == b.dtype == np.float16 and a.shape == (64, 256) and b.shape == (48, 256)
    assert np.array_equal(a, a2)   # seeded: the cuBLAS harness and torch get the same values from files
    values = a.astype(np.float64).ravel()
    assert abs(values.mean()) < 0.05 and abs(values.std() - 1.0) < 0.05 and len(np.unique(values)) > 1000
    s, _ = bundle_runner.gemm_inputs("structured", 64, 48, 256)
    assert _distinct(s) == 9   # the formula's nine values: low entropy
    import ml_dtypes   # BF16 as the runner holds it (bits in uint16), against ml_dtypes' rounding

    a16, _ = bundle_runner.gemm_inputs("randn", 64, 48, 256, "bfloat16")
    a32 = np.random.default_rng(0).standard_normal((64, 256), dtype=np.float32)
    assert a16.dtype == np.uint16 and np.array_equal(a16, a32.astype(ml_dtypes.bfloat16).view(np.uint16))
    assert np.array_equal(bundle_runner.as_float64(a16, "bfloat16"), a32.astype(ml_dtypes.bfloat16).astype(np.float64))
    with pytest.raises(ValueError, match="input kind 'ones': one of randn, structured"):
        bundle_runner.gemm_inputs("ones", 4, 4, 4)
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu-bundle" / "run.py"), "--inputs", "randn,ones"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "a comma-separated list of randn, structured" in out.stdout


def test_the_runner_reads_fp8_bits_as_ml_dtypes_does():
    """The bundle runner has numpy only: FP8 arguments and outputs travel as bits (uint8) and are decoded by its own
    OCP FP8 formula, checked here on all 256 patterns of each format against ml_dtypes."""
    import ml_dtypes

    bits = np.arange(256, dtype=np.uint8)
    for name in ("float8_e4m3fn", "float8_e5m2"):
        want = bits.view(getattr(ml_dtypes, name)).astype(np.float64)
        got = bundle_runner.as_float64(bits, name)
        assert np.array_equal(np.isnan(want), np.isnan(got)), name
        assert np.array_equal(want[~np.isnan(want)], got[~np.isnan(got)]), name
    rng = np.random.default_rng(1)   # and it rounds to FP8 as ml_dtypes does (nearest even) inside the range
    values = np.concatenate([rng.standard_normal(20000).astype(np.float32) * s for s in (1e-3, 0.1, 1, 10, 50)])
    for name, top in (("float8_e4m3fn", 448), ("float8_e5m2", 57344)):
        inside = values[np.abs(values) < top]
        assert np.array_equal(bundle_runner.to_dtype(inside, name),
                              inside.astype(getattr(ml_dtypes, name)).view(np.uint8)), name
    assert bundle_runner.as_float64(bundle_runner.to_dtype(np.array([1e6, -1e6], np.float32), "float8_e4m3fn"),
                                    "float8_e4m3fn").tolist() == [448.0, -448.0]   # saturating, as checkpoints do


def _timing(kind, tflops, cublas, torch):
    return {"m": 256, "n": 512, "k": 128, "inputs": kind, "runs": 30, "warmup": 5, "flush_bytes": 512 << 20,
            "median_ms": 0.01, "min_ms": 0.01, "max_ms": 0.02, "tflops": tflops, "matches_numpy": True,
            "check": {"mismatches": 0}, "cublas": {"ms": 0.01, "tflops": cublas}, "ratio_to_cublas": tflops / cublas,
            "torch": {"ms": 0.01, "tflops": torch}, "ratio_to_torch": tflops / torch}


def test_the_summary_gives_ratios_per_input_kind_and_the_import_keeps_the_kind(tmp_path):
    """summary.md has one row per kind with each peer's figure and ratio; import_tuning takes the top-level (randn)
    figures and records the kind and torch's figure with them."""
    by = {"randn": _timing("randn", 700.0, 760.0, 750.0), "structured": _timing("structured", 800.0, 870.0, 860.0)}
    timing = {"name": "hopper_gemm_pipelined/256x512x128_128x256", "by_inputs": by, **by["randn"]}
    out = tmp_path / "run"
    bundle_runner.summarize({}, {}, [timing], "NVIDIA X, compute capability 9.0", "sm_90a", out, 0.0)
    text = (out / "summary.md").read_text()
    assert "| randn | 0.0100 | 700.0 | 760.0 | 0.921 | 750.0 | 0.933 |" in text
    assert "| structured | 0.0100 | 800.0 | 870.0 | 0.920 | 860.0 | 0.930 |" in text
    cache = tmp_path / "cache.json"
    imported = subprocess.run([sys.executable, str(ROOT / "tools" / "import_tuning.py"), str(out / "summary.json"),
                               "--cache", str(cache)], capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    entry = json.loads(cache.read_text())["entries"]["sm_90a/float16/256x512x128"]
    assert entry["inputs"] == "randn" and entry["cublas_tflops"] == 760.0 and entry["torch_tflops"] == 750.0
    assert entry["measured"][0]["tflops"] == 700.0
    bf16 = {**_timing("randn", 650.0, 700.0, 690.0), "dtype": "bfloat16"}
    timing = {"name": "hopper_gemm_pipelined/256x512x128_128x256_bf16", "by_inputs": {"randn": bf16}, **bf16}
    bundle_runner.summarize({}, {}, [timing], "NVIDIA X, compute capability 9.0", "sm_90a", out, 0.0)
    assert "| 256x512x128 bf16 | randn | 0.0100 | 650.0 |" in (out / "summary.md").read_text()
    subprocess.run([sys.executable, str(ROOT / "tools" / "import_tuning.py"), str(out / "summary.json"), "--cache",
                    str(cache)], capture_output=True, text=True, check=True)
    entries = json.loads(cache.read_text())["entries"]
    assert entries["sm_90a/bfloat16/256x512x128"]["choice"] == "128x256"   # the _bf16 suffix is not the label
    assert entries["sm_90a/float16/256x512x128"]["cublas_tflops"] == 760.0   # the FP16 entry stays


def test_the_runner_times_on_the_harness_inputs():
    from test_native_cublas import inputs as harness_inputs

    a, b = bundle_runner.harness_inputs(24, 40, 56, seed=5)
    ha, hb = harness_inputs(24, 40, 56, seed=5)
    assert a.dtype == np.float16 and np.array_equal(a.astype("float64"), ha) and np.array_equal(b.astype("float64"), hb)


def _decode(png: bytes):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + data) & 0xFFFFFFFF, kind
        chunks.setdefault(kind, b"")
        chunks[kind] += data
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    raw = zlib.decompress(chunks[b"IDAT"])
    assert (depth, colour) == (8, 2) and len(raw) == height * (1 + 3 * width)
    rows = [raw[y * (1 + 3 * width) + 1:(y + 1) * (1 + 3 * width)] for y in range(height)]
    return width, height, rows


def test_chart_is_a_valid_png_with_bars_in_proportion(tmp_path):
    path = chart.bar_chart(tmp_path / "c.png", "FP16 GEMM TFLOP/s", ["64x64x64", "128x128x128"],
                           {"axe4j": [100.0, 400.0], "cuBLAS": [200.0, 400.0]}, ["ratio 0.50", "ratio 1.00"])
    width, height, rows = _decode(path.read_bytes())
    blue = bytes(chart.PALETTE[0])

    def bar_height(x):  # blue pixels of column x below the legend
        return sum(1 for row in rows[70:] if row[3 * x:3 * x + 3] == blue)

    xs = [x for x in range(width) if bar_height(x) > 0]
    heights = sorted({bar_height(x) for x in xs if bar_height(x) > 20})
    assert len(heights) == 2 and abs(heights[1] / heights[0] - 4.0) < 0.1, heights


def test_chart_text_outside_the_font_is_refused():
    with pytest.raises(ValueError, match="has no glyph"):
        chart.bar_chart("/dev/null", "Ω", ["a"], {"s": [1.0]})
    with pytest.raises(ValueError, match="series 's' has 2 values for 1 groups"):
        chart.bar_chart("/dev/null", "t", ["a"], {"s": [1.0, 2.0]})


def test_the_runners_epilogue_is_the_kernels():
    from axe4j.cuda.kernels.epilogue import Epilogue

    rng = np.random.default_rng(2)
    a, b = rng.integers(-2, 3, (16, 24)).astype("float16"), rng.integers(-2, 3, (8, 24)).astype("float16")
    c, bias = bundle_runner.epilogue_inputs(16, 8)
    assert c.dtype == np.float16 and bias.dtype == np.float32 and len(set(c.ravel().tolist())) > 5
    for e in (Epilogue(0.5, 0.25, True, "silu"), Epilogue(1.0, 0.0, False, "relu"), Epilogue(-1.0, 2.0, True, None)):
        spec = {"alpha": e.alpha, "beta": e.beta, "bias": e.bias, "activation": e.activation}
        np.testing.assert_array_equal(bundle_runner.apply_epilogue(spec, a, b, c, bias),
                                      e.reference(a, b, c, bias, "float16"))
