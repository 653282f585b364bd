"""A CPU interpreter for lowered CUDA kernels: every kernel axe4j compiles for ``cuda`` runs on numpy arrays.

Level: the device PrimFunc exactly as TVM hands it to its CUDA code generator (after tile dispatch, lowering, host
and device split and the device finalisation passes), and the host PrimFunc after TVM's packed-API lowering. At this
level every decision axe4j's rules and emitters made is fixed (addresses, vector widths, barriers, PTX instructions
with their operands), and nothing of the C++ text's spelling is left to interpret. See docs/cuda-interp.md.

Use::

    executable = axe4j.compile(kernel, target)          # records the lowered modules on the executable
    axe4j.cuda.interp.run(executable, a, b, c)          # runs it on numpy arrays; writes the outputs in place

On the new TIRx lane (tvm_tirx), ``compile_tirx(function, target)`` compiles with tvm_tirx and keeps the lowered
modules, and ``run_tirx(compiled, a, b, c)`` runs its kernel the same way (``_tirx``).

Errors: ``KernelFault`` (out-of-bounds or misaligned access, data race on shared memory, deadlock, operand out of
range), each naming the kernel, the thread and the address; ``NotModelled`` for an instruction or form outside the
interpreter's coverage (named).
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from ._errors import KernelFault, NotModelled

__all__ = ["KernelFault", "NotModelled", "Program", "run", "capture", "program", "compile_tirx", "run_tirx"]

_local = threading.local()
_patch_lock = threading.Lock()
_patched = False


class Program:
    """The lowered host and device modules of one compiled CUDA module."""

    def __init__(self, host, device):
        self.host, self.device = host, device

    def device_function(self, name):
        for gvar, func in self.device.functions.items():
            if str(gvar.name_hint) == name:
                return func
        raise NotModelled(f"no device function {name}")

    def entry(self):
        funcs = [f for _, f in self.host.functions.items()]
        for f in funcs:
            attrs = f.attrs
            if attrs is not None and "tirx.is_entry_func" in attrs and bool(attrs["tirx.is_entry_func"]):
                return f
        return funcs[0]

    def __call__(self, *arrays):
        from ._errors import KernelFault
        from ._host import run_host

        arrays = [_contiguous(a) for a in arrays]
        try:
            run_host(self, self.entry(), arrays)
        except KernelFault as fault:
            if not str(fault).startswith("kernel 'host'"):
                raise
            given = ", ".join(f"#{i} {a.dtype}{tuple(a.shape)}" for i, a in enumerate(arrays))
            raise KernelFault(f"{fault}; the arrays given: {given}") from None


def _contiguous(array):
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
        raise TypeError("cuda_interp.run takes C-contiguous numpy arrays (the kernel writes its outputs in place)")
    return array


def _install_hooks():
    global _patched
    with _patch_lock:
        if _patched:
            return
        from ... import _tvm_internals

        build = _tvm_internals.build_module()
        split, to_runtime = build.split_host_device_mods, build.tir_to_runtime

        def split_hook(mod):
            host, devices = split(mod)
            record = getattr(_local, "record", None)
            if record is not None:
                record["host"] = host
            return host, devices

        def runtime_hook(host, devices, target_host):
            record = getattr(_local, "record", None)
            if record is not None:
                cuda = [m for t, m in devices.items() if str(t.kind.name) == "cuda"]
                record["device"] = cuda[0] if cuda else None
            return to_runtime(host, devices, target_host)

        build.split_host_device_mods, build.tir_to_runtime = split_hook, runtime_hook
        _patched = True


@contextlib.contextmanager
def capture():
    """Within the block, ``tvm.compile`` records its lowered modules; yields the record (keys host, device)."""
    _install_hooks()
    outer = getattr(_local, "record", None)
    _local.record = record = {}
    try:
        yield record
    finally:
        _local.record = outer


def attach(executable, record):
    if record.get("device") is not None and record.get("host") is not None:
        try:
            executable.axe4j_program = Program(record["host"], record["device"])
        except AttributeError:
            pass
    return executable


def program(executable) -> Program:
    prog = executable if isinstance(executable, Program) else getattr(executable, "axe4j_program", None)
    if prog is None:
        raise NotModelled("this executable has no lowered CUDA modules recorded: compile it with axe4j.compile "
                          "for a cuda target")
    return prog


def run(executable, *arrays):
    """Runs a CUDA executable built by ``axe4j.compile`` on numpy arrays (outputs written in place)."""
    program(executable)(*arrays)


def compile_tirx(function, target):
    """The new TIRx lane: ``tvm_tirx.tirx.compile`` keeping the lowered host and device modules (``_tirx.Compiled``)."""
    from . import _tirx

    return _tirx.compile(function, target)


def run_tirx(compiled, *arrays):
    """The new TIRx lane: runs a kernel compiled by ``compile_tirx`` on numpy arrays (outputs written in place)."""
    from . import _tirx

    _tirx.run(compiled, *arrays)
