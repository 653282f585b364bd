"""make bench-gemm's parts that run without a GPU: the no-GPU exit (through the GPU bundle's runner), the runner's
inputs against the cuBLAS harness's formula, and the PNG chart writer. Reading the timings is tested in
test_gemm_tuning.py."""

import tvm  # noqa: F401  (before the JVM)

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
def test_without_a_gpu_it_says_so_and_exits_0():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_gemm.py")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "no GPU:" in out.stdout and not (ROOT / "out" / "bench-gemm" / "summary.json").exists()


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
