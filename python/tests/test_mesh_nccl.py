"""The NCCL lowering of redistribution plans compiles with the venv's nvcc against PyPI's NCCL headers.

No GPU here: the object file is checked for the symbols each plan must call (one per collective kind)."""

import tvm  # noqa: F401  (TVM before the JVM)

import subprocess

import pytest

from axe4j import mesh
from axe4j.mesh import nccl
from axe4j.mesh.cases import named_requests


def _undefined_symbols(obj):
    out = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.mark.parametrize("name,symbols", [
    ("partial->shard", {"ncclReduceScatter", "ncclCommSplit"}),
    ("partial->replicate", {"ncclReduceScatter", "ncclAllGather"}),
    ("shard->replicate", {"ncclAllGather"}),
    ("shard(0)->shard(1)", {"ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd"}),
    ("one rank->replicate", {"ncclBroadcast"}),
])
def test_plan_lowers_to_nccl_and_compiles(name, symbols, tmp_path):
    req = dict(named_requests([4], [16, 8], element_bytes=4)[name])
    plan = mesh.plan(req)
    src = nccl.cuda_source(plan)
    assert "axe4j_redistribute" in src
    obj = nccl.compile_object(plan, tmp_path)
    missing = symbols - _undefined_symbols(obj)
    assert not missing, f"{name}: object calls none of {missing}"


def test_mixed_2d_plan_compiles(tmp_path):
    req = named_requests([2, 2], [16, 8], element_bytes=8)["2d partial,shard(0)->shard(1),shard(0)"]
    obj = nccl.compile_object(mesh.plan(req), tmp_path)
    assert "ncclReduceScatter" in _undefined_symbols(obj)


def test_unsupported_element_size_is_named():
    req = dict(named_requests([2], [8, 8], element_bytes=2)["shard->replicate"])
    with pytest.raises(ValueError, match="element size 2 bytes"):
        nccl.cuda_source(mesh.plan(req))
