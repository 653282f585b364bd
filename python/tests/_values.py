"""One sample of every value kind the tvm-ffi ABI carries, and what "came back intact" means for each.

Values (None, int, bool, float, str, bytes, DataType, Device, Shape) come back equal and of the
same Python kind; objects (IR nodes, functions, Tensor) come back as the very same object
(``same_as``: one handle, reference passed through). Containers are values: a tvm_ffi Array or
Map, or a Python list or dict (converted to Array/Map on the way in), comes back as an Array or
Map whose elements come back intact by these same rules, recursively. (Java decodes a container
into a Java collection, so the container returned is a new one holding the same elements.)
"""

from __future__ import annotations

import math
import struct

import numpy as np
import tvm
import tvm_ffi


def _python_doubler():
    return tvm_ffi.convert(lambda x: x * 2)


def samples() -> list[tuple[str, object]]:
    """(name, value) pairs covering every value kind; objects are fresh on each call."""
    return [
        ("none", None),
        ("int_zero", 0),
        ("int_one", 1),
        ("int_negative", -7),
        ("int_32bit_max_plus_one", 2**31),
        ("int_32bit_min_minus_one", -(2**31) - 1),
        ("int64_max", 2**63 - 1),
        ("int64_min", -(2**63)),
        ("bool_true", True),
        ("bool_false", False),
        ("float_half", 1.5),
        ("float_negative_zero", -0.0),
        ("float_tiny_subnormal", 5e-324),
        ("float_max", 1.7976931348623157e308),
        ("float_third", 1.0 / 3.0),
        ("float_inf", math.inf),
        ("float_negative_inf", -math.inf),
        ("float_nan", math.nan),
        ("str_empty", ""),
        ("str_ascii_small", "abc"),
        ("str_seven_bytes", "seven77"),
        ("str_eight_bytes", "eight888"),
        ("str_unicode_bmp", "héllo ☃ ünïcödé"),
        ("str_unicode_astral", "𝔘𝔫𝔦 😀 \U0010ffff"),
        ("str_with_nul", "a\x00b\x00"),
        ("str_long", "long string " * 200),
        ("bytes_empty", b""),
        ("bytes_nul", b"\x00"),
        ("bytes_with_nuls", b"a\x00b\x00\x00c"),
        ("bytes_all_values", bytes(range(256))),
        ("bytes_long", b"\xff\x00" * 5000),
        ("dtype_float32", tvm_ffi.dtype("float32")),
        ("dtype_tvm_int8", tvm.DataType("int8")),
        ("dtype_bfloat16", tvm_ffi.dtype("bfloat16")),
        ("dtype_float16x4", tvm_ffi.dtype("float16x4")),
        ("dtype_float8_e4m3fn", tvm_ffi.dtype("float8_e4m3fn")),
        ("dtype_bool", tvm_ffi.dtype("bool")),
        ("dtype_handle", tvm_ffi.dtype("handle")),
        ("device_cpu0", tvm.cpu(0)),
        ("device_cuda3", tvm.cuda(3)),
        ("object_intimm", tvm.tirx.IntImm("int32", 3)),
        ("object_var", tvm.tirx.Var("n", "int64")),
        ("object_expr", tvm.tirx.Var("i", "int32") * 4 + 1),
        ("function_python", _python_doubler()),
        ("array_ffi", tvm_ffi.Array([1, "two", 3.5, None, tvm.tirx.IntImm("int64", 9)])),
        ("array_from_list", [1, "two", 3.5, None, [4, [5]], b"\x00"]),
        ("array_empty_list", []),
        ("map_ffi", tvm_ffi.Map({"a": 1, "b": "bee"})),
        ("map_from_dict", {"a": 1, "b": [1, 2], 3: "three", "nested": {"k": 2.5}}),
        ("map_empty_dict", {}),
        ("shape", tvm_ffi.Shape((2, 3, 4))),
        ("shape_empty", tvm_ffi.Shape(())),
        ("tensor", tvm.runtime.tensor(np.arange(12, dtype="float32").reshape(3, 4))),
        ("tensor_int8_1d", tvm.runtime.tensor(np.array([-128, 0, 127], dtype="int8"))),
    ]


def assert_intact(original, returned) -> None:
    """Fails unless ``returned`` is ``original`` come back through the ABI (see the module docstring)."""
    if original is None:
        assert returned is None
    elif isinstance(original, bool):
        assert returned is original, f"bool {original!r} came back as {returned!r} ({type(returned).__name__})"
    elif isinstance(original, int):
        assert type(returned) is int and returned == original, f"{original!r} came back as {returned!r}"
    elif isinstance(original, float):
        assert type(returned) is float, f"{original!r} came back as {type(returned).__name__}"
        assert struct.pack("<d", returned) == struct.pack("<d", original) or (
            math.isnan(original) and math.isnan(returned)), f"{original!r} came back as {returned!r}"
    elif isinstance(original, str):
        assert isinstance(returned, str) and str(returned) == original, f"{original!r} came back as {returned!r}"
    elif isinstance(original, bytes):
        assert isinstance(returned, bytes) and bytes(returned) == original, \
            f"{original[:40]!r} came back as {returned[:40]!r}"
    elif isinstance(original, tvm_ffi.dtype):
        assert isinstance(returned, tvm_ffi.dtype) and returned == original
        assert (returned.type_code, returned.bits, returned.lanes) == (original.type_code, original.bits, original.lanes)
    elif isinstance(original, tvm_ffi.Device):
        assert isinstance(returned, tvm_ffi.Device) and returned == original
        assert (returned.dlpack_device_type(), returned.index) == (original.dlpack_device_type(), original.index)
    elif isinstance(original, tvm_ffi.Shape):
        assert isinstance(returned, tvm_ffi.Shape) and tuple(returned) == tuple(original)
    elif isinstance(original, (list, tvm_ffi.Array)):
        assert isinstance(returned, tvm_ffi.Array), f"{type(original).__name__} came back as {type(returned).__name__}"
        assert len(returned) == len(original)
        for item, back in zip(original, returned):
            assert_intact(item, back)
    elif isinstance(original, (dict, tvm_ffi.Map)):
        assert isinstance(returned, tvm_ffi.Map), f"{type(original).__name__} came back as {type(returned).__name__}"
        assert len(returned) == len(original)
        for key, item in original.items():
            assert key in returned, f"key {key!r} lost"
            assert_intact(item, returned[key])
    elif isinstance(original, tvm.runtime.Tensor):
        assert isinstance(returned, tvm.runtime.Tensor) and returned.same_as(original)
        assert returned.shape == original.shape and returned.dtype == original.dtype
        assert returned.device == original.device
        np.testing.assert_array_equal(returned.numpy(), original.numpy())
    elif isinstance(original, tvm_ffi.Function):
        assert isinstance(returned, tvm_ffi.Function) and returned.same_as(original)
        assert returned(21) == 42
    elif isinstance(original, tvm_ffi.Object):
        assert type(returned) is type(original), f"{type(original).__name__} came back as {type(returned).__name__}"
        assert returned.same_as(original), f"{original} came back as a different object {returned}"
    else:
        raise AssertionError(f"no rule for {type(original).__name__}")
