"""pytest plugin: every ``axe4j.compile`` builds the kernel twice, with and without CanonicalizeLayouts, and every
call of the returned library runs both on the same inputs and compares every output tensor. Each compiled function's
canonical layouts are also checked: same map as the originals (TIRx's own ``apply`` on every element, or on 4,096
evenly spaced ones above that size, plus the replica offsets as a set) and canonicalizing twice changes nothing.

Loaded by test_passes_canonicalize.py as ``-p _canonical_twin``; counts go to the file ``$AXE4J_TWIN_REPORT``."""

import json
import os

import tvm  # noqa: F401  (before the JVM)

import numpy as np
import tvm_ffi

import axe4j
import axe4j.transform as at

ENUMERATION_LIMIT = 4096
_counts = {"compiled": 0, "runs": 0, "layouts_changed": 0, "elements_checked": 0}


def _layouts(func):
    """Layouts of every buffer of ``func`` in a fixed order: parameters, then allocations and declarations."""
    from tvm import tirx

    out = [p.ty.layout for p in func.params if hasattr(p.ty, "layout")]

    def walk(node):
        if isinstance(node, (tirx.AllocBuffer, tirx.DeclBuffer)):
            out.append(node.buffer.ty.layout)
        for field in ("seq", "body", "then_case", "else_case"):
            child = getattr(node, field, None)
            if child is None:
                continue
            for c in (child if isinstance(child, (list, tuple)) or type(child).__name__ == "Array" else [child]):
                walk(c)

    walk(func.body)
    return out


def _replica_offsets(layout):
    offsets = [{}]  # as in _point, zero coordinates are left out
    for it in layout.replica:
        offsets = [{**o, str(it.axis.name): o.get(str(it.axis.name), 0) + k * int(it.stride)}
                   for o in offsets for k in range(int(it.extent))]
    return sorted(tuple(sorted((k, v) for k, v in o.items() if v != 0)) for o in offsets)


def _point(coordinates):
    """A point as {axis: coordinate}; an axis at coordinate 0 is the same point as the axis left out."""
    return {str(k): int(v) for k, v in coordinates.items() if int(v) != 0}


def _same_map(a, b):
    if a is None or b is None:
        assert a is None and b is None
        return
    if not hasattr(a, "replica"):  # swizzled (ComposeLayout): canonicalization keeps the swizzle and rewrites inside
        a, b = a.tile_layout, b.tile_layout
    size = int(a.size())
    assert int(b.size()) == size
    xs = range(size) if size <= ENUMERATION_LIMIT else np.linspace(0, size - 1, ENUMERATION_LIMIT).astype(int)
    for x in xs:
        pa = _point(a.apply(int(x)))
        pb = _point(b.apply(int(x)))
        assert pa == pb, (str(a), str(b), int(x), pa, pb)
    assert _replica_offsets(a) == _replica_offsets(b), (str(a), str(b))
    _counts["elements_checked"] += len(xs)


def _check_canonical(mod):
    canonicalize = tvm.get_global_func("axe4j.passes.canonicalize")
    funcs = [mod] if isinstance(mod, tvm.tirx.PrimFunc) else [f for _, f in mod.functions.items()]
    for func in funcs:
        once = canonicalize(func)
        assert tvm_ffi.structural_equal(canonicalize(once), once), "CanonicalizeLayouts is not idempotent"
        for a, b in zip(_layouts(func), _layouts(once), strict=True):
            if a is not None and not a.same_as(b):
                _counts["layouts_changed"] += 1
            _same_map(a, b)


class _Twin:
    def __init__(self, canonical, plain):
        self._canonical, self._plain = canonical, plain

    def __call__(self, *args):
        copies = [tvm.runtime.tensor(a.numpy()) if isinstance(a, tvm.runtime.Tensor) else a for a in args]
        self._plain(*copies)
        result = self._canonical(*args)
        for a, c in zip(args, copies):
            if isinstance(a, tvm.runtime.Tensor):
                np.testing.assert_allclose(a.numpy().astype("float64"), c.numpy().astype("float64"), rtol=1e-6,
                                           atol=1e-6, err_msg="canonical layouts changed a result")
        _counts["runs"] += 1
        return result

    def __getitem__(self, name):
        return self._canonical[name]

    def __getattr__(self, name):
        return getattr(self._canonical, name)


def pytest_configure(config):
    original = axe4j.compile
    full = at.layout_passes

    def without_canonicalize(target=None, **kwargs):
        return [p for p in full(target, **kwargs) if "Canonicalize" not in str(p)]

    def twin_compile(mod, target="llvm", **kwargs):
        canonical = original(mod, target, **kwargs)
        at.layout_passes = without_canonicalize
        try:
            plain = original(mod, target, **kwargs)
        finally:
            at.layout_passes = full
        _check_canonical(mod)
        _counts["compiled"] += 1
        return _Twin(canonical, plain)

    axe4j.compile = twin_compile


def pytest_unconfigure(config):
    path = os.environ.get("AXE4J_TWIN_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(_counts, f)
