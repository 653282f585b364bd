"""Which dispatch variant TVM chose for each tile call of a kernel, for upstream cases and axe4j's alike.

TVM 0.27 has no trace of its tile-op dispatch: ``run_dispatch`` (``tvm/tirx/operator/tile_primitive/dispatcher.py``)
returns the first case's PrimFunc and forgets which case it was; only a total failure is reported, as a table.
``recording()`` observes it without changing a decision:

* the C++ lowering calls the global ``tirx.f_op_dispatcher``, which looks up ``dispatcher.run_dispatch`` at
  every call (a function-local import), so replacing that module attribute sees every tile call;
* every ``DispatchCase.impl`` in the table (upstream's and those axe4j registers, whenever they were added) is
  wrapped for the duration, so the case whose impl returned the PrimFunc is known; a case that declined or
  raised is listed under ``declined``. Predicates are untouched (a case whose predicate fails never runs).

Usage::

    with cuda_choices.recording() as calls:
        tvm.compile(kernel, target=target, tir_pipeline="tirx")
    for call in calls:
        print(call.index, call.op, call.scope, call.storage, call.variant)
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class TileCall:
    index: int                 # order of dispatch within the recording
    op: str                    # short op name: copy, copy_async, sum, ...
    scope: str                 # exec scope kind of the call: thread, warp, warpgroup, cta
    storage: str               # storage scopes "src[, src2]->dst"
    dtypes: str                # element types "src[, src2]->dst"
    target: str                # target kind and arch, e.g. "cuda sm_90a"
    variant: str | None        # the case whose PrimFunc replaced the call; None when dispatch failed
    forced: str | None         # the dispatch= name the call asked for, if any
    declined: list = field(default_factory=list)   # (variant, first line of its reason) tried before the winner
    error: str | None = None   # first line of TVM's failure report when no case applied
    text: str = ""             # the call as TVMScript


_local = threading.local()
_install_lock = threading.Lock()


def _frames() -> list:
    if not hasattr(_local, "frames"):
        _local.frames = []
    return _local.frames


def _traced_impl(case):
    original = case.impl

    def impl(op_call, sctx):
        frames = _frames()
        try:
            result = original(op_call, sctx)
        except Exception as error:  # declined (DispatchFail) or broken: run_dispatch moves on
            if frames:
                frames[-1]["declined"].append((case.variant, _first_line(error)))
            raise
        if frames:
            frames[-1]["variant"] = case.variant
        return result

    impl.__wrapped__ = original
    return impl


def _first_line(error) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def _regions(op_call):
    from tvm.ir import TensorRegion

    args = list(op_call.args)
    dst = args[0] if args and isinstance(args[0], TensorRegion) else None
    srcs = [a for a in args[1:] if isinstance(a, TensorRegion)]
    return srcs, dst


def _describe(op_call, sctx) -> dict:
    from tvm.tirx.tile_primitive import TilePrimitiveCall

    call = TilePrimitiveCall.downcast(op_call)
    srcs, dst = _regions(call)

    def scopes(regions):
        return ", ".join(str(r.source.scope()) for r in regions) or "scalar"

    def dtypes(regions):
        return ", ".join(str(r.source.dtype) for r in regions) or "-"

    target = sctx.target
    arch = str(target.attrs.get("arch", "")) if hasattr(target, "attrs") else ""
    forced = getattr(call, "dispatch", None)
    try:
        text = call.script()
    except Exception:  # printing is best effort; the fields above identify the call
        text = str(call.op.name)
    return {
        "op": str(call.op.name).split(".")[-1],
        "scope": str(sctx.scope_kind),
        "storage": f"{scopes(srcs)}->{scopes([dst] if dst is not None else [])}",
        "dtypes": f"{dtypes(srcs)}->{dtypes([dst] if dst is not None else [])}",
        "target": f"{target.kind.name} {arch}".strip(),
        "forced": str(forced) if forced is not None else None,
        "text": text.strip().splitlines()[-1] if text.strip() else "",
    }


@contextmanager
def recording():
    """Yields a list that receives one ``TileCall`` per tile-op dispatch made inside the block (this thread)."""
    from .. import _tvm_internals

    calls: list[TileCall] = []
    with _install_lock:
        original_run = _tvm_internals.run_dispatch()
        wrapped = []

        def run_dispatch(op_call, sctx):
            for cases in _tvm_internals.dispatch_table().values():
                for case in cases:
                    if getattr(case, "_axe4j_traced", None) is not case.impl:  # not yet wrapped by this recording
                        case.impl = _traced_impl(case)
                        case._axe4j_traced = case.impl
                        wrapped.append(case)
            frame = {"variant": None, "declined": []}
            _frames().append(frame)
            error = None
            try:
                return original_run(op_call, sctx)
            except Exception as failure:
                error = failure
                raise
            finally:
                _frames().pop()
                info = _describe(op_call, sctx)
                calls.append(TileCall(index=len(calls), variant=frame["variant"], declined=frame["declined"],
                                      error=_failure_summary(error) if error is not None else None, **info))

        _tvm_internals.set_run_dispatch(run_dispatch)
    try:
        yield calls
    finally:
        with _install_lock:
            _tvm_internals.set_run_dispatch(original_run)
            for case in wrapped:
                if getattr(case, "_axe4j_traced", None) is case.impl:
                    case.impl = case.impl.__wrapped__
                    del case._axe4j_traced


def _failure_summary(error) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


AXE4J_PREFIX = "axe4j-"


@contextmanager
def upstream_only():
    """Hides the dispatch cases axe4j registered (variant names ``axe4j-*``) for the block: TVM's own choice."""
    from .. import _tvm_internals

    table = _tvm_internals.dispatch_table()
    with _install_lock:
        hidden = {}
        for key, cases in table.items():
            ours = [c for c in cases if c.variant.startswith(AXE4J_PREFIX)]
            if ours:
                hidden[key] = list(cases)
                cases[:] = [c for c in cases if not c.variant.startswith(AXE4J_PREFIX)]
    try:
        yield
    finally:
        with _install_lock:
            for key, cases in hidden.items():
                table[key][:] = cases
