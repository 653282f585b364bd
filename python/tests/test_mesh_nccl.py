"""axe4j's NCCL executor (native/nccl, axe4j.mesh.nccl_runtime) without a GPU, plus the 1-rank run on one.

- the library builds with the venv's nvcc against PyPI's nccl.h and exports its entry points;
- the binding's dtype table and its refusals;
- the tables built from plans: a numpy model of the library's semantics (gather with -1 packing zero, each
  collective from its definition, scatter copies) runs every rank's table and must deliver exactly the
  destination the plan's layouts say, with the bytes the plan counts; the library's own parser accepts every
  such table and refuses corrupted ones, naming what is wrong;
- without a GPU, setting up a communicator fails with the CUDA runtime's reason (no crash);
- on a GPU (``gpu`` marker), the 1-rank world end to end against numpy.
"""

import tvm  # noqa: F401  (TVM before the JVM)

import ctypes
import random
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from axe4j import mesh
from axe4j.mesh import nccl_runtime as nr
from axe4j.mesh.cases import named_requests, random_request
from axe4j.mesh.mpi_exec import RankPlan, expected_destination, local_source

from _nccl_model import simulate as _simulate

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = {"axe4j_nccl_last_error", "axe4j_nccl_version", "axe4j_nccl_device_count", "axe4j_nccl_unique_id",
                "axe4j_nccl_comm_init", "axe4j_nccl_comm_device", "axe4j_nccl_comm_destroy", "axe4j_nccl_table_check",
                "axe4j_nccl_plan_create", "axe4j_nccl_plan_destroy", "axe4j_nccl_redistribute"}


@pytest.fixture(scope="module")
def built() -> Path:
    done = subprocess.run(["bash", "native/nccl/build.sh"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    return ROOT / "native" / "build" / "libaxe4j_nccl.so"


@pytest.fixture(scope="module")
def lib(built) -> nr.Library:
    return nr.Library(native_path=str(built))


def _symbols(path: Path, *flags: str) -> set:
    out = subprocess.run(["nm", "-D", *flags, str(path)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_library_exports_entry_points_and_links_nccl_dynamically(built):
    exported = {s for s in _symbols(built, "--defined-only") if s.startswith("axe4j_")}
    assert exported == ENTRY_POINTS
    calls = _symbols(built, "--undefined-only")
    assert {"ncclReduceScatter", "ncclAllReduce", "ncclAllGather", "ncclBroadcast", "ncclSend", "ncclRecv",
            "ncclCommSplit", "ncclCommInitRank"} <= calls
    assert not any(s.startswith("cuda") for s in calls), "the CUDA runtime must be linked statically"
    needed = subprocess.run(["readelf", "-d", str(built)], capture_output=True, text=True, check=True).stdout
    assert "[libnccl.so.2]" in needed and "libcudart" not in needed


def test_loads_and_reports_the_nccl_it_loaded(lib):
    assert lib.nccl_version() >= 21800  # ncclCommSplit needs 2.18
    assert len(lib.unique_id()) == nr.UNIQUE_ID_BYTES


# ---- dtypes ---------------------------------------------------------------------------------------------------

def test_dtype_table_maps_every_name_to_its_nccl_code_and_width():
    assert nr.DTYPES == {"float16": (0, 2), "bfloat16": (1, 2), "float32": (2, 4), "float64": (3, 8),
                         "int8": (4, 1), "uint8": (5, 1), "int32": (6, 4), "uint32": (7, 4), "int64": (8, 8),
                         "uint64": (9, 8)}
    header = (ROOT / "native/nccl/axe4j_nccl.h").read_text()
    for name, (code, _) in nr.DTYPES.items():
        assert f"AXE4J_{name.upper()} = {code}" in header
    for name in ("float16", "float32", "float64", "int8", "uint8", "int32", "uint32", "int64", "uint64"):
        assert nr.dtype_name(np.dtype(name)) == name
        assert nr.dtype_bytes(getattr(np, name)) == np.dtype(name).itemsize
    assert nr.dtype_name("torch.bfloat16") == "bfloat16"
    assert nr.dtype_code("int32") != nr.dtype_code("float32")


@pytest.mark.parametrize("dtype", ["complex64", np.int16, np.bool_, "float8_e4m3fn", "torch.int16", object])
def test_dtypes_without_an_nccl_type_are_refused_by_name(dtype):
    with pytest.raises(TypeError, match="has no NCCL type.*supported: float16, bfloat16"):
        nr.dtype_name(dtype)


def test_redistribute_refuses_a_dtype_of_another_width_than_the_plan():
    plan = SimpleNamespace(comm=None, element_bytes=4, src_size=1, dst_size=1)
    with pytest.raises(TypeError, match="float16 has 2-byte elements, the plan was made for 4"):
        nr.NcclPlan.run(plan, 0x1000, 0x2000, dtype="float16")


# ---- tables against the plans -----------------------------------------------------------------------------------

def _check_plan(plan: dict, lib: nr.Library, seed: int) -> None:
    n = len(plan["ranks"])
    eb = plan["element_bytes"]
    rps = [RankPlan.of(plan, r) for r in range(n)]
    built = [nr.build_table(rp, n, eb) for rp in rps]
    for table, _ in built:
        lib.check_table(table)  # the library's parser agrees with the layout and every index is in range
    rng = np.random.default_rng(seed)
    size = int(np.prod(plan["global_shape"]))
    partial = plan["src"]["partial_dims"]
    groups = int(np.prod([plan["mesh"]["shape"][j] for j in partial])) if partial else 0
    summands = rng.integers(-50, 50, size=(groups, size)).astype(np.int64) if partial else None
    whole = summands.sum(axis=0) if partial else rng.integers(-50, 50, size=size).astype(np.int64)
    srcs = [local_source(rp, plan, whole, summands) for rp in rps]
    dsts = _simulate([t for t, _ in built], srcs)
    for r, rp in enumerate(rps):
        at, want = expected_destination(rp, whole)
        np.testing.assert_array_equal(dsts[r][at], want, err_msg=f"rank {r}")
        info = built[r][1]
        # NCCL has no variable-count reduce-scatter: blocks that differ are padded to the largest, which moves
        # more than the plan counts; with equal blocks the library moves exactly the plan's bytes
        if not _has_unequal_reduce_scatter(rps[r]):
            assert info.padding_bytes == 0, (r, info)
            assert info.received_bytes == plan["bytes_per_rank"][r], (r, info, plan["bytes_per_rank"])
        else:
            assert info.received_bytes >= plan["bytes_per_rank"][r], (r, info, plan["bytes_per_rank"])


def _has_unequal_reduce_scatter(rp) -> bool:
    return any(st["kind"] == "reduce_scatter" and len(set(st.get("recv_counts") or [st["out_size"]])) > 1
               for st in rp.steps)


def _named():
    cases = [(name, [4], [16, 8], req) for name, req in named_requests([4], [16, 8], element_bytes=4).items()]
    cases += [(name, [2, 2], [8, 8], req) for name, req in named_requests([2, 2], [8, 8], element_bytes=4).items()]
    return cases


@pytest.mark.parametrize("name,mesh_shape,shape,req", _named(), ids=[c[0] + str(c[1]) for c in _named()])
def test_tables_of_named_plans_deliver_the_destination(name, mesh_shape, shape, req, lib):
    _check_plan(mesh.plan(req), lib, seed=len(name))


def test_tables_of_random_plans_deliver_the_destination(lib):
    rng = random.Random(7)
    for i in range(24):
        shape = rng.choice([[2], [4], [2, 2], [2, 4]])
        _check_plan(mesh.plan(random_request(rng, shape, element_bytes=8)), lib, seed=i)


def test_one_rank_plans_are_tables_too(lib):
    for name, req in named_requests([1], [8, 4], element_bytes=4).items():
        _check_plan(mesh.plan(req), lib, seed=1)


def _variable_reduce_scatter(counts: list) -> tuple[list, np.ndarray]:
    """A reduce-scatter whose member blocks differ (a decoded plan as a planner with strided boxes makes it):
    p ranks each hold a summand of sum(counts) elements; member k keeps block k."""
    p, total = len(counts), sum(counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rps = []
    for r in range(p):
        step = {"kind": "reduce_scatter", "group": list(range(p)), "in": "src", "out": "reduced",
                "out_size": counts[r], "root": 0, "recv_counts": list(counts),
                "send_idx": np.arange(total, dtype=np.int64)[::-1].copy()}  # packed in reverse order
        mine = np.arange(counts[r], dtype=np.int64)
        rps.append(RankPlan(r, total, counts[r], [step], [("reduced", mine, mine)], (), (), ()))
    return rps, starts


def test_variable_count_reduce_scatter_pads_to_the_largest_block(lib):
    counts = [5, 2, 0, 3]
    rps, starts = _variable_reduce_scatter(counts)
    built = [nr.build_table(rp, len(counts), 4) for rp in rps]
    for table, _ in built:
        lib.check_table(table)
    rng = np.random.default_rng(3)
    srcs = [rng.integers(-9, 9, size=sum(counts)).astype(np.int32) for _ in counts]
    dsts = _simulate([t for t, _ in built], srcs)
    packed_sum = sum(s[::-1] for s in srcs)
    for r, c in enumerate(counts):
        np.testing.assert_array_equal(dsts[r], packed_sum[starts[r]:starts[r] + c])
        info = built[r][1]
        assert info.received_bytes == 3 * 5 * 4  # (p-1) x largest block, as NCCL moves it
        assert info.padding_bytes == (3 * 5 - (sum(counts) - c)) * 4


# ---- the library's checks -------------------------------------------------------------------------------------

def _a_table() -> np.ndarray:
    req = named_requests([4], [16, 8], element_bytes=4)["partial->shard"]
    return nr.build_table(RankPlan.of(mesh.plan(req), 1), 4, 4)[0]


@pytest.mark.parametrize("corrupt,message", [
    (lambda t: t.__setitem__(0, 7), "wrong magic"),
    (lambda t: t.__setitem__(1, 99), "version 99"),
    (lambda t: t.__setitem__(4, 3), "element_bytes 3"),
    (lambda t: t.__setitem__(len(t) - 1, 10_000), "destination index 10000 outside dst"),
    (lambda t: t.__setitem__(slice(9 + 8 + 12, 9 + 8 + 13), 999_999), "send index 999999 outside buffer 0"),
    (lambda t: t.__setitem__(9 + 2, 5), "reduce-scatter of 4 blocks of 5 needs 20"),
])
def test_the_library_refuses_corrupted_tables_naming_the_fault(lib, corrupt, message):
    table = _a_table().copy()
    corrupt(table)
    with pytest.raises(nr.NcclError, match=message):
        lib.check_table(table)


def test_the_library_refuses_a_truncated_table(lib):
    with pytest.raises(nr.NcclError, match="needs .* entries|ends before"):
        lib.check_table(_a_table()[:-3])


# ---- devices --------------------------------------------------------------------------------------------------

def _gpu_present() -> bool:
    try:
        return bool(tvm.cuda(0).exist)
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(_gpu_present(), reason="a CUDA GPU is present: the gpu-marked test runs instead")
def test_without_a_gpu_the_communicator_fails_with_the_reason(lib):
    with pytest.raises(nr.NcclError, match="no usable CUDA device: cudaGetDeviceCount: cudaError"):
        nr.Communicator.single(lib=lib)
    with pytest.raises(nr.NcclError, match="no usable CUDA device|no CUDA device"):
        lib.device_count()


class _Cudart:
    """Device buffers for the GPU test through the venv's libcudart (the binding leaves them to the caller)."""

    def __init__(self):
        import nvidia.cu13

        self.lib = ctypes.CDLL(str(Path(list(nvidia.cu13.__path__)[0]) / "lib" / "libcudart.so.13"))

    def upload(self, a: np.ndarray) -> int:
        ptr = ctypes.c_void_p()
        assert self.lib.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(max(a.nbytes, 1))) == 0
        assert self.lib.cudaMemcpy(ptr, a.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(a.nbytes), 1) == 0
        return ptr.value

    def download(self, ptr: int, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        assert self.lib.cudaDeviceSynchronize() == 0
        assert self.lib.cudaMemcpy(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(ptr),
                                   ctypes.c_size_t(out.nbytes), 2) == 0
        self.free(ptr)
        return out

    def free(self, ptr: int) -> None:
        assert self.lib.cudaFree(ctypes.c_void_p(ptr)) == 0


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "uint8", "float16"])
def test_one_rank_world_on_the_gpu(dtype, lib):
    cuda = _Cudart()
    with nr.Communicator.single(lib=lib) as comm:
        for name, req in named_requests([1], [16, 8], element_bytes=np.dtype(dtype).itemsize).items():
            plan = mesh.plan(req)
            rp = RankPlan.of(plan, 0)
            whole = np.arange(int(np.prod(plan["global_shape"])), dtype=np.int64) % 100
            src = local_source(rp, plan, whole, whole[None, :] if plan["src"]["partial_dims"] else None)
            src = src.astype(dtype)
            dst_like = np.zeros(rp.dst_size, dtype=dtype)
            s_ptr, d_ptr = cuda.upload(src), cuda.upload(dst_like)
            run = comm.plan(rp, plan["element_bytes"])
            run.run(s_ptr, d_ptr, dtype=dtype)
            dst = cuda.download(d_ptr, dst_like)
            cuda.free(s_ptr)
            run.close()
            at, want = expected_destination(rp, whole)
            np.testing.assert_array_equal(dst[at], want.astype(dtype), err_msg=name)


# ---- which executor -------------------------------------------------------------------------------------------

def test_host_buffers_take_the_mpi_executor_and_device_buffers_nccl(lib):
    from axe4j.mesh import backend

    assert backend.choose(False).executor == "mpi"
    assert backend.choose(True).executor == "nccl"  # the library and an NCCL load here


def test_open_mpi_says_whether_it_takes_cuda_pointers():
    from axe4j.mesh import backend

    support = backend.mpi_cuda_support()
    assert isinstance(support, bool), "ompi_info is installed with Open MPI (ci/setup-mpi.sh)"
