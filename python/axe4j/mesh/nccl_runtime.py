"""Runs redistribution plans on GPUs through NCCL: the ctypes binding of ``libaxe4j_nccl.so`` (native/nccl/).

One generic library executes any plan from runtime tables; nothing is compiled per plan. This module

- turns one rank's decoded plan (``axe4j.mesh.mpi_exec.RankPlan``) into the library's int64 table
  (:func:`build_table`; layout in ``native/nccl/axe4j_nccl.h``) and counts the bytes its collectives receive,
- loads NCCL (``AXE4J_NCCL_LIB``, else the ``nvidia/nccl`` wheel's ``lib/libnccl.so.2``, else the system's) and
  then the library,
- sets up the world communicator: :meth:`Communicator.single` (one rank, no MPI) or :meth:`Communicator.from_mpi`
  (rank 0 makes the NCCL unique id, ``comm.bcast`` hands it to every rank; one GPU per rank by local rank),
- uploads a rank's table once per plan (:meth:`Communicator.plan`) and runs it on caller-managed device buffers
  (torch CUDA tensors or raw device pointers) on the caller's stream (:meth:`NcclPlan.run`).

Only numpy and the standard library are needed to import it (torch and mpi4py when used), so it also runs from
the NCCL bundle without axe4j installed.

Variable-count reduce-scatter (per-member ``recv_counts`` that differ) has no NCCL collective: the table pads
every member's block to the largest (padding packs zeros), so each rank receives ``(p-1) * max block`` elements;
:attr:`TableInfo.padding_bytes` says how much of that is padding. An all-gather with differing blocks is sent as
an all-to-all (each member's block to every member), which moves exactly the all-gather's bytes.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = 0x41584E43  # "AXNC"
TABLE_VERSION = 1
UNIQUE_ID_BYTES = 128

# name -> (axe4j_nccl_dtype code, bytes); reductions sum in the element's own type.
DTYPES = {
    "float16": (0, 2), "bfloat16": (1, 2), "float32": (2, 4), "float64": (3, 8), "int8": (4, 1),
    "uint8": (5, 1), "int32": (6, 4), "uint32": (7, 4), "int64": (8, 8), "uint64": (9, 8),
}
KINDS = {"idle": 0, "reduce_scatter": 1, "all_reduce": 2, "all_gather": 3, "broadcast": 4, "all_to_all": 5}
LIB_ENV = "AXE4J_NCCL_LIB"
NATIVE_ENV = "AXE4J_NCCL_NATIVE_LIB"


def dtype_name(dtype) -> str:
    """The element type's name from a name, a numpy dtype or scalar type, or a torch dtype; refuses the others."""
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.")
    elif type(dtype).__module__ == "torch":  # torch.dtype prints as "torch.float32"
        name = str(dtype).removeprefix("torch.")
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = repr(dtype)
    if name not in DTYPES:
        raise TypeError(f"dtype {name!r} has no NCCL type in axe4j's executor; supported: {', '.join(DTYPES)}")
    return name


def dtype_code(dtype) -> int:
    return DTYPES[dtype_name(dtype)][0]


def dtype_bytes(dtype) -> int:
    return DTYPES[dtype_name(dtype)][1]


@dataclass(frozen=True)
class TableInfo:
    """What one rank's table moves: bytes received per step (the MPI executor's ring convention) and padding."""

    received_bytes: int
    padding_bytes: int
    step_bytes: tuple


def _ints(values) -> np.ndarray:
    return np.asarray(values if values is not None else [], dtype=np.int64).reshape(-1)


def _step_entries(st: dict, rank: int) -> tuple[dict, int, int]:
    """(table fields, received elements, padding elements) of one decoded step."""
    kind = st["kind"]
    group = [int(g) for g in st["group"]]
    p = len(group)
    k = group.index(rank)
    send = _ints(st.get("send_idx"))
    out_size = int(st.get("out_size", 0))
    zeros = [0] * p
    f = {"kind": kind, "count": 0, "out_size": out_size, "root": 0, "group": group, "my_index": k,
         "send_counts": zeros, "recv_counts": zeros, "send_idx": send}
    if kind == "idle":
        f["send_idx"] = _ints([])
        return f, 0, 0
    if kind == "reduce_scatter":
        rc = [int(c) for c in (st.get("recv_counts") or [out_size] * p)]
        if len(rc) != p or sum(rc) != send.size or rc[k] != out_size:
            raise ValueError(f"rank {rank}: reduce_scatter recv_counts {rc} do not match {send.size} packed "
                             f"elements and a block of {out_size} for member {k}")
        block = max(rc)
        if min(rc) != block:  # pad every member's block to the largest; -1 packs a zero
            padded = np.full(p * block, -1, dtype=np.int64)
            starts = np.concatenate([[0], np.cumsum(rc)[:-1]])
            for m in range(p):
                padded[m * block:m * block + rc[m]] = send[starts[m]:starts[m] + rc[m]]
            f["send_idx"] = padded
        f.update(count=block, out_size=block)
        return f, (p - 1) * block, (p - 1) * block - (sum(rc) - rc[k])
    if kind == "all_reduce":
        n = out_size
        if send.size != n:
            raise ValueError(f"rank {rank}: all_reduce packs {send.size} elements for an output of {n}")
        f["count"] = n
        bk = n // p + (1 if k < n % p else 0)  # ring: reduce-scatter then all-gather of n/p blocks
        return f, (p - 1) * bk + n - bk, 0
    if kind == "all_gather":
        c = send.size
        rc = [int(x) for x in (st.get("recv_counts") or [c] * p)]
        if min(rc) == max(rc):
            if rc[0] != c or out_size != p * c:
                raise ValueError(f"rank {rank}: all_gather sends {c}, receives blocks {rc}, output {out_size}")
            f["count"] = c
        else:  # differing blocks: an all-to-all with this rank's block to every member
            f.update(kind="all_to_all", send_idx=np.tile(send, p), send_counts=[c] * p, recv_counts=rc)
        return f, sum(rc) - rc[k], 0
    if kind == "broadcast":
        root = int(st["root"])
        f.update(count=out_size, root=root, send_idx=send if k == root else _ints([]))
        return f, (0 if k == root else out_size), 0
    if kind == "all_to_all":
        sc = [int(c) for c in st["send_counts"]]
        rc = [int(c) for c in st["recv_counts"]]
        f.update(send_counts=sc, recv_counts=rc)
        return f, sum(rc) - rc[k], 0
    raise ValueError(f"rank {rank}: unknown collective {kind!r}")


def build_table(rank_plan, nranks: int, element_bytes: int) -> tuple[np.ndarray, TableInfo]:
    """One rank's int64 table for ``libaxe4j_nccl.so`` from its decoded plan (``RankPlan.of(plan, rank)``)."""
    rank = rank_plan.rank
    buffers = {"src": 0}
    out = [MAGIC, TABLE_VERSION, rank, nranks, element_bytes, rank_plan.src_size, rank_plan.dst_size,
           len(rank_plan.steps), len(rank_plan.copies)]
    parts = []
    received = padding = 0
    step_bytes = []
    for i, st in enumerate(rank_plan.steps):
        f, got, pad = _step_entries(st, rank)
        if st["in"] not in buffers:
            raise ValueError(f"rank {rank} step {i}: reads buffer {st['in']!r} before any step wrote it")
        p = len(f["group"])
        head = [KINDS[f["kind"]], buffers[st["in"]], f["count"], f["out_size"], f["root"], p, f["my_index"],
                f["send_idx"].size, *f["group"], *f["send_counts"], *f["recv_counts"]]
        parts += [np.asarray(head, dtype=np.int64), f["send_idx"]]
        buffers[st["out"]] = i + 1
        received += got * element_bytes
        padding += pad * element_bytes
        step_bytes.append(got * element_bytes)
    for name, at, to in rank_plan.copies:
        if name not in buffers:
            raise ValueError(f"rank {rank}: a copy reads buffer {name!r}, which no step wrote")
        at, to = _ints(at), _ints(to)
        parts += [np.asarray([buffers[name], at.size], dtype=np.int64), at, to]
    table = np.concatenate([np.asarray(out, dtype=np.int64), *parts]) if parts else np.asarray(out, dtype=np.int64)
    return np.ascontiguousarray(table), TableInfo(received, padding, tuple(step_bytes))


def nccl_library_path() -> str:
    """NCCL to load: ``$AXE4J_NCCL_LIB``, else ``nvidia/nccl/lib/libnccl.so.2`` of an installed wheel, else the
    system's ``libnccl.so.2`` (found by the dynamic loader)."""
    env = os.environ.get(LIB_ENV)
    if env:
        if not Path(env).is_file():
            raise FileNotFoundError(f"{LIB_ENV}={env}: no such file")
        return env
    for entry in sys.path:
        candidate = Path(entry or ".") / "nvidia" / "nccl" / "lib" / "libnccl.so.2"
        if candidate.is_file():
            return str(candidate)
    return "libnccl.so.2"


def native_library_path() -> str:
    """``$AXE4J_NCCL_NATIVE_LIB``, else ``libaxe4j_nccl.so`` beside this file (the bundle), else the checkout's
    ``native/build/`` (``make nccl``)."""
    env = os.environ.get(NATIVE_ENV)
    if env:
        return env
    here = Path(__file__).resolve().parent
    candidates = [here / "libaxe4j_nccl.so"]
    if len(here.parents) > 2:
        candidates.append(here.parents[2] / "native" / "build" / "libaxe4j_nccl.so")
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    raise FileNotFoundError(f"libaxe4j_nccl.so not found beside {here} nor in native/build: run `make nccl` "
                            f"(or set {NATIVE_ENV})")


class NcclError(RuntimeError):
    """A failure reported by libaxe4j_nccl.so (CUDA, NCCL, or a refused table), with its text."""


class Library:
    """The loaded ``libaxe4j_nccl.so`` with NCCL preloaded globally (so its ``libnccl.so.2`` resolves to it)."""

    def __init__(self, nccl_path: str | None = None, native_path: str | None = None):
        self.nccl_path = nccl_path or nccl_library_path()
        self.native_path = native_path or native_library_path()
        try:
            self._nccl = ctypes.CDLL(self.nccl_path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            raise NcclError(f"cannot load NCCL from {self.nccl_path}: {e} (set {LIB_ENV})") from e
        lib = self.lib = ctypes.CDLL(self.native_path)
        p, i, i64, vp = ctypes.POINTER, ctypes.c_int, ctypes.c_int64, ctypes.c_void_p
        lib.axe4j_nccl_last_error.restype = ctypes.c_char_p
        for name, args in {
            "axe4j_nccl_version": [p(i)], "axe4j_nccl_device_count": [p(i)],
            "axe4j_nccl_unique_id": [ctypes.c_char_p],
            "axe4j_nccl_comm_init": [i, i, ctypes.c_char_p, i, p(vp)],
            "axe4j_nccl_comm_device": [vp, p(i)], "axe4j_nccl_comm_destroy": [vp],
            "axe4j_nccl_table_check": [p(i64), i64],
            "axe4j_nccl_plan_create": [vp, p(i64), i64, p(vp)], "axe4j_nccl_plan_destroy": [vp],
            "axe4j_nccl_redistribute": [vp, vp, vp, i, vp],
        }.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, ctypes.c_int

    def check(self, code: int, what: str) -> None:
        if code != 0:
            raise NcclError(f"{what}: {self.lib.axe4j_nccl_last_error().decode(errors='replace')}")

    def nccl_version(self) -> int:
        v = ctypes.c_int()
        self.check(self.lib.axe4j_nccl_version(ctypes.byref(v)), "ncclGetVersion")
        return v.value

    def check_table(self, table: np.ndarray) -> None:
        """The library's own checks of a table (layout, every index in its buffer); no GPU needed."""
        table = np.ascontiguousarray(table, dtype=np.int64)
        ptr = table.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        self.check(self.lib.axe4j_nccl_table_check(ptr, table.size), "plan table refused")

    def device_count(self) -> int:
        n = ctypes.c_int()
        self.check(self.lib.axe4j_nccl_device_count(ctypes.byref(n)), "device count")
        return n.value

    def unique_id(self) -> bytes:
        buf = ctypes.create_string_buffer(UNIQUE_ID_BYTES)
        self.check(self.lib.axe4j_nccl_unique_id(buf), "ncclGetUniqueId")
        return buf.raw


_LIBRARY: Library | None = None


def library() -> Library:
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = Library()
    return _LIBRARY


class Communicator:
    """The NCCL world communicator of this process's rank (one GPU)."""

    def __init__(self, nranks: int, rank: int, unique_id: bytes, device: int = -1, lib: Library | None = None):
        self.lib = lib or library()
        if len(unique_id) != UNIQUE_ID_BYTES:
            raise ValueError(f"NCCL unique id of {len(unique_id)} bytes, expected {UNIQUE_ID_BYTES}")
        handle = ctypes.c_void_p()
        self.lib.check(self.lib.lib.axe4j_nccl_comm_init(nranks, rank, unique_id, device, ctypes.byref(handle)),
                       f"communicator of rank {rank} of {nranks}")
        self.handle, self.nranks, self.rank = handle, nranks, rank
        d = ctypes.c_int()
        self.lib.check(self.lib.lib.axe4j_nccl_comm_device(handle, ctypes.byref(d)), "device")
        self.device = d.value

    @staticmethod
    def single(device: int = 0, lib: Library | None = None) -> "Communicator":
        """A one-rank world (no MPI)."""
        lib = lib or library()
        return Communicator(1, 0, lib.unique_id(), device, lib)

    @staticmethod
    def from_mpi(mpi_comm=None, device: int | None = None, lib: Library | None = None) -> "Communicator":
        """Every rank of ``mpi_comm`` (default COMM_WORLD) joins; rank 0 makes the unique id, ``bcast`` sends it.
        The device is ``device`` or the rank's index among the ranks on its node (one GPU per rank)."""
        from mpi4py import MPI

        comm = mpi_comm or MPI.COMM_WORLD
        lib = lib or library()
        uid = comm.bcast(lib.unique_id() if comm.rank == 0 else None, root=0)
        if device is None:
            node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
            device = node.rank
            node.Free()
        return Communicator(comm.size, comm.rank, uid, device, lib)

    def plan(self, rank_plan, element_bytes: int) -> "NcclPlan":
        """Uploads this rank's decoded plan (collective: every rank calls it for the same plan, in order)."""
        if rank_plan.rank != self.rank:
            raise ValueError(f"plan part of rank {rank_plan.rank} on communicator rank {self.rank}")
        return NcclPlan(self, rank_plan, element_bytes)

    def close(self) -> None:
        if self.handle:
            self.lib.check(self.lib.lib.axe4j_nccl_comm_destroy(self.handle), "ncclCommDestroy")
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _pointer(buffer, size: int, what: str, dtype):
    """(device pointer, dtype name, torch stream or None) of a torch CUDA tensor or an integer pointer."""
    if isinstance(buffer, int):
        if dtype is None:
            raise TypeError(f"{what} is a raw device pointer: pass dtype=")
        return buffer, dtype_name(dtype), None
    if type(buffer).__module__.startswith("torch"):
        if not buffer.is_cuda:
            raise ValueError(f"{what} is a torch tensor on {buffer.device}, not on a CUDA device")
        if not buffer.is_contiguous():
            raise ValueError(f"{what} is not contiguous")
        if buffer.numel() < size:
            raise ValueError(f"{what} holds {buffer.numel()} elements, the plan needs {size}")
        name = dtype_name(buffer.dtype)
        if dtype is not None and dtype_name(dtype) != name:
            raise TypeError(f"{what} is {name}, dtype= says {dtype_name(dtype)}")
        return buffer.data_ptr(), name, buffer
    raise TypeError(f"{what}: a torch CUDA tensor or an int device pointer, not {type(buffer).__name__}")


class NcclPlan:
    """One rank's plan, uploaded: its tables live on the device until :meth:`close`."""

    def __init__(self, comm: Communicator, rank_plan, element_bytes: int):
        self.comm, self.lib = comm, comm.lib
        self.element_bytes = element_bytes
        self.src_size, self.dst_size = rank_plan.src_size, rank_plan.dst_size
        self.table, self.info = build_table(rank_plan, comm.nranks, element_bytes)
        handle = ctypes.c_void_p()
        ptr = self.table.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        self.lib.check(self.lib.lib.axe4j_nccl_plan_create(comm.handle, ptr, self.table.size, ctypes.byref(handle)),
                       f"plan of rank {comm.rank}")
        self.handle = handle

    def run(self, src, dst, dtype=None, stream=None) -> None:
        """Enqueues the redistribution of ``src`` into ``dst`` (torch CUDA tensors or device pointers with
        ``dtype``) on ``stream`` (a ``cudaStream_t`` as int; default: torch's current stream for tensors, else 0)."""
        s_ptr, s_name, s_tensor = _pointer(src, self.src_size, "src", dtype)
        d_ptr, d_name, d_tensor = _pointer(dst, self.dst_size, "dst", dtype)
        if s_name != d_name:
            raise TypeError(f"src is {s_name}, dst is {d_name}")
        if DTYPES[s_name][1] != self.element_bytes:
            raise TypeError(f"dtype {s_name} has {DTYPES[s_name][1]}-byte elements, the plan was made for "
                            f"{self.element_bytes}")
        if stream is None:
            tensor = s_tensor if s_tensor is not None else d_tensor
            stream = 0 if tensor is None else _torch_stream(tensor)
        self.lib.check(self.lib.lib.axe4j_nccl_redistribute(self.handle, s_ptr, d_ptr, DTYPES[s_name][0],
                                                            stream), f"redistribute on rank {self.comm.rank}")

    def close(self) -> None:
        if self.handle:
            self.lib.check(self.lib.lib.axe4j_nccl_plan_destroy(self.handle), "plan_destroy")
            self.handle = None


def _torch_stream(tensor) -> int:
    import torch

    return torch.cuda.current_stream(tensor.device).cuda_stream

