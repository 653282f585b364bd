"""Compiling corpus kernels: TIRx lowering to CUDA C (TVM's dispatch), then nvcc to a fatbin for one arch."""

from __future__ import annotations

FATBIN_MAGIC = bytes.fromhex("50ed55ba")
EM_CUDA = 190  # ELF e_machine of a cubin


def target(arch: str):
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")


def module(kernel):
    """The entry's PrimFunc as the ``main`` of an IRModule, so ``executable(*tensors)`` runs it."""
    import tvm

    return tvm.IRModule({"main": kernel.build()})


def compile_upstream(kernel, arch: str):
    """``tvm.compile`` with TVM's own dispatch cases only (axe4j's, if registered, hidden meanwhile)."""
    import tvm

    from axe4j.cuda import interp as cuda_interp
    from axe4j.cuda.choices import upstream_only

    with upstream_only(), cuda_interp.capture() as record:   # lowered modules kept for the CPU interpreter
        executable = tvm.compile(module(kernel), target=target(arch), tir_pipeline="tirx")
    return cuda_interp.attach(executable, record)


def cuda_source(executable) -> str:
    device = [m for m in executable.mod.imports if m.kind == "cuda"]
    if len(device) != 1:
        raise ValueError(f"expected one cuda device module, found kinds {[m.kind for m in executable.mod.imports]}")
    return device[0].inspect_source("cuda")


def fatbin(source: str, arch: str) -> bytes:
    """nvcc (``TVM_CUDA_COMPILE_MODE=nvcc``, see ``axe4j.use_pip_nvcc``) on the CUDA C, for ``arch`` only."""
    import tvm

    with target(arch):
        return bytes(tvm.get_global_func("tvm_callback_cuda_compile")(source))
