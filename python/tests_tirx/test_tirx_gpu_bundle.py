"""The GPU bundle of both TVM lanes (``make tirx-gpu-bundle``, tools/tirx_gpu_bundle.py): built here for three tile
kernels and the Ampere GEMM, each lane's launch must be the one the other lane compiled (grid, block, dynamic shared bytes, which array
each kernel parameter points to), each cubin must hold its kernel's symbol, the arrays must be _tile_kernels'; and
the runner, in a Python without CuPy, says there is no GPU and exits 0."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "tirx_gpu_bundle.py"
RUNNER = REPO / "tools" / "tirx-gpu-bundle" / "run.py"
VENV_027 = REPO / ".venv" / "bin" / "python"
# three arrays used by all three params; one array (B) that the kernel never reads; an mma over float16
NAMES = ["add_cta_f32", "cast_cta_f32_to_f16", "mma_16x8x16_f16"]
GEMM = "ampere_gemm_256x192x96"   # 0.27 launches its CTAs as a (3, 4) grid, the new lane's kernel as (12)

sys.path.insert(0, str(Path(__file__).parent))
import _tile_kernels  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from tirx_gpu_bundle import gemm_arrays  # noqa: E402


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("tirx-gpu-bundle")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    env.pop("AXE4J_TVM_LANE", None)
    lane_027 = subprocess.Popen([str(VENV_027), str(TOOL), "--lane", "0.27", "--out", str(out), "--only", *NAMES, GEMM],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = subprocess.run([sys.executable, str(TOOL), "--lane", "tirx", "--out", str(out), "--only", *NAMES, GEMM],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    stdout, stderr = lane_027.communicate(timeout=600)
    assert lane_027.returncode == 0, stderr[-3000:]
    return out


def test_both_lanes_launch_each_kernel_alike(bundle):
    lanes = {lane: json.loads((bundle / f"{lane}.json").read_text())["kernels"] for lane in ("tirx", "0.27")}
    assert sorted(lanes["tirx"]) == sorted(lanes["0.27"]) == sorted([*NAMES, GEMM])
    ours, theirs = lanes["tirx"][GEMM], lanes["0.27"][GEMM]
    assert np.prod(ours["grid"]) == np.prod(theirs["grid"]) == (256 // 64) * (192 // 64)
    assert ours["block"] == theirs["block"] == [128, 1, 1] and ours["params"] == theirs["params"]
    for name in NAMES:
        ours, theirs = lanes["tirx"][name], lanes["0.27"][name]
        for key in ("grid", "block", "dynamic_shared", "params"):
            assert ours[key] == theirs[key], (name, key, ours[key], theirs[key])
        assert ours["block"][0] == _tile_kernels.KERNELS[name].get("threads", ours["block"][0])
    # cast reads A and writes C: B (array 1) is no parameter on either lane
    assert [p["array"] for p in lanes["tirx"]["cast_cta_f32_to_f16"]["params"]] == [0, 2]


def test_each_cubin_holds_its_kernel_and_the_arrays_are_the_tests(bundle):
    for lane in ("tirx", "0.27"):
        kernels = json.loads((bundle / f"{lane}.json").read_text())["kernels"]
        for name, entry in kernels.items():
            cubin = (bundle / entry["cubin"]).read_bytes()
            assert cubin[:4] == b"\x7fELF" and entry["symbol"].encode() in cubin, (lane, name)
    for name in [*NAMES, GEMM]:
        args, expected, exact = gemm_arrays(name) if name == GEMM else _tile_kernels.arrays(name)
        case = np.load(bundle / "cases" / f"{name}.npz")
        assert bool(case["exact"]) == exact
        for i, (a, e) in enumerate(zip(args, expected)):
            assert np.array_equal(case[f"a{i}"], a) and np.array_equal(case[f"e{i}"], e)


def test_the_runner_without_a_gpu_says_so(bundle, tmp_path):
    runner = bundle / "run.py"
    runner.write_text(RUNNER.read_text())
    done = subprocess.run([sys.executable, str(runner), "--out", str(tmp_path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode == 0 and "no GPU here" in done.stdout, (done.stdout, done.stderr)
