"""make bench-cpu's 16-bit rows on a small shape: the row's fields, the baseline it names, the markdown table."""

import tvm  # noqa: F401  (before the JVM)

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_cpu_gemm_sweep as sweep  # noqa: E402


@pytest.mark.parametrize("dtype,widening", [("float16", "__extendhfsf2 calls"), ("bfloat16", "16-bit shift")])
def test_a_16bit_row_checks_the_result_and_names_its_baseline(dtype, widening):
    row = sweep.measure_16bit(24, 40, 33, dtype, 1, tvm.target.Target("llvm"))
    assert row["shape"] == "24x40x33" and row["dtype"] == dtype
    assert row["widening"] == widening        # plain llvm: no F16C
    assert row["axe4j_gflops"] > 0 and row["numpy_fp32_gflops"] > 0
    assert row["ratio"] == pytest.approx(row["axe4j_gflops"] / row["numpy_fp32_gflops"], rel=0.02)
    assert "float32 copies of the same 16-bit values" in sweep.SIXTEEN_BIT_BASELINE
    assert "no fast float16/bfloat16 GEMM" in sweep.SIXTEEN_BIT_BASELINE
    table = sweep.markdown_table({"rows": [], "rows_16bit": [row]})
    assert f"| 24x40x33 | {dtype} |" in table and "numpy fp32 on fp32 copies" in table


def test_the_sweep_has_a_square_and_a_skinny_16bit_shape():
    assert (1024, 1024, 1024) in sweep.SIXTEEN_BIT
    assert any(m <= 8 and n == k == 4096 for m, n, k in sweep.SIXTEEN_BIT)
