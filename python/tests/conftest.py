"""Fixtures for the Python side of the TVM bridge.

``tvm`` is imported first, before anything can start the JVM: TVM's libraries must be in the
process before the JVM (see the ``axe4j`` docstring, SIGSEGV handler order).
"""

import tvm  # noqa: F401  (must precede the JVM)

import json
import types
from pathlib import Path

import pytest

import axe4j


@pytest.fixture(scope="session")
def bridge() -> axe4j.InstallInfo:
    """The Java side installed in this process; a missing jar fails every test that uses it."""
    return axe4j.install()


@pytest.fixture(scope="session")
def java(bridge) -> types.SimpleNamespace:
    """The testing globals Java registers, looked up through TVM's registry as any caller would."""
    def lookup(name):
        function = tvm.get_global_func(name, allow_missing=True)
        assert function is not None, f"TVM global {name} is not registered after axe4j.install()"
        return function

    return types.SimpleNamespace(
        version=lookup("axe4j.version"),
        echo=lookup("axe4j.testing.echo"),
        echo_all=lookup("axe4j.testing.echo_all"),
        raise_error=lookup("axe4j.testing.raise"),
        call_global=lookup("axe4j.testing.call_global"),
        type_keys=lookup("axe4j.testing.type_keys"),
    )


def pytest_configure(config):
    import _no_float16_sort

    _no_float16_sort.install()
    config.addinivalue_line("markers", "gpu: runs kernels on a CUDA GPU; skipped, with the reason, where tvm.cuda() does not exist")
    config.addinivalue_line("markers", "strict: the module's kernels compile in strict mode (AXE4J_STRICT=1): a tile "
                                       "call TVM's own cases lower, or a narrowed plan, fails the test")


@pytest.fixture(autouse=True, scope="module")
def _strict_for_marked_modules(request):
    """Modules marked ``strict`` (the tests of the product's own kernels) compile with ``AXE4J_STRICT=1``, set
    before any of their module fixtures compile a kernel."""
    if request.node.get_closest_marker("strict") is None:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AXE4J_STRICT", "1")
        yield


def _gpu_present() -> bool:
    try:
        return bool(tvm.cuda(0).exist)
    except Exception:  # noqa: BLE001  (no CUDA driver at all)
        return False


# `make test` runs this suite on two xdist workers (`-n 2 --dist loadgroup`, ci/test-python.sh). Modules that write
# the same files (native/build, out/gpu-bundle, out/jvm-gpu-bundle) form one group, run by one worker one after the
# other; every other module is its own group, so its module fixtures run once.
SHARED_GROUPS = {
    "test_gpu_bundle": "builds", "test_jvm_gpu_bundle": "builds", "test_native_cublas": "builds",
    "test_bench_gemm": "builds", "test_mesh_nccl": "builds", "test_mesh_nccl_bundle": "builds",
}
# Seconds per module, measured on a 2-core machine (tools/test_durations.py writes it from a JUnit report): each
# worker takes the slowest group left, so the two finish together instead of one waiting on a long module at the end.
DURATIONS = Path(__file__).with_name("durations.json")


def _group(item) -> str:
    module = Path(str(item.fspath)).stem
    return SHARED_GROUPS.get(module, module)


def _grouping(config) -> bool:
    """``--dist loadgroup``: the controller sees it as ``dist``, a worker as ``loadgroup`` (xdist sets dist=no)."""
    return config.getoption("dist", "no") == "loadgroup" or bool(getattr(config.option, "loadgroup", False))


@pytest.hookimpl(tryfirst=True)   # before xdist's own scheduler is made
def pytest_xdist_make_scheduler(config, log):
    if not _grouping(config):
        return None
    from xdist.scheduler import LoadGroupScheduling

    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    group_seconds: dict[str, float] = {}
    for module, s in seconds.items():
        group = SHARED_GROUPS.get(module, module)
        group_seconds[group] = group_seconds.get(group, 0.0) + s

    class SlowestGroupFirst(LoadGroupScheduling):
        def _assign_work_unit(self, node):
            if self.workqueue:
                # "builds" first even with no durations.json: its few tests build the GPU bundles (minutes)
                slowest = max(self.workqueue, key=lambda group: (group == "builds", group_seconds.get(group, 0.0)))
                self.workqueue.move_to_end(slowest, last=False)
            super()._assign_work_unit(node)

    return SlowestGroupFirst(config, log)


@pytest.hookimpl(tryfirst=True)   # before xdist's worker hook reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    """Every ``gpu``-marked test skips, saying why, on a machine without a CUDA GPU; under ``--dist loadgroup``
    every test gets its module's group (``SHARED_GROUPS`` merges modules that share files)."""
    if _grouping(config):
        for item in items:
            item.add_marker(pytest.mark.xdist_group(_group(item)))
    if any("gpu" in item.keywords for item in items) and not _gpu_present():
        skip = pytest.mark.skip(reason="no CUDA GPU on this machine: the kernels were compiled, not run")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
