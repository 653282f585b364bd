"""axe4j's layout passes as TVM passes (Java PrimFunc passes registered through ``tirx.transform.CreatePrimFuncPass``).

Each constructor starts the JVM (``axe4j.install()``) and returns a ``tvm.transform.Pass`` that composes with
``tvm.transform.Sequential``::

    seq = tvm.transform.Sequential([axe4j.transform.VerifyLayouts("llvm"),
                                    axe4j.transform.InferLayouts("llvm"),
                                    axe4j.transform.CanonicalizeLayouts(),
                                    axe4j.transform.AllocateBySpan()])
    mod = seq(mod)

``AllocateBySpan()`` then sizes on-chip allocations by their layouts' spans.
``pipeline(target)`` is that list followed by TVM's TIRx lowering (which uses axe4j's dispatch rules once installed);
``axe4j.compile`` runs the layout part before ``tvm.compile``. See docs/passes.md.
"""

from __future__ import annotations


def _global(name):
    import tvm

    from . import install

    install()
    return tvm.get_global_func("axe4j.passes." + name)


def _target_arg(target):
    import tvm

    if target is None or isinstance(target, tvm.target.Target):
        return target
    return tvm.target.Target(target)


def VerifyLayouts(target=None):  # noqa: N802  (TVM pass naming)
    """Raises ``ValueError`` listing every layout violation of a function (buffers, tile calls, target limits)."""
    return _global("VerifyLayouts")(_target_arg(target))


def CanonicalizeLayouts():  # noqa: N802
    """Rewrites every buffer layout to axe4j's canonical form (same map; idempotent)."""
    return _global("CanonicalizeLayouts")()


def AllocateBySpan():  # noqa: N802
    """Sizes every on-chip allocation (shared, local, Trainium) whose layout reaches past its shape's elements by the
    layout's span: the allocation becomes a flat storage of ``highest element + 1`` elements, declared as the buffer
    with its layout (the bank-conflict padding ``S[(16,48):(56,1)]`` gets 888 elements, not 768)."""
    return _global("AllocateBySpan")()


def allocate_by_span(func):
    """``func`` (a PrimFunc) with its on-chip allocations sized by their layouts' spans (as ``AllocateBySpan``)."""
    return _global("allocate_by_span")(func)


def InferLayouts(target=None):  # noqa: N802
    """Gives layouts to buffers allocated without one; explanations go to the ``axe4j.layout_choices`` attribute."""
    return _global("InferLayouts")(_target_arg(target))


def verify(func, target=None) -> list[str]:
    """The diagnostics of ``func`` (a PrimFunc), one text per violation; empty for a correct function."""
    return [str(d) for d in _global("verify")(func, _target_arg(target))]


def not_checked(func, target=None) -> list[str]:
    """What ``verify`` could not decide in ``func``, one line each (symbolic shapes: a layout against a symbolic
    shape, a region bound against a symbolic extent the variables do not cancel in); empty when all was checked."""
    return [str(n) for n in _global("not_checked")(func, _target_arg(target))]


def infer(func, target=None):
    """``(new_func, notes)``: ``func`` with inferred layouts, and the explanation of each choice and conflict."""
    new_func, notes = _global("infer")(func, _target_arg(target))
    return new_func, [str(n) for n in notes]


def layout_passes(target=None, verify=True):
    """verify -> infer -> canonicalize -> allocate by span: the axe4j part of the pipeline (``verify=False`` leaves
    out the first)."""
    return ([VerifyLayouts(target)] if verify else []) + [InferLayouts(target), CanonicalizeLayouts(),
                                                          AllocateBySpan()]


def pipeline(target="llvm"):
    """The recommended passes for ``target``: verify -> infer -> canonicalize, then ``BindTarget`` and TVM's TIRx
    lowering (``tvm.tirx.get_tir_pipeline("tirx")``), whose tile-op dispatch uses axe4j's rules once installed.
    Functions need a ``global_symbol`` (``MakePackedAPI``); the result is ready for TVM's host/device finalization."""
    import tvm

    from . import dispatch

    _global("verify")
    dispatch.register()
    target = _target_arg(target)
    if target.host is None:
        target = target.with_host("llvm") if target.kind.name != "llvm" else target.with_host(target)
    lowering, _, _ = tvm.tirx.get_tir_pipeline("tirx")
    return tvm.transform.Sequential(layout_passes(target) + [tvm.tirx.transform.BindTarget(target), lowering],
                                    name="axe4j.pipeline")


def run_layout_passes(mod, target=None, late=None):
    """verify -> infer -> canonicalize -> allocate by span on ``mod`` (a PrimFunc or IRModule); returns an IRModule.

    Violations raise one ``ValueError`` listing all of them (as the VerifyLayouts pass does). ``late``, if given, is
    the compilation that would follow (a callable); it is tried on the unchanged module only to append the error it
    gives, so a report shows both the layout violations and the failure they lead to further down."""
    import tvm
    from tvm import tirx

    if isinstance(mod, tirx.PrimFunc):
        attrs = mod.attrs
        name = str(attrs["global_symbol"]) if attrs is not None and "global_symbol" in attrs else "main"
        mod = tvm.IRModule({name: mod})
    reports = []   # every function of the module is checked and reported, not only the first with a violation
    for gvar, func in mod.functions.items():
        if not isinstance(func, tirx.PrimFunc):
            continue
        found = verify(func, target)
        if found:
            s = "s" if len(found) > 1 else ""
            reports.append(f"VerifyLayouts: {len(found)} layout violation{s} in {gvar.name_hint}:\n  "
                           + "\n  ".join(found))
    if reports:
        report = "\n".join(reports)
        if late is not None:
            try:
                late()
            except Exception as error:  # noqa: BLE001  (any compile failure is context for the report)
                from ._refusal import LATE_CONTEXT

                report += f"{LATE_CONTEXT}{error}"
        raise ValueError(report)
    return tvm.transform.Sequential(layout_passes(target, verify=False), name="axe4j.layout_passes")(mod)
