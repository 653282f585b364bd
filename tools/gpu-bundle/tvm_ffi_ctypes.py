"""The tvm-ffi C ABI through ctypes: enough to load a module exported with ``export_library`` and call its
functions on DLPack tensors, with no TVM Python package and nothing beyond the standard library.

What it binds (``tvm_ffi/include/tvm/ffi/c_api.h`` of apache-tvm-ffi 0.1.15, the version TVM 0.27 ships with):

* ``TVMFFIAny``, 16 bytes: ``int32 type_index``, ``uint32`` padding (the length of a small string), an 8-byte
  value (int64, double, pointer, ...). Type indices used here: None 0, Int 1, Bool 2, Float 3, OpaquePtr 4,
  DLTensorPtr 7, RawStr 8, SmallStr 11, SmallBytes 12, and objects: Str 65, Bytes 66, Error 67, Function 68,
  Module 73. An object starts with a 24-byte header (reference count, ``int32 type_index``, deleter); a Str or
  Bytes object holds a ``TVMFFIByteArray {const char* data; size_t size}`` right after it, an Error object its
  kind and message as two such arrays (offsets 24 and 40).
* ``TVMFFIFunctionGetGlobal(name, &handle)`` and ``TVMFFIFunctionCall(handle, args, n, &result)``: a non-zero
  return means an error, taken with ``TVMFFIErrorMoveFromRaised``.
* ``TVMFFIFunctionCreate(self, safe_call, deleter, &handle)`` and ``TVMFFIFunctionSetGlobal``: a Python function
  as a global of the registry (``Runtime.register``); ``TVMFFIBytesFromByteArray`` makes the Bytes it returns.
* Modules through the globals ``ffi.ModuleLoadFromFile`` (a ``.so`` goes to ``ffi.Module.load_from_file.so``,
  which runs the library's import tree through ``ffi.Module.load_from_bytes.<kind>``) and
  ``ffi.ModuleGetFunction(module, name, query_imports)``.

Load order: ``libtvm_ffi.so`` (the one registry), ``libtvm_runtime.so``, then ``libtvm_runtime_cuda.so`` for
modules with CUDA code (it registers the loader of ``cuda`` modules and ``runtime.cuTensorMapEncodeTiled``), all
with ``RTLD_GLOBAL`` so that an exported library's undefined ``TVMFFI*`` symbols resolve to them.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, Structure, Union, byref, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t
from ctypes import c_uint8, c_uint16, c_uint32, c_uint64, c_void_p

NONE, INT, BOOL, FLOAT, OPAQUE_PTR, DLTENSOR_PTR, RAW_STR, SMALL_STR, SMALL_BYTES = 0, 1, 2, 3, 4, 7, 8, 11, 12
STR, BYTES, ERROR, FUNCTION, MODULE = 65, 66, 67, 68, 73
OBJECT_BEGIN = 64
HEADER = 24  # bytes of TVMFFIObject before an object's own fields

CPU, CUDA = 1, 2  # DLDeviceType
DTYPES = {  # numpy-style name -> (DLDataTypeCode, bits): int 0, uint 1, float 2, bfloat 4, bool 6, float8 10/12
    "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
    "float16": (2, 16), "float32": (2, 32), "float64": (2, 64), "bfloat16": (4, 16), "bool": (6, 8),
    "float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8),
}


class FFIError(RuntimeError):
    """An error a tvm-ffi call raised, with its kind (``ValueError``, ``RuntimeError``, ...)."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _Value(Union):
    _fields_ = [("v_int64", c_int64), ("v_float64", c_double), ("v_ptr", c_void_p), ("v_bytes", ctypes.c_char * 8)]


class Any(Structure):
    _fields_ = [("type_index", c_int32), ("small_len", c_uint32), ("value", _Value)]


class ByteArray(Structure):
    _fields_ = [("data", c_void_p), ("size", c_size_t)]


SafeCall = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(Any), c_int32, POINTER(Any))


class Tensor:
    """A DLTensor over memory the caller owns (host or device pointer), compact row-major."""

    def __init__(self, data: int, shape, dtype: str, device_type: int = CPU, device_id: int = 0):
        if dtype not in DTYPES:
            raise ValueError(f"dtype {dtype!r} is not one of {sorted(DTYPES)}")
        self.shape = tuple(int(n) for n in shape)
        self._shape = (c_int64 * max(1, len(self.shape)))(*self.shape)
        code, bits = DTYPES[dtype]
        self.dl = DLTensor(c_void_p(data), DLDevice(device_type, device_id), len(self.shape),
                           DLDataType(code, bits, 1), self._shape, None, 0)
        self.dtype = dtype

    @property
    def nbytes(self) -> int:
        count = 1
        for n in self.shape:
            count *= n
        return count * self.dl.dtype.bits // 8


class Object:
    """An owned reference to a tvm-ffi object; released when dropped."""

    def __init__(self, runtime: "Runtime", handle: int):
        self._runtime, self.handle = runtime, handle

    @property
    def type_index(self) -> int:
        return ctypes.c_int32.from_address(self.handle + 8).value

    def __del__(self):
        if self.handle and self._runtime is not None and self._runtime.lib is not None:
            self._runtime.lib.TVMFFIObjectDecRef(c_void_p(self.handle))
            self.handle = 0


class Function(Object):
    def __call__(self, *args):
        return self._runtime.call(self, *args)


class Module(Object):
    def function(self, name: str, query_imports: bool = False) -> Function:
        """The module's function ``name``; a ``KeyError`` names the module file when there is none."""
        found = self._runtime.global_function("ffi.ModuleGetFunction")(self, name, query_imports)
        if found is None:
            raise KeyError(f"no function {name} in the module")
        return found


class Runtime:
    """The TVM runtime libraries of one folder, loaded into this process (once per process)."""

    def __init__(self, lib_dir: str, cuda: bool = False):
        mode = ctypes.RTLD_GLOBAL
        self.lib = ctypes.CDLL(os.path.join(lib_dir, "libtvm_ffi.so"), mode=mode)
        self.runtime = ctypes.CDLL(os.path.join(lib_dir, "libtvm_runtime.so"), mode=mode)
        self.runtime_cuda = ctypes.CDLL(os.path.join(lib_dir, "libtvm_runtime_cuda.so"), mode=mode) if cuda else None
        lib = self.lib
        lib.TVMFFIFunctionGetGlobal.argtypes = [POINTER(ByteArray), POINTER(c_void_p)]
        lib.TVMFFIFunctionCall.argtypes = [c_void_p, POINTER(Any), c_int32, POINTER(Any)]
        lib.TVMFFIFunctionCreate.argtypes = [c_void_p, SafeCall, c_void_p, POINTER(c_void_p)]
        lib.TVMFFIFunctionSetGlobal.argtypes = [POINTER(ByteArray), c_void_p, c_int]
        lib.TVMFFIErrorMoveFromRaised.argtypes = [POINTER(c_void_p)]
        lib.TVMFFIErrorMoveFromRaised.restype = None
        lib.TVMFFIErrorSetRaisedFromCStr.argtypes = [c_char_p, c_char_p]
        lib.TVMFFIErrorSetRaisedFromCStr.restype = None
        lib.TVMFFIObjectDecRef.argtypes = [c_void_p]
        lib.TVMFFIBytesFromByteArray.argtypes = [POINTER(ByteArray), POINTER(Any)]
        lib.TVMFFIStringFromByteArray.argtypes = [POINTER(ByteArray), POINTER(Any)]
        lib.TVMFFIEnvSetStream.argtypes = [c_int32, c_int32, c_void_p, POINTER(c_void_p)]
        lib.TVMFFIEnvGetStream.argtypes = [c_int32, c_int32]
        lib.TVMFFIEnvGetStream.restype = c_void_p
        self._callbacks = []  # ctypes thunks of registered Python functions: alive as long as the runtime
        self._globals: dict[str, Function] = {}

    def set_stream(self, stream: int, device_type: int = CUDA, device_id: int = 0) -> int:
        """``TVMFFIEnvSetStream``: the stream the runtime launches this thread's kernels on (libtvm_runtime_cuda
        reads it with ``TVMFFIEnvGetStream`` at each launch; 0, the default, is the legacy stream). Returns the
        previous one. Kernels captured into a CUDA graph must go on the capturing stream."""
        previous = c_void_p()
        self._check(self.lib.TVMFFIEnvSetStream(device_type, device_id, c_void_p(stream or None), byref(previous)),
                    "TVMFFIEnvSetStream")
        return previous.value or 0

    def stream(self, device_type: int = CUDA, device_id: int = 0) -> int:
        return self.lib.TVMFFIEnvGetStream(device_type, device_id) or 0

    # ---- calls ----------------------------------------------------------------------------------------------

    def _check(self, rc: int, what: str):
        if rc == 0:
            return
        handle = c_void_p()
        self.lib.TVMFFIErrorMoveFromRaised(byref(handle))
        if not handle.value:
            raise FFIError("RuntimeError", f"{what} failed (code {rc}) without an error object")
        kind = ByteArray.from_address(handle.value + HEADER)
        message = ByteArray.from_address(handle.value + HEADER + ctypes.sizeof(ByteArray))
        error = FFIError(ctypes.string_at(kind.data, kind.size).decode(errors="replace"),
                         ctypes.string_at(message.data, message.size).decode(errors="replace"))
        self.lib.TVMFFIObjectDecRef(handle)
        raise error

    def global_function(self, name: str) -> Function:
        """The registry's global ``name``; ``KeyError`` when it is not registered."""
        if name not in self._globals:
            raw = name.encode()
            handle = c_void_p()
            self._check(self.lib.TVMFFIFunctionGetGlobal(byref(ByteArray(ctypes.cast(c_char_p(raw), c_void_p),
                                                                         len(raw))), byref(handle)),
                        f"TVMFFIFunctionGetGlobal({name})")
            if not handle.value:
                raise KeyError(f"no global function {name} is registered")
            self._globals[name] = Function(self, handle.value)
        return self._globals[name]

    def call(self, function: Function, *args):
        keep = []  # what the packed arguments point to, alive until the call returns
        packed = (Any * max(1, len(args)))()
        for slot, value in zip(packed, args):
            self._pack(slot, value, keep)
        result = Any()
        self._check(self.lib.TVMFFIFunctionCall(c_void_p(function.handle), packed, len(args), byref(result)),
                    "TVMFFIFunctionCall")
        return self._unpack_owned(result)

    def _pack(self, slot: Any, value, keep: list):
        if value is None:
            slot.type_index = NONE
        elif isinstance(value, bool):
            slot.type_index, slot.value.v_int64 = BOOL, int(value)
        elif isinstance(value, int):
            slot.type_index, slot.value.v_int64 = INT, value
        elif isinstance(value, float):
            slot.type_index, slot.value.v_float64 = FLOAT, value
        elif isinstance(value, str):
            raw = c_char_p(value.encode())
            keep.append(raw)
            slot.type_index, slot.value.v_ptr = RAW_STR, ctypes.cast(raw, c_void_p).value
        elif isinstance(value, Tensor):
            slot.type_index, slot.value.v_ptr = DLTENSOR_PTR, ctypes.addressof(value.dl)
        elif isinstance(value, Object):
            slot.type_index, slot.value.v_ptr = value.type_index, value.handle
        else:
            raise TypeError(f"cannot pass a {type(value).__name__} through the tvm-ffi ABI")

    def _unpack_view(self, any_: Any):
        """A Python value of an argument the callee does not own (ints, strings, bytes; objects as handles)."""
        index = any_.type_index
        if index == NONE:
            return None
        if index in (INT, BOOL):
            return bool(any_.value.v_int64) if index == BOOL else any_.value.v_int64
        if index == FLOAT:
            return any_.value.v_float64
        if index == RAW_STR:
            return ctypes.string_at(any_.value.v_ptr).decode(errors="surrogateescape")
        if index in (SMALL_STR, SMALL_BYTES):
            raw = bytes(any_.value.v_bytes)[:any_.small_len]
            return raw.decode(errors="surrogateescape") if index == SMALL_STR else raw
        if index in (STR, BYTES):
            cell = ByteArray.from_address(any_.value.v_ptr + HEADER)
            raw = ctypes.string_at(cell.data, cell.size)
            return raw.decode(errors="surrogateescape") if index == STR else raw
        return any_.value.v_ptr

    def _unpack_owned(self, any_: Any):
        """A Python value of a call's result, which the caller owns: objects are wrapped (and released later)."""
        index = any_.type_index
        if index < OBJECT_BEGIN:
            return self._unpack_view(any_)
        if index in (STR, BYTES):
            value = self._unpack_view(any_)
            self.lib.TVMFFIObjectDecRef(c_void_p(any_.value.v_ptr))
            return value
        kind = {FUNCTION: Function, MODULE: Module}.get(index, Object)
        return kind(self, any_.value.v_ptr)

    # ---- Python functions as globals -----------------------------------------------------------------------

    def register(self, name: str, function, override: bool = True):
        """Registers ``function`` as the global ``name``. It gets the arguments as Python values (ints, floats,
        strings, bytes; other objects as raw handles) and returns None, an int, a str or bytes; an exception it
        raises becomes a tvm-ffi error of kind RuntimeError."""
        lib = self.lib

        def safe_call(_self, args, num_args, result):
            try:
                value = function(*[self._unpack_view(args[i]) for i in range(num_args)])
                if value is None:
                    result[0].type_index = NONE
                elif isinstance(value, int) and not isinstance(value, bool):
                    result[0].type_index, result[0].small_len, result[0].value.v_int64 = INT, 0, value
                elif isinstance(value, (bytes, str)):
                    raw = value if isinstance(value, bytes) else value.encode(errors="surrogateescape")
                    buffer = ctypes.create_string_buffer(raw, len(raw))
                    array = ByteArray(ctypes.cast(buffer, c_void_p), len(raw))
                    make = lib.TVMFFIBytesFromByteArray if isinstance(value, bytes) else lib.TVMFFIStringFromByteArray
                    if make(byref(array), result) != 0:
                        return -1
                else:
                    raise TypeError(f"{name} returned a {type(value).__name__}; expected None, int, str or bytes")
                return 0
            except Exception as error:  # noqa: BLE001  (every error crosses the ABI as a raised tvm-ffi error)
                lib.TVMFFIErrorSetRaisedFromCStr(b"RuntimeError", f"{name}: {error}".encode(errors="replace"))
                return -1

        thunk = SafeCall(safe_call)
        self._callbacks.append(thunk)
        handle = c_void_p()
        self._check(lib.TVMFFIFunctionCreate(None, thunk, None, byref(handle)), "TVMFFIFunctionCreate")
        raw = name.encode()
        try:
            self._check(lib.TVMFFIFunctionSetGlobal(byref(ByteArray(ctypes.cast(c_char_p(raw), c_void_p), len(raw))),
                                                    handle, int(override)), f"TVMFFIFunctionSetGlobal({name})")
        finally:
            lib.TVMFFIObjectDecRef(handle)  # the registry holds its own reference
        self._globals.pop(name, None)

    # ---- modules -------------------------------------------------------------------------------------------

    def load_module(self, path: str) -> Module:
        """A library written by ``export_library``; its imported device modules are loaded with it."""
        module = self.global_function("ffi.ModuleLoadFromFile")(os.fspath(path))
        if not isinstance(module, Module):
            raise FFIError("TypeError", f"ffi.ModuleLoadFromFile({path}) returned {module!r}, not a module")
        return module
