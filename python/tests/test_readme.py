"""README.md, executed: its ```python blocks in order in one namespace (in a scratch folder, where the first kernel is
exported), then its ```java block compiled and run against this checkout's jars on that library."""

import tvm  # noqa: F401  (before the JVM)

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_tutorial import FENCE, _java_setup

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def blocks(language: str) -> list[tuple[int, str]]:
    text = README.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(2)) for m in FENCE.finditer(text) if m.group(1) == language]


def test_the_front_page_fits_on_a_page_and_holds_one_kernel_and_one_java_call():
    assert len(README.read_text().splitlines()) <= 200
    assert len(blocks("python")) == 1 and len(blocks("java")) == 1


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("readme")
    ns: dict = {"__name__": "readme"}
    here = os.getcwd()
    os.chdir(folder)
    try:
        for i, (line, code) in enumerate(blocks("python")):
            path = folder / f"block{i}_line{line}.py"
            path.write_text("\n" * (line - 1) + code)   # TVMScript reads the kernel's source from its file
            exec(compile(path.read_text(), str(path), "exec"), ns)   # noqa: S102  (the page's own code)
    finally:
        os.chdir(here)
    assert "axe4j-cpu" in ns["report"]
    return folder


def test_python_block_exports_the_kernel(exported):
    assert (exported / "transpose.so").is_file()


def test_java_block_runs_the_exported_kernel(exported, tmp_path):
    java = shutil.which("java")
    assert java, "java is not on PATH"
    classpath, env = _java_setup()
    (line, code), = blocks("java")
    name = re.search(r"public class (\w+)", code).group(1)
    source = tmp_path / f"{name}.java"
    source.write_text(code)
    run = subprocess.run([java, "-cp", classpath, str(source), str(exported)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"java block at line {line}:\n{run.stdout}\n{run.stderr}"
    printed = re.search(r"It prints `([^`]*)`", README.read_text()).group(1)
    assert run.stdout.strip().splitlines()[-1] == printed, run.stdout
