"""The host function of a compiled CUDA module, interpreted: argument unpacking, tensor-map encoding and kernel launches.

The host PrimFunc (after TVM's packed-API lowering, before its final host passes) is run by the same statement
interpreter with one "thread"; its TVM calls are answered here: ``tvm_struct_get`` on the packed arguments reads the
numpy arrays' fields, ``tensormap_encode_tiled`` builds a ``TensorMap`` (cuTensorMapEncodeTiled's arguments), and
``call_ffi_kernel`` launches a device kernel on the interpreter.
"""

from __future__ import annotations

import numpy as np

from . import _ptx, _values as V
from ._errors import KernelFault, NotModelled
from ._exec import Group, Launch
from ._memory import Access, Pointer, SharedWindow, Space
from ._tensor import TensorMap

# DLTensor fields as TVM's tvm_struct_get numbers them (kArrData = 1, kArrShape, kArrStrides, kArrNDim,
# kArrTypeCode, kArrTypeBits, kArrTypeLanes, kArrByteOffset, kArrDeviceId, kArrDeviceType)
_DL_CODES = {"int": 0, "uint": 1, "float": 2, "bfloat": 4}
# DLPack's codes of the types named whole (dlpack.h DLDataTypeCode: kDLBfloat 4, kDLFloat8_e4m3fn 10, _e5m2 12)
_DL_EXACT = {"bfloat16": 4, "float8_e4m3fn": 10, "float8_e5m2": 12}


class Args:
    pass


class TensorArg:
    def __init__(self, index, array, space):
        self.index, self.array, self.space = index, array, space


class Shape:
    def __init__(self, values):
        self.values = values


class HostCta:
    def __init__(self):
        self.kernel, self.block, self.threads = "host", (0, 0, 0), 1
        self.access = Access("host", (0, 0, 0))
        self.shared = SharedWindow(0)


class HostInstructions:
    def __init__(self, program, arrays):
        self.program = program
        self.arrays = arrays
        self.spaces = [Space("global", f"argument {i}", a.reshape(-1).view(np.uint8)) for i, a in enumerate(arrays)]

    def call(self, interp, g, e, name):
        args = e.args
        if name == "tirx.tvm_struct_get":
            return self._struct_get(interp, g, args)
        if name == "tirx.isnullptr":
            value = interp.eval(g, args[0])
            return np.array([value is None])
        if name == "tirx.tvm_stack_alloca":
            return _Slot()
        if name == "tirx.reinterpret":
            return interp.eval(g, args[0])
        return _ptx.call(interp, g, e, name)

    def statement(self, interp, g, e, name):
        if name == "tirx.tvm_call_packed":
            return None  # __tvm_set_device
        if name == "tirx.tensormap_encode_tiled":
            slot = interp.eval(g, e.args[0])
            pointer = interp.eval(g, e.args[1])
            a = e.attrs
            rank = int(a.rank)
            nums = [int(interp.eval(g, x)[0]) for x in e.args[2:]]
            dims, rest = nums[:rank], nums[rank:]
            strides, rest = rest[:rank - 1], rest[rank - 1:]
            box, elem = rest[:rank], rest[rank:2 * rank]
            slot.value = TensorMap(V.numpy_dtype(str(a.descriptor_dtype)), pointer, dims, strides, box, elem,
                                   int(a.swizzle), int(a.oob_fill), int(a.interleave))
            return None
        if name == "tirx.call_ffi_kernel":
            self._launch(interp, g, e)
            return None
        return _ptx.statement(interp, g, e, name)

    def _struct_get(self, interp, g, args):
        handle = interp.eval(g, args[0])
        index = int(interp.eval(g, args[1])[0])
        field = int(interp.eval(g, args[2])[0])
        if isinstance(handle, Args):
            if field == 13:
                return np.array([7], np.int32)  # a DLTensor*
            if field == 15:
                if index >= len(self.arrays):
                    raise KernelFault(f"the kernel takes more than the {len(self.arrays)} arrays given")
                return TensorArg(index, self.arrays[index], self.spaces[index])
        if isinstance(handle, TensorArg):
            arr = handle.array
            name = arr.dtype.name
            base, lanes = V.split(str(arr.dtype) if name not in _DL_EXACT else name)
            code = _DL_EXACT.get(name, None)
            if code is None:
                code = next(v for k, v in sorted(_DL_CODES.items(), key=lambda kv: -len(kv[0])) if base.startswith(k))
            value = {1: Pointer(handle.space, np.zeros(1, np.int64)), 2: Shape(list(arr.shape)), 3: None,
                     4: arr.ndim, 5: code, 6: arr.dtype.itemsize * 8, 7: 1, 8: 0, 9: 0, 10: 2}.get(field)
            if field in (1, 2, 3):
                return value
            if value is None:
                raise NotModelled(f"DLTensor field {field}")
            return np.array([value])
        if isinstance(handle, Shape):
            return np.array([handle.values[index]], np.int64)
        raise NotModelled(f"tvm_struct_get on {handle!r}")

    def _launch(self, interp, g, e):
        name = str(e.args[0].value)
        params = [str(p) for p in e.attrs.launch_params]
        func = self.program.device_function(name)
        n_args = len(func.params)
        kernel_args = [interp.eval(g, a) for a in e.args[1:1 + n_args]]
        dims = [int(interp.eval(g, a)[0]) for a in e.args[1 + n_args:]]
        grid, threads, dynamic = [1, 1, 1], 1, 0
        for tag, value in zip(params, dims):
            if tag.startswith("blockIdx"):
                grid["xyz".index(tag[-1])] = value
            elif tag == "threadIdx.x":
                threads = value
            elif tag.startswith("threadIdx"):
                if value != 1:
                    raise NotModelled(f"{tag} = {value}")
            elif tag == "tirx.use_dyn_shared_memory":
                dynamic = value
        launch = Launch(name, func, kernel_args, tuple(grid), threads, dynamic, _ptx)
        env = {}
        from ._exec import key
        for param, value in zip(func.params, kernel_args):
            if isinstance(value, _Slot):
                value = value.value
            if isinstance(value, Pointer):
                value = value  # broadcast per thread in Cta via Group.subset semantics
            env[key(param)] = _Broadcast(value)
        launch.run(func.body, _expand(env, threads))


class _Slot:
    value = None


class _Broadcast:
    def __init__(self, value):
        self.value = value


def _expand(env, threads):
    out = {}
    for k, v in env.items():
        value = v.value
        if isinstance(value, Pointer):
            value = Pointer(value.space, np.full(threads, int(value.offset.reshape(-1)[0]), np.int64))
        elif isinstance(value, np.ndarray):
            value = np.full(threads, value.reshape(-1)[0], dtype=value.dtype)
        out[k] = value
    return out


def run_host(program, host_func, arrays):
    from ._exec import Interpreter, StmtFrame, Task, key

    instructions = HostInstructions(program, arrays)
    interp = Interpreter(None, instructions)
    g = Group(HostCta(), np.zeros(1, np.int64), {})
    params = list(host_func.params)
    g.env[key(params[0])] = None
    g.env[key(params[1])] = Args()
    g.env[key(params[2])] = np.array([len(arrays)], np.int32)
    if len(params) > 3:
        g.env[key(params[3])] = None
    task = Task(g, [StmtFrame(host_func.body)])
    g.cta.tasks, g.cta.spawned = [task], []
    wait = interp.run_task(task)
    if wait is not None:
        raise NotModelled(f"the host function waits for {wait.what}")
