"""Fixtures for the Python side of the TVM bridge.

``tvm`` is imported first, before anything can start the JVM: TVM's libraries must be in the
process before the JVM (see the ``axe4j`` docstring, SIGSEGV handler order).
"""

import tvm  # noqa: F401  (must precede the JVM)

import types

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
    config.addinivalue_line("markers", "gpu: runs kernels on a CUDA GPU; skipped, with the reason, where tvm.cuda() does not exist")


def _gpu_present() -> bool:
    try:
        return bool(tvm.cuda(0).exist)
    except Exception:  # noqa: BLE001  (no CUDA driver at all)
        return False


def pytest_collection_modifyitems(config, items):
    """Every ``gpu``-marked test skips, saying why, on a machine without a CUDA GPU."""
    if any("gpu" in item.keywords for item in items) and not _gpu_present():
        skip = pytest.mark.skip(reason="no CUDA GPU on this machine: the kernels were compiled, not run")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
