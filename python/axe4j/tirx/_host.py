"""axe4j's tile ops and host targets (``llvm``) on the new TIRx lane.

tvm_tirx lowers a tile instruction only at a thread scope of the target's own backend: its ``TileDispatch`` checks
``scope.backend == target.kind`` before any lowering callback runs, and it registers thread scopes (in C++, with no
way to add one from Python) for ``cuda`` and ``trn`` alone. So no tile instruction, axe4j's or tvm_tirx's own, can be
lowered in a function compiled for ``llvm``, and axe4j's CPU rules have no plug point on this lane. Without this
module such a kernel stops inside TVM with "Thread scope cuda.thread does not match target llvm"; with it, axe4j
refuses the kernel first, naming each call, its operands' layouts, the reason and the way forward
(docs/tvm-versions.md, "The llvm target on the new lane").

The check runs as one of tvm_tirx's default pipeline selectors (``register_default_tir_pipeline_selector``): it
looks at every module ``tvm_tirx.tirx.compile`` is given and never selects a pipeline itself.
"""

from __future__ import annotations

from .._errors import DispatchRefused
from ._describe import operands_text
from ._explain import AXE4J_OPS, tile_calls


def scope_backends() -> list[str]:
    """The backends tvm_tirx has thread scopes for (``cuda`` and ``trn`` on 0.1.0a4), sorted."""
    from tvm_tirx.tirx.thread_scope import ThreadScope

    return sorted({str(scope.backend) for scope in ThreadScope.all_entries()})


def _kind(target) -> str | None:
    if target is None:
        return None
    if isinstance(target, str):
        return target.split()[0]
    kind = getattr(target, "kind", None)
    return str(kind.name) if kind is not None else None


def _spelled(call) -> str:
    op = str(call.op.name)[len(AXE4J_OPS):]
    scope = getattr(call.attrs, "scope", None)
    local = str(scope.local_name) if scope is not None else "thread"
    return f"axe4j.tirx.{op}({', '.join(str(a) for a in call.args)}) ({local} scope)"


def refuse_host_calls(mod, target, target_to_bind=None):
    """A default-pipeline selector that selects nothing (returns None) and raises ``axe4j.DispatchRefused`` when a
    function compiled for a target kind without thread scopes of its own (``llvm``) holds axe4j tile calls."""
    del target_to_bind   # accepted so that tvm_tirx does not bind targets early on this selector's account
    backends = scope_backends()
    kinds = {}
    for gvar, func in mod.functions.items():
        attrs = getattr(func, "attrs", None)
        bound = attrs.get("target") if attrs is not None and "target" in attrs else None
        kind = _kind(bound) or _kind(target)
        if kind is None or kind in backends:
            continue
        calls = [c for c in tile_calls(func) if str(c.op.name).startswith(AXE4J_OPS)]
        if calls:
            kinds[str(gvar.name_hint)] = (kind, calls)
    if not kinds:
        return None
    lines = []
    for name, (kind, calls) in kinds.items():
        for call in calls:
            lines.append(f"no dispatch case lowers {_spelled(call)} in {name} for target {kind}: "
                         f"{operands_text(call.args)}")
    kind = next(iter(kinds.values()))[0]
    lines += [
        f"tvm_tirx lowers a tile instruction only at a thread scope of the target's own backend, and it has thread "
        f"scopes for {' and '.join(backends)} alone, none for {kind}: no tile instruction, axe4j's or tvm_tirx's, "
        f"can be lowered in a function compiled for {kind} on this lane.",
        "Run these tile ops inside a CUDA kernel (T.device_entry, a cuda target), or on the CPU through the 0.27 lane "
        "(Tx.copy, Tx.sum, ... with axe4j.compile(kernel, \"llvm\")); docs/tvm-versions.md, \"The llvm target on the "
        "new lane\"."]
    raise DispatchRefused("\n".join(lines))


def register() -> None:
    """Adds ``refuse_host_calls`` to tvm_tirx's default pipeline selectors (once a process)."""
    from tvm_tirx.tirx import compilation_pipeline

    selectors = getattr(compilation_pipeline, "_DEFAULT_PIPELINE_SELECTORS", None)
    if selectors is not None and refuse_host_calls in selectors:
        return
    compilation_pipeline.register_default_tir_pipeline_selector(refuse_host_calls)
