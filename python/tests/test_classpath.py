"""Classpath and JVM-option resolution, checked on made-up build trees (no JVM needed)."""

import os
from pathlib import Path

import pytest

import axe4j
from axe4j import _classpath


def touch(root: Path, *relative: str) -> None:
    for path in relative:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"")


def test_missing_bridge_jar_names_where_it_looked_and_the_build_command(tmp_path):
    touch(tmp_path, "pom.xml", "tvm-bridge/pom.xml", "axe-layout/pom.xml",
          "axe-layout/target/axe-layout-0.1.0-SNAPSHOT.jar")
    with pytest.raises(axe4j.SetupError) as raised:
        _classpath.default_classpath(tmp_path)
    message = str(raised.value)
    assert str(tmp_path / "tvm-bridge" / "target" / "tvm-bridge-*.jar") in message
    assert "make build" in message
    assert "AXE4J_CLASSPATH" in message


def test_default_classpath_lists_module_jars_then_libraries_each_name_once(tmp_path):
    touch(tmp_path,
          "pom.xml", "tvm-bridge/pom.xml", "axe-layout/pom.xml", "schedules/pom.xml", "docs/readme.md",
          "tvm-bridge/target/tvm-bridge-0.1.0-SNAPSHOT.jar",
          "tvm-bridge/target/tvm-bridge-0.1.0-SNAPSHOT-sources.jar",
          "tvm-bridge/target/tvm-bridge-0.1.0-SNAPSHOT-tests.jar",
          "tvm-bridge/target/lib/jna-5.14.0.jar",
          "tvm-bridge/target/lib/gson-2.10.1.jar",
          "tvm-bridge/target/lib/axe-layout-0.1.0-SNAPSHOT.jar",
          "axe-layout/target/axe-layout-0.1.0-SNAPSHOT.jar",
          "axe-layout/target/axe-layout-0.1.0-SNAPSHOT-javadoc.jar",
          "schedules/target/classes/Ignored.class")
    assert _classpath.default_classpath(tmp_path) == [
        str(tmp_path / "tvm-bridge/target/tvm-bridge-0.1.0-SNAPSHOT.jar"),
        str(tmp_path / "axe-layout/target/axe-layout-0.1.0-SNAPSHOT.jar"),
        str(tmp_path / "tvm-bridge/target/lib/gson-2.10.1.jar"),
        str(tmp_path / "tvm-bridge/target/lib/jna-5.14.0.jar"),
    ]


def test_entries_expand_globs_in_order_and_skip_blanks(tmp_path):
    touch(tmp_path, "lib/b.jar", "lib/a.jar", "classes/x.class")
    entries = [str(tmp_path / "lib" / "*.jar"), "", str(tmp_path / "classes")]
    assert _classpath.from_entries(entries, origin="test") == [
        str(tmp_path / "lib/a.jar"), str(tmp_path / "lib/b.jar"), str(tmp_path / "classes")]


def test_entries_that_do_not_exist_are_named(tmp_path):
    touch(tmp_path, "lib/a.jar")
    with pytest.raises(axe4j.SetupError) as raised:
        _classpath.from_entries([str(tmp_path / "lib/a.jar"), "/nowhere/x.jar", str(tmp_path / "none/*.jar")],
                                origin="$AXE4J_CLASSPATH")
    message = str(raised.value)
    assert "$AXE4J_CLASSPATH" in message and "/nowhere/x.jar" in message
    assert str(tmp_path / "none/*.jar") in message and str(tmp_path / "lib/a.jar") not in message


def test_blank_classpath_is_an_error():
    with pytest.raises(axe4j.SetupError, match="empty"):
        _classpath.from_entries(["", " "], origin="install(classpath=...)")


def test_explicit_classpath_wins_over_environment_which_wins_over_the_build(tmp_path, monkeypatch):
    touch(tmp_path, "explicit.jar", "env1.jar", "env2.jar", "pom.xml", "tvm-bridge/pom.xml",
          "tvm-bridge/target/tvm-bridge-1.jar")
    monkeypatch.setattr(_classpath, "repository_root", lambda: tmp_path)
    env = {"AXE4J_CLASSPATH": os.pathsep.join([str(tmp_path / "env1.jar"), str(tmp_path / "env2.jar")])}
    assert _classpath.resolve([str(tmp_path / "explicit.jar")], env) == [str(tmp_path / "explicit.jar")]
    assert _classpath.resolve(None, env) == [str(tmp_path / "env1.jar"), str(tmp_path / "env2.jar")]
    assert _classpath.resolve(None, {}) == [str(tmp_path / "tvm-bridge/target/tvm-bridge-1.jar")]


def test_repository_root_is_the_checkout_holding_the_package():
    root = _classpath.repository_root()
    assert (root / "python" / "axe4j" / "__init__.py").is_file()
    assert (root / "tvm-bridge" / "pom.xml").is_file()


def test_jvm_options_come_from_the_environment_then_the_call(monkeypatch):
    from axe4j import _jvm_options

    monkeypatch.setenv("AXE4J_JVM_OPTS", "-Xmx1g '-Dtext=two words' -Xss2m")
    assert _jvm_options(["-Dlast=1"]) == ["-Xmx1g", "-Dtext=two words", "-Xss2m", "-Dlast=1"]
    monkeypatch.delenv("AXE4J_JVM_OPTS")
    assert _jvm_options(["-XX:ThreadStackSize=4096"]) == ["-XX:ThreadStackSize=4096"]


def test_the_jvm_gets_a_thread_stack_of_the_process_stack_limit_unless_told(monkeypatch):
    import resource

    import axe4j

    monkeypatch.delenv("AXE4J_JVM_OPTS", raising=False)
    for soft, kib in ((8 << 20, 8192), (512 << 10, 1024), (resource.RLIM_INFINITY, axe4j._stack.UNLIMITED_KIB)):
        monkeypatch.setattr(resource, "getrlimit", lambda which, soft=soft: (soft, resource.RLIM_INFINITY))
        assert axe4j._jvm_options(["-Dx=1"]) == [f"-Xss{kib}k", "-Dx=1"]


def test_packaged_jars_put_the_bridge_first_then_the_others_by_name(tmp_path):
    touch(tmp_path, "jars/gson-2.10.1.jar", "jars/tvm-bridge-0.1.0-SNAPSHOT.jar", "jars/axe-layout-0.1.0-SNAPSHOT.jar",
          "jars/readme.txt")
    assert _classpath.packaged_classpath(tmp_path / "jars") == [
        str(tmp_path / "jars/tvm-bridge-0.1.0-SNAPSHOT.jar"),
        str(tmp_path / "jars/axe-layout-0.1.0-SNAPSHOT.jar"),
        str(tmp_path / "jars/gson-2.10.1.jar"),
    ]


def test_packaged_jars_without_the_bridge_name_the_folder_and_what_is_there(tmp_path):
    touch(tmp_path, "jars/gson-2.10.1.jar")
    with pytest.raises(axe4j.SetupError, match=r"no tvm-bridge jar: looked for .*tvm-bridge-\*\.jar \(found "
                                               r"\['gson-2.10.1.jar'\]\); reinstall the axe4j wheel"):
        _classpath.packaged_classpath(tmp_path / "jars")


def test_the_packaged_jars_come_after_the_environment_and_before_the_checkout(tmp_path, monkeypatch):
    touch(tmp_path, "jars/tvm-bridge-0.1.0-SNAPSHOT.jar", "other/x.jar")
    monkeypatch.setattr(_classpath, "PACKAGED_JARS", tmp_path / "jars")
    assert _classpath.resolve(environ={}) == [str(tmp_path / "jars/tvm-bridge-0.1.0-SNAPSHOT.jar")]
    assert _classpath.jar_source({}) == f"packaged, {tmp_path / 'jars'}"
    environ = {_classpath.CLASSPATH_ENV: str(tmp_path / "other/x.jar")}
    assert _classpath.resolve(environ=environ) == [str(tmp_path / "other/x.jar")]
    assert _classpath.jar_source(environ) == "$AXE4J_CLASSPATH"


def test_a_checkout_has_no_packaged_jars():
    assert not _classpath.PACKAGED_JARS.exists()
    assert _classpath.jar_source({}) == f"checkout, {_classpath.repository_root()}"


def test_stack_room_is_from_the_stack_top_down_to_the_mapping_below():
    from axe4j import _stack

    maps = ("7f0000000000-7f0000001000 r--p 00000000 fe:00 1 /usr/lib/libc.so.6\n"
            "7ffc117e5000-7ffc117e9000 ---p 00000000 00:00 0 \n"
            "7ffc117e9000-7ffc11fe3000 rw-p 00000000 00:00 0                          [stack]\n"
            "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n")
    assert _stack.room_kib(maps) == (0x7ffc11fe3000 - 0x7ffc117e9000) // 1024 == 8168
    assert _stack.room_kib("7f0000000000-7f0000001000 r--p 00000000 fe:00 1 /lib/x.so\n") is None
