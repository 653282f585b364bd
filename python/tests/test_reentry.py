"""Java calling back into TVM from inside a Python call: Python globals, C++ globals, nesting, threads."""

import threading

import pytest
import tvm
import tvm_ffi


def test_java_calls_a_python_registered_global(java):
    tvm_ffi.register_global_func("axe4j.tests.python_add", lambda a, b: a + b, override=True)
    assert java.call_global("axe4j.tests.python_add", 2, 40) == 42
    assert java.call_global("axe4j.tests.python_add", "con", "cat") == "concat"


def test_java_calls_a_cpp_global(java):
    array = java.call_global("ffi.Array", 1, "two", 3.5)
    assert isinstance(array, tvm_ffi.Array) and list(array) == [1, "two", 3.5]
    shape = java.call_global("ffi.Shape", 2, 3)
    assert isinstance(shape, tvm_ffi.Shape) and tuple(shape) == (2, 3)
    assert java.call_global("ffi.RecursiveEq", tvm_ffi.Array([1, 2]), tvm_ffi.Array([1, 2])) is True


def test_java_calls_a_cpp_global_that_builds_tir(java):
    var = tvm.tirx.Var("x", "int32")
    node = java.call_global("ir.IntImm", tvm_ffi.dtype("int32"), 5, None)
    assert isinstance(node, tvm.tirx.IntImm) and node.value == 5 and str(node.ty) == "int32"
    assert java.echo(var).same_as(var)


def test_python_java_python_java_nesting(java):
    def via_java(value):
        return java.echo_all(value, java.echo(value))

    tvm_ffi.register_global_func("axe4j.tests.python_via_java", via_java, override=True)
    nested = java.call_global("axe4j.tests.python_via_java", "deep")
    assert list(nested) == ["deep", "deep"]


def test_recursion_through_java_and_python_ten_levels_deep(java):
    def countdown(n):
        return 0 if n == 0 else 1 + java.call_global("axe4j.tests.python_countdown", n - 1)

    tvm_ffi.register_global_func("axe4j.tests.python_countdown", countdown, override=True)
    assert java.call_global("axe4j.tests.python_countdown", 10) == 10


@pytest.mark.parametrize("threads", [8])
def test_threads_calling_java_concurrently_get_their_own_answers(java, threads):
    tvm_ffi.register_global_func("axe4j.tests.python_tag", lambda t, i: f"{t}:{i}", override=True)
    calls = 300
    barrier = threading.Barrier(threads)
    failures: list[str] = []

    def work(thread: int):
        barrier.wait()
        try:
            for i in range(calls):
                value = thread * 1_000_000 + i
                assert java.echo(value) == value
                assert java.echo(f"thread {thread} call {i} ☃") == f"thread {thread} call {i} ☃"
                assert list(java.echo_all(thread, i, [thread, i])[2]) == [thread, i]
                assert java.call_global("axe4j.tests.python_tag", thread, i) == f"{thread}:{i}"
                assert java.call_global("ffi.Shape", thread, i) == (thread, i)
        except BaseException as error:  # reported to the main thread below
            failures.append(f"thread {thread}: {type(error).__name__}: {error}")

    workers = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(worker.is_alive() for worker in workers), "a thread is stuck in a call through Java"
    assert failures == []
