"""The Java classpath that ``axe4j.install()`` starts the JVM with.

Installed from the wheel: the jars inside the package, ``axe4j/jars/*.jar`` (the bridge jar first, then the others
by name); the wheel build (``tools/build_wheel.py``) puts them there.

In a checkout (no ``axe4j/jars`` folder): the jars Maven builds in the repository this package lives in,

    <root>/tvm-bridge/target/tvm-bridge-<version>.jar     (required)
    <root>/<module>/target/<module>-<version>.jar          (every other module that has one)
    <root>/<module>/target/lib/*.jar                       (copied dependencies: JNA, Gson, ...)

in that order, each jar file name once (a module's own jar wins over a copy of it in a lib folder).
``AXE4J_CLASSPATH`` replaces the default: entries separated by ``os.pathsep``, each a jar, a
class folder, or a glob such as ``/opt/axe4j/lib/*.jar``.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from ._errors import SetupError

BRIDGE_MODULE = "tvm-bridge"
PACKAGED_JARS = Path(__file__).resolve().parent / "jars"
CLASSPATH_ENV = "AXE4J_CLASSPATH"

# Maven attaches these classifiers to secondary artifacts; they never belong on a runtime classpath.
_SECONDARY_SUFFIXES = ("-sources.jar", "-javadoc.jar", "-tests.jar", "-test-sources.jar")


def repository_root() -> Path:
    """The checkout holding this package: ``<root>/python/axe4j/_classpath.py``."""
    return Path(__file__).resolve().parents[2]


def resolve(explicit: list[str] | None = None, environ: dict[str, str] | None = None) -> list[str]:
    """The classpath to use: ``explicit`` if given, else ``$AXE4J_CLASSPATH``, else the packaged or the build's jars."""
    environ = os.environ if environ is None else environ
    if explicit is not None:
        return from_entries(list(explicit), origin="install(classpath=...)")
    text = environ.get(CLASSPATH_ENV, "").strip()
    if text:
        return from_entries(text.split(os.pathsep), origin=f"${CLASSPATH_ENV}")
    if PACKAGED_JARS.is_dir():
        return packaged_classpath(PACKAGED_JARS)
    return default_classpath(repository_root())


def jar_source(environ: dict[str, str] | None = None) -> str:
    """Where ``resolve()`` without ``explicit`` takes the jars from, in words."""
    environ = os.environ if environ is None else environ
    if environ.get(CLASSPATH_ENV, "").strip():
        return f"${CLASSPATH_ENV}"
    if PACKAGED_JARS.is_dir():
        return f"packaged, {PACKAGED_JARS}"
    return f"checkout, {repository_root()}"


def packaged_classpath(folder: Path) -> list[str]:
    """The jars of an installed wheel: the bridge jar first, then the others by name."""
    jars = sorted(folder.glob("*.jar"))
    bridge = [jar for jar in jars if jar.name.startswith(BRIDGE_MODULE + "-")]
    if not bridge:
        raise SetupError(f"the installed axe4j package has no {BRIDGE_MODULE} jar: looked for "
                         f"{folder / (BRIDGE_MODULE + '-*.jar')} (found {[jar.name for jar in jars]}); "
                         f"reinstall the axe4j wheel")
    return [str(jar) for jar in bridge + [jar for jar in jars if jar not in bridge]]


def from_entries(entries: list[str], origin: str) -> list[str]:
    """Expands globs and checks that every entry exists; names the missing ones."""
    resolved: list[str] = []
    missing: list[str] = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        if glob.has_magic(entry):
            matches = sorted(glob.glob(entry))
            if not matches:
                missing.append(entry)
            resolved.extend(matches)
        elif os.path.exists(entry):
            resolved.append(entry)
        else:
            missing.append(entry)
    if missing:
        raise SetupError(f"{origin}: no such file for classpath entr{'y' if len(missing) == 1 else 'ies'} "
                         + ", ".join(missing))
    if not resolved:
        raise SetupError(f"{origin} is empty: it names no jar or class folder")
    return resolved


def default_classpath(root: Path) -> list[str]:
    """The jars ``make build`` leaves under ``root``; raises naming where it looked if the bridge jar is absent."""
    bridge = _module_jars(root / BRIDGE_MODULE)
    if not bridge:
        raise SetupError(
            f"the {BRIDGE_MODULE} jar is missing: looked for "
            f"{root / BRIDGE_MODULE / 'target' / (BRIDGE_MODULE + '-*.jar')}. "
            f"Build the jars with `make build` in {root}, "
            f"or point ${CLASSPATH_ENV} at them.")
    modules = sorted(p.parent for p in root.glob("*/pom.xml"))
    own: list[Path] = list(bridge)
    for module in modules:
        if module.name != BRIDGE_MODULE:
            own.extend(_module_jars(module))
    libraries = [jar for module in [root / BRIDGE_MODULE, *modules] for jar in sorted((module / "target" / "lib").glob("*.jar"))]
    seen: set[str] = set()
    classpath: list[str] = []
    for jar in own + libraries:
        if jar.name not in seen:
            seen.add(jar.name)
            classpath.append(str(jar))
    return classpath


def _module_jars(module: Path) -> list[Path]:
    """``<module>/target/<module>-*.jar``, without sources, javadoc or test jars."""
    return sorted(jar for jar in (module / "target").glob(f"{module.name}-*.jar")
                  if not jar.name.endswith(_SECONDARY_SUFFIXES))
