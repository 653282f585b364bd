"""tools/kernel_sources.py: the generated CUDA source of a few cheap bundle kernels is the same from run to run, and
``--compare`` names a kernel whose source changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "kernel_sources.py"
CASES = ("hopper_gemm/256x256x256", "corpus/copy_async_cp_async_cta_f16/sm_90a")


def run_tool(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "python"),
                                                                    os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=600)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    for out, extra in ((first, ()), (second, ("--no-ptx",))):
        done = run_tool("--out", out, *extra, "--cases", *CASES)
        assert done.returncode == 0, done.stderr[-3000:]
    return first, second


def test_the_sources_are_written_with_their_digests(two_runs):
    first, _ = two_runs
    digests = json.loads((first / "digests.json").read_text())
    assert sorted(digests["cases"]) == sorted(CASES) and digests["failed"] == {}
    source = (first / "hopper_gemm__256x256x256.cu").read_text()
    assert "__global__" in source and "wgmma" in source
    assert digests["cases"]["hopper_gemm/256x256x256"]["arch"] == "sm_90a"


def test_two_runs_give_the_same_digests(two_runs):
    first, second = two_runs
    a = json.loads((first / "digests.json").read_text())["cases"]
    b = json.loads((second / "digests.json").read_text())["cases"]
    assert {name: entry["cu"] for name, entry in a.items()} == {name: entry["cu"] for name, entry in b.items()}
    done = run_tool("--compare", first, second)
    assert done.returncode == 0, done.stdout
    assert f"{len(CASES)} identical, 0 differ" in done.stdout


def test_compare_names_a_changed_source(two_runs, tmp_path):
    first, _ = two_runs
    changed = tmp_path / "changed"
    shutil.copytree(first, changed)
    path = changed / "hopper_gemm__256x256x256.cu"
    path.write_text(path.read_text().replace("__syncthreads();", "/* no barrier */", 1))
    done = run_tool("--compare", first, changed)
    assert done.returncode == 1
    assert "DIFFERS: hopper_gemm/256x256x256 (cu)" in done.stdout
    assert "+/* no barrier */" in done.stdout or "/* no barrier */" in done.stdout
    assert "1 identical, 1 differ" in done.stdout
