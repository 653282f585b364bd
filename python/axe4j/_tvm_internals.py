"""Every private part of TVM that axe4j relies on, in one place (TVM 0.27, ``apache-tvm==0.27.0.post1``).

A TVM upgrade that changes one of them fails here, in ``check()``, with a message naming the assumption, rather
than somewhere in a compile. ``python/tests/test_tvm_internals.py`` checks each one, on its own.

1. **The tile-op dispatch table**: ``tvm.tirx.operator.tile_primitive.dispatcher._DISPATCH_TABLE``, a dict from
   (op, target kind) to a list of cases, each with ``variant``, ``priority`` and ``impl(op_call, sctx)``. axe4j
   reads it (explain, the other cases of an op), wraps ``impl`` (recording which case lowered a call) and hides its
   own cases for a block (the upstream comparison).
2. **``dispatcher.run_dispatch(op_call, sctx)``**, looked up as a module attribute at each call by the C++ lowering
   (through the global ``tirx.f_op_dispatcher``), so replacing the attribute for a block traces every dispatch.
3. **``tvm.tirx.build.split_host_device_mods(mod) -> (host, devices)`` and ``tir_to_runtime(host, devices,
   target_host)``**, module attributes ``tvm.compile`` calls: wrapping them records the lowered host and device
   modules for the CPU interpreter of CUDA kernels.
4. **``tvm.backend.trn.pipeline.trn_pipeline()``** returns (pass, finalize host, finalize device) whose pass, run
   on a module, builds its list of passes and runs ``tvm.ir.transform.Sequential(passes)(mod)``: ``trn_passes()``
   reads that list by running the pass once on an empty module with ``Sequential`` replaced, so axe4j's Trainium
   pipeline (``axe4j.trn.pipeline``) is TVM's list with a pass of its own inserted, not a copy of it.
(``register_dispatch`` is TVM's public way to add cases; axe4j's cases and its probe case go through it.
``register_tir_pipeline`` is its public way to add a pipeline.)
"""

from __future__ import annotations

import importlib
import inspect

DISPATCHER = "tvm.tirx.operator.tile_primitive.dispatcher"
BUILD = "tvm.tirx.build"
TRN_PIPELINE = "tvm.backend.trn.pipeline"
TRN_PASSES = ("TrnPrivateBufferAlloc", "tirx.TilePrimitiveDispatch")   # the passes axe4j's pipeline places around


class TvmChanged(RuntimeError):
    """A private part of TVM axe4j relies on is not as assumed (names the assumption and what was found)."""


def dispatcher():
    return importlib.import_module(DISPATCHER)


def dispatch_table() -> dict:
    """{(op, target kind): [case]} (assumption 1)."""
    table = getattr(dispatcher(), "_DISPATCH_TABLE", None)
    if not isinstance(table, dict):
        raise TvmChanged(f"{DISPATCHER}._DISPATCH_TABLE is {type(table).__name__}, not the dict of dispatch cases "
                         "axe4j reads and wraps (assumption 1 of axe4j._tvm_internals)")
    return table


def cases(op, kind) -> list:
    """The cases registered for (op, target kind); an op is TVM's Op or its name (``tirx.tile.copy``)."""
    for (key_op, key_kind), found in dispatch_table().items():
        if key_kind == kind and (key_op is op or str(getattr(key_op, "name", key_op)) == str(op)):
            return found
    return []


def run_dispatch():
    """The current ``dispatcher.run_dispatch`` (assumption 2)."""
    return dispatcher().run_dispatch


def set_run_dispatch(function) -> None:
    """Replaces ``dispatcher.run_dispatch``; the lowering calls the new one from its next dispatch on."""
    dispatcher().run_dispatch = function


def register_case(op: str, target: str, variant: str, priority: int, impl) -> None:
    """Adds a case to the dispatch table with TVM's ``register_dispatch``."""
    dispatcher().register_dispatch(op, target, variant=variant, priority=priority)(impl)


def build_module():
    """``tvm.tirx.build``, whose ``split_host_device_mods`` and ``tir_to_runtime`` axe4j wraps (assumption 3)."""
    return importlib.import_module(BUILD)


def trn_passes() -> tuple[list, object, object]:
    """(TVM's Trainium passes in order, finalize host passes, finalize device passes) (assumption 4)."""
    import tvm

    pipeline, finalize_host, finalize_device = importlib.import_module(TRN_PIPELINE).trn_pipeline()
    captured = []
    real = tvm.ir.transform.Sequential

    class Capture:
        def __init__(self, passes, *args, **kwargs):
            captured.extend(passes)

        def __call__(self, mod):
            return mod

    tvm.ir.transform.Sequential = Capture
    try:
        pipeline(tvm.IRModule({}))
    finally:
        tvm.ir.transform.Sequential = real
    names = [p.info.name for p in captured]
    missing = [n for n in TRN_PASSES if n not in names]
    if missing:
        raise TvmChanged(f"{TRN_PIPELINE}.trn_pipeline() ran passes {names}, without {missing} (assumption 4 of "
                         "axe4j._tvm_internals)")
    return captured, finalize_host, finalize_device


def check() -> list[str]:
    """The assumptions that do not hold in the installed TVM, one line each (empty when all hold)."""
    problems = []
    try:
        table = dispatch_table()
        for key, found in table.items():
            if not (isinstance(key, tuple) and len(key) == 2 and isinstance(found, list)):
                problems.append(f"1: a key {key!r} of _DISPATCH_TABLE is not (op, target kind) -> list of cases")
                break
            missing = [a for a in ("variant", "priority", "impl") for c in found[:1] if not hasattr(c, a)]
            if missing:
                problems.append(f"1: the cases of {key!r} have no {', '.join(missing)}")
                break
    except (ImportError, TvmChanged) as error:
        problems.append(f"1: {error}")
    try:
        parameters = list(inspect.signature(run_dispatch()).parameters)
        if len(parameters) != 2:
            problems.append(f"2: {DISPATCHER}.run_dispatch takes {parameters}, not (op_call, sctx)")
    except (ImportError, AttributeError, TypeError, ValueError) as error:
        problems.append(f"2: {DISPATCHER}.run_dispatch: {error}")
    try:
        build = build_module()
        for name, arity in (("split_host_device_mods", 1), ("tir_to_runtime", 3)):
            function = getattr(build, name, None)
            if function is None or len(inspect.signature(function).parameters) != arity:
                problems.append(f"3: {BUILD}.{name} is missing or does not take {arity} argument(s)")
    except ImportError as error:
        problems.append(f"3: {error}")
    try:
        trn_passes()
    except (ImportError, AttributeError, TypeError, ValueError, TvmChanged) as error:
        problems.append(f"4: {error}")
    return problems


def require() -> None:
    """Raises ``TvmChanged`` listing every assumption the installed TVM breaks."""
    problems = check()
    if problems:
        import tvm

        raise TvmChanged(f"TVM {getattr(tvm, '__version__', '?')} differs from what axe4j was built against "
                         "(axe4j._tvm_internals): " + "; ".join(problems))
