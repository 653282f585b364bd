"""Compiles and runs programs in this process and classifies each: ``right``, ``refused`` (an axe4j refusal or TVM's
dispatch report naming the problem), ``internal`` (any other exception: TVM's own ``TypeError``/``InternalError``,
a rule error, an interpreter gap), ``wrong`` (numbers differ from numpy, or the interpreter saw a fault a GPU would
hit). ``hang`` and crashes are the runner's (``runner.py``), which watches this from another process.

Programs of one target compile as one IRModule (one PrimFunc each); when that compile fails, the program whose
function the error names is compiled alone and the rest together again; when it names none, the batch is split in
halves, down to single programs, so each failure is the program's own.
"""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass

from . import build
from .case import Case
from .spec import Program


@dataclass(frozen=True)
class Outcome:
    seed: int
    index: int
    klass: str            # right | refused | internal | wrong | hang
    signature: str = ""   # what tells distinct failures apart (class, error kind, first line)
    detail: str = ""
    tvm_cases: str = ""   # the tile calls TVM's own dispatch cases lowered, "op:case, ..." (axe4j's rules declined)


def symbol(p: Program) -> str:
    return f"fuzz_{p.seed}_{p.index}"


# ---- classification -------------------------------------------------------------------------------------------------

def _raised_in_axe4j(error) -> bool:
    import axe4j

    package = os.path.dirname(os.path.abspath(axe4j.__file__)) + os.sep
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(package)


def _first_line(text: str) -> str:
    for line in str(text).splitlines():
        line = line.strip()
        if line and not line.startswith(("Traceback", "File ", "^")):
            return line
    return ""


def _normal(text: str) -> str:
    """A message with numbers, quoted names and dtypes' lane counts blanked: one signature per kind of failure."""
    text = re.sub(r"(?<![\w])'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"fuzz_\d+_\d+", "fuzz_…", text)
    text = re.sub(r"(\d)x\d+\b", r"\1xN", text)   # vector lanes: float32x4
    text = re.sub(r"(?<![\w.])\d+", "N", text)
    return text[:160]


def classify_error(error: BaseException, phase: str) -> tuple:
    """(class, signature, detail) of an exception raised compiling (``phase`` compile) or running a program."""
    from axe4j._errors import PlanError, RuleError, StrictError
    from axe4j.cuda.interp import KernelFault, NotModelled

    text = str(error)
    name = type(error).__name__
    head = _first_line(text)
    detail = f"{name}: {text}"[:4000]
    if isinstance(error, KernelFault):
        return "wrong", f"wrong: kernel fault: {_normal(head)}", detail
    if isinstance(error, NotModelled):
        return "internal", f"internal: interpreter NotModelled: {_normal(head)}", detail
    if isinstance(error, (RuleError, PlanError)):
        return "internal", f"internal: {name}: {_normal(head)}", detail
    if "TIRx schedule dispatch failed" in text:
        return "refused", f"refused: dispatch: {_normal(_dispatch_reason(text))}", detail
    if isinstance(error, StrictError) or (isinstance(error, ValueError) and _raised_in_axe4j(error)):
        tagged = [line.strip() for line in text.splitlines() if re.match(r"^\s*\[[\w-]+\]", line)]
        return "refused", f"refused: {name}: {_normal(tagged[0] if tagged else head)}", detail
    return "internal", f"internal: {phase}: {name}: {_normal(_tvm_head(text))}", detail


def _dispatch_reason(text: str) -> str:
    """The op, and the first axe4j rule's reason in TVM's dispatch report (its table rows ``| variant | error |``)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    op = next((re.search(r"op=(\S+)", line).group(1) for line in lines if "op=" in line), "?")
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("axe4j-") and "probe" not in cells[0]:
            return f"{op}: {cells[0].split()[0]}: {cells[1]}"
    rest = [line for line in lines if not line.startswith(("+", "|")) and "dispatch failed" not in line]
    return f"{op}: {rest[0] if rest else ''}"


def _tvm_head(text: str) -> str:
    """The message line of a TVM error (after its C++ backtrace, if any)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^(\w+Error|Check failed|InternalError)\b", line) or "Error:" in line:
            return line
    return lines[-1] if lines else ""


# ---- compile and run ------------------------------------------------------------------------------------------------

def compile_many(programs, strict=False):
    """{symbol: executable or exception}: one compile for all (same target), halves again on failure."""
    import tvm

    import axe4j

    funcs, errors = {}, {}
    for p in programs:
        try:
            funcs[symbol(p)] = build.kernel(p).with_attr("global_symbol", symbol(p))
        except Exception as error:   # noqa: BLE001  (the program's own failure, classified below)
            errors[symbol(p)] = ("build", error)
    out = dict(errors)
    pending = [p for p in programs if symbol(p) in funcs]

    def attempt(group):
        if not group:
            return
        mod = tvm.IRModule({symbol(p): funcs[symbol(p)] for p in group})
        try:
            executable = axe4j.compile(mod, build.target(group[0]), strict=strict)
        except Exception as error:   # noqa: BLE001
            if len(group) == 1:
                out[symbol(group[0])] = ("compile", error)
                return
            named = [p for p in group if re.search(rf"\b{symbol(p)}\b", str(error))]
            if len(named) == 1:   # the error names its function: that one alone, then the rest
                attempt(named)
                attempt([p for p in group if p is not named[0]])
                return
            half = len(group) // 2
            attempt(group[:half])
            attempt(group[half:])
            return
        for p in group:
            out[symbol(p)] = executable

    attempt(pending)
    return out


def run_one(p: Program, executable) -> tuple:
    """Runs a compiled program on its case; (class, signature, detail)."""
    case = Case(p)
    arrays = case.arrays()
    try:
        if p.cuda:
            from axe4j.cuda.interp import _host

            prog = executable.axe4j_program
            host = next(f for g, f in prog.host.functions.items() if str(g.name_hint) == symbol(p))
            _host.run_host(prog, host, arrays)
            got = arrays[-1]
        else:
            import tvm

            tensors = [tvm.runtime.tensor(a) for a in arrays]
            executable[symbol(p)](*tensors)
            got = tensors[-1].numpy()
    except Exception as error:   # noqa: BLE001
        return classify_error(error, "run")
    return case.check(got)


# programs per compiled module: measured, an llvm module of 8 costs less CPU than 8 of 1 or 1 of 40 (a failing
# module is compiled again in parts); a CUDA compile's cost is per function, so its programs compile one by one
MODULE_SIZE = {"llvm": 8}
CUDA_MODULE_SIZE = 1


def _tvm_cases(executable) -> str:
    rows = getattr(executable, "lowered", None) or []
    return ", ".join(sorted({f"{row.op}:{row.variant}" for row in rows if not row.by_axe4j}))


def module_groups(programs) -> list[list[Program]]:
    """The groups ``execute`` compiles and runs ``programs`` in, in its order: by target (in the order the targets
    first appear), ``MODULE_SIZE`` programs a module."""
    by_target = {}
    for p in programs:
        by_target.setdefault(p.target, []).append(p)
    groups = []
    for target, group in by_target.items():
        size = MODULE_SIZE.get(target, CUDA_MODULE_SIZE)
        groups += [group[k:k + size] for k in range(0, len(group), size)]
    return groups


def execute(programs, strict=False, report=None):
    """Outcomes of ``programs`` (any targets), in order; ``report(outcome)`` is called as each is known."""
    outcomes = {}
    for group in module_groups(programs):
        compiled = compile_many(group, strict)
        for p in group:
            result = compiled[symbol(p)]
            cases = ""
            if isinstance(result, tuple):
                klass, sig, detail = classify_error(result[1], result[0])
            else:
                klass, sig, detail = run_one(p, result)
                if klass != "right":   # which cases lowered this program's calls: compiled alone, if it was not
                    alone = result if len(group) == 1 else compile_many([p], strict)[symbol(p)]
                    cases = "" if isinstance(alone, tuple) else _tvm_cases(alone)
                    if cases and klass == "wrong":
                        sig += f" (TVM's {cases})"
            outcome = Outcome(p.seed, p.index, klass, sig, detail, cases)
            outcomes[(p.seed, p.index)] = outcome
            if report is not None:
                report(outcome)
    return [outcomes[(p.seed, p.index)] for p in programs]
