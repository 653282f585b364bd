"""The cuBLAS baseline harness (native/cublas_gemm_bench.cu) builds with the PyPI toolchain and behaves as documented:
usage errors exit 2 naming the argument, no GPU exits 3 saying so; on a GPU (``-m gpu``) its D equals numpy's
product of the documented inputs."""

import tvm  # noqa: F401  (before the JVM, as everywhere in these tests)

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "native" / "build" / "cublas_gemm_bench"


@pytest.fixture(scope="module")
def harness():
    subprocess.run(["bash", "native/build.sh"], cwd=ROOT, check=True, capture_output=True, text=True)
    assert BINARY.is_file()
    return BINARY


def _run(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True)


def test_usage_errors_name_the_argument(harness):
    out = _run(harness, 64, "x", 64)
    assert out.returncode == 2 and "N must be a positive integer, not 'x'" in out.stderr
    out = _run(harness, 64)
    assert out.returncode == 2 and "usage: cublas_gemm_bench M N K" in out.stderr
    out = _run(harness, 64, 64, 64, "--bogus", 1)
    assert out.returncode == 2 and "unknown option --bogus" in out.stderr
    out = _run(harness, 64, 64, 64, "--flush-l2", "0")
    assert out.returncode == 2 and "--flush-l2 must be a positive integer, not '0'" in out.stderr
    out = _run(harness, 64, 64, 64, "--inputs", "a.bin")
    assert out.returncode == 2 and "--inputs needs two files: A (M x K) and B (N x K), raw FP16" in out.stderr


def test_binary_holds_code_for_ampere_hopper_and_blackwell(harness):
    data = harness.read_bytes()
    for arch in (b"sm_80", b"sm_90a", b"sm_100a"):
        assert arch in data, arch


def _gpu() -> bool:
    try:
        return bool(tvm.cuda(0).exist)
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(_gpu(), reason="a GPU is present: the no-GPU path is not taken")
def test_without_a_gpu_it_says_so(harness):
    out = _run(harness, 64, 64, 64)
    assert out.returncode == 3 and "no CUDA GPU on this machine" in out.stderr


def inputs(m, n, k, seed=0):
    """The harness's inputs: A[i][k] = ((7 i + 13 k + seed) mod 9 - 4) / 8, B[j][k] = ((11 j + 5 k + 2 seed) mod 9 - 4) / 8."""
    i, kk = np.meshgrid(np.arange(m), np.arange(k), indexing="ij")
    a = ((7 * i + 13 * kk + seed) % 9 - 4) / 8.0
    j, kk = np.meshgrid(np.arange(n), np.arange(k), indexing="ij")
    b = ((11 * j + 5 * kk + 2 * seed) % 9 - 4) / 8.0
    return a, b


@pytest.mark.gpu
def test_result_is_a_times_b_transposed(harness, tmp_path):
    m, n, k = 256, 384, 512
    out = _run(harness, m, n, k, "--seed", 3, "--save", tmp_path / "d.bin", "--number", 2, "--repeat", 2)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["m"], report["n"], report["k"]) == (m, n, k) and report["tflops"] > 0
    d = np.fromfile(tmp_path / "d.bin", dtype=np.float16).reshape(m, n).astype(np.float64)
    a, b = inputs(m, n, k, seed=3)
    np.testing.assert_allclose(d, a @ b.T, rtol=2e-3, atol=2e-2)


@pytest.mark.gpu
def test_inputs_from_files_are_multiplied(harness, tmp_path):
    m, n, k = 128, 200, 96
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    a.tofile(tmp_path / "a.bin")
    b.tofile(tmp_path / "b.bin")
    out = _run(harness, m, n, k, "--inputs", tmp_path / "a.bin", tmp_path / "b.bin", "--save", tmp_path / "d.bin",
               "--number", 1, "--repeat", 2)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["inputs"] == "files"
    d = np.fromfile(tmp_path / "d.bin", dtype=np.float16).reshape(m, n).astype(np.float64)
    np.testing.assert_allclose(d, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-2, atol=1e-2)
    out = _run(harness, m, n, k, "--inputs", tmp_path / "b.bin", tmp_path / "a.bin")   # A's file holds N x K
    assert out.returncode == 2 and f"A file {tmp_path / 'b.bin'} must hold exactly {m * k} FP16 values" in out.stderr
