"""The NCCL bundle's runner (tools/nccl-bundle/run.py) without a GPU: its checks, refusals and summary, with host
memory standing in for torch's CUDA tensors and the numpy model of the library (``_nccl_model``) executing the
tables, so that what the GPU machine runs has run here first; and a runner that does check: a wrong model fails.
"""

import tvm  # noqa: F401  (TVM before the JVM)

import ctypes
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from axe4j import mesh
from axe4j.mesh import nccl_runtime as nr
from axe4j.mesh.cases import named_requests

from _nccl_model import simulate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(monkeypatch):
    """run.py as the bundle imports it: mpi_exec and nccl_runtime as top-level modules, torch the stand-in."""
    from axe4j.mesh import mpi_exec

    monkeypatch.setitem(sys.modules, "mpi_exec", mpi_exec)
    monkeypatch.setitem(sys.modules, "nccl_runtime", nr)
    monkeypatch.setitem(sys.modules, "torch", _fake_torch())
    spec = importlib.util.spec_from_file_location("nccl_bundle_run", ROOT / "tools" / "nccl-bundle" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Dtype:
    __module__ = "torch"

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class _Tensor:
    """A host array posing as a contiguous CUDA tensor (the binding reads is_cuda, numel, dtype, data_ptr)."""

    __module__ = "torch.host_stand_in"

    def __init__(self, raw: np.ndarray, dtype: _Dtype, cuda: bool = True):
        self.raw, self.dtype, self.is_cuda, self.device = raw, dtype, cuda, "cuda:0" if cuda else "cpu"

    def _width(self):
        return 2 if self.dtype.name == "bfloat16" else np.dtype(self.dtype.name).itemsize

    def view(self, dtype):
        return _Tensor(self.raw, dtype, self.is_cuda)

    def to(self, device):
        return _Tensor(self.raw.copy(), self.dtype, True)

    def numel(self):
        return self.raw.nbytes // self._width()

    def is_contiguous(self):
        return True

    def data_ptr(self):
        return self.raw.ctypes.data

    def cpu(self):
        return self

    def numpy(self):
        return self.raw.view({1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[self._width()])

    def copy_(self, other):
        self.raw[:] = other.raw


def _fake_torch():
    names = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "uint32", "int64",
             "uint64"]
    torch = SimpleNamespace(**{n: _Dtype(n) for n in names}, __version__="host stand-in")
    torch.device = lambda kind, index: f"{kind}:{index}"
    torch.from_numpy = lambda a: _Tensor(a.view(np.uint8).copy(), _Dtype(a.dtype.name), cuda=False)

    def zeros(n, dtype=None, device=None):
        width = 2 if (dtype or torch.float32).name == "bfloat16" else np.dtype((dtype or torch.float32).name).itemsize
        return _Tensor(np.zeros(n * width, np.uint8), dtype or torch.float32, cuda=device is not None)

    torch.zeros = zeros
    torch.cuda = SimpleNamespace(synchronize=lambda device=None: None,
                                 current_stream=lambda device=None: SimpleNamespace(cuda_stream=0))
    return torch


class _ModelLibrary:
    """libaxe4j_nccl.so's entry points for one rank, executed by the numpy model on host memory."""

    def __init__(self, corrupt=False):
        self.tables, self.corrupt = {}, corrupt
        self.lib = self

    def check(self, code, what):
        if code:
            raise nr.NcclError(what)

    def axe4j_nccl_plan_create(self, comm, ptr, n, out):
        table = np.ctypeslib.as_array(ptr, shape=(n,)).copy()
        handle = len(self.tables) + 1
        self.tables[handle] = table
        out._obj.value = handle
        return 0

    def axe4j_nccl_redistribute(self, handle, src, dst, code, stream):
        table = self.tables[handle.value]
        width = next(w for c, w in nr.DTYPES.values() if c == code)
        word = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[width]
        src_size, dst_size = int(table[5]), int(table[6])
        s = np.ctypeslib.as_array((ctypes.c_byte * max(src_size * width, 1)).from_address(src))
        d = np.ctypeslib.as_array((ctypes.c_byte * max(dst_size * width, 1)).from_address(dst))
        out = simulate([table], [s[:src_size * width].view(word)])[0]
        if self.corrupt and out.size:
            out = out[::-1].copy()
        d[:dst_size * width] = out.view(np.int8)
        return 0

    def axe4j_nccl_plan_destroy(self, handle):
        return 0


def _one_rank_comm(lib):
    return SimpleNamespace(rank=0, nranks=1, device=0, handle=1,
                           plan=lambda rp, eb: nr.NcclPlan(SimpleNamespace(rank=0, nranks=1, lib=lib, handle=1),
                                                           rp, eb))


@pytest.fixture(scope="module")
def one_rank_plans():
    return {(name, width): mesh.plan(req) for width in (1, 2, 4, 8)
            for name, req in named_requests([1], [8, 4], width).items()}


def test_runner_checks_every_dtype_of_every_one_rank_plan(one_rank_plans, run):
    dev = run.Device(sys.modules["torch"], 0)
    comm = _one_rank_comm(_ModelLibrary())
    checked = set()
    for (name, width), plan in one_rank_plans.items():
        for dtype, (code, w) in nr.DTYPES.items():
            if w == width:
                result = run.check_case(comm, dev, plan, seed=code, dtype=dtype)
                assert result["ok"] and result["mismatches"] == 0, (name, dtype, result)
                assert result["received_bytes"] == result["plan_bytes"]
                checked.add(dtype)
    assert checked == set(nr.DTYPES)
    raw = run.check_case(comm, dev, one_rank_plans[("partial->shard", 4)], 1, "int32", raw_pointers=True)
    assert raw["ok"]


def test_runner_reports_a_wrong_result(one_rank_plans, run):
    comm = _one_rank_comm(_ModelLibrary(corrupt=True))
    result = run.check_case(comm, run.Device(sys.modules["torch"], 0), one_rank_plans[("shard->replicate", 4)], 3, "int32")
    assert not result["ok"] and result["mismatches"] > 0


def test_runner_records_the_refusals_and_writes_its_summary(one_rank_plans, run):
    torch = sys.modules["torch"]
    refused = run.refusals(_one_rank_comm(_ModelLibrary()), run.Device(torch, 0), one_rank_plans[("partial->shard", 4)])
    assert [r["case"] for r in refused] == ["int16 tensors", "float16 on a 4-byte plan", "host tensors"]
    assert all(r["refused"] for r in refused), refused
    assert "no NCCL type" in refused[0]["message"] and "2-byte" in refused[1]["message"]
    summary = {"device": "host", "world": 1, "setup": "1-rank world without MPI (Communicator.single)", "nccl_version": 0, "torch": "-", "passed": 1, "failed": 0,
               "cases": [{"plan": "p", "dtype": "int32", "ok": True, "mismatches": 0}], "refusals": refused,
               "timing": [{"plan": "t", "dtype": "float32", "plan_ms": 1.0, "copy_ms": 0.5, "plan_GBps": 4.0}]}
    text = run.markdown(summary)
    assert "| int32 | 1 | 1 |" in text and "| t | float32 | 1.0000 | 0.5000 | 4.0 |" in text


def test_runner_without_torch_says_so(tmp_path):
    import subprocess

    out = subprocess.run([sys.executable, str(ROOT / "tools" / "nccl-bundle" / "run.py"), "--out", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT / "python" / "axe4j" / "mesh",
                         env={"PYTHONPATH": str(ROOT / "python" / "axe4j" / "mesh"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "nothing run" in out.stdout
    assert (tmp_path / "summary.json").read_text().startswith('{"gpu": false')


class _Event:
    def __init__(self, enable_timing=False):
        self.at = 0.0

    def record(self):
        import time

        self.at = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.at - self.at) * 1e3


def test_runner_main_checks_times_and_summarises_a_bundle(run, monkeypatch, tmp_path):
    """main() over a small bundle (plans of 1 and 2 ranks, one timed): only the 1-rank plans run, every case
    passes, the refusals and the timing are recorded, summary.json and summary.md are written, exit code 0."""
    bundle = tmp_path / "bundle"
    (bundle / "plans").mkdir(parents=True)
    index = []
    requests = [(f"1/{w}B/{name}", req) for w in (2, 4) for name, req in named_requests([1], [8, 4], w).items()]
    requests.append(("2/4B/partial->shard", named_requests([2], [8, 4], 4)["partial->shard"]))
    requests.append(("timed/1/4B/partial->shard 64x64", {"mesh": {"shape": [1]}, "global_shape": [64, 64],
                                                         "element_bytes": 4, "src": {"placements": "[Partial()]"},
                                                         "dst": {"placements": "[Shard(0)]"}}))
    import json

    for i, (name, req) in enumerate(requests):
        plan = mesh.plan(req)
        (bundle / f"plans/{i}.json").write_text(json.dumps(plan))
        index.append({"name": name, "file": f"plans/{i}.json", "world": len(plan["ranks"]),
                      "element_bytes": plan["element_bytes"], "timed": name.startswith("timed/")})
    (bundle / "plans" / "index.json").write_text(json.dumps(index))
    torch = sys.modules["torch"]
    torch.cuda.is_available = lambda: True
    torch.cuda.get_device_name = lambda device=None: "host stand-in"
    torch.cuda.Event = _Event
    lib = _ModelLibrary()
    lib.nccl_version, lib.nccl_path = (lambda: 0), "model"
    comm = _one_rank_comm(lib)
    comm.close = lambda: None
    monkeypatch.setattr(run, "HERE", bundle)
    monkeypatch.setattr(nr, "library", lambda: lib)
    monkeypatch.setattr(nr.Communicator, "single", staticmethod(lambda device=0, lib=None: comm))
    monkeypatch.setattr(sys, "argv", ["run.py", "--out", str(tmp_path / "results")])
    assert run.main() == 0
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    ran = {(c["plan"], c["dtype"]) for c in summary["cases"]}
    assert ("1/2B/partial->shard", "bfloat16") in ran and ("1/4B/partial->shard", "uint32") in ran
    assert ("1/4B/partial->shard (raw device pointers)", "int32") in ran
    assert not any(p.startswith("2/") for p, _ in ran), "plans of another world size are left out"
    assert summary["failed"] == 0 and summary["passed"] == len(summary["cases"]) == 6 * 5 + 1
    assert summary["refusals_ok"]
    assert [t["dtype"] for t in summary["timing"]] == ["float32"]
    assert "**31 passed, 0 failed**" in (tmp_path / "results" / "summary.md").read_text()
