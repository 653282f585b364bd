"""One version for the Maven artifacts and the Python package: the root pom.xml's <version>, spelled in PEP 440 for
Python (axe4j._version); every pom of the checkout and the Java side agree with it."""

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

import axe4j
from axe4j import _version

ROOT = Path(_version.__file__).resolve().parents[2]
NS = {"m": "http://maven.apache.org/POM/4.0.0"}


@pytest.mark.parametrize("maven, python", [("0.1.0-SNAPSHOT", "0.1.0.dev0"), ("0.1.0", "0.1.0"),
                                           ("12.3.45-SNAPSHOT", "12.3.45.dev0")])
def test_maven_versions_map_to_pep_440(maven, python):
    assert _version.pep440(maven) == python


@pytest.mark.parametrize("maven", ["0.1.0-RC1", "0.1-SNAPSHOT", "0.1.0-SNAPSHOT-2", "v0.1.0", ""])
def test_other_maven_forms_are_refused_not_guessed(maven):
    with pytest.raises(ValueError, match="neither X.Y.Z nor X.Y.Z-SNAPSHOT"):
        _version.pep440(maven)


def test_the_package_version_is_the_root_pom_version_in_pep_440():
    assert _version.MAVEN_VERSION == _version.maven_version(ROOT / "pom.xml")
    assert axe4j.__version__ == _version.pep440(_version.MAVEN_VERSION)


def test_every_pom_of_the_build_names_the_root_version():
    versions = {}
    for pom in sorted(ROOT.glob("*/pom.xml")):
        project = ElementTree.parse(pom).getroot()
        versions[str(pom.relative_to(ROOT))] = (project.findtext("m:parent/m:version", namespaces=NS)
                                                or project.findtext("m:version", namespaces=NS))
    serve = ElementTree.parse(ROOT / "examples" / "serve" / "pom.xml").getroot()
    versions["examples/serve/pom.xml"] = serve.findtext("m:properties/m:axe4j.version", namespaces=NS)
    assert len(versions) >= 8
    assert {path: v for path, v in versions.items() if v != _version.MAVEN_VERSION} == {}


def test_the_java_side_answers_the_release_of_the_same_version(bridge):
    assert bridge.version == _version.MAVEN_VERSION.removesuffix("-SNAPSHOT")


def test_the_version_command_names_axe4j_tvm_java_and_the_jars(bridge):
    import subprocess
    import sys

    import tvm

    text = subprocess.run([sys.executable, "-m", "axe4j", "--version"], check=True, capture_output=True, text=True,
                          timeout=300).stdout
    assert text.startswith(f"axe4j {axe4j.__version__} (Java side {bridge.version})")
    assert f"\nTVM {tvm.__version__} at " in text
    assert f"\nJava {bridge.java_version} at {bridge.java_home} (libjvm {bridge.jvm_path}, from {bridge.jvm_origin})" \
        in text
    assert f"\njars (checkout, {ROOT}):\n" in text
    assert all(f"\n  {Path(jar).name}" in text for jar in bridge.classpath)
