"""axe4j's version. The one place it is written is the root ``pom.xml``'s ``<version>``; Maven's artifacts carry it
as written, and Python spells it in PEP 440: ``X.Y.Z-SNAPSHOT`` is ``X.Y.Z.dev0`` (a development build before the
release ``X.Y.Z``), ``X.Y.Z`` is ``X.Y.Z``. This file reads the pom of the checkout it lives in; the wheel build
(``tools/build_wheel.py``) replaces it in the wheel with the two values written out, as the wheel has no pom.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT_POM = Path(__file__).resolve().parents[2] / "pom.xml"
_MAVEN_NAMESPACE = "{http://maven.apache.org/POM/4.0.0}"
_RELEASE = re.compile(r"\d+\.\d+\.\d+")


def maven_version(pom: Path = ROOT_POM) -> str:
    """The ``<project><version>`` of ``pom``."""
    element = ElementTree.parse(pom).getroot().find(f"{_MAVEN_NAMESPACE}version")
    if element is None or not (element.text or "").strip():
        raise ValueError(f"{pom} has no <project><version>")
    return element.text.strip()


def pep440(maven: str) -> str:
    """``0.1.0-SNAPSHOT`` -> ``0.1.0.dev0``, ``0.1.0`` -> ``0.1.0``; any other form is refused, not guessed."""
    release, snapshot, rest = maven.partition("-SNAPSHOT")
    if rest or not _RELEASE.fullmatch(release):
        raise ValueError(f"Maven version {maven!r} is neither X.Y.Z nor X.Y.Z-SNAPSHOT; "
                         f"axe4j maps only those two forms to PEP 440")
    return f"{release}.dev0" if snapshot else release


MAVEN_VERSION = maven_version()
__version__ = pep440(MAVEN_VERSION)
