"""docs/tutorial.md, executed: every ```python block in order in one namespace, then every ```java block compiled and
run without Maven against this checkout's jars, on the libraries the Python blocks exported."""

import tvm  # noqa: F401  (before the JVM)

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.S | re.M)


def blocks(language: str) -> list[tuple[int, str]]:
    """(line number, code) of each block fenced as ``language``."""
    text = TUTORIAL.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(2)) for m in FENCE.finditer(text) if m.group(1) == language]


def test_the_tutorial_has_runnable_blocks_only_in_python_and_java():
    languages = {m.group(1) for m in FENCE.finditer(TUTORIAL.read_text())}
    assert languages <= {"python", "java", "bash", "xml", "text"}, languages
    assert len(blocks("python")) >= 10 and len(blocks("java")) == 1


@pytest.fixture(scope="module")
def namespace(tmp_path_factory) -> dict:
    """Runs the Python blocks in order. Each block is written to a file first: TVMScript parses a kernel from its
    source, which it finds through the code's file name."""
    folder = tmp_path_factory.mktemp("tutorial")
    ns: dict = {"__name__": "tutorial"}
    environ = dict(os.environ)
    try:
        for i, (line, code) in enumerate(blocks("python")):
            path = folder / f"block{i:02d}_line{line}.py"
            path.write_text("\n" * (line - 1) + code)         # line numbers in tracebacks are the page's
            exec(compile(path.read_text(), str(path), "exec"), ns)   # noqa: S102  (the page's own code)
    finally:
        os.environ.clear()
        os.environ.update(environ)
    return ns


def test_python_blocks(namespace):
    """The blocks assert their own results against numpy; here, that they ran to the end and exported every kernel."""
    files = [entry[0] for entry in namespace["libraries"]]
    assert len(files) == 5 and all(Path(namespace["work"], f).is_file() for f in files), files


def _java_setup() -> tuple[str, dict]:
    """The page's class path (the bridge jar, JNA and Gson, TVM's runtime from the natives jar) and the environment.
    Where the natives jar is not built (``ci/test-python.sh`` builds only what ``schedules`` needs), TVM's libraries
    come from this venv instead (``AXE4J_VENV``); the CUDA runtime comes from this venv's ``nvidia-cuda-runtime``."""
    bridge = [p for p in (ROOT / "tvm-bridge" / "target").glob("tvm-bridge-*.jar")
              if not p.name.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar"))]
    libs = sorted((ROOT / "tvm-bridge" / "target" / "lib").glob("*.jar"))
    assert len(bridge) == 1 and libs, "build the jars first (make build)"
    natives = sorted((ROOT / "tvm-runtime-natives" / "target").glob("tvm-runtime-natives-*-linux-x86_64.jar"))
    env = dict(os.environ)
    if not natives:
        env["AXE4J_VENV"] = sys.prefix
    cudart = next(Path(sys.prefix, "lib").glob("python3*/site-packages/nvidia/cu13/lib"), None)
    if cudart is not None and "AXE4J_CUDA_LIBS" not in env:
        env["AXE4J_CUDA_LIBS"] = str(cudart)   # the CUDA 13 runtime, for a machine with a GPU
    return os.pathsep.join(str(p) for p in bridge + libs + natives[:1]), env


def _gpu() -> str | None:
    """The compute capability of GPU 0 ("9.0"), or None without a GPU or driver."""
    try:
        device = tvm.cuda(0)
        return str(device.compute_version) if device.exist else None
    except Exception:  # noqa: BLE001  (no CUDA driver at all)
        return None


def test_java_blocks(namespace, tmp_path):
    java = shutil.which("java")
    assert java, "java is not on PATH"
    work = str(namespace["work"])
    classpath, env = _java_setup()
    for line, code in blocks("java"):
        name = re.search(r"public class (\w+)", code).group(1)
        source = tmp_path / f"{name}.java"
        source.write_text(code)
        # the working directory has no .venv above it: the bridge takes TVM's runtime from the natives jar
        run = subprocess.run([java, "-cp", classpath, str(source), work], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0, f"java block at line {line}:\n{run.stdout}\n{run.stderr}"
        print(run.stdout)
        for what in ("CPU softmax", "CPU transpose"):
            assert re.search(rf"^{what}: 4096 values, largest difference from Java's \d", run.stdout, re.M), run.stdout
        gpu = _gpu()
        if gpu == "9.0":   # the libraries' fatbins are for sm_90a
            for what in ("CUDA softmax: 4096", "CUDA transpose: 4096", "CUDA row sums: 64"):
                assert re.search(rf"^{what} values, largest difference from Java's \d", run.stdout, re.M), run.stdout
        else:
            assert "CudaException: loading module " in run.stdout and "softmax_sm90a.so" in run.stdout, run.stdout
            if gpu is None:
                assert "no CUDA driver" in run.stdout, run.stdout
