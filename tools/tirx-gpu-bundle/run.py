"""Runs both TVM lanes' tile-op kernels on this machine's GPU (an sm_90 one: H100, H200) and checks them.

Needs Python 3 with numpy and a CUDA driver (``libcuda.so.1``); ``--timing`` also needs torch (or CuPy) for cuBLAS.
No TVM, no compiler: the kernels are the cubins ``tools/tirx_gpu_bundle.py`` wrote with their launches
(``tirx.json``, ``0.27.json``) and arrays (``cases/``). Kernels are launched through the CUDA driver API (ctypes):
each parameter is an argument array's device pointer, a scalar, or a 128-byte tensor map that this runner encodes
with ``cuTensorMapEncodeTiled`` from the arguments the lane's host function passes it; a launch with a cluster goes
through ``cuLaunchKernelEx``.

For each lane and kernel: the arguments go to device memory, the kernel runs with the grid, block, cluster and
dynamic shared bytes its lane compiled, the arrays come back and must equal numpy's expected ones (exactly, or
within 2 ulp where the case says the kernel computes a transcendental). The Hopper GEMM at a timing size makes its
inputs here (random-normal and small integers) and is checked against numpy's FP32 product (the integers: exactly;
random-normal: within FP16 rounding). Then the two lanes' arrays must be the same bits, kernel by kernel. A lane runs
in a worker process; a kernel that crashes it (or hangs past ``--timeout``) fails alone and a new worker goes on with
the next. With ``--timing`` the timed GEMM of each lane and cuBLAS (torch.matmul, FP16 in and out) are each the
median of ``--iters`` launches after warm-up, timed by CUDA events with L2 flushed before each launch; the table
gives TFLOP/s and the ratio to cuBLAS per lane and input kind. Writes ``summary.json`` and ``summary.md`` to ``--out``.

Without a GPU it says so and exits 0. Exit status otherwise: 0 when every kernel passed on both lanes and the lanes
agree, 1 when not.

usage: python3 run.py [--out DIR] [--only TEXT] [--timeout S] [--timing] [--iters N]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LANES = ("tirx", "0.27")
INPUT_KINDS = ("randn", "structured")
MAP_BYTES, MAP_ALIGN = 128, 64   # a CUtensorMap: 128 opaque bytes, 64-byte aligned
# CUtensorMapDataType (cuda.h) of the element types a tensor map may name
CU_TENSOR_MAP_DTYPES = {"uint8": 0, "uint16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5, "float16": 6,
                        "float32": 7, "float64": 8, "bfloat16": 9}
SCALAR_TYPES = {"int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
                "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double}
FUNC_SHARED_SIZE = 1                 # CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static)
FUNC_MAX_DYNAMIC_SHARED = 8          # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
L2_FLUSH_BYTES = 256 << 20           # more than any sm_90 part's L2 (50-60 MiB)


class CudaError(RuntimeError):
    pass


# ---- argument packing (no device needed) ----

def encode_arguments(record: dict, address: int) -> tuple:
    """cuTensorMapEncodeTiled's arguments after the map pointer, from a bundle's ``tensor_map`` record and the
    device address of its argument array: (dtype, rank, global address, dims, byte strides, box, element strides,
    interleave, swizzle, L2 promotion, OOB fill)."""
    rank = record["rank"]
    dims, strides, box, elements = record["dims"], record["strides"], record["box"], record["element_strides"]
    if not 1 <= rank <= 5 or (len(dims), len(strides), len(box), len(elements)) != (rank, rank - 1, rank, rank):
        raise ValueError(f"tensor map {record}: rank {rank} with dims {dims}, byte strides {strides}, box {box}, "
                         f"element strides {elements}")
    dtype = record["force_cu_dtype"] if record.get("force_cu_dtype", -1) >= 0 else CU_TENSOR_MAP_DTYPES.get(
        record["dtype"])
    if dtype is None:
        raise ValueError(f"tensor map {record}: element type {record['dtype']} has no CUtensorMapDataType here")
    return (ctypes.c_int(dtype), ctypes.c_uint32(rank), ctypes.c_void_p(address + record["offset"]),
            (ctypes.c_uint64 * rank)(*dims), (ctypes.c_uint64 * max(rank - 1, 1))(*strides),
            (ctypes.c_uint32 * rank)(*box), (ctypes.c_uint32 * rank)(*elements),
            ctypes.c_int(record["interleave"]), ctypes.c_int(record["swizzle"]), ctypes.c_int(record["l2_promotion"]),
            ctypes.c_int(record["oob_fill"]))


def aligned_map(data: bytes = bytes(MAP_BYTES)):
    """A 64-byte aligned, 128-byte ctypes buffer holding ``data`` (and the storage that keeps it alive)."""
    if len(data) != MAP_BYTES:
        raise ValueError(f"a tensor map is {MAP_BYTES} bytes, not {len(data)}")
    storage = ctypes.create_string_buffer(MAP_BYTES + MAP_ALIGN)
    offset = -ctypes.addressof(storage) % MAP_ALIGN
    buffer = (ctypes.c_ubyte * MAP_BYTES).from_buffer(storage, offset)
    ctypes.memmove(buffer, data, MAP_BYTES)
    return buffer, storage


def pack_params(params: list, addresses: list, maps: dict):
    """(cuLaunchKernel's ``kernelParams``: one ``void *`` per parameter pointing at its value, the values kept
    alive): ``{"array": i}`` the device pointer ``addresses[i]`` (8 bytes), ``{"scalar": v, "dtype": t}`` the
    scalar, ``{"tensor_map": ...}`` the 128-byte encoded map ``maps[parameter index]``."""
    values, keep = [], []
    for i, param in enumerate(params):
        if "tensor_map" in param:
            if i not in maps:
                raise ValueError(f"parameter {i} is a tensor map that was not encoded")
            value, storage = aligned_map(maps[i])
            keep.append(storage)
        elif "scalar" in param:
            if param.get("dtype") not in SCALAR_TYPES:
                raise ValueError(f"parameter {i}: scalar type {param.get('dtype')} is not one of {list(SCALAR_TYPES)}")
            value = SCALAR_TYPES[param["dtype"]](param["scalar"])
        elif "array" in param:
            value = ctypes.c_uint64(addresses[param["array"]])
        else:
            raise ValueError(f"parameter {i}: {param} is neither an array, a scalar nor a tensor map")
        values.append(value)
    array = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
    return array, (values, keep)


class _Attribute(ctypes.Structure):   # CUlaunchAttribute: id, pad to 8, a 64-byte value union
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint32 * 16)]


class _Config(ctypes.Structure):      # CUlaunchConfig
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(_Attribute)), ("num_attrs", ctypes.c_uint)]


def launch_config(grid, block, cluster, shared):
    """cuLaunchKernelEx's config (and its attribute): the cluster dims as CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION."""
    attribute = _Attribute(id=LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
    attribute.value[0:3] = list(cluster)
    config = _Config((ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(*block), shared, None,
                     ctypes.pointer(attribute), 1)
    return config, attribute


# ---- the driver ----

class Driver:
    """libcuda through ctypes, on device 0's primary context (the one CuPy and torch use too)."""

    def __init__(self):
        self.lib = lib = ctypes.CDLL("libcuda.so.1")
        u64, vp, sz = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t
        lib.cuMemcpyHtoD_v2.argtypes = [u64, vp, sz]
        lib.cuMemcpyDtoH_v2.argtypes = [vp, u64, sz]
        lib.cuMemsetD8_v2.argtypes = [u64, ctypes.c_ubyte, sz]
        lib.cuMemFree_v2.argtypes = [u64]
        lib.cuLaunchKernel.argtypes = [vp, *[ctypes.c_uint] * 7, vp, vp, vp]
        lib.cuLaunchKernelEx.argtypes = [ctypes.POINTER(_Config), vp, vp, vp]
        lib.cuFuncSetAttribute.argtypes = [vp, ctypes.c_int, ctypes.c_int]
        lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, vp]
        lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
        lib.cuTensorMapEncodeTiled.argtypes = [vp, ctypes.c_int, ctypes.c_uint32, vp, vp, vp, vp, vp,
                                               ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.cuEventRecord.argtypes = [vp, vp]
        lib.cuEventElapsedTime.argtypes = [ctypes.POINTER(ctypes.c_float), vp, vp]
        self.check(lib.cuInit(0), "cuInit")
        count = ctypes.c_int()
        self.check(lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        if count.value < 1:
            raise CudaError("cuDeviceGetCount: no device")
        self.device = ctypes.c_int()
        self.check(lib.cuDeviceGet(ctypes.byref(self.device), 0), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        self.check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device), "cuDevicePrimaryCtxRetain")
        self.check(lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def check(self, code, what):
        if code:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(code, ctypes.byref(name))
            raise CudaError(f"{what}: {(name.value or b'?').decode()} ({code})")

    def capability(self):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.cuDeviceGetAttribute(ctypes.byref(major), 75, self.device), "cuDeviceGetAttribute")
        self.check(self.lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, self.device), "cuDeviceGetAttribute")
        return major.value, minor.value

    def function(self, cubin: bytes, symbol: str, dynamic_shared: int):
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        self._image = ctypes.create_string_buffer(cubin, len(cubin))
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), self._image), "cuModuleLoadData")
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(function), module, symbol.encode()),
                   f"cuModuleGetFunction({symbol})")
        static = ctypes.c_int()   # the new lane's tile kernels keep their tiles in static __shared__ arrays
        self.check(self.lib.cuFuncGetAttribute(ctypes.byref(static), FUNC_SHARED_SIZE, function), "cuFuncGetAttribute")
        if static.value + dynamic_shared > 48 * 1024:   # past 48 KiB a kernel opts in
            self.check(self.lib.cuFuncSetAttribute(function, FUNC_MAX_DYNAMIC_SHARED, dynamic_shared),
                       f"cuFuncSetAttribute({symbol}, {dynamic_shared} dynamic shared bytes, {static.value} static)")
        return function

    def alloc(self, nbytes: int) -> int:
        pointer = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(max(nbytes, 1))), "cuMemAlloc")
        return pointer.value

    def upload(self, array: np.ndarray) -> int:
        array = np.ascontiguousarray(array)
        pointer = self.alloc(array.nbytes)
        self.check(self.lib.cuMemcpyHtoD_v2(pointer, array.ctypes.data, array.nbytes), "cuMemcpyHtoD")
        return pointer

    def download(self, pointer: int, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        self.check(self.lib.cuMemcpyDtoH_v2(out.ctypes.data, pointer, out.nbytes), "cuMemcpyDtoH")
        return out

    def encode(self, record: dict, address: int) -> bytes:
        buffer, _storage = aligned_map()
        self.check(self.lib.cuTensorMapEncodeTiled(ctypes.addressof(buffer), *encode_arguments(record, address)),
                   f"cuTensorMapEncodeTiled({record})")
        return bytes(buffer)

    def launch(self, function, entry: dict, addresses: list, maps: dict):
        params, _keep = pack_params(entry["params"], addresses, maps)
        grid, block, cluster = entry["grid"], entry["block"], entry.get("cluster", [1, 1, 1])
        if list(cluster) != [1, 1, 1]:
            config, _attribute = launch_config(grid, block, cluster, entry["dynamic_shared"])
            self.check(self.lib.cuLaunchKernelEx(ctypes.byref(config), function, params, None),
                       f"cuLaunchKernelEx({entry['symbol']})")
        else:
            self.check(self.lib.cuLaunchKernel(function, *grid, *block, entry["dynamic_shared"], None, params, None),
                       f"cuLaunchKernel({entry['symbol']})")

    def synchronize(self, what="the kernel"):
        self.check(self.lib.cuCtxSynchronize(), f"{what} (cuCtxSynchronize)")

    def timed(self, run, flush: int, iters: int, warmup: int = 5) -> float:
        """The median milliseconds of ``run()`` over ``iters`` launches after ``warmup``, each between two events
        recorded after L2 was flushed (``flush``: a device buffer of L2_FLUSH_BYTES overwritten)."""
        start, end = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
        self.check(self.lib.cuEventCreate(ctypes.byref(end), 0), "cuEventCreate")
        times = []
        for i in range(warmup + iters):
            self.check(self.lib.cuMemsetD8_v2(flush, i & 0xFF, L2_FLUSH_BYTES), "cuMemsetD8 (L2 flush)")
            self.check(self.lib.cuEventRecord(start, None), "cuEventRecord")
            run()
            self.check(self.lib.cuEventRecord(end, None), "cuEventRecord")
            self.check(self.lib.cuEventSynchronize(end), "cuEventSynchronize")
            ms = ctypes.c_float()
            self.check(self.lib.cuEventElapsedTime(ctypes.byref(ms), start, end), "cuEventElapsedTime")
            if i >= warmup:
                times.append(ms.value)
        return float(np.median(times))


# ---- cases ----

def agrees(got, expected, exact) -> bool:
    if exact:
        return all(np.array_equal(g, e) for g, e in zip(got, expected))
    return all(np.allclose(g, e, rtol=2 * np.finfo(e.dtype).eps, atol=0) for g, e in zip(got, expected))


def gemm_inputs(mnk, kind):
    """A (M, K), B (N, K) FP16 of an input kind: random-normal, or structured (small integers, low entropy)."""
    m, n, k = mnk
    rng = np.random.default_rng({"randn": 1, "structured": 2}[kind])
    if kind == "randn":
        return [rng.standard_normal((rows, k), dtype=np.float32).astype(np.float16) for rows in (m, n)]
    return [rng.integers(-2, 3, (rows, k)).astype(np.float16) for rows in (m, n)]


def gemm_reference(mnk, kind) -> np.ndarray:
    """numpy's FP32 A B^T, computed once per input kind in this run (``WORK/reference-<kind>.npy``)."""
    path = WORK / f"reference-{'x'.join(map(str, mnk))}-{kind}.npy"
    if not path.exists():
        a, b = gemm_inputs(mnk, kind)
        np.save(path, a.astype(np.float32) @ b.astype(np.float32).T)
    return np.load(path)


def gemm_close(got: np.ndarray, reference: np.ndarray, kind: str) -> bool:
    """Integers: the FP32 sums are exact, so D is their FP16 rounding. Random-normal: within FP16's rounding of the
    result (2^-10 relative) plus an FP32 accumulation-order term (2^-12 of the row's magnitude)."""
    want = reference.astype(np.float16)
    if kind == "structured":
        return bool(np.array_equal(got, want))
    scale = np.sqrt(np.mean(reference.astype(np.float64) ** 2))
    error = np.abs(got.astype(np.float32) - reference)
    return bool(np.all(error <= 2.0 ** -10 * np.abs(reference) + 2.0 ** -12 * scale))


def _arrays(entry):
    case = np.load(HERE / entry["case"])
    n = sum(1 for k in case.files if k.startswith("a"))
    return [case[f"a{i}"] for i in range(n)], [case[f"e{i}"] for i in range(n)], bool(case["exact"])


def _run_case(driver, entry, args):
    """Runs the kernel of ``entry`` on ``args`` (host arrays): returns (device pointers, function, maps)."""
    function = driver.function((HERE / entry["cubin"]).read_bytes(), entry["symbol"], entry["dynamic_shared"])
    pointers = [driver.upload(a) for a in args]
    maps = {i: driver.encode(p["tensor_map"], pointers[p["tensor_map"]["array"]])
            for i, p in enumerate(entry["params"]) if "tensor_map" in p}
    driver.launch(function, entry, pointers, maps)
    driver.synchronize(entry["symbol"])
    return pointers, function, maps


def worker(lane: str, names: list[str], timing: bool, iters: int) -> None:
    """Runs ``names`` of ``lane`` here, one JSON line per kernel (the arrays it left in ``out/<lane>/``)."""
    driver = Driver()
    kernels = json.loads((HERE / f"{lane}.json").read_text())["kernels"]
    for name in names:
        entry = kernels[name]
        if "timed" in entry:
            mnk = tuple(entry["timed"])
            reply, flush = {"name": name, "passed": True, "ms": {}}, driver.alloc(L2_FLUSH_BYTES) if timing else 0
            for kind in INPUT_KINDS:
                a, b = gemm_inputs(mnk, kind)
                args = [a, b, np.zeros(mnk[:2], np.float16)]
                pointers, function, maps = _run_case(driver, entry, args)
                got = driver.download(pointers[2], args[2])
                np.save(WORK / lane / f"{name}-{kind}.npy", got)
                ok = gemm_close(got, gemm_reference(mnk, kind), kind)
                reply["passed"] &= ok
                if timing and ok:
                    reply["ms"][kind] = driver.timed(lambda: driver.launch(function, entry, pointers, maps), flush,
                                                     iters)
                for p in pointers:
                    driver.check(driver.lib.cuMemFree_v2(p), "cuMemFree")
            print(json.dumps(reply), flush=True)
            continue
        args, expected, exact = _arrays(entry)
        pointers, _, _ = _run_case(driver, entry, args)
        got = [driver.download(p, a) for p, a in zip(pointers, args)]
        np.savez(WORK / lane / f"{name}.npz", **{f"g{i}": g for i, g in enumerate(got)})
        print(json.dumps({"name": name, "passed": agrees(got, expected, exact)}), flush=True)


def cublas_worker(mnk, iters: int) -> None:
    """cuBLAS through torch.matmul (or CuPy's), FP16 in and out, on each input kind: checked, then timed as the
    lanes are. One JSON line: {"passed": {kind: bool}, "ms": {kind: ms}, "library": ...}."""
    try:
        import torch

        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False   # FP32 sums, as the lanes
        library = f"torch {torch.__version__} (cuBLAS)"
        to_device = lambda x: torch.from_numpy(x).cuda()   # noqa: E731
        matmul = lambda a, b: torch.matmul(a, b.T)   # noqa: E731
        to_host = lambda x: x.cpu().numpy()   # noqa: E731
        flush_buffer = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        flush = flush_buffer.zero_
        event = lambda: torch.cuda.Event(enable_timing=True)   # noqa: E731
        synchronize = torch.cuda.synchronize
    except ImportError:
        import cupy as cp

        library = f"cupy {cp.__version__} (cuBLAS)"
        to_device, to_host = cp.asarray, cp.asnumpy
        matmul = lambda a, b: cp.matmul(a, b.T)   # noqa: E731
        flush_buffer = cp.empty(L2_FLUSH_BYTES, dtype=cp.uint8)
        flush = lambda: flush_buffer.fill(0)   # noqa: E731
        event = cp.cuda.Event
        synchronize = cp.cuda.Device().synchronize
    reply = {"library": library, "passed": {}, "ms": {}}
    for kind in INPUT_KINDS:
        a, b = (to_device(x) for x in gemm_inputs(mnk, kind))
        d = matmul(a, b)
        synchronize()
        reply["passed"][kind] = gemm_close(to_host(d), gemm_reference(mnk, kind), kind)
        times = []
        for i in range(5 + iters):
            flush()
            start, end = event(), event()
            start.record()
            matmul(a, b)
            end.record()
            end.synchronize()
            if i >= 5:
                times.append(start.elapsed_time(end) if hasattr(start, "elapsed_time")
                             else __import__("cupy").cuda.get_elapsed_time(start, end))
        reply["ms"][kind] = float(np.median(times))
    print(json.dumps(reply), flush=True)


def run_lane(lane: str, names: list[str], timeout: float, extra: list[str]) -> tuple[dict, dict]:
    """({name: "passed" | "wrong" | a failure}, {name: {kind: ms}}): the lane's kernels in workers, a new one after
    each crash."""
    results, timings, left = {}, {}, list(names)
    while left:
        command = [sys.executable, __file__, "--worker", lane, "--out", str(WORK), *extra, *left]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout * len(left))
            stdout, stderr, code = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired as error:
            stdout = (error.stdout or b"").decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
            stderr, code = "timed out", None
        for line in stdout.splitlines():
            if line.startswith("{"):
                reply = json.loads(line)
                results[reply["name"]] = "passed" if reply["passed"] else "wrong"
                if reply.get("ms"):
                    timings[reply["name"]] = reply["ms"]
        left = [n for n in left if n not in results]
        if left:   # the first kernel not reported took the worker down
            tail = " | ".join(stderr.strip().splitlines()[-2:])[-300:]
            results[left[0]] = f"failed ({'timeout' if code is None else f'exit {code}'}): {tail}"
            left = left[1:]
    return results, timings


def _same_bits(name, entry) -> bool:
    if "timed" in entry:
        pairs = [[np.load(WORK / lane / f"{name}-{kind}.npy") for lane in LANES] for kind in INPUT_KINDS]
    else:
        got = [np.load(WORK / lane / f"{name}.npz") for lane in LANES]
        pairs = [(got[0][k], got[1][k]) for k in got[0].files]
    return all(np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in pairs)


def timing_rows(mnk, lanes: dict, cublas: dict) -> list[str]:
    """Markdown rows: per input kind, cuBLAS and each lane's median ms, TFLOP/s and ratio to cuBLAS."""
    flops = 2.0 * mnk[0] * mnk[1] * mnk[2]
    rows = [f"\nHopper GEMM {'x'.join(map(str, mnk))} FP16 (median, L2 flushed), against {cublas.get('library')}",
            "| input | who | ms | TFLOP/s | vs cuBLAS |", "|---|---|---|---|---|"]
    for kind in INPUT_KINDS:
        base = cublas.get("ms", {}).get(kind)
        for who, ms in [("cuBLAS", base), *((lane, lanes.get(lane, {}).get(kind)) for lane in LANES)]:
            if ms is None:
                rows.append(f"| {kind} | {who} | - | - | - |")
                continue
            ratio = f"{base / ms:.3f}" if base else "-"
            rows.append(f"| {kind} | {who} | {ms:.4f} | {flops / ms / 1e9:.1f} | {ratio} |")
    return rows


def main(argv=None) -> int:
    global WORK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tirx-gpu-results"))
    parser.add_argument("--only", default="", help="run the kernels whose name contains this text")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per kernel")
    parser.add_argument("--timing", action="store_true", help="time the Hopper GEMM of both lanes against cuBLAS")
    parser.add_argument("--iters", type=int, default=50, help="timed launches per measurement (median)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("names", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    WORK = args.out
    if args.worker == "cublas":
        cublas_worker(tuple(int(x) for x in args.names), args.iters)
        return 0
    if args.worker:
        worker(args.worker, args.names, args.timing, args.iters)
        return 0
    try:
        capability = Driver().capability()
    except (OSError, CudaError) as error:   # no driver, no device
        print(f"no GPU here ({type(error).__name__}: {error}); nothing run")
        return 0
    if capability != (9, 0):
        print(f"this GPU is sm_{capability[0]}{capability[1]}; the bundle's cubins are sm_90a (H100, H200): "
              "nothing run")
        return 0
    manifests = {lane: json.loads((HERE / f"{lane}.json").read_text())["kernels"] for lane in LANES}
    names = sorted(n for n in manifests["tirx"] if args.only in n)
    for lane in LANES:
        (WORK / lane).mkdir(parents=True, exist_ok=True)
    extra = ["--timing", "--iters", str(args.iters)] if args.timing else []
    runs = {lane: run_lane(lane, names, args.timeout, extra) for lane in LANES}
    results = {lane: runs[lane][0] for lane in LANES}
    same = {n: _same_bits(n, manifests["tirx"][n]) for n in names
            if all(results[lane][n] == "passed" for lane in LANES)}
    rows = ["| kernel | tvm_tirx | 0.27 | same bits |", "|---|---|---|---|"]
    rows += [f"| {n} | {results['tirx'][n]} | {results['0.27'][n]} | {same.get(n, '-')} |" for n in names]
    passed = sum(all(results[lane][n] == "passed" for lane in LANES) and same.get(n) for n in names)
    rows.append(f"\n{passed} of {len(names)} kernels passed on both lanes with the same bits")
    timing = {}
    for name in (n for n in names if "timed" in manifests["tirx"][n] and args.timing):
        mnk = manifests["tirx"][name]["timed"]
        command = [sys.executable, __file__, "--worker", "cublas", "--out", str(WORK), "--iters", str(args.iters),
                   *map(str, mnk)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout * 4)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        cublas = json.loads(lines[-1]) if lines else {"failed": done.stderr[-300:]}
        lanes = {lane: runs[lane][1].get(name, {}) for lane in LANES}
        timing[name] = {"mnk": mnk, "cublas": cublas, "lanes": lanes}
        rows += timing_rows(mnk, lanes, cublas)
        if not all(cublas.get("passed", {}).get(kind) for kind in INPUT_KINDS):
            rows.append(f"cuBLAS's D differs from numpy's or did not run: {cublas}")
    (WORK / "summary.md").write_text("\n".join(rows) + "\n")
    (WORK / "summary.json").write_text(json.dumps({"results": results, "same_bits": same, "timing": timing},
                                                  indent=1))
    print("\n".join(rows))
    return 0 if passed == len(names) else 1


WORK = Path("tirx-gpu-results")

if __name__ == "__main__":
    sys.exit(main())
