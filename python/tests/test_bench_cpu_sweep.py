"""make bench-cpu's fp32 rows on a small shape: both sides on the same numpy arrays, the TVM-tensor figure beside it."""

import tvm  # noqa: F401  (before the JVM)

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_cpu_gemm_sweep as sweep  # noqa: E402


def test_numpy_array_is_an_aligned_copy_tvm_can_borrow():
    values = np.arange(3 * 5, dtype="float32").reshape(3, 5)
    copy = sweep.numpy_array(values)
    assert copy.ctypes.data % 64 == 0 and copy.base is not None
    np.testing.assert_array_equal(copy, values)
    borrowed = tvm.runtime.from_dlpack(copy)
    copy[1, 2] = -1.0                      # the same memory: a write through numpy shows through TVM
    assert borrowed.numpy()[1, 2] == -1.0


def test_a_row_has_both_ratios_and_the_table_shows_them():
    row = sweep.measure(24, 40, 33, 1, tvm.target.Target("llvm"))
    assert row["shape"] == "24x40x33" and row["rounds"] == 1
    for key in ("axe4j_gflops", "numpy_gflops", "axe4j_tvm_tensors_gflops"):
        assert row[key] > 0
    assert abs(row["ratio"] - row["axe4j_gflops"] / row["numpy_gflops"]) < 0.01
    table = sweep.markdown_table({"rows": [row]})
    assert "on TVM's own tensors" in table.splitlines()[0]
    assert f"| {row['ratio_tvm_tensors']:.2f} |" in table
