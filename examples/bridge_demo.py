"""The TVM-hosted side of axe4j in a few lines: Java joins a Python TVM process.

Run by `make demo` after the jars are built: starts the JVM inside this process, asks Java for
its version through TVM's global registry, lets Java call back into a Python-registered global
(a round trip Python -> C ABI -> Java -> C ABI -> Python), and turns a Java exception into a TVM error.
"""

import time

import tvm
import tvm_ffi

import axe4j


def main():
    start = time.perf_counter()
    info = axe4j.install()
    print(f"axe4j {info.version} installed in this TVM {tvm.__version__} process "
          f"(Java {info.java_version}, {time.perf_counter() - start:.2f} s)")
    print(f"   tvm.get_global_func('axe4j.version')() -> {tvm.get_global_func('axe4j.version')()!r}")

    @tvm_ffi.register_global_func("demo.square", override=True)
    def square(x):
        return x * x

    call_global = tvm.get_global_func("axe4j.testing.call_global")
    print(f"   Java calls Python's demo.square(12) -> {call_global('demo.square', 12)}")
    try:
        tvm.get_global_func("axe4j.testing.raise")("a Java exception")
    except RuntimeError as e:
        print(f"   a Java exception reaches Python as {type(e).__name__}: {str(e).splitlines()[0]}")


if __name__ == "__main__":
    main()
