"""A Java exception crosses into Python as a TVM error carrying Java's message; the bridge keeps working.

Kinds: Java's IllegalStateException arrives as RuntimeError, NoSuchElementException (a missing
global) as KeyError, and a Python exception raised inside a call Java made keeps its own kind.
"""

import pytest
import tvm_ffi


@pytest.mark.parametrize("message", ["plain message", "ünïcödé ☃ message", "long " * 2000])
def test_java_exception_surfaces_as_runtime_error_with_its_message(java, message):
    with pytest.raises(RuntimeError) as raised:
        java.raise_error(message)
    assert type(raised.value) is RuntimeError
    assert message in str(raised.value)
    assert "java.lang.IllegalStateException" in str(raised.value)


def test_bridge_answers_normally_after_an_exception(java):
    for attempt in range(50):
        with pytest.raises(RuntimeError):
            java.raise_error(f"failure {attempt}")
        assert java.echo(attempt) == attempt


def test_python_exception_inside_a_java_call_reaches_the_python_caller(java):
    def fail(text):
        raise ValueError(f"python says {text}")

    tvm_ffi.register_global_func("axe4j.tests.python_fails", fail, override=True)
    with pytest.raises(ValueError) as raised:
        java.call_global("axe4j.tests.python_fails", "no")
    assert "python says no" in str(raised.value)


def test_calling_a_missing_global_from_java_raises_key_error_naming_it(java):
    with pytest.raises(KeyError) as raised:
        java.call_global("axe4j.tests.no_such_function", 1)
    assert "axe4j.tests.no_such_function" in str(raised.value)
