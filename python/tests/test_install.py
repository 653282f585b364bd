"""axe4j.install(): the JVM joins this TVM process, shares its libraries and registry, and stays put."""

import os
import re
import subprocess
import sys
import textwrap

import jpype
import pytest
import tvm

import axe4j
from axe4j import _signals


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter of this virtual environment (a process of its own)."""
    environment = {**os.environ, **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=environment, timeout=300)


def test_version_global_answers_with_the_installed_version(bridge):
    answer = tvm.get_global_func("axe4j.version")()
    assert isinstance(answer, str) and answer.strip() != ""
    assert answer == axe4j.version() == bridge.version


def test_install_twice_returns_the_same_info(bridge):
    assert axe4j.install() is bridge
    assert axe4j.installed() is bridge


def test_install_again_with_other_settings_is_refused(bridge):
    with pytest.raises(axe4j.SetupError, match="cannot be restarted"):
        axe4j.install(jvm_options=["-Xmx77m"])


def test_java_was_told_the_folders_of_the_loaded_tvm_libraries(bridge):
    import tvm_ffi

    property_value = str(jpype.java.lang.System.getProperty(axe4j.LIBDIR_PROPERTY))
    assert property_value == os.pathsep.join(bridge.tvm_libdirs)
    ffi_dir, runtime_dir = bridge.tvm_libdirs[0], bridge.tvm_libdirs[-1]
    assert os.path.realpath(tvm_ffi.LIB._name) == os.path.join(ffi_dir, "libtvm_ffi.so")
    assert os.path.realpath(tvm.base._LOADED_LIBS["tvm_runtime"]._name) == os.path.join(runtime_dir, "libtvm_runtime.so")


def test_the_process_maps_one_libtvm_ffi_only(bridge):
    with open("/proc/self/maps", encoding="utf-8") as maps:
        files = {line.split()[-1] for line in maps if re.search(r"/libtvm_ffi\.so$", line.rstrip())}
    assert {os.path.realpath(f) for f in files} == {os.path.join(bridge.tvm_libdirs[0], "libtvm_ffi.so")}


def test_the_jvm_owns_the_segv_handler(bridge):
    owner = _signals.segv_handler_owner()
    assert owner is not None and os.path.basename(owner) in ("libjvm.so", "libjsig.so"), owner


def test_the_entry_class_comes_from_the_reported_classpath(bridge):
    entry = jpype.JClass(axe4j.JAVA_ENTRY_CLASS)
    location = entry.class_.getProtectionDomain().getCodeSource().getLocation()
    path = str(jpype.java.nio.file.Paths.get(location.toURI()))
    assert path in bridge.classpath
    assert bridge.java_version == str(jpype.java.lang.System.getProperty("java.version"))


def test_version_before_install_is_an_error_and_the_global_is_absent():
    result = run_python("""
        import tvm, axe4j
        print("global before:", tvm.get_global_func("axe4j.version", allow_missing=True))
        try:
            axe4j.version()
        except axe4j.SetupError as error:
            print("version() before install:", error)
    """)
    assert result.returncode == 0, result.stderr
    assert "global before: None" in result.stdout
    assert "call axe4j.install() first" in result.stdout


def test_install_in_a_fresh_process_registers_globals_and_exits_cleanly():
    result = run_python("""
        import tvm, axe4j
        info = axe4j.install()
        echo = tvm.get_global_func("axe4j.testing.echo")
        assert echo("bye") == "bye" and echo(7) == 7
        print("version:", tvm.get_global_func("axe4j.version")())
        print("done")
    """)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert result.stdout.strip().endswith("done")
    assert result.stderr.strip() == "", result.stderr


def test_jvm_options_from_the_environment_reach_the_jvm():
    result = run_python("""
        import tvm, axe4j, jpype
        axe4j.install()
        print("marker:", jpype.java.lang.System.getProperty("axe4j.tests.marker"))
    """, AXE4J_JVM_OPTS="-Daxe4j.tests.marker=forty-two -Xmx512m")
    assert result.returncode == 0, result.stderr
    assert "marker: forty-two" in result.stdout


def test_the_main_thread_keeps_its_stack_limit_after_the_jvm_starts():
    # HotSpot started on a process's first thread maps guard pages -Xss (1 MiB by default) below its stack top: TVM's
    # compiler (LLVM on a large unrolled loop nest) then crashed the process. install() passes -Xss of the limit.
    result = run_python("""
        import tvm, axe4j
        from axe4j import _stack
        axe4j.install()
        print("room", _stack.room_kib(), "limit", _stack.limit_kib())
    """)
    assert result.returncode == 0, result.stderr
    room, limit = (int(x) for x in result.stdout.split()[1::2])
    if limit <= 2048:
        pytest.skip(f"a stack limit of {limit} KiB leaves no room to tell the JVM's default 1 MiB apart")
    assert room >= limit - 64, result.stdout
    # what it prevents: told -Xss1m, the JVM leaves this thread about 1 MiB
    result = run_python("""
        import tvm, axe4j
        from axe4j import _stack
        axe4j.install(jvm_options=["-Xss1m"])
        print("room", _stack.room_kib())
    """)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.split()[1]) <= 1024, result.stdout


def test_a_jvm_started_elsewhere_that_left_the_main_thread_short_is_warned_about():
    result = run_python("""
        import warnings
        import tvm, jpype, axe4j
        jpype.startJVM("-Xss1m", classpath=axe4j._classpath.resolve(None))   # the default -Xss, said
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            axe4j.install()
        print("warned:", [str(w.message) for w in seen if w.category is RuntimeWarning])
    """)
    assert result.returncode == 0, result.stderr
    assert "left the main thread" in result.stdout and "-Xss" in result.stdout, result.stdout


def test_missing_classpath_entry_fails_before_the_jvm_starts():
    result = run_python("""
        import tvm, axe4j, jpype
        try:
            axe4j.install()
        except axe4j.SetupError as error:
            print("error:", error)
        print("jvm started:", jpype.isJVMStarted())
    """, AXE4J_CLASSPATH="/nowhere/axe4j-missing.jar")
    assert result.returncode == 0, result.stderr
    assert "error: $AXE4J_CLASSPATH" in result.stdout and "/nowhere/axe4j-missing.jar" in result.stdout
    assert "jvm started: False" in result.stdout


def test_jvm_started_before_tvm_is_refused_without_loading_tvm():
    result = run_python("""
        import sys, jpype
        jpype.startJVM()
        import axe4j
        try:
            axe4j.install()
        except axe4j.SetupError as error:
            print("error:", error)
        print("tvm loaded:", "tvm" in sys.modules)
    """)
    assert result.returncode == 0, result.stderr
    assert "Import tvm (and axe4j) before anything starts the JVM" in result.stdout
    assert "tvm loaded: False" in result.stdout


# Warm a JDK method up until the JIT compiles it, then take its null path: compiled Java code
# relies on SIGSEGV there, so the process survives only if the JVM's handler is the one installed.
JIT_NULL_PATH_WORKLOAD = """
    import jpype
    arrays = jpype.JClass("java.util.Arrays")
    ints = jpype.JArray(jpype.JInt)([1, 2, 3])
    nothing = jpype.JObject(None, jpype.JArray(jpype.JInt))
    for _ in range(5):
        for _ in range(60000):
            arrays.hashCode(ints)
        assert arrays.hashCode(nothing) == 0
    print("survived")
"""


def test_compiled_java_survives_its_null_paths_after_install():
    result = run_python("import tvm, axe4j\naxe4j.install()\n" + textwrap.dedent(JIT_NULL_PATH_WORKLOAD))
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr[-2000:]}"
    assert "survived" in result.stdout


def test_the_null_path_workload_detects_tvm_loaded_after_the_jvm():
    result = run_python("import jpype\njpype.startJVM()\nimport tvm\n" + textwrap.dedent(JIT_NULL_PATH_WORKLOAD))
    assert result.returncode != 0 and "survived" not in result.stdout, \
        "TVM loaded after the JVM no longer breaks the JVM: the load-order rule may be obsolete"
