"""make jvm-gpu-bundle (tools/jvm_gpu_bundle.py, docs/jvm-gpu-bundle.md): the bundle stays under 64 MiB; its JRE has only
the modules named; every carried case, GEMM, MoE run and the served kernel is in a carried library, whose fatbin is the
one of its CUDA source; run.sh on this machine starts the bundled JRE with the bundled jars, which say there is no GPU,
and exits 0; the MoE input step writes the tile schedule and the numpy reference the Java runner checks against.

What needs a GPU (the launches, the timings, the services under load) runs only there: docs/jvm-gpu-bundle.md."""

import tvm  # noqa: F401  (before anything that could start the JVM)

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "out" / "jvm-gpu-bundle"
CALL = 64 << 20   # what one GPU call carries: the bundle and the checkout (git's tracked and unignored files)


@pytest.fixture(scope="module")
def bundle() -> Path:
    if not (ROOT / "native" / "build" / "cublas_gemm_bench").is_file():
        subprocess.run(["bash", "native/build.sh"], cwd=ROOT, check=True, capture_output=True, text=True)
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "jvm_gpu_bundle.py")], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return BUNDLE


@pytest.fixture(scope="module")
def manifest(bundle) -> dict:
    return json.loads((bundle / "jvm-manifest.json").read_text())


def test_bundle_stays_under_64_mib_with_a_jre_the_jars_and_no_compiler(bundle, manifest):
    size = sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file())
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.split(b"\0")
    checkout = sum((ROOT / n.decode()).stat().st_size for n in listed if n and (ROOT / n.decode()).is_file())
    assert size + checkout <= CALL, f"the bundle is {size / 2**20:.1f} MiB and the checkout {checkout / 2**20:.1f}"
    assert sorted(p.name for p in (bundle / "lib").iterdir()) == ["libtvm_ffi.so", "libtvm_runtime.so",
                                                                 "libtvm_runtime_cuda.so"]
    assert not list(bundle.rglob("libtvm_compiler*"))
    modules = subprocess.run([str(bundle / "jre" / "bin" / "java"), "--list-modules"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert sorted(m.split("@")[0] for m in modules) == sorted(manifest["jre_modules"])
    jars = sorted(p.name for p in (bundle / "jars").iterdir())
    assert jars == manifest["jars"]
    assert any(j.startswith("tvm-bridge-") for j in jars) and "axe4j-gpu-runner.jar" in jars
    assert "axe4j-serve-1.0.0.jar" in jars and any(j.startswith("jna-") for j in jars)
    assert os.access(bundle / "run.sh", os.X_OK)


def test_everything_carried_is_in_a_carried_library_with_its_fatbin(bundle, manifest):
    python_manifest = json.loads((bundle / "manifest.json").read_text())
    libraries = {lib["file"]: lib for lib in python_manifest["libraries"]}
    assert "kernels/moe-fp8-sm_90a.so" not in libraries and "moe_fp8" not in python_manifest   # FP8 MoE: GPU bundle
    assert not (bundle / "kernels" / "moe-fp8-sm_90a.so").exists()
    for lib in libraries.values():
        assert (bundle / lib["file"]).is_file()
        assert (bundle / "fatbins" / f"{lib['source_sha256']}.fatbin").read_bytes()[:4] == bytes.fromhex("50ed55ba")
    assert manifest["cases"] == python_manifest["cases"] and len(manifest["cases"]) >= 150
    for case in manifest["cases"]:
        assert case["arch"] == "sm_90a" and case["symbol"] in libraries[case["library"]]["symbols"]
        assert (bundle / case["npz"]).is_file()
    shapes = {(g["m"], g["n"], g["k"]) for g in manifest["gemms"]}
    assert {(8192, 8192, 8192), (4096, 4096, 4096), (4096, 28672, 4096)} <= shapes
    for g in manifest["gemms"]:
        assert g["symbol"] in libraries[g["library"]]["symbols"]
    moe = manifest["moe"]
    assert sorted((r["tokens"], r["dtype"]) for r in moe["runs"]) == [(16, "bfloat16"), (4096, "bfloat16")]
    for run in moe["runs"]:
        assert set(run["symbols"]) == {"schedule", "gemm1", "gemm2", "combine", "experts"}   # the schedule too
        assert set(run["symbols"].values()) <= set(libraries[moe["library"]]["symbols"])
    serve = json.loads((bundle / "serve-kernel.json").read_text())
    assert serve["function"] in libraries[serve["module"]]["symbols"] and serve["outputs"] == [2]
    assert manifest["launch"]["symbol"] in libraries[manifest["launch"]["library"]]["symbols"]


def test_run_sh_without_a_gpu_starts_the_bundled_jvm_and_exits_0(bundle, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD", "JAVA_HOME")}
    env["PATH"] = "/usr/bin:/bin"
    out = subprocess.run([str(bundle / "run.sh"), "--out", str(tmp_path / "results")], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no GPU" in out.stdout
    java = json.loads((tmp_path / "results" / "java" / "java-summary.json").read_text())
    assert java["gpu"] is None and "libcuda.so.1" in java["why_not"]
    assert json.loads((tmp_path / "results" / "summary.json").read_text())["device"] is None


def test_moe_inputs_hold_the_schedule_and_the_reference_the_java_runner_checks(bundle, tmp_path):
    """moe_inputs.py on a small shape: the tile schedule is axe4j.moe's of the routing written, and the reference rows
    are axe4j.moe's reference on the weights as the 16-bit values written."""
    from axe4j.moe.reference import moe_reference
    from axe4j.moe.schedule import TileSchedule, schedule, tile_arrays

    mini = tmp_path / "bundle"
    mini.mkdir()
    shutil.copy2(bundle / "moe_inputs.py", mini)
    shutil.copytree(bundle / "moe", mini / "moe")
    E, K, H, I, rows, T = 4, 2, 32, 16, 8, 10
    runs = [{"tokens": T, "dtype": d, "max_tiles": TileSchedule.max_tiles(T * K, E, rows)}
            for d in ("bfloat16", "float16")]
    (mini / "manifest.json").write_text(json.dumps({"moe": {"shape": {"experts": E, "top_k": K, "hidden": H,
                                                                      "intermediate": I}, "rows": rows,
                                                            "runs": runs}}))
    out = subprocess.run([sys.executable, str(mini / "moe_inputs.py"), "--out", str(tmp_path / "in"), "--sample",
                          "4"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    for dtype in ("bfloat16", "float16"):
        def values(name):
            bits = np.load(tmp_path / "in" / name)
            assert bits.dtype == np.uint16
            if dtype == "float16":
                return bits.view(np.float16).astype(np.float32)
            return (bits.astype(np.uint32) << 16).view(np.float32)

        folder = tmp_path / "in" / f"moe-{T}-{dtype}"
        x, w1, w2 = values(f"moe-{T}-{dtype}/x.npy"), values(f"w1-{dtype}.npy"), values(f"w2-{dtype}.npy")
        assert w1.shape == (E, 2 * I, H) and w2.shape == (E, H, I) and x.shape == (T, H)
        ids = np.load(folder / "ids.npy")
        plan = schedule(ids, np.ones_like(ids, dtype=np.float32), E, rows)
        for name in ("tile_expert", "tile_start", "tile_rows"):
            np.testing.assert_array_equal(np.load(folder / f"{name}.npy"),
                                          tile_arrays(plan, runs[0]["max_tiles"])[name])
        np.testing.assert_array_equal(np.load(folder / "slot_pair.npy"), plan.slot_pair)
        sample = np.load(folder / "reference_rows.npy")
        row_weight = np.load(folder / "row_weight.npy")
        assert row_weight.dtype == np.float32
        # the routing weights are the softmax over each token's k logits: recover them from the padded rows
        routing = np.zeros(ids.shape, np.float32)
        for tile in range(plan.tile_expert.shape[0]):
            for r in range(plan.tile_rows[tile]):
                slot = plan.tile_start[tile] + r
                pair = plan.slot_pair[slot]
                routing.flat[pair] = row_weight[tile * rows + r]
        np.testing.assert_allclose(routing.sum(axis=1), 1, rtol=1e-5)
        want = moe_reference(x[sample], w1, w2, ids[sample], routing[sample])
        np.testing.assert_allclose(np.load(folder / "reference.npy"), want, rtol=1e-5, atol=1e-6)
