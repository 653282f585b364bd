"""Reproducers: a failing program as a runnable Python snippet (its description, its kernel's TVMScript, and the
call that compiles, runs and classifies it again)."""

from __future__ import annotations

import textwrap

from . import build
from .execute import Outcome
from .spec import Program


def run(p: Program) -> Outcome:
    """Compiles and runs ``p`` in this process; its outcome (``print`` it to see the class and the detail)."""
    import axe4j

    from . import execute, lazy_stack

    axe4j.install()
    axe4j.use_pip_nvcc()
    lazy_stack.install()
    return execute.execute([p])[0]


def snippet(p: Program, outcome: Outcome) -> str:
    try:
        script = build.kernel(p).script()
    except Exception as error:   # noqa: BLE001
        script = f"(the kernel does not build: {type(error).__name__}: {error})"
    detail = textwrap.indent(textwrap.fill(outcome.detail[:1200], 116), "#   ")
    return f'''"""Fuzzer reproducer: {outcome.signature}
seed {p.seed}, index {p.index}, target {p.target}, op {p.op}, {p.dtype} -> {p.dst.dtype}, layouts: {p.family()}

Run: PYTHONPATH=python .venv/bin/python <this file>
"""
# what the fuzzer saw:
{detail}
#
# the kernel (TVMScript):
{textwrap.indent(script, "#   ")}

import tvm  # noqa: F401  (before the JVM)

from axe4j_tools.fuzz.replay import run
from axe4j_tools.fuzz.spec import Layout, Operand, Program  # noqa: F401

PROGRAM = {p!r}

if __name__ == "__main__":
    outcome = run(PROGRAM)
    print(outcome.klass, "|", outcome.signature)
    print(outcome.detail)
'''
