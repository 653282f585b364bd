"""The interpreter on the new TIRx lane: a device function as tvm_tirx hands it to its CUDA code generator, run on
numpy arrays with the same execution model, memory checks and PTX instructions as 0.27's (``_exec``, ``_ptx``).

tvm_tirx's device IR differs from 0.27's in a few nodes only, each answered here: a tensor is a variable of tensor
type bound by ``Bind(var, tirx.decl_tensor(data))`` or ``Bind(var, tirx.alloc_tensor())`` (0.27: ``DeclBuffer`` and
``AllocBuffer`` statements with a buffer object), its storage is read as ``tirx.tensor_data_ptr(var)`` (0.27:
``tirx.buffer_data``), its dtype, shape and scope are fields of ``var.ty``, a store names its tensor ``dest``
(0.27: ``buffer``), and thread and block indices are calls ``tirx.cuda.thread_idx("x")`` (0.27: variables bound by
``thread_extent`` attributes); a loop runs from ``begin`` to ``end`` (0.27: ``min``, ``extent``) and a branch is an
``If`` (0.27: ``IfThenElse``). The host function is not interpreted: ``run_kernel`` reads the grid and block it
launches the kernel with (constant slots of its packed call) and launches the device function with the arrays as
its pointer parameters.
"""

from __future__ import annotations

import numpy as np

from . import _ptx, _values as V
from ._errors import KernelFault, NotModelled
from ._exec import ForFrame, Interpreter, Launch, key, statements
from ._host import _Broadcast, _expand
from ._memory import Pointer, Space


class TensorVar:
    """A tvm_tirx tensor variable with the fields the interpreter reads from a 0.27 buffer."""

    def __init__(self, var):
        self.var, ty = var, var.ty
        self.name = str(var.name)
        self.dtype = str(ty.dtype.dtype)
        self.shape = list(ty.shape)
        self.elem_offset = None
        self.data = var.data   # tirx.tensor_data_ptr(var): the variable is the storage's identity (buffer_key)
        self._scope = str(ty.scope)

    def scope(self):
        return self._scope


class TirxInterpreter(Interpreter):
    def s_Bind(self, task, s):
        value = s.value
        name = str(value.op.name) if type(value).__name__ == "Call" and hasattr(value.op, "name") else ""
        g = task.group
        if name == "tirx.decl_tensor":   # a view of existing storage
            g.env[key(s.var)] = self.eval(g, value.args[0])
            return None
        if name == "tirx.alloc_tensor":
            if self.launch is None:
                raise NotModelled("a tensor allocated outside a kernel")
            g.env[key(s.var)] = self.launch.allocate(g, TensorVar(s.var))
            return None
        return super().s_Bind(task, s)

    def address(self, g, buffer, indices, access_dtype):
        return super().address(g, TensorVar(buffer) if type(buffer).__name__ == "Var" else buffer, indices,
                               access_dtype)

    def s_For(self, task, s):
        """``for var in [begin, end) step``: 0.27's ``For`` has ``min`` and ``extent``, tvm_tirx's ``begin``,
        ``end``."""
        g = task.group
        begin, end = self.eval(g, s.begin), self.eval(g, s.end)
        step = 1 if s.step is None else int(self.eval(g, s.step)[0])
        if not (np.all(begin == begin[0]) and np.all(end == end[0])):
            raise NotModelled(f"a loop over {s.var} whose bounds differ between threads")
        task.stack.append(ForFrame(key(s.var), V.numpy_dtype(s.var.ty.dtype), int(begin[0]), int(end[0]), step,
                                   s.body))

    def s_If(self, task, s):
        return self.s_IfThenElse(task, s)

    def s_TensorStore(self, task, s):
        self.store(task.group, s.dest, s.indices, self.eval(task.group, s.value))

    def e_Call(self, g, e):
        name = str(e.op.name) if hasattr(e.op, "name") else ""
        if name == "tirx.tensor_data_ptr":
            value = g.env.get(key(e.args[0]))
            if value is None:
                raise NotModelled(f"tensor {e.args[0]} has no storage here")
            return value
        if name in ("tirx.cuda.thread_idx", "tirx.cuda.block_idx"):
            axis = "xyz".index(str(e.args[0].value))
            if name == "tirx.cuda.thread_idx":
                return g.tids.astype(np.int32) if axis == 0 else np.zeros(g.n, np.int32)
            return np.full(g.n, g.cta.block[axis], dtype=np.int32)
        return super().e_Call(g, e)


def shared_bytes(body) -> int:
    """Bytes of the kernel's static shared tensors (``Bind(var, tirx.alloc_tensor())`` of scope shared), each rounded
    up to 16, as the 0.27 interpreter sizes its ``AllocBuffer``s."""
    total = 0
    for node in statements(body):
        if type(node).__name__ == "Bind" and type(node.value).__name__ == "Call" and \
                str(getattr(node.value.op, "name", "")) == "tirx.alloc_tensor" and str(node.var.ty.scope) == "shared":
            tensor = TensorVar(node.var)
            count = int(np.prod([int(n) for n in tensor.shape]))
            total += -(-(count * V.numpy_dtype(tensor.dtype).itemsize) // 16) * 16
    return total


def device_function(executable_or_module):
    """The one kernel of a device module (``IRModule``) as tvm_tirx's ``compile`` hands it to CUDA codegen."""
    functions = list(executable_or_module.functions.items())
    if len(functions) != 1:
        raise NotModelled(f"a device module with {len(functions)} kernels")
    return functions[0]


def _launch_fields(host_module, name: str, first_slot: int, fields) -> dict:
    """{field: value} of the launch of kernel ``name`` by the host function: the packed call's slots from
    ``first_slot`` on, in the order of the kernel's ``cuda.launch_fields`` (grid.x, ..., block.z), each a constant
    that the host writes with ``abi_field_set(stack, slot, 15, value)`` before ``call_packed_lowered(name, ...)``."""
    slots, calls = {}, []
    for _, func in host_module.functions.items():
        for node in statements(func.body):
            if type(node).__name__ != "Evaluate" or type(node.value).__name__ != "Call":
                continue
            call = node.value
            op = str(getattr(call.op, "name", ""))
            if op.endswith("abi_field_set") and int(call.args[2]) == 15:
                try:
                    slots[int(call.args[1])] = int(call.args[3].value if type(call.args[3]).__name__ == "Cast"
                                                   else call.args[3])
                except (TypeError, ValueError, AttributeError):
                    slots[int(call.args[1])] = None
            if op.endswith("call_packed_lowered") and str(call.args[0].value) == name:
                calls.append(dict(slots))
    if len(calls) != 1:
        raise NotModelled(f"kernel '{name}' is launched {len(calls)} times by the host module")
    out = {}
    for i, field in enumerate(fields):
        value = calls[0].get(first_slot + i)
        if value is None:
            raise NotModelled(f"kernel '{name}': launch field {field} is not a constant")
        out[str(field)] = value
    return out


def run_kernel(host_module, device_module, names, *arrays):
    """Runs the device module's kernel on ``arrays``, the arguments of the function compiled (its parameters
    ``names``; outputs written in place), launched as the host module launches it. tvm_tirx passes the kernel the
    data pointer ``<name>_ptr`` of each tensor parameter it uses."""
    gvar, func = device_function(device_module)
    name = str(gvar.name_hint)
    params = list(func.params)
    if len(names) != len(arrays):
        raise KernelFault(f"kernel '{name}' is a function of {len(names)} tensors {list(names)}, given "
                          f"{len(arrays)} arrays")
    chosen = []
    for param in params:
        tensor = str(param.name).removesuffix("_ptr")
        if tensor not in names:
            raise NotModelled(f"kernel '{name}': parameter {param.name} is not the pointer of a tensor of {names}")
        chosen.append(arrays[list(names).index(tensor)])
    arrays = chosen
    launch = _launch_fields(host_module, name, len(params), list(func.attrs["cuda.launch_fields"]))
    if launch.get("block.y", 1) != 1 or launch.get("block.z", 1) != 1:
        raise NotModelled(f"kernel '{name}': block {launch}: the interpreter launches 1-D CTAs")
    grid = tuple(launch.get(f"grid.{a}", 1) for a in "xyz")
    threads = launch["block.x"]
    pointers = []
    for i, (param, array) in enumerate(zip(params, arrays)):
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise KernelFault(f"kernel '{name}': argument {i} ({param.name}) is not a C-contiguous numpy array")
        space = Space("global", f"{param.name} (argument {i})", array.reshape(-1).view(np.uint8))
        pointers.append(Pointer(space, np.zeros(1, np.int64)))
    launch = Launch(name, func, pointers, grid, threads, 0, _ptx)
    launch.static_shared = shared_bytes(func.body)
    launch.interp = TirxInterpreter(launch, _ptx)
    env = {key(p): _Broadcast(ptr) for p, ptr in zip(params, pointers)}
    launch.run(func.body, _expand(env, threads))


class Compiled:
    """A kernel compiled by tvm_tirx, with the host and device modules its ``compile`` handed to code generation."""

    def __init__(self, executable, host, device, names):
        self.executable, self.host, self.device, self.names = executable, host, device, tuple(names)


_compile_lock = __import__("threading").Lock()


def compile(func, target) -> Compiled:  # noqa: A001  (tvm_tirx.tirx.compile, keeping what it lowered)
    """``tvm_tirx.tirx.compile(func, target=target)``, keeping its lowered host and CUDA device modules (read at
    tvm_tirx's hand-over to code generation, ``tvm_tirx.tirx._compile._codegen_host_and_device``)."""
    import tvm_tirx
    from tvm_tirx.tirx import _compile

    codegen = getattr(_compile, "_codegen_host_and_device", None)
    if codegen is None:
        raise NotModelled("tvm_tirx.tirx._compile._codegen_host_and_device is gone: this tvm_tirx hands its lowered "
                          "modules to code generation elsewhere; the interpreter cannot read them")
    seen = []

    def keep(host, devices, target_host):
        seen.append((host, devices))
        return codegen(host, devices, target_host)

    with _compile_lock:
        _compile._codegen_host_and_device = keep
        try:
            executable = tvm_tirx.tirx.compile(func, target=target)
        finally:
            _compile._codegen_host_and_device = codegen
    host, devices = seen[-1]
    cuda = [module for module in devices.values()
            if any(str(f.attrs["target"].kind.name) == "cuda" for _, f in module.functions.items()
                   if f.attrs is not None and "target" in f.attrs)]
    if len(cuda) != 1:
        raise NotModelled(f"{len(cuda)} CUDA device modules")
    return Compiled(executable, host, cuda[0], [str(p.name) for p in func.params])


def run(compiled: Compiled, *arrays):
    """Runs a kernel compiled by ``compile`` on numpy arrays (outputs written in place)."""
    run_kernel(compiled.host, compiled.device, compiled.names, *arrays)
