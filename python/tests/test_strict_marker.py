"""The ``strict`` mark (conftest.py) that the tests of the product's own kernels carry: inside a marked module every
compile runs in strict mode, so a kernel one of whose tile calls TVM's own cases lower fails there; outside, the
same kernel compiles, and the variable is back to what it was."""

import tvm  # noqa: F401  (before the JVM)

import os

import pytest

import axe4j
from test_first_hour import SM90, _prefetched_copy

pytestmark = pytest.mark.strict


def test_a_marked_module_compiles_in_strict_mode():
    axe4j.install()
    assert os.environ.get("AXE4J_STRICT") == "1"
    with pytest.raises(axe4j.StrictError, match="lowered by TVM's own dispatch cases"):
        axe4j.compile(_prefetched_copy(), SM90)


def test_the_mark_is_what_sets_it(pytestconfig):
    marked = [m for m in pytestconfig.getini("markers") if m.startswith("strict:")]
    assert marked, "conftest.py registers the strict mark"
    assert axe4j.compile(_prefetched_copy(), SM90, strict=False).lowered   # strict=False still wins
