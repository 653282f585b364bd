"""Runs the bundle's kernels on this machine's GPU and checks them; times the Hopper GEMMs against cuBLAS.

Needs Python 3 with numpy, a CUDA driver, and the CUDA 13 runtime (libcudart.so.13) and, for the timing, cuBLAS
(libcublas.so.13) somewhere this script looks: the ``nvidia`` packages of this Python's site-packages or of
/opt/torch/.venv, /usr/local/cuda, or the folders in ``$AXE4J_CUDA_LIBS``. No TVM, no compiler: the kernels are
the libraries in ``kernels/``, loaded through the tvm-ffi C ABI (``tvm_ffi_ctypes.py``) with the runtime in
``lib/``.

For every case of ``manifest.json`` compiled for this GPU's arch: the arguments from its npz go to device memory,
the kernel runs, the outputs come back and are compared element for element with the expected ones (the case's
rtol/atol, or exactly). Cases run in a worker process; one that crashes the worker (or hangs past ``--timeout``)
fails alone and a new worker goes on with the next. Then the timed GEMMs, on each kind of input of ``--inputs``:
``randn`` (seeded random-normal FP16, users' data) and ``structured`` (the cuBLAS harness's formula, nine distinct
values; power-limited GPUs run faster on such low-entropy data). Per kind, D is checked against an FP32 numpy
reference (randn: |D - ref| <= 0.01 + 0.01 |ref|) and against cuBLAS's D on the same inputs; each is timed as the
median of ``--runs`` launches after a warm-up, with the L2 flushed before each; cuBLAS (its harness) and, where
torch is installed, ``torch.nn.functional.linear`` are timed the same way on the same inputs, and the ratios are
taken per kind. Writes ``summary.json`` and ``summary.md`` to ``--out``.

Without a GPU it says so and exits 0. Exit status otherwise: 0 when every case of this arch passed, 1 when not.

usage: python3 run.py [--out DIR] [--only TEXT] [--no-timing] [--inputs randn,structured] [--runs N] [--timeout S]
                      [--list]
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLUSH_BYTES = 512 << 20  # overwritten before each timed launch: several times the L2 of an H100/H200/B200
INPUT_KINDS = ("randn", "structured")   # users' data first: the top-level figures of a timing are its randn ones
RANDN_RTOL, RANDN_ATOL = 1e-2, 1e-2      # |D - FP32 reference| <= atol + rtol |reference| on random-normal inputs
FP8_SCALES = (0.5, 0.25)                  # the per-tensor scales an FP8 GEMM is timed with
H2D, D2H = 1, 2


# ---- finding the CUDA libraries ----------------------------------------------------------------------------------

def library_folders() -> list[str]:
    """Folders that may hold the CUDA 13 runtime and cuBLAS, most specific first."""
    folders = [f for f in os.environ.get("AXE4J_CUDA_LIBS", "").split(os.pathsep) if f]
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    roots.update(glob.glob("/opt/torch/.venv/lib/python3*/site-packages"))
    for root in sorted(roots):
        folders += sorted(glob.glob(os.path.join(root, "nvidia", "cu13", "lib")))
        folders += sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib")))
    folders += ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
    return [f for f in dict.fromkeys(folders) if os.path.isdir(f)]


def find_library(pattern: str) -> str | None:
    for folder in library_folders():
        found = sorted(glob.glob(os.path.join(folder, pattern)))
        if found:
            return found[0]
    return None


# ---- the CUDA runtime through ctypes ------------------------------------------------------------------------------

class Cuda:
    """The few CUDA runtime calls the runner needs (libcudart.so.13, loaded globally so that the TVM runtime's
    libtvm_runtime_cuda.so finds it by its soname)."""

    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        self.lib.cudaGetErrorString.restype = ctypes.c_char_p
        for name in ("cudaMalloc", "cudaFree", "cudaMemcpy", "cudaMemset", "cudaMemsetAsync", "cudaDeviceSynchronize",
                     "cudaEventCreate", "cudaEventRecord", "cudaEventSynchronize", "cudaEventElapsedTime",
                     "cudaDeviceGetAttribute", "cudaSetDevice", "cudaGetDeviceCount", "cudaGetLastError"):
            getattr(self.lib, name).restype = ctypes.c_int
        self.lib.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.lib.cudaMemset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
        self.lib.cudaMemsetAsync.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
        self.lib.cudaFree.argtypes = [ctypes.c_void_p]
        self.lib.cudaEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.lib.cudaEventSynchronize.argtypes = [ctypes.c_void_p]
        self.lib.cudaEventElapsedTime.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_void_p]

    def check(self, code: int, what: str):
        if code != 0:
            raise CudaError(code, f"{what}: {self.lib.cudaGetErrorString(code).decode()} (cudaError {code})")

    def malloc(self, nbytes: int) -> int:
        pointer = ctypes.c_void_p()
        self.check(self.lib.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(max(1, nbytes))), f"cudaMalloc({nbytes})")
        return pointer.value

    def free(self, pointer: int):
        self.lib.cudaFree(pointer)

    def upload(self, array) -> int:
        pointer = self.malloc(array.nbytes)
        self.check(self.lib.cudaMemcpy(pointer, array.ctypes.data, array.nbytes, H2D), "cudaMemcpy to the GPU")
        return pointer

    def download(self, pointer: int, array):
        self.check(self.lib.cudaMemcpy(array.ctypes.data, pointer, array.nbytes, D2H), "cudaMemcpy from the GPU")

    def synchronize(self, what: str):
        self.check(self.lib.cudaDeviceSynchronize(), what)

    def event(self) -> int:
        event = ctypes.c_void_p()
        self.check(self.lib.cudaEventCreate(ctypes.byref(event)), "cudaEventCreate")
        return event.value


class Host:
    """Host memory with the interface of ``Cuda`` the cases use: the runner's self-test (``--device cpu``) runs CPU
    kernels through the same path."""

    def __init__(self):
        self.arrays: dict[int, object] = {}

    def upload(self, array) -> int:
        copy = array.copy()
        self.arrays[copy.ctypes.data] = copy
        return copy.ctypes.data

    def download(self, pointer: int, array):
        array[...] = self.arrays[pointer]

    def free(self, pointer: int):
        self.arrays.pop(pointer, None)

    def synchronize(self, what: str):
        pass


class LoadError(RuntimeError):
    """A library or function that cannot be loaded: the device is untouched, the worker goes on."""


class CudaError(RuntimeError):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def gpu_present() -> tuple[bool, str, int, int]:
    """(whether a CUDA GPU is usable, its name or why not, compute capability major, minor), from the driver alone:
    the parent process makes no CUDA context."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False, "no CUDA driver (libcuda.so.1 does not load)", 0, 0
    if driver.cuInit(0) != 0:
        return False, "the CUDA driver finds no usable GPU (cuInit fails)", 0, 0
    count = ctypes.c_int()
    if driver.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return False, "the CUDA driver reports no GPU", 0, 0
    name = ctypes.create_string_buffer(256)
    driver.cuDeviceGetName(name, 256, 0)
    major, minor = ctypes.c_int(), ctypes.c_int()
    driver.cuDeviceGetAttribute(ctypes.byref(major), 75, 0)  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    driver.cuDeviceGetAttribute(ctypes.byref(minor), 76, 0)  # ..._MINOR
    return True, name.value.decode(), major.value, minor.value


def arch_of(major: int, minor: int) -> str | None:
    """The bundle arch whose code runs on this compute capability (as the tests pick it)."""
    if major == 8:
        return "sm_80"
    return {(9, 0): "sm_90a", (10, 0): "sm_100a"}.get((major, minor))


# ---- comparing ------------------------------------------------------------------------------------------------------

def as_float64(array, dtype: str):
    """Values of ``array`` as float64; bfloat16 and FP8 arrive as their bits (uint16, uint8)."""
    import numpy as np

    if dtype == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype in FP8_FORMATS:
        return fp8_values(array, *FP8_FORMATS[dtype])
    return array.astype(np.float64)


FP8_FORMATS = {"float8_e4m3fn": (4, 3, 7, True), "float8_e5m2": (5, 2, 15, False)}   # exponent, mantissa bits, bias,
# "fn" (no infinities: only S.1111.111 is NaN)


def fp8_values(bits, exponent_bits: int, mantissa_bits: int, bias: int, finite: bool):
    """FP8 bit patterns (uint8) as float64 (OCP FP8: subnormals at exponent 0; e5m2 has inf and NaN at exponent 31,
    e4m3fn only NaN at S.1111.111)."""
    import numpy as np

    b = bits.astype(np.int64)
    sign = np.where(b >> 7, -1.0, 1.0)
    e = (b >> mantissa_bits) & ((1 << exponent_bits) - 1)
    m = b & ((1 << mantissa_bits) - 1)
    top = (1 << exponent_bits) - 1
    value = np.where(e == 0, m / (1 << mantissa_bits) * 2.0 ** (1 - bias),
                     (1 + m / (1 << mantissa_bits)) * 2.0 ** (e - bias))
    if finite:
        value = np.where((e == top) & (m == (1 << mantissa_bits) - 1), np.nan, value)
    else:
        value = np.where(e == top, np.where(m == 0, np.inf, np.nan), value)
    return sign * value


def compare(got, want, dtype: str, rtol: float, atol: float, exact: bool) -> dict:
    """numpy's assert_allclose rule (|got - want| <= atol + rtol |want|, NaN where NaN is expected), or equality."""
    import numpy as np

    g, w = as_float64(got, dtype), as_float64(want, dtype)
    both_nan = np.isnan(g) & np.isnan(w)
    if exact:
        bad = ~((g == w) | both_nan)
    else:
        with np.errstate(invalid="ignore"):
            bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) | both_nan)
    with np.errstate(invalid="ignore"):
        error = np.where(both_nan, 0.0, np.where(np.isnan(g) | np.isnan(w), np.inf, np.abs(g - w)))
    worst = int(np.argmax(error)) if error.size else 0
    result = {"mismatches": int(bad.sum()), "elements": int(bad.size),
              "max_abs_error": float(error.flat[worst]) if error.size else 0.0}
    if result["mismatches"]:
        first = np.unravel_index(int(np.argmax(bad)), bad.shape)
        result["first_mismatch"] = {"index": [int(i) for i in first], "got": float(g[first]),
                                    "expected": float(w[first])}
    if error.size:
        result["at_max_error"] = {"index": [int(i) for i in np.unravel_index(worst, error.shape)]}
    return result


# ---- the worker: loads the libraries and runs cases -----------------------------------------------------------------

class Worker:
    def __init__(self, manifest: dict, device: str):
        import tvm_ffi_ctypes as ffi

        self.ffi = ffi
        if device == "cpu":
            self.cuda, self.device_type = Host(), ffi.CPU
            self.runtime = ffi.Runtime(str(HERE / "lib"), cuda=False)
            self.modules: dict[str, object] = {}
            return
        cudart = find_library("libcudart.so.13*")
        if cudart is None:
            raise RuntimeError(f"no libcudart.so.13 in {library_folders()}; name its folder in $AXE4J_CUDA_LIBS")
        self.cuda, self.device_type = Cuda(cudart), ffi.CUDA
        self.cuda.check(self.cuda.lib.cudaSetDevice(0), "cudaSetDevice(0)")
        self.runtime = ffi.Runtime(str(HERE / "lib"), cuda=True)
        fatbins = HERE / "fatbins"

        def compile_cuda(source, *_):
            """TVM compiles a library's CUDA source when it is loaded; the bundle holds nvcc's fatbin of it."""
            import hashlib

            sha = hashlib.sha256(source.encode(errors="surrogateescape")).hexdigest()
            path = fatbins / f"{sha}.fatbin"
            if not path.is_file():
                raise FileNotFoundError(f"no fatbin for CUDA source {sha[:12]} in {fatbins}")
            return path.read_bytes()

        self.runtime.register("tvm_callback_cuda_compile", compile_cuda)
        self.modules: dict[str, object] = {}

    def function(self, library: str, symbol: str):
        """The case's function; a library that does not load fails every case of it with the same error."""
        if library not in self.modules:
            try:
                self.modules[library] = self.runtime.load_module(str(HERE / library))
            except Exception as error:  # noqa: BLE001
                self.modules[library] = LoadError(f"{library} does not load: {type(error).__name__}: {error}")
        module = self.modules[library]
        if isinstance(module, LoadError):
            raise module
        try:
            return module.function(symbol)
        except Exception as error:  # noqa: BLE001
            raise LoadError(f"{library}: {type(error).__name__}: {error}") from None

    def tensors(self, arrays, dtypes):
        pointers = [self.cuda.upload(a) for a in arrays]
        views = [self.ffi.Tensor(p, a.shape, d, self.device_type, 0) for p, a, d in zip(pointers, arrays, dtypes)]
        return pointers, views

    def run_case(self, case: dict) -> dict:
        import numpy as np

        started = time.time()
        data = np.load(HERE / case["npz"])
        args = [np.ascontiguousarray(data[f"a{i}"]) for i in range(len(case["args"]))]
        dtypes = [a["dtype"] for a in case["args"]]
        function = self.function(case["library"], case["symbol"])
        pointers, views = self.tensors(args, dtypes)
        try:
            function(*views)
            self.cuda.synchronize(f"{case['name']} (after the kernel)")
            outputs = []
            for position, index in enumerate(case["outputs"]):
                got = np.empty_like(args[index])
                self.cuda.download(pointers[index], got)
                outputs.append(compare(got, data[f"e{position}"], dtypes[index], case["rtol"], case["atol"],
                                       case["check_exact"]) | {"argument": index})
        finally:
            for p in pointers:
                self.cuda.free(p)
        passed = all(o["mismatches"] == 0 for o in outputs)
        return {"name": case["name"], "status": "pass" if passed else "fail", "outputs": outputs,
                "max_abs_error": max(o["max_abs_error"] for o in outputs), "seconds": round(time.time() - started, 3)}

    def problem(self, m: int, n: int, k: int, kind: str = "structured", dtype: str = "float16"):
        """The inputs of this kind and dtype and numpy's D for this shape, kept for the next GEMM of the same shape,
        kind and dtype (bfloat16 arrays hold the bits, as uint16)."""
        import numpy as np

        if (getattr(self, "_problem", None) or (None,))[0] != (m, n, k, kind, dtype):
            self._problem = None  # free the last shape's arrays first
            a, b = gemm_inputs(kind, m, n, k, dtype)
            product = as_float64(a, dtype).astype(np.float32) @ as_float64(b, dtype).astype(np.float32).T
            # FP8 products are kept in FP32 (time_gemm scales them into D's type)
            self._problem = ((m, n, k, kind, dtype), a, b,
                             product if dtype in FP8_FORMATS else to_dtype(product, dtype))
        return self._problem[1:]

    def time_gemm(self, timing: dict, runs: int, warmup: int, d_path: str | None = None,
                  kind: str = "structured") -> dict:
        """The GEMM on inputs of ``kind`` (``gemm_inputs``): checked against numpy, timed with the L2 flushed before
        each launch; D (raw fp16) written to ``d_path`` when given."""
        import numpy as np

        m, n, k = timing["m"], timing["n"], timing["k"]
        dtype = timing.get("dtype", "float16")
        a, b, reference = self.problem(m, n, k, kind, dtype)
        out = timing.get("out_dtype", dtype)
        if timing.get("scale"):   # FP8 with per-tensor scales: D = 0.5 * 0.25 * (A B^T) in out_dtype
            reference = to_dtype(as_float64(reference, dtype) * FP8_SCALES[0] * FP8_SCALES[1], out)
        d = np.zeros((m, n), reference.dtype)
        function = self.function(timing["library"], timing["symbol"])
        epilogue = timing.get("epilogue")
        if epilogue:
            c, bias = epilogue_inputs(m, n)
            reference = apply_epilogue(epilogue, a, b, c, bias)
            pointers, views = self.tensors([a, b, c, bias, d], ["float16", "float16", "float16", "float32",
                                                                "float16"])
        else:
            # split-K: the FP32 partials W and the per-tile counts (zeros; the kernel leaves them zeros) before D
            shapes = timing.get("workspace") or []
            extra = [np.zeros(shapes[0], np.float32), np.zeros(shapes[1], np.int32)] if shapes else []
            extra_types = ["float32", "int32"] if shapes else []
            if timing.get("scale"):
                scales = np.array(FP8_SCALES, np.float32)
                pointers, views = self.tensors([a, b, scales, *extra, d],
                                               [dtype, timing.get("dtype_b", dtype), "float32", *extra_types, out])
            else:
                pointers, views = self.tensors([a, b, *extra, d], [dtype, dtype, *extra_types, dtype])
        flush = self.cuda.malloc(FLUSH_BYTES)
        start, stop = self.cuda.event(), self.cuda.event()
        lib = self.cuda.lib
        try:
            for _ in range(warmup):
                function(*views)
            self.cuda.synchronize("GEMM warm-up")
            times = []
            for r in range(runs):
                self.cuda.check(lib.cudaMemsetAsync(flush, r & 0xFF, FLUSH_BYTES, None), "cudaMemsetAsync (L2 flush)")
                self.cuda.check(lib.cudaEventRecord(start, None), "cudaEventRecord")
                function(*views)
                self.cuda.check(lib.cudaEventRecord(stop, None), "cudaEventRecord")
                self.cuda.check(lib.cudaEventSynchronize(stop), "GEMM run")
                elapsed = ctypes.c_float()
                self.cuda.check(lib.cudaEventElapsedTime(ctypes.byref(elapsed), start, stop), "cudaEventElapsedTime")
                times.append(elapsed.value)
            self.cuda.download(pointers[-1], d)
        finally:
            for p in pointers + [flush]:
                self.cuda.free(p)
        rtol, atol = (timing["rtol"], timing["atol"]) if kind == "structured" else (RANDN_RTOL, RANDN_ATOL)
        check = compare(d, reference, out, rtol, atol, False)
        times.sort()
        median = times[len(times) // 2]
        if d_path and not epilogue:   # a fused epilogue's D is not cuBLAS's GEMM
            d.tofile(d_path)
        return {"m": m, "n": n, "k": k, "dtype": dtype, "inputs": kind, "runs": runs, "warmup": warmup, "flush_bytes": FLUSH_BYTES,
                "median_ms": median, "min_ms": times[0], "max_ms": times[-1],
                "tflops": 2.0 * m * n * k / (median * 1e-3) / 1e12, "matches_numpy": check["mismatches"] == 0,
                "check": check}


def epilogue_inputs(m: int, n: int):
    """C (fp16) and the bias (float32) of a fused-epilogue GEMM, from closed formulas."""
    import numpy as np

    c = (((3 * np.arange(m)[:, None] + 7 * np.arange(n)[None, :]) % 11 - 5) / 4.0).astype(np.float16)
    bias = ((np.arange(n) % 7 - 3) / 8.0).astype(np.float32)
    return c, bias


def apply_epilogue(epilogue: dict, a, b, c, bias):
    """numpy's act(alpha A B^T + beta C + bias) in float32, as fp16 (the kernels' axe4j.cuda.kernels.epilogue)."""
    import numpy as np

    x = np.float32(epilogue["alpha"]) * (a.astype(np.float32) @ b.astype(np.float32).T)
    if epilogue["beta"] != 0:
        x += np.float32(epilogue["beta"]) * c.astype(np.float32)
    if epilogue["bias"]:
        x += bias[None, :]
    if epilogue["activation"] == "relu":
        x = np.maximum(x, 0)
    elif epilogue["activation"] == "silu":
        x = x / (1 + np.exp(-x))
    return x.astype(np.float16)


def to_dtype(values, dtype: str):
    """float values in a 16-bit GEMM dtype: float16, or bfloat16 as its bits in uint16 (round to nearest even)."""
    import numpy as np

    if dtype == "float16":
        return values.astype(np.float16)
    if dtype == "bfloat16":
        bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    if dtype in FP8_FORMATS:
        return fp8_bits(values, *FP8_FORMATS[dtype])
    raise ValueError(f"GEMM dtype {dtype!r}: float16, bfloat16, float8_e4m3fn or float8_e5m2")


def fp8_bits(values, exponent_bits: int, mantissa_bits: int, bias: int, finite: bool):
    """float values as FP8 bits (uint8), round to nearest even, saturating at the largest finite value (as FP8
    checkpoints are quantised): the pattern whose value ``fp8_values`` gives is the nearest one."""
    import numpy as np

    table = fp8_values(np.arange(128, dtype=np.uint8), exponent_bits, mantissa_bits, bias, finite)
    finite_codes = np.flatnonzero(np.isfinite(table))          # ascending magnitudes 0 .. max
    magnitudes = table[finite_codes]
    x = np.abs(np.asarray(values, dtype=np.float64))
    hi = np.clip(np.searchsorted(magnitudes, x), 1, len(magnitudes) - 1)
    lo = hi - 1
    below, above = magnitudes[lo], magnitudes[hi]
    # nearest; a tie goes to the even code (mantissa's last bit 0)
    pick_hi = (above - x < x - below) | ((above - x == x - below) & (finite_codes[hi] % 2 == 0))
    code = np.where(x >= magnitudes[-1], finite_codes[-1], np.where(pick_hi, finite_codes[hi], finite_codes[lo]))
    return (code | np.where(np.signbit(values), 0x80, 0)).astype(np.uint8)


def random_inputs(m: int, n: int, k: int, seed: int = 0, dtype: str = "float16"):
    """Seeded random-normal A (M x K) and B (N x K) in ``dtype``: data without the formula's structure."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k), dtype=np.float32)
    return to_dtype(a, dtype), to_dtype(b, dtype)


def gemm_inputs(kind: str, m: int, n: int, k: int, dtype: str = "float16"):
    """A and B of one input kind: ``randn`` (``random_inputs``) or ``structured`` (``harness_inputs``)."""
    if kind == "randn":
        return random_inputs(m, n, k, dtype=dtype)
    if kind == "structured":
        a, b = harness_inputs(m, n, k)
        return to_dtype(a.astype("float32"), dtype), to_dtype(b.astype("float32"), dtype)
    raise ValueError(f"input kind {kind!r}: one of {', '.join(INPUT_KINDS)}")


def harness_inputs(m: int, n: int, k: int, seed: int = 0):
    """The cuBLAS harness's inputs (native/README.md), exact in fp16."""
    import numpy as np

    a = ((7 * np.arange(m)[:, None] + 13 * np.arange(k)[None, :] + seed) % 9 - 4) / 8.0
    b = ((11 * np.arange(n)[:, None] + 5 * np.arange(k)[None, :] + 2 * seed) % 9 - 4) / 8.0
    return a.astype(np.float16), b.astype(np.float16)


def worker_main(args) -> int:
    """Runs cases ``--first``.. of this arch, one JSON line per event on stdout; exits 3 after a CUDA error (the
    context is lost: the parent starts a new worker with the next case)."""
    manifest = json.loads((HERE / "manifest.json").read_text())
    names = json.loads(Path(args.worker_cases).read_text())

    def emit(record):
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

    try:
        worker = Worker(manifest, args.device)
    except Exception as error:  # noqa: BLE001
        emit({"setup_error": f"{type(error).__name__}: {error}"})
        os._exit(2)
    by_name = {c["name"]: c for c in manifest["cases"]}
    for name in names:
        if name.startswith("@timing:"):
            emit({"start": name})
            _, index, kind = name.split(":")
            index = int(index)
            try:
                emit({"timing": worker.time_gemm(manifest["timings"][index], args.runs, args.warmup,
                                                 f"{args.gemm_d}.{index}.{kind}", kind)})
            except Exception as error:  # noqa: BLE001
                emit({"timing": {"error": f"{type(error).__name__}: {error}"}})
                os._exit(3)
            continue
        emit({"start": name})
        try:
            emit({"result": worker.run_case(by_name[name])})
        except Exception as error:  # noqa: BLE001
            emit({"result": {"name": name, "status": "error", "message": f"{type(error).__name__}: {error}"}})
            if not isinstance(error, LoadError):  # the kernel ran or was launched: start over in a fresh context
                os._exit(3)
    os._exit(0)  # skip the destructors: the modules unload with the process


# ---- the parent: runs workers, the harness, and writes the summary --------------------------------------------------

def run_workers(names: list[str], args, on_record) -> None:
    """Runs ``names`` in workers, a new one after each crash or timeout, until every name has an outcome."""
    import queue
    import threading

    pending = list(names)
    while pending:
        listing = Path(args.scratch) / "pending.json"
        listing.write_text(json.dumps(pending))
        command = [sys.executable, str(Path(__file__).resolve()), "--worker-cases", str(listing), "--runs",
                   str(args.runs), "--warmup", str(args.warmup), "--gemm-d", str(Path(args.scratch) / "axe4j_d.bin"),
                   "--device", args.device]
        errors = open(Path(args.scratch) / "worker.stderr", "w+")
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
        lines: queue.Queue = queue.Queue()

        def pump(stream=process.stdout):
            for line in stream:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        current, deadline, finished = None, time.time() + args.timeout, set()
        while True:
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                if current is not None and time.time() > deadline:
                    process.kill()
                    on_record(current, {"name": current, "status": "timeout",
                                        "message": f"no result within {args.timeout:g} s: the worker was killed"})
                    finished.add(current)
                    current = None
                    break
                continue
            if line is None:  # the worker ended
                break
            record = json.loads(line)
            if "setup_error" in record:
                for name in pending:
                    on_record(name, {"name": name, "status": "error", "message": record["setup_error"]})
                process.wait()
                return
            if "start" in record:
                current, deadline = record["start"], time.time() + args.timeout
            else:
                on_record(current, record.get("result", record.get("timing")))
                finished.add(current)
                current = None
        process.wait()
        errors.seek(0)
        tail = [line.rstrip() for line in errors.read().splitlines() if line.strip()][:12]
        errors.close()
        if current is not None:  # the worker died inside this case
            on_record(current, {"name": current, "status": "crash",
                                "message": f"the worker process ended (status {process.returncode}) during it",
                                "stderr": tail})
            finished.add(current)
        pending = [n for n in pending if n not in finished]


def run_harness(timing: dict, args, ours: list[Path], kind: str = "structured") -> dict:
    """The cuBLAS harness on the same problem and inputs, timed the same way; its D compared with each of ours (raw
    fp16 files ``ours``): ``max_rel_diff_to_axe4j`` lists the differences in that order (None where a file is
    missing). Inputs other than the harness's own formula go to it as files (``--inputs``)."""
    import numpy as np

    binary = HERE / "bin" / "cublas_gemm_bench"
    wanted = ("libcublas.so.13*", "libcublasLt.so.13*", "libcudart.so.13*")
    folders = [f for f in library_folders() if any(glob.glob(os.path.join(f, p)) for p in wanted)]
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(folders + [os.environ.get("LD_LIBRARY_PATH", "")]))
    saved = Path(args.scratch) / "cublas_d.bin"
    dtype = timing.get("dtype", "float16")
    if dtype in FP8_FORMATS:
        return {"error": "the cuBLAS harness times FP16 and BF16; torch._scaled_mm (cuBLASLt FP8) is the FP8 peer"}
    command = [str(binary), str(timing["m"]), str(timing["n"]), str(timing["k"]), "--number", "1", "--repeat",
               str(args.runs), "--warmup", str(args.warmup), "--flush-l2", str(FLUSH_BYTES), "--save", str(saved)]
    if dtype == "bfloat16":
        command += ["--dtype", "bf16"]
    if kind != "structured":
        a, b = gemm_inputs(kind, timing["m"], timing["n"], timing["k"], dtype)
        paths = [Path(args.scratch) / "cublas_a.bin", Path(args.scratch) / "cublas_b.bin"]
        a.tofile(paths[0])
        b.tofile(paths[1])
        command += ["--inputs", str(paths[0]), str(paths[1])]
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"error": f"exit {out.returncode}: {out.stderr.strip()}", "library_folders": folders}
    report = json.loads(out.stdout)
    storage = np.uint16 if dtype == "bfloat16" else np.float16
    theirs = as_float64(np.fromfile(saved, dtype=storage), dtype)
    diffs = []
    for path in ours:
        if path.is_file():
            d = as_float64(np.fromfile(path, dtype=storage), dtype)
            diffs.append(float(np.max(np.abs(d - theirs) / (np.abs(theirs) + 1.0))))
        else:
            diffs.append(None)
    report["max_rel_diff_to_axe4j"] = diffs
    return report


def run_torch(timing: dict, args, ours: list[Path], kind: str) -> dict:
    """``torch.nn.functional.linear(A, B)`` (D = A B^T, what a served model calls) on the same inputs, timed as the
    kernels are (CUDA events, the L2 flushed before each launch, median); its D compared with each of ours. An
    ``error`` record where torch is not installed or has no CUDA."""
    import numpy as np

    try:
        import torch
        import torch.nn.functional as F
    except ImportError as error:
        return {"error": f"torch not installed ({error})"}
    if not torch.cuda.is_available():
        return {"error": "torch has no CUDA device"}
    m, n, k = timing["m"], timing["n"], timing["k"]
    dtype = timing.get("dtype", "float16")
    a_host, b_host = gemm_inputs(kind, m, n, k, dtype)
    if dtype == "bfloat16":   # the bits, as int16, then viewed as bfloat16
        a = torch.from_numpy(a_host.view(np.int16)).cuda().view(torch.bfloat16)
        b = torch.from_numpy(b_host.view(np.int16)).cuda().view(torch.bfloat16)
    elif dtype in FP8_FORMATS:   # the bits, then viewed as torch's FP8 type
        a = torch.from_numpy(a_host).cuda().view(getattr(torch, dtype))
        b = torch.from_numpy(b_host).cuda().view(getattr(torch, timing.get("dtype_b", dtype)))
    else:
        a = torch.from_numpy(a_host).cuda()
        b = torch.from_numpy(b_host).cuda()
    if dtype in FP8_FORMATS:   # cuBLASLt's FP8 GEMM with the same per-tensor scales and D type
        scale_a = torch.tensor(FP8_SCALES[0], device="cuda")
        scale_b = torch.tensor(FP8_SCALES[1], device="cuda")
        out_dtype = getattr(torch, timing.get("out_dtype", "bfloat16"))

        def gemm():
            return torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype)
    else:
        def gemm():
            return F.linear(a, b)
    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    for _ in range(args.warmup):
        d = gemm()
    torch.cuda.synchronize()
    times = []
    for r in range(args.runs):
        flush.fill_(r & 0xFF)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        d = gemm()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    median = times[len(times) // 2]
    theirs = d.float().cpu().numpy()
    diffs = []
    for path in ours:
        if path.is_file():
            out = timing.get("out_dtype", dtype)
            storage = np.uint16 if out == "bfloat16" else np.float16
            mine = as_float64(np.fromfile(path, dtype=storage), out).reshape(m, n)
            diffs.append(float(np.max(np.abs(mine - theirs) / (np.abs(theirs) + 1.0))))
        else:
            diffs.append(None)
    del a, b, d, flush
    torch.cuda.empty_cache()
    peer = "torch._scaled_mm" if dtype in FP8_FORMATS else "torch.nn.functional.linear"
    return {"ms": median, "tflops": 2.0 * m * n * k / (median * 1e-3) / 1e12, "version": torch.__version__, "op": peer,
            "max_rel_diff_to_axe4j": diffs}


def summarize(manifest, results, timings, device, arch, out: Path, started: float) -> int:
    """``timings``: one record per timed GEMM (manifest order), each with ``name`` and ``cublas`` (the harness on
    its shape) or ``error``."""
    counts: dict[str, int] = {}
    for result in results.values():
        counts[result["status"]] = counts.get(result["status"], 0) + 1
    ok = all(r["status"] in ("pass", "skipped") for r in results.values())
    for timing in timings:
        for per in timing.get("by_inputs", {"-": timing}).values():
            ok = ok and "error" not in per and per.get("matches_numpy", False)
    summary = {"device": device, "arch": arch, "date": time.strftime("%Y-%m-%d", time.gmtime()), "counts": counts,
               "passed": ok,
               "seconds": round(time.time() - started, 1), "cases": list(results.values()), "timings": timings,
               "not_in_bundle": manifest.get("build_errors", {})}
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    lines = [f"# GPU bundle results: {device} ({arch})", "",
             " ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + f"; {summary['seconds']} s", ""]
    if timings:
        lines += ["## GEMM timing", "", "Ratios per input kind, every peer timed on the same inputs in this run.", "",
                  "| kernel | shape | inputs | median ms | TFLOP/s | cuBLAS TFLOP/s | ratio | torch TFLOP/s | ratio "
                  "to torch | check |", "|---|---|---|---|---|---|---|---|---|---|"]
        runs = None
        for timing in timings:
            name = timing["name"]
            for kind, per in timing.get("by_inputs", {"structured": timing}).items():
                if "error" in per:
                    lines.append(f"| axe4j {name} | - | {kind} | - | - | - | - | - | - | error: {per['error']} |")
                    continue
                runs = runs or per
                shape = f"{per['m']}x{per['n']}x{per['k']}" + (" bf16" if per.get("dtype") == "bfloat16" else "")
                peers = []
                for peer in ("cublas", "torch"):
                    report = per.get(peer, {})
                    figure = f"{report['tflops']:.1f}" if "tflops" in report else report.get("error", "-")
                    ratio = f"{per[f'ratio_to_{peer}']:.3f}" if f"ratio_to_{peer}" in per else "-"
                    peers += [str(figure).replace("|", "/")[:60], ratio]
                lines.append(f"| axe4j {name} | {shape} | {kind} | {per['median_ms']:.4f} | {per['tflops']:.1f} | "
                             + " | ".join(peers) + f" | numpy: {'pass' if per['matches_numpy'] else 'FAIL'}; cuBLAS "
                             f"D max rel diff {per.get('max_rel_diff_to_cublas', '-')} |")
        if runs:
            lines += ["", f"Median of {runs['runs']} launches after {runs['warmup']} warm-up launches, "
                          f"{runs['flush_bytes'] >> 20} MiB overwritten before each (cold L2); CUDA events; "
                          "cuBLAS timed the same way in its harness and torch.nn.functional.linear in this process, "
                          "once per shape and input kind. randn: seeded random-normal FP16, checked with "
                          f"|D - ref| <= {RANDN_ATOL} + {RANDN_RTOL} |ref| (ref: FP32 numpy); structured: the "
                          "harness's formula ((7i + 13k) mod 9 - 4) / 8, exact.", ""]
        else:
            lines.append("")
    lines += ["## Cases", "", "| case | status | max abs error | mismatches | note |", "|---|---|---|---|---|"]
    for r in results.values():
        mismatches = sum(o["mismatches"] for o in r.get("outputs", []))
        error = f"{r['max_abs_error']:.3g}" if "max_abs_error" in r else "-"
        note = r.get("message", "")
        for o in r.get("outputs", []):
            if o["mismatches"]:
                first = o["first_mismatch"]
                note += (f"argument {o['argument']}: {o['mismatches']} of {o['elements']} differ, first at "
                         f"{first['index']}: {first['got']:.6g}, expected {first['expected']:.6g}. ")
        note = (note + " " + " / ".join(r.get("stderr", [])[:3])).strip().replace("|", "/")
        lines.append(f"| {r['name']} | {r['status']} | {error} | {mismatches} | {note[:300]} |")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print(f"{'PASS' if ok else 'FAIL'}: {' '.join(f'{k} {v}' for k, v in sorted(counts.items()))}; "
          f"summary in {out / 'summary.md'}")
    return 0 if ok else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results", help="folder for summary.json and summary.md")
    parser.add_argument("--only", default="", help="run the cases whose name contains this text")
    parser.add_argument("--no-timing", action="store_true", help="skip the GEMM timing against cuBLAS")
    parser.add_argument("--inputs", default=",".join(INPUT_KINDS),
                        help="input kinds the GEMMs are timed on, comma-separated (the first gives the top-level "
                             "figures): randn (seeded random-normal), structured (the cuBLAS harness's formula)")
    parser.add_argument("--no-torch", action="store_true", help="skip torch.nn.functional.linear as a second peer")
    parser.add_argument("--runs", type=int, default=30, help="timed launches of each GEMM (the median is reported)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a case may take before it is killed")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cpu: the runner's self-test, the bundle's 'cpu' cases on host memory (no GPU needed)")
    parser.add_argument("--worker-cases", help=argparse.SUPPRESS)  # a file listing the cases a worker runs
    parser.add_argument("--gemm-d", help=argparse.SUPPRESS)          # where a worker writes the timed GEMM's D
    args = parser.parse_args(argv)
    sys.dont_write_bytecode = True  # no __pycache__ inside the bundle
    sys.path.insert(0, str(HERE))
    if args.worker_cases is not None:
        return worker_main(args)
    args.kinds = [kind for kind in args.inputs.split(",") if kind]
    if not args.kinds or any(kind not in INPUT_KINDS for kind in args.kinds):
        print(f"--inputs {args.inputs!r}: a comma-separated list of {', '.join(INPUT_KINDS)}")
        return 2

    manifest = json.loads((HERE / "manifest.json").read_text())
    cases = [c for c in manifest["cases"] if args.only in c["name"]]
    if args.list:
        for case in cases:
            print(f"{case['name']}  ({case['arch']}, {case['library']}:{case['symbol']})")
        return 0
    started = time.time()
    if args.device == "cpu":
        device, arch = "host CPU (self-test)", "cpu"
    else:
        present, device, major, minor = gpu_present()
        if not present:
            print(f"no GPU: {device}; nothing to run ({len(cases)} cases in the bundle)")
            return 0
        if find_library("libcudart.so.13*") is None:
            print(f"GPU {device}, but no libcudart.so.13 in {library_folders()}: name its folder in $AXE4J_CUDA_LIBS")
            return 1
        arch = arch_of(major, minor)
        device = f"{device}, compute capability {major}.{minor}"
    print(f"{device}: running the {arch or 'no'} cases of the bundle")

    results: dict[str, dict] = {}
    for case in cases:
        if case["arch"] != arch:
            results[case["name"]] = {"name": case["name"], "status": "skipped",
                                     "message": f"{case['arch']} code; this GPU runs {arch}"}
    todo = [c["name"] for c in cases if c["arch"] == arch]
    timed = [] if args.no_timing else [
        i for i, t in enumerate(manifest.get("timings", []))
        if t["arch"] == arch and t["library"] and args.only in t["name"]]
    kinds = args.kinds
    timings = {i: {"name": manifest["timings"][i]["name"], "by_inputs": {}} for i in timed}

    def record(name, result):
        if name.startswith("@timing:"):
            if "tflops" not in result and "error" not in result:  # the worker crashed or hung while timing
                result = {"error": f"{result['status']}: {result.get('message', '')}"}
            _, index, kind = name.split(":")
            timings[int(index)]["by_inputs"][kind] = result
            return
        results[name] = result
        done = sum(1 for r in results.values() if r["status"] != "skipped")
        sys.stderr.write(f"\r[{done}/{len(todo)}] {name:<70.70} {result['status']}")
        if result["status"] != "pass":
            sys.stderr.write(f"\n  {result.get('message') or result.get('outputs')}\n")
        sys.stderr.flush()

    with tempfile.TemporaryDirectory() as scratch:
        args.scratch = scratch
        shapes: dict = {}   # (m, n, k) -> the timings of that shape, in order
        for i in timed:
            entry = manifest["timings"][i]
            shapes.setdefault((entry["m"], entry["n"], entry["k"]), []).append(i)
        # shape by shape, kind by kind: a worker makes each shape's inputs and reference once per kind
        run_workers(todo + [f"@timing:{i}:{kind}" for indices in shapes.values() for kind in kinds
                            for i in indices], args, record)
        sys.stderr.write("\n")
        for (m, n, k), indices in shapes.items():
            for kind in kinds:
                sys.stderr.write(f"\rpeers on {m}x{n}x{k} ({kind})".ljust(60))
                ours = [Path(f"{Path(args.scratch) / 'axe4j_d.bin'}.{i}.{kind}") for i in indices]
                peers = {"cublas": run_harness(manifest["timings"][indices[0]], args, ours, kind)}
                if not args.no_torch:
                    peers["torch"] = run_torch(manifest["timings"][indices[0]], args, ours, kind)
                for peer, report in peers.items():
                    diffs = report.pop("max_rel_diff_to_axe4j", [None] * len(indices))
                    for i, diff in zip(indices, diffs):
                        timing = timings[i]["by_inputs"].setdefault(kind, {"error": "not timed"})
                        timing[peer] = report
                        if "tflops" in report and "tflops" in timing:
                            timing[f"ratio_to_{peer}"] = timing["tflops"] / report["tflops"]
                            timing[f"max_rel_diff_to_{peer}"] = (
                                "n/a (fused epilogue)" if manifest["timings"][i].get("epilogue") else diff)
        sys.stderr.write("\n")
        for i in timed:   # the top-level figures: the first kind of --inputs (randn unless told)
            timings[i].update(timings[i]["by_inputs"].get(kinds[0], {"error": "not timed"}))
    return summarize(manifest, {c["name"]: results[c["name"]] for c in cases if c["name"] in results},
                     [timings[i] for i in timed], device, arch, args.out, started)


if __name__ == "__main__":
    sys.exit(main())
