"""Every value kind goes Python -> Java -> Python through TVM's packed-function ABI and comes back intact."""

import gc
import time

import jpype
import pytest
import tvm
import tvm_ffi

from _values import assert_intact, samples

SAMPLE_NAMES = [name for name, _ in samples()]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_echo_returns_each_kind_intact(java, name):
    value = dict(samples())[name]
    assert_intact(value, java.echo(value))


def test_echo_all_returns_every_argument_in_order(java):
    values = [value for _, value in samples()]
    returned = java.echo_all(*values)
    assert isinstance(returned, tvm_ffi.Array)
    assert len(returned) == len(values)
    for value, back in zip(values, returned):
        assert_intact(value, back)


def test_echo_all_without_arguments_is_an_empty_array(java):
    returned = java.echo_all()
    assert isinstance(returned, tvm_ffi.Array) and len(returned) == 0


def test_python_function_passed_through_java_is_still_callable_with_every_kind(java):
    identity = tvm_ffi.convert(lambda x: x)
    back = java.echo(identity)
    assert back.same_as(identity)
    for _, value in samples():
        assert_intact(value, back(value))


def test_tensor_comes_back_as_a_view_of_the_same_memory(java):
    import numpy as np

    tensor = tvm.runtime.tensor(np.zeros((2, 3), dtype="float32"))
    back = java.echo(tensor)
    tensor.copyfrom(np.full((2, 3), 7.0, dtype="float32"))
    np.testing.assert_array_equal(back.numpy(), np.full((2, 3), 7.0, dtype="float32"))


def test_type_keys_names_the_kind_java_decoded_for_each_argument(java):
    import numpy as np

    arguments = [
        (None, "None"),
        (-5, "Int"),
        (True, "Bool"),
        (1.5, "Float"),
        ("text", "String"),
        ("long text " * 20, "String"),
        (b"\x00bytes", "Bytes"),
        (tvm_ffi.dtype("float16x4"), "DataType"),
        (tvm.cpu(0), "Device"),
        ([1, 2], "Array"),
        (tvm_ffi.Array(["a"]), "Array"),
        ({"k": 1}, "Map"),
        (tvm.tirx.IntImm("int32", 3), "ir.IntImm"),
        (tvm.tirx.Var("n", "int64"), "ir.Var"),
        (tvm.runtime.tensor(np.zeros(2, dtype="float32")), "ffi.Tensor"),
        (tvm_ffi.convert(lambda: None), "ffi.Function"),
        (tvm_ffi.Shape((2, 3)), "ffi.Shape"),
    ]
    keys = java.type_keys(*[value for value, _ in arguments])
    assert [str(key) for key in keys] == [expected for _, expected in arguments]


def test_echo_leaves_no_reference_behind(java):
    use_count = tvm.get_global_func("testing.object_use_count")
    node = tvm.tirx.Var("leak_probe", "int64")
    before = use_count(node)
    for _ in range(2000):
        java.echo(node)
        java.echo_all(node, node, [node])
    gc.collect()
    deadline = time.monotonic() + 10
    while use_count(node) != before and time.monotonic() < deadline:
        jpype.java.lang.System.gc()
        time.sleep(0.05)
    assert use_count(node) == before
