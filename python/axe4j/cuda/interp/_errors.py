"""Errors of the CUDA interpreter: each names the kernel, the thread and what went wrong."""

from __future__ import annotations


class KernelFault(RuntimeError):
    """A lowered kernel did something a GPU would fault on, hang on, or leave undefined (out-of-bounds or misaligned
    access, a data race on shared memory, a deadlock, an instruction's operand out of its legal range)."""


class NotModelled(NotImplementedError):
    """The kernel uses an instruction or form the interpreter does not model; the message names it."""


def thread_name(block, tid) -> str:
    return f"block {tuple(int(b) for b in block)} thread {int(tid)} (warp {int(tid) // 32}, lane {int(tid) % 32})"
