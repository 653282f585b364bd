"""Which dispatch case lowered each tile call (``executable.lowered``, see ``axe4j.lowering``): the assertion the CUDA
tests share, so a call TVM's own case took instead of axe4j's rule fails the test that is about the rule."""


def assert_axe4j_lowered(executable, upstream_on_purpose=(), expected=()):
    """Every call of ``executable`` was lowered by an axe4j case, but those of TVM's cases named in
    ``upstream_on_purpose`` (e.g. ``tmem<->local``); every variant in ``expected`` lowered at least one call."""
    rows = list(executable.lowered)
    assert rows, "axe4j.compile recorded no tile call"
    others = [str(r) for r in rows if not r.by_axe4j and r.variant not in upstream_on_purpose]
    assert not others, "TVM's own case lowered: " + "; ".join(others)
    missing = set(expected) - {r.variant for r in rows}
    assert not missing, f"{sorted(missing)} lowered no call: " + "; ".join(map(str, rows))
