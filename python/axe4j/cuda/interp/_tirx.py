"""The interpreter on the new TIRx lane: a device function as tvm_tirx hands it to its CUDA code generator, run on
numpy arrays with the same execution model, memory checks and PTX instructions as 0.27's (``_exec``, ``_ptx``).

tvm_tirx's device IR differs from 0.27's in a few nodes only, each answered here: a tensor is a variable of tensor
type bound by ``Bind(var, tirx.decl_tensor(data))`` or ``Bind(var, tirx.alloc_tensor())`` (0.27: ``DeclBuffer`` and
``AllocBuffer`` statements with a buffer object), its storage is read as ``tirx.tensor_data_ptr(var)`` (0.27:
``tirx.buffer_data``), its dtype, shape and scope are fields of ``var.ty``, a store names its tensor ``dest``
(0.27: ``buffer``), and thread and block indices are calls ``tirx.cuda.thread_idx("x")`` (0.27: variables bound by
``thread_extent`` attributes); a loop runs from ``begin`` to ``end`` (0.27: ``min``, ``extent``) and a branch is an
``If`` (0.27: ``IfThenElse``). The host function is not interpreted: ``run_kernel`` reads the grid, block and cluster it
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
        if name == "tirx.ptr_byte_offset":   # a view ``offset`` bytes into a storage (a shared-memory pool's tensors)
            base = self.eval(g, e.args[0])
            if not isinstance(base, Pointer):
                raise NotModelled(f"{e}: the offset of a value that is not a pointer")
            return base.add(self.eval(g, e.args[1]))
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


def _packed_calls(host_module):
    """(name, [slot value expression, ...]) of each packed call of the host module, in order: the slots from
    ``begin`` to ``end`` that the host writes with ``abi_field_set(stack, slot, 15, value)`` before
    ``call_packed_lowered(name, stack, begin, end)`` (None for a slot it did not write)."""
    calls = []
    for _, func in host_module.functions.items():
        slots = {}
        for node in statements(func.body):
            if type(node).__name__ != "Evaluate" or type(node.value).__name__ != "Call":
                continue
            call = node.value
            op = str(getattr(call.op, "name", ""))
            if op.endswith("abi_field_set") and int(call.args[2]) == 15:
                slots[int(call.args[1])] = call.args[3]
            if op.endswith("call_packed_lowered"):
                begin, end = int(call.args[2]), int(call.args[3])
                calls.append((str(call.args[0].value), [slots.get(i) for i in range(begin, end)]))
    return calls


def _constant(expr):
    """The value of a host slot that is a constant (an integer, possibly cast; a string, possibly reinterpreted);
    None when it is not one."""
    while type(expr).__name__ == "Cast" or (type(expr).__name__ == "Call"
                                            and str(getattr(expr.op, "name", "")) == "tirx.reinterpret"):
        expr = expr.value if type(expr).__name__ == "Cast" else expr.args[0]
    kind = type(expr).__name__
    if kind == "IntImm":
        return int(expr.value)
    if kind == "StringImm":
        return str(expr.value)
    return None


def _launch_fields(host_module, name: str, first_slot: int, fields) -> tuple[dict, list]:
    """({field: value} of the launch of kernel ``name`` by the host function, the slot expressions of its
    parameters): the packed call's slots from ``first_slot`` on, in the order of the kernel's
    ``cuda.launch_fields`` (grid.x, ..., block.z), each a constant."""
    calls = [slots for called, slots in _packed_calls(host_module) if called == name]
    if len(calls) != 1:
        raise NotModelled(f"kernel '{name}' is launched {len(calls)} times by the host module")
    out = {}
    for i, field in enumerate(fields):
        slot = calls[0][first_slot + i] if first_slot + i < len(calls[0]) else None
        value = _constant(slot) if slot is not None else None
        if value is None:
            raise NotModelled(f"kernel '{name}': launch field {field} is not a constant")
        out[str(field)] = value
    return out, calls[0][:first_slot]


def _host_tensors(host_module, names) -> dict:
    """{host tensor variable: index of the argument whose data it views}: a tensor bound to the data of an argument
    (named as the function's parameter) or to the data of another such tensor (``decl_tensor(X.data)``)."""
    origin = {}
    for _, func in host_module.functions.items():
        for node in statements(func.body):
            if type(node).__name__ != "Bind" or type(node.var.ty).__name__ != "TensorType":
                continue
            value = node.value
            data = value.args[0] if type(value).__name__ == "Call" and len(value.args) else None
            viewed = (data.args[0] if type(data).__name__ == "Call"
                      and str(getattr(data.op, "name", "")) == "tirx.tensor_data_ptr" else None)
            if viewed is not None and key(viewed) in origin:
                origin[key(node.var)] = origin[key(viewed)]
            elif str(node.var.name) in names:
                origin[key(node.var)] = list(names).index(str(node.var.name))
    return origin


def _tensor_maps(host_module, names, spaces) -> dict:
    """{host tensor-map variable: TensorMap} of the host's ``runtime.cuTensorMapEncodeTiled`` calls (arguments:
    map, dtype, rank, global address, dims (rank), byte strides (rank - 1), box (rank), element strides (rank),
    interleave, swizzle, L2 promotion, OOB fill[, forced CUDA dtype]), the address an element of an argument."""
    from ._tensor import TensorMap

    tensors = _host_tensors(host_module, names)
    maps = {}
    for called, slots in _packed_calls(host_module):
        if called != "runtime.cuTensorMapEncodeTiled":
            continue
        where = f"the host's tensor map {slots[0]}"
        dtype, rank = _constant(slots[1]), _constant(slots[2])
        address = slots[3]
        if type(address).__name__ != "Call" or str(getattr(address.op, "name", "")) != "tirx.address_of" or \
                type(address.args[0]).__name__ != "TensorLoad" or key(address.args[0].source) not in tensors:
            raise NotModelled(f"{where}: its address {address} is not an element of an argument")
        load = address.args[0]
        indices = [_constant(i) for i in load.indices]
        shape = [int(n) for n in load.source.ty.shape]
        if None in indices or len(indices) != len(shape):
            raise NotModelled(f"{where}: the element {load} is not at constant indices")
        flat = 0
        for i, n in zip(indices, shape):   # the host's tensors are row-major views of the argument's data
            flat = flat * n + i
        nums = [_constant(x) for x in slots[4:]]
        if dtype is None or rank is None or None in nums[:4 * rank + 1]:
            raise NotModelled(f"{where}: its fields are not constants")
        dims, strides = nums[:rank], nums[rank:2 * rank - 1]
        box, elements = nums[2 * rank - 1:3 * rank - 1], nums[3 * rank - 1:4 * rank - 1]
        interleave, swizzle, _l2, oob = nums[4 * rank - 1:4 * rank + 3]
        space = spaces[tensors[key(load.source)]]
        pointer = Pointer(space, np.array([flat * V.numpy_dtype(str(load.source.ty.dtype.dtype)).itemsize],
                                          np.int64))
        maps[key(slots[0])] = TensorMap(V.numpy_dtype(dtype), pointer, dims, strides, box, elements, swizzle, oob,
                                        interleave)
    return maps


def run_kernel(host_module, device_module, names, *arrays):
    """Runs the device module's kernel on ``arrays``, the arguments of the function compiled (its parameters
    ``names``; outputs written in place), launched as the host module launches it. tvm_tirx passes the kernel the
    data pointer ``<name>_ptr`` of each tensor parameter it uses, and the tensor maps the host encodes
    (``cuTensorMapEncodeTiled``) for its TMA copies."""
    gvar, func = device_function(device_module)
    name = str(gvar.name_hint)
    params = list(func.params)
    if len(names) != len(arrays):
        raise KernelFault(f"kernel '{name}' is a function of {len(names)} tensors {list(names)}, given "
                          f"{len(arrays)} arrays")
    for i, array in enumerate(arrays):
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise KernelFault(f"kernel '{name}': argument {i} ({names[i]}) is not a C-contiguous numpy array")
    spaces = [Space("global", f"{n} (argument {i})", a.reshape(-1).view(np.uint8))
              for i, (n, a) in enumerate(zip(names, arrays))]
    launch, slots = _launch_fields(host_module, name, len(params), list(func.attrs["cuda.launch_fields"]))
    maps = None
    values = []
    for param, slot in zip(params, slots):
        if "TensorMap" in str(param.ty):
            if maps is None:
                maps = _tensor_maps(host_module, names, spaces)
            if slot is None or key(slot) not in maps:
                raise NotModelled(f"kernel '{name}': parameter {param.name} is not a tensor map the host encodes")
            values.append(maps[key(slot)])
            continue
        tensor = str(param.name).removesuffix("_ptr")
        if tensor not in names:
            raise NotModelled(f"kernel '{name}': parameter {param.name} is not the pointer of a tensor of {names}")
        values.append(Pointer(spaces[list(names).index(tensor)], np.zeros(1, np.int64)))
    if launch.get("block.y", 1) != 1 or launch.get("block.z", 1) != 1:
        raise NotModelled(f"kernel '{name}': block {launch}: the interpreter launches 1-D CTAs")
    grid = tuple(launch.get(f"grid.{a}", 1) for a in "xyz")
    threads = launch["block.x"]
    # the dynamic shared bytes of the launch (a ``shared.dyn`` pool's ``commit``), after the static tensors
    dynamic = launch.get("dynamic_smem_bytes", 0)
    cluster = tuple(launch.get(f"cluster.{a}", 1) for a in "xyz")
    launch = Launch(name, func, values, grid, threads, dynamic, _ptx)
    # a cluster launch (the launch fields cluster.x, .y, .z; 0.27 binds clusterCtaIdx thread extents instead)
    launch.cluster_dims = cluster
    launch.static_shared = shared_bytes(func.body)
    launch.interp = TirxInterpreter(launch, _ptx)
    env = {key(p): _Broadcast(value) for p, value in zip(params, values)}
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
