"""Which dispatch case lowered each tile call, and the guard that keeps an mbarrier copy on TMA.

TVM's dispatch (``tvm.tirx.operator.tile_primitive.dispatcher.run_dispatch``) tries the cases of its table in
priority order and splices the body of the first one that returns a PrimFunc; nothing says which one it was. So a
kernel whose axe4j rule declined still compiles, through one of TVM's own cases, and a test that looks only for an
instruction both emit cannot tell. ``watch()`` wraps the implementation of every case in that table once; while a
``record()`` is open in the thread, each case that lowers a call appends a ``Lowering`` row (the call, the case, its
priority, whether it is axe4j's, and an axe4j plan's notes). ``axe4j.compile`` keeps the rows of its compilation
on the executable it returns (``executable.lowered``) and as ``axe4j.lowered()``.

In ``axe4j.compile``'s default mode (``guarded``) the wrapper lets one of TVM's cases run only where
``axe4j.upstream`` proves it right for the call; elsewhere it declines, so a call no axe4j rule takes fails to compile
with the rules' reasons instead of going to a case known to be wrong.

The wrapper also refuses one hand-off outright: a ``copy_async`` global -> shared with ``mbar=`` is a TMA load whose
consumers wait on the mbarrier for its bytes (``expect_tx``); a case that is not a TMA case (TVM's ``ldgsts``
cp.async ranks above TVM's TMA cases) would issue the copy without the barrier, and the kernel would wait forever
on a GPU. Such a case declines the call, so when no TMA case takes it the compilation fails, and TVM's error table
shows every case's reason, axe4j's TMA rule's included.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

# The cases that implement an mbarrier copy as TMA: axe4j's rule and TVM's two TMA cases.
TMA_VARIANTS = ("axe4j-cuda-tma", "tma_auto", "tma_explicit")
AXE4J_PREFIX = "axe4j-"

_local = threading.local()
_lock = threading.Lock()


@dataclass(frozen=True)
class Lowering:
    """One tile call and the dispatch case that lowered it."""

    op: str                  # the tile op: "copy", "copy_async", "gemm_async", ...
    target: str              # the target kind: "cuda", "llvm", "trn"
    variant: str             # the case: "axe4j-cuda-vector", "ldgsts", ...
    priority: int
    call: str                # the call as one line of TVMScript
    notes: tuple = ()        # an axe4j case's plan notes (widths, boxes, instructions)

    @property
    def by_axe4j(self) -> bool:
        return self.variant.startswith(AXE4J_PREFIX)

    def __str__(self) -> str:
        notes = "".join(f"; {n}" for n in self.notes)
        return f"{self.call}: {self.variant} (prio={self.priority}){notes}"


@contextlib.contextmanager
def record():
    """Collects a ``Lowering`` per call lowered in this thread while open; yields the list it fills."""
    rows: list[Lowering] = []
    outer, outer_calls = getattr(_local, "rows", None), getattr(_local, "calls", None)
    _local.rows, _local.calls = rows, []
    _local.declining = None
    try:
        yield rows
    finally:
        _local.rows, _local.calls = outer, outer_calls
        if outer is not None:
            outer.extend(rows)


@contextlib.contextmanager
def guarded(check):
    """While open in this thread, each of TVM's cases first calls ``check(op_call, sctx, op, kind, variant)``, which
    may decline the call (``axe4j.upstream.guard`` in the default mode); ``check`` None: no guard."""
    outer = getattr(_local, "guard", None)
    _local.guard = check
    try:
        yield
    finally:
        _local.guard = outer


def note_plan(notes) -> None:
    """Called by axe4j's cases just before they return: the plan's notes go into the row the wrapper writes."""
    _local.notes = tuple(str(n) for n in notes)


def watch() -> None:
    """Wraps every case of TVM's dispatch table once (cases registered later are wrapped by the next call)."""
    from . import _tvm_internals

    with _lock:
        for (op, kind), cases in _tvm_internals.dispatch_table().items():
            for case in cases:
                if not getattr(case.impl, "_axe4j_watched", False):
                    case.impl = _watched(case, str(op.name).split(".")[-1], kind)


def _watched(case, op, kind):
    inner = case.impl

    def impl(op_call, sctx):
        try:
            if (op == "copy_async" and kind == "cuda" and case.variant not in TMA_VARIANTS
                    and not case.variant.startswith(AXE4J_PREFIX)):   # axe4j's cp.async rule declines any config
                _refuse_mbarrier_copy(op_call, sctx, case.variant)
            check = getattr(_local, "guard", None)
            if check is not None and not case.variant.startswith(AXE4J_PREFIX):
                check(op_call, sctx, op, kind, case.variant)   # TVM's case runs only where proven right (upstream)
            _local.notes = ()
            result = inner(op_call, sctx)
        except Exception as error:   # the dispatcher tries the next case; the refusal names every case's reason
            _note_decline(op_call, sctx, case, error)
            raise
        rows = getattr(_local, "rows", None)
        if rows is not None:
            _add(rows, Lowering(op, kind, case.variant, case.priority, _one_line(op_call), _local.notes), op_call)
        _local.notes = ()
        return result

    impl._axe4j_watched = True
    impl.__name__ = getattr(inner, "__name__", "impl")
    return impl


@dataclass(frozen=True)
class Decline:
    """One case's reason for not lowering a call."""

    variant: str
    priority: int
    reason: str


def _note_decline(op_call, sctx, case, error) -> None:
    """Keeps, per thread, the declines of the call being dispatched (a new call starts a new list)."""
    seen = getattr(_local, "declining", None)
    if seen is None or not seen[0].same_as(op_call):
        seen = (op_call, str(getattr(sctx, "scope_kind", "")), [])
        _local.declining = seen
    if case.variant.startswith(AXE4J_PREFIX + "explain"):   # explain's recording case, never a reason
        return
    text = str(error).strip()
    if type(error).__name__ != "DispatchFail":
        text = f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"
    seen[2].append(Decline(case.variant, case.priority, text))


def last_declines():
    """(call, scope kind, [Decline]) of the last call a case declined in this thread, or None."""
    return getattr(_local, "declining", None)


def _add(rows, row, op_call):
    """Appends ``row``; a call lowered again (Trainium's workspace pass dispatches a call before the lowering does)
    keeps its last case."""
    calls = _local.calls
    for i, seen in enumerate(calls):
        if seen.same_as(op_call):
            rows[i] = row
            return
    rows.append(row)
    calls.append(op_call)


def _one_line(op_call) -> str:
    try:
        return str(op_call.script()).strip().splitlines()[-1].strip()
    except Exception:  # noqa: BLE001  (a call TVMScript cannot print)
        return str(op_call.op.name)


def is_tma_load(op_call) -> bool:
    """A ``copy_async`` global -> shared that passes ``mbar=``: only TMA implements it."""
    from tvm.ir import TensorRegion
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    call = TilePrimitiveCall.downcast(op_call)
    if "mbar" not in [str(k) for k in call.config.keys()]:
        return False
    args = list(call.args)
    if len(args) < 2 or not all(isinstance(a, TensorRegion) for a in args[:2]):
        return False
    return str(args[0].source.scope()).startswith("shared") and str(args[1].source.scope()) == "global"


def _refuse_mbarrier_copy(op_call, sctx, variant):
    from tvm.tirx.operator.tile_primitive.dispatcher import DispatchFail

    if not is_tma_load(op_call):
        return
    raise DispatchFail(f"{variant} would issue this copy_async without its mbarrier (mbar=): the waiters' expect_tx "
                       f"bytes would never arrive; only a TMA case may lower it"
                       + _tma_reason(op_call, sctx))


def _tma_reason(op_call, sctx) -> str:
    """The TMA rule's reason for declining the call, from the explainer ``axe4j.dispatch.register`` sets (this module
    does not import the dispatch: the dispatch imports it); "" before the Java rules are installed."""
    explain = _tma_explainer[0]
    return explain(op_call, sctx) if explain is not None else ""


_tma_explainer: list = [None]


def explain_tma_refusals_with(explain) -> None:
    """``explain(op_call, sctx) -> str``: appended to the refusal of an mbarrier copy (``axe4j.dispatch`` sets it)."""
    _tma_explainer[0] = explain


def last() -> list[Lowering]:
    """The rows of the last ``axe4j.compile`` in this thread."""
    return list(getattr(_local, "last", []))


def keep(rows) -> None:
    _local.last = list(rows)
