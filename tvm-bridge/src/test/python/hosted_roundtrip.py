"""TVM-hosted check: Python imports TVM, starts the JVM in-process (JPype) and calls Java globals.

Usage: python hosted_roundtrip.py --classpath CP [--jvm LIBJVM]

TVM is imported before the JVM starts, so the JVM installs its signal handlers last and the Java
side reuses the libraries already in the process. Asserts every value kind round-trips through
``axe4j.testing.echo``, that Java decodes each kind (``axe4j.testing.type_keys``), that a Java
exception arrives as a TVM error carrying its message, and that Java can call back into a
Python-registered global (``axe4j.testing.call_global``). Prints ``hosted ok`` at the end.
"""

import argparse
import sys

import numpy as np
import tvm  # noqa: F401  (loads TVM's libraries before the JVM exists)
import tvm_ffi
import jpype


def check(name, got, expected):
    if got != expected:
        raise AssertionError(f"{name}: expected {expected!r}, got {got!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--classpath", required=True)
    parser.add_argument("--jvm", default=None)
    args = parser.parse_args()
    jpype.startJVM(args.jvm or jpype.getDefaultJVMPath(), "-Xss4m", classpath=args.classpath.split(":"))
    jpype.JClass("org.axe4j.tvm.Axe4jGlobals").install()
    loaded = str(jpype.JClass("org.axe4j.tvm.TvmLibraries").diagnostics())
    print(loaded)
    if "reused [" not in loaded or "libtvm_ffi.so" not in loaded.split("reused [")[1]:
        raise AssertionError("Java should reuse the libtvm_ffi.so Python loaded: " + loaded)

    echo = tvm_ffi.get_global_func("axe4j.testing.echo")
    check("version", tvm_ffi.get_global_func("axe4j.version")(), "0.1.0")
    for value in [None, 0, -5, 2**62, True, False, 1.25, "", "short", "x" * 100, "héllo 日本",
                  b"", b"\x00\x01\x00", bytes(range(256))]:
        got = echo(value)
        check(f"echo {value!r:.30}", got, value)
        same_kind = value is None or (isinstance(got, type(value)) and isinstance(got, bool) == isinstance(value, bool))
        check(f"echo kind {value!r:.30}", same_kind, True)
    check("echo dtype", str(echo(tvm_ffi.dtype("float16"))), "float16")
    check("echo device", str(echo(tvm_ffi.device("cpu", 0))), str(tvm_ffi.device("cpu", 0)))
    check("echo array", list(echo([1, "a", 2.5])), [1, "a", 2.5])
    check("echo map", dict(echo({"k": 1, "j": "v"}).items()), {"k": 1, "j": "v"})
    check("echo shape", tuple(echo(tvm_ffi.Shape((2, 3)))), (2, 3))
    rng = tvm.ir.Range(0, 8)
    check("echo object identity", echo(rng).same_as(rng), True)
    arr = tvm.runtime.tensor(np.arange(6, dtype="float32").reshape(2, 3))
    check("echo tensor", echo(arr).numpy().tolist(), arr.numpy().tolist())

    kinds = tvm_ffi.get_global_func("axe4j.testing.type_keys")(
        None, 1, True, 1.5, "s", b"b", tvm_ffi.dtype("int8"), [1], {"a": 1}, rng, arr)
    check("type keys", list(kinds), ["None", "Int", "Bool", "Float", "String", "Bytes", "DataType", "Array",
                                     "Map", "ir.Range", "ffi.Tensor"])
    check("echo_all", list(tvm_ffi.get_global_func("axe4j.testing.echo_all")(1, "two")), [1, "two"])

    try:
        tvm_ffi.get_global_func("axe4j.testing.raise")("raised in java: 42")
        raise AssertionError("axe4j.testing.raise did not raise")
    except RuntimeError as e:
        check("error message carries the Java message", "raised in java: 42" in str(e), True)

    @tvm_ffi.register_global_func("axe4j_hosted.py_add", override=True)
    def py_add(a, b):
        if b < 0:
            raise ValueError(f"negative b: {b}")
        return a + b

    call_global = tvm_ffi.get_global_func("axe4j.testing.call_global")
    check("python -> java -> python", call_global("axe4j_hosted.py_add", 40, 2), 42)
    try:
        call_global("axe4j_hosted.py_add", 1, -1)
        raise AssertionError("the Python ValueError did not come back through Java")
    except ValueError as e:
        check("python error through java keeps its message", "negative b: -1" in str(e), True)

    # implicit null checks in hot Java code still work in this process
    probe = jpype.JClass("org.axe4j.tvm.NullCheckProbe")
    check("null checks", int(probe.exercise()), 200000)
    print("hosted ok")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
