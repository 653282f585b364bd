"""make gpu-bundle: every small GPU case of the test catalog, compiled and exported for a GPU machine without TVM.

Writes ``out/gpu-bundle/`` (docs/gpu-bundle.md): the kernels of ``python/tests/_gpu_cases.py`` whose size is
"small", plus the large GEMMs timed against cuBLAS (``timing_cases()``), exported with ``export_library`` into one shared
library per (lowering, arch) -- the PrimFuncs of a group get unique symbols and are compiled as one IRModule -- with
the fatbin nvcc makes of each library's CUDA source (TVM 0.27 keeps the source in the library and compiles it when
the library is loaded, through the global ``tvm_callback_cuda_compile``; the runner registers one that returns
these fatbins); each case's arguments and expected outputs (npz); the TVM runtime libraries (no compiler) with their
licenses; the cuBLAS harness; and the runner ``run.py`` with its ctypes binding of the tvm-ffi C ABI.

A bundle whose recorded input digest (sources, jars' contents, toolchain versions) matches is left as it is;
``--force`` rebuilds. Prints the size and the build time.

``--sweep sample`` (what ``make test`` builds) compiles only the first GEMM of each (tile configuration, kind) of the
FP16 ``SWEEP`` and, apart, of the rest of the sweep (decode, served, ragged, BF16, FP8: ``sweep_kind``), plus the GEMMs
the JVM GPU bundle times (``JVM_TIMED_GEMMS``), so every kind of kernel the GPU times is still lowered and compiled here, and the FP8 MoE experts (``compile_moe_fp8``, their own
library) at 16 tokens only; ``make gpu-bundle`` builds the whole sweep (``full``) and the FP8 experts at every MoE token
count. A full bundle also serves a request for a sample.

usage: gpu_bundle.py [--out DIR] [--force] [--sweep {full,sample}]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = ROOT / "tools" / "gpu-bundle"
TESTS = ROOT / "python" / "tests"
HARNESS = ROOT / "native" / "build" / "cublas_gemm_bench"
UPSTREAM = ("corpus/",)  # cases lowered with TVM's own dispatch cases only (test_cuda_corpus.py)
LIMIT = 64 << 20         # the bundle's size limit (docs/gpu-bundle.md)
MOE_TOKENS = (1, 16, 64, 256, 1024, 4096)   # token counts of the MoE timing (moe_bench.py), FP16 and BF16
MOE_VARIANTS = ((64, 128), (128, 64), (128, 256))   # (BN1, BN2) besides the default (128, 128), timed in BF16 at
MOE_VARIANT_TOKENS = (16, 256, 4096)               # these token counts, three-kernel form (moe_bench.py)
MOE_FUSED_VARIANTS = ((True, False), (False, False))   # fused kernel (tickets, reset) besides (True, True), timed
MOE_FUSED_VARIANT_TOKENS = (256, 4096)                # in BF16 at these token counts: where the fused time goes
MOE_FP8_SAMPLE_TOKENS = (16,)   # the FP8 experts' token counts in a sample bundle (make test); full: MOE_TOKENS
MOE_FP8_LIBRARY = "kernels/moe-fp8-sm_90a.so"   # apart from moe-sm_90a.so: the JVM GPU bundle does not carry it
# carried as package `moe` (no TVM): numpy, torch and triton only
MOE_MODULES = ("__init__", "config", "schedule", "reference", "peers", "block_sort", "triton_moe", "fp8")


SWEEPS = ("full", "sample")
SWEPT = "hopper_gemm_pipelined/"   # the sweep's GEMMs; hopper_gemm (the teaching kernel) is always built
# The GEMMs the JVM GPU bundle times from Java (tools/jvm_gpu_bundle.py): in every sample. The last is Llama-3-8B's MLP
# up/gate projection at 4096 tokens.
JVM_TIMED_GEMMS = ("hopper_gemm_pipelined/8192x8192x8192_128x256", "hopper_gemm_pipelined/4096x4096x4096_128x256",
                   "hopper_gemm_pipelined/4096x28672x4096_128x256")


def timing_cases(sweep: str = "full") -> tuple[str, ...]:
    """The large GEMM cases timed against cuBLAS on a GPU, in this order (each also checked against numpy there):
    the teaching kernel, then the benchmark sweep (every applicable tile configuration of every shape,
    ``axe4j.cuda.kernels.gemm_tuning.sweep_cases``; then its BF16 part, named ``..._bf16``, and its FP8 part,
    ``..._fp8``), then the 128x256 kernel with a fused epilogue (alpha, beta C, bias, SiLU). ``sample``: of the
    GEMMs beyond the FP16 ``SWEEP`` (``extended_sweep``), only the first of each (``sweep_kind``, configuration)."""
    if sweep not in SWEEPS:
        raise ValueError(f"sweep must be one of {SWEEPS}, not {sweep!r}")
    names = full_timing_cases()
    if sweep == "full":
        return names
    seen, sampled = set(), []
    for name in names:
        if name.startswith(SWEPT) and name not in JVM_TIMED_GEMMS and not name.endswith("_fused"):
            # (own library or not, kind, tile label): one of each is lowered, compiled and exported
            tag = (name in extended_sweep(), sweep_kind(name), name.split("/")[1].split("_", 1)[1])
            if tag in seen:
                continue
            seen.add(tag)
        sampled.append(name)
    return tuple(sampled)


def sweep_kind(name: str) -> str:
    """A timed GEMM's kind: ``fp8``, ``bf16``, else by its FP16 shape: ``decode`` (M <= 64), ``ragged`` (M or N not
    a multiple of 128), ``served``."""
    if name.endswith(("_fp8", "_bf16")):
        return name.rsplit("_", 1)[1]
    m, n, _ = (int(x) for x in name.split("/")[1].split("_")[0].split("x"))
    return "decode" if m <= 64 else "ragged" if m % 128 or n % 128 else "served"


@functools.lru_cache(maxsize=1)
def full_timing_cases() -> tuple[str, ...]:
    sys.path.insert(0, str(ROOT / "python"))
    from axe4j.cuda.kernels import gemm_tuning

    return ("hopper_gemm/8192x4096x4096",) + tuple(
        f"hopper_gemm_pipelined/{m}x{n}x{k}_{config.label}" for (m, n, k), config in gemm_tuning.sweep_cases()) + tuple(
        f"hopper_gemm_pipelined/{m}x{n}x{k}_{config.label}_bf16"
        for (m, n, k), config in gemm_tuning.sweep_cases_bf16()) + tuple(
        f"hopper_gemm_pipelined/{m}x{n}x{k}_{config.label}_fp8"
        for (m, n, k), config in gemm_tuning.sweep_cases_fp8()) + (
        "hopper_gemm_pipelined/8192x4096x4096_128x256_fused",)


def timed_types(name: str) -> dict:
    """A timed GEMM's element types from its name: ``..._bf16`` BF16; ``..._fp8`` e4m3 x e4m3 with per-tensor
    scales and a BF16 D; else FP16."""
    if name.endswith("_fp8"):
        return {"dtype": "float8_e4m3fn", "out_dtype": "bfloat16", "scale": True}
    return {"dtype": "bfloat16" if name.endswith("_bf16") else "float16"}


@functools.lru_cache(maxsize=1)
def _workspaces() -> dict:
    """Split-K's (W, Count) shapes per timed GEMM name (``gemm_tuning.Config.workspace``)."""
    sys.path.insert(0, str(ROOT / "python"))
    from axe4j.cuda.kernels import gemm_tuning

    found = {}
    for suffix, cases in (("", gemm_tuning.sweep_cases()), ("_bf16", gemm_tuning.sweep_cases_bf16()),
                          ("_fp8", gemm_tuning.sweep_cases_fp8())):
        for (m, n, k), config in cases:
            if config.split_k > 1:
                found[f"hopper_gemm_pipelined/{m}x{n}x{k}_{config.label}{suffix}"] = [
                    list(shape) for shape in config.workspace(m, n)]
    return found


def timed_workspace(name: str) -> dict:
    """``{"workspace": [W shape, Count shape]}`` for a split-K GEMM (the harness passes zero float32 W and int32
    Count before D), else {}."""
    shapes = _workspaces().get(name)
    return {"workspace": shapes} if shapes else {}


def log(message: str) -> None:
    print(f"[gpu-bundle] {message}", file=sys.stderr, flush=True)


def symbol(name: str) -> str:
    """The exported function of a case: its name with every character outside [A-Za-z0-9] as '_'."""
    return "case_" + re.sub(r"[^A-Za-z0-9]", "_", name)


def file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("/", "__"))


# ---- the input digest ----------------------------------------------------------------------------------------------

def input_digest() -> str:
    """What the bundle is made of: this script and the payload, the axe4j package and the test modules the catalog
    reads, the jars on axe4j's classpath (entry names and CRCs, so a rebuild of identical classes matches), the
    harness's source and build script (nvcc's binary differs from build to build), and the versions of TVM,
    tvm-ffi and nvcc."""
    sys.path.insert(0, str(ROOT / "python"))
    sys.path.insert(0, str(TESTS))
    import _gpu_cases
    from axe4j import _classpath

    digest = hashlib.sha256()
    files = [Path(__file__), *sorted(PAYLOAD.iterdir()), *sorted((ROOT / "python" / "axe4j").rglob("*.py")),
             *sorted(TESTS.glob("_*.py")), *[TESTS / f"{m}.py" for m in _gpu_cases.MODULES], TESTS / "conftest.py",
             ROOT / "native" / "cublas_gemm_bench.cu", ROOT / "native" / "build.sh"]
    for path in files:
        if path.is_file():
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    for jar in _classpath.resolve():
        if jar.endswith(".jar"):
            with zipfile.ZipFile(jar) as archive:
                for info in sorted(archive.infolist(), key=lambda i: i.filename):
                    digest.update(f"{Path(jar).name}:{info.filename}:{info.CRC}:{info.file_size}\n".encode())
    for package in ("apache-tvm", "apache-tvm-ffi", "nvidia-cuda-nvcc", "numpy", "ml_dtypes"):
        digest.update(f"{package}={importlib.metadata.version(package)}\n".encode())
    return digest.hexdigest()


def up_to_date(out: Path, digest: str, sweep: str = "full") -> bool:
    """The bundle in ``out`` was built from these inputs, with the sweep asked for or the full one, and is whole."""
    manifest = out / "manifest.json"
    if not manifest.is_file():
        return False
    recorded = json.loads(manifest.read_text())
    if recorded.get("input_digest") != digest or recorded.get("sweep") not in ("full", sweep):
        return False
    needed = [case["npz"] for case in recorded["cases"]] + [lib["file"] for lib in recorded["libraries"]]
    needed += [f"fatbins/{lib['source_sha256']}.fatbin" for lib in recorded["libraries"]]
    return all((out / path).is_file() for path in needed)


# ---- compiling -----------------------------------------------------------------------------------------------------

def lowering(case) -> str:
    """The library a case goes to: TVM's own lowering (``upstream``), the sweep's decode, ragged, BF16 and FP8 GEMMs
    (``gemm-sweep``: timed only, kept out of the libraries the JVM GPU bundle carries), or ``axe4j``."""
    if case.name.startswith(UPSTREAM):
        return "upstream"
    if case.name in extended_sweep():
        return "gemm-sweep"
    return "axe4j"


@functools.lru_cache(maxsize=1)
def extended_sweep() -> frozenset:
    """The timed GEMMs beyond the FP16 ``SWEEP`` shapes: ``SERVED``'s, and the BF16 and FP8 parts."""
    sys.path.insert(0, str(ROOT / "python"))
    from axe4j.cuda.kernels import gemm_tuning

    served = {f"hopper_gemm_pipelined/{m}x{n}x{k}_{c.label}" for (m, n, k), c in gemm_tuning.sweep_cases()
              if (m, n, k) in gemm_tuning.SERVED}
    return frozenset(served | {name for name in full_timing_cases() if name.endswith(("_bf16", "_fp8"))})


def compile_group(cases, lowering_kind: str, target):
    """One executable for all ``cases`` (one arch): their PrimFuncs under unique symbols in one IRModule."""
    import tvm

    import _gpu_cases
    import axe4j

    funcs = {}
    for case in cases:
        func = _gpu_cases.prim_func(case.kernel())
        funcs[symbol(case.name)] = func.with_attr("global_symbol", symbol(case.name))
    module = tvm.IRModule(funcs)
    if lowering_kind == "upstream":
        from axe4j.cuda.choices import upstream_only

        with upstream_only():
            return tvm.compile(module, target=target, tir_pipeline="tirx")
    return axe4j.compile(module, target)


def compile_groups(cases):
    """{group name: (cases, executable)}; a group that does not compile is split to name the cases that fail,
    which are left out (``failed``: name -> error)."""
    groups: dict[str, list] = {}
    for case in cases:
        groups.setdefault(f"{lowering(case)}-{case.arch}", []).append(case)
    built, failed = {}, {}
    for group, members in groups.items():
        kind, target = lowering(members[0]), members[0].target
        assert all(str(c.target) == str(target) for c in members), f"{group}: cases with different targets"
        started = time.time()
        try:
            built[group] = (members, compile_group(members, kind, target))
        except Exception:  # noqa: BLE001  (find the case that fails, keep the others)
            good = []
            for case in members:
                try:
                    compile_group([case], kind, target)
                    good.append(case)
                except Exception as error:  # noqa: BLE001
                    failed[case.name] = f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"
                    log(f"{case.name} does not compile: {failed[case.name]}")
            if good:
                built[group] = (good, compile_group(good, kind, target))
        log(f"{group}: {len(built.get(group, ([], None))[0])} kernels lowered in {time.time() - started:.1f} s")
    return built, failed


def compile_moe():
    """(executable, moe): the CUDA MoE layer's kernels (``axe4j.moe.cuda``: gemm1, gemm2, combine, the fused
    experts and the schedule kernel) for each of MOE_TOKENS and each of FP16 and BF16 at Qwen3-30B-A3B's shapes, in
    one IRModule; ``moe["runs"]``: per (dtype, token count) its ``max_tiles`` and kernel symbols."""
    import tvm

    import axe4j
    from axe4j.moe import QWEN3_30B_A3B, cuda
    from axe4j.moe.cuda_kernels import ROWS
    from axe4j.moe.schedule import TileSchedule

    shape, funcs, runs = QWEN3_30B_A3B, {}, []
    for dtype, short in (("float16", "f16"), ("bfloat16", "bf16")):
        for tokens in MOE_TOKENS:
            symbols = {}
            funcs_of_run = cuda.kernels(shape, tokens, dtype=dtype)
            funcs_of_run["experts"] = cuda.kernels(shape, tokens, dtype=dtype, fused=True)["experts"]
            funcs_of_run["schedule"] = cuda.schedule_kernel(shape, tokens)   # the routing -> the tile schedule
            for kernel, func in funcs_of_run.items():
                symbols[kernel] = f"moe_{kernel}_{tokens}_tokens_{short}"
                funcs[symbols[kernel]] = func.with_attr("global_symbol", symbols[kernel])
            runs.append({"tokens": tokens, "dtype": dtype, "symbols": symbols, "bn1": 128, "bn2": 128,
                         "max_tiles": TileSchedule.max_tiles(tokens * shape.top_k, shape.experts, ROWS)})
    variants = []
    for bn1, bn2 in MOE_VARIANTS:
        for tokens in MOE_VARIANT_TOKENS:
            symbols = {}
            for kernel, func in cuda.kernels(shape, tokens, bn1, bn2, dtype="bfloat16").items():
                symbols[kernel] = f"moe_{kernel}_{tokens}_tokens_bf16_bn{bn1}x{bn2}"
                funcs[symbols[kernel]] = func.with_attr("global_symbol", symbols[kernel])
            variants.append({"tokens": tokens, "dtype": "bfloat16", "symbols": symbols, "bn1": bn1, "bn2": bn2,
                             "max_tiles": TileSchedule.max_tiles(tokens * shape.top_k, shape.experts, ROWS)})
    from axe4j.moe.cuda_kernels import combine_kernel, experts_kernel

    for tickets, reset in MOE_FUSED_VARIANTS:
        for tokens in MOE_FUSED_VARIANT_TOKENS:
            max_tiles = TileSchedule.max_tiles(tokens * shape.top_k, shape.experts, ROWS)
            tag = f"{tokens}_tokens_bf16_{'tickets' if tickets else 'block_order'}_{'reset' if reset else 'no_reset'}"
            symbols = {"experts": f"moe_experts_{tag}", "combine": f"moe_combine_{tag}"}
            funcs[symbols["experts"]] = experts_kernel(shape, tokens, max_tiles, 128, 128, "bfloat16", tickets,
                                                       reset).with_attr("global_symbol", symbols["experts"])
            funcs[symbols["combine"]] = combine_kernel(shape, tokens, "bfloat16").with_attr("global_symbol",
                                                                                           symbols["combine"])
            variants.append({"tokens": tokens, "dtype": "bfloat16", "symbols": symbols, "bn1": 128, "bn2": 128,
                             "tickets": tickets, "reset": reset, "max_tiles": max_tiles})
    executable = axe4j.compile(tvm.IRModule(funcs), cuda.target())
    moe = {"shape": {"experts": shape.experts, "top_k": shape.top_k, "hidden": shape.hidden,
                     "intermediate": shape.intermediate}, "rows": ROWS, "runs": runs, "variants": variants}
    return executable, moe


def moe_fp8_tokens(sweep: str) -> tuple[int, ...]:
    """The token counts of the FP8 MoE runs: every one of MOE_TOKENS in a full bundle, MOE_FP8_SAMPLE_TOKENS in a
    sample."""
    if sweep not in SWEEPS:
        raise ValueError(f"sweep must be one of {SWEEPS}, not {sweep!r}")
    return MOE_TOKENS if sweep == "full" else MOE_FP8_SAMPLE_TOKENS


def compile_moe_fp8(sweep: str = "full"):
    """(executable, moe_fp8): the FP8 (e4m3) expert kernels of ``axe4j.moe.cuda_fp8`` (quantise_x, gemm1,
    quantise_h, gemm2; BF16 tokens, H and output) for each of ``moe_fp8_tokens(sweep)`` at Qwen3-30B-A3B's shapes, in
    one IRModule. A run's ``schedule`` and ``combine`` are the BF16 run's kernels of the same token count in the
    16-bit MoE library (``shared_symbols``): ``cuda_fp8.kernels`` builds the very same PrimFuncs."""
    import tvm

    import axe4j
    from axe4j.moe import QWEN3_30B_A3B, cuda, cuda_fp8
    from axe4j.moe.cuda_kernels import ROWS
    from axe4j.moe.schedule import TileSchedule

    shape, funcs, runs = QWEN3_30B_A3B, {}, []
    for tokens in moe_fp8_tokens(sweep):
        symbols = {}
        for kernel, func in cuda_fp8.kernels(shape, tokens, dtype="bfloat16").items():
            if kernel in ("schedule", "combine"):
                continue
            symbols[kernel] = f"moe_fp8_{kernel}_{tokens}_tokens_bf16"
            funcs[symbols[kernel]] = func.with_attr("global_symbol", symbols[kernel])
        runs.append({"tokens": tokens, "dtype": "bfloat16", "weight_dtype": "float8_e4m3fn", "symbols": symbols,
                     "shared_symbols": {k: f"moe_{k}_{tokens}_tokens_bf16" for k in ("schedule", "combine")},
                     "bn1": 128, "bn2": 128,
                     "max_tiles": TileSchedule.max_tiles(tokens * shape.top_k, shape.experts, ROWS),
                     "scales": {"w1": "float32 per output channel (experts x 2 intermediate)",
                                "w2": "float32 per output channel (experts x hidden)",
                                "x": "float32 per tile-padded row (quantise_x)",
                                "h": "float32 per tile-padded row (quantise_h)",
                                "formula": "scale = max |row| / 448 (1 for a zero row), code = e4m3(v / scale)"}})
    executable = axe4j.compile(tvm.IRModule(funcs), cuda.target())
    return executable, {"library": MOE_FP8_LIBRARY, "runs": runs}


def fatbin(source: str, arch: str) -> bytes:
    from axe4j_tools.cuda_corpus import build

    return build.fatbin(source, arch)


# ---- arrays ----------------------------------------------------------------------------------------------------------

def storable(array):
    """(array numpy can save without ml_dtypes, dtype name): bfloat16 as its uint16 bit patterns, FP8 as uint8."""
    import numpy as np

    dtype = str(array.dtype)
    if dtype == "bfloat16":
        return np.ascontiguousarray(array).view(np.uint16), dtype
    if dtype in ("float8_e4m3fn", "float8_e5m2"):
        return np.ascontiguousarray(array).view(np.uint8), dtype
    return np.ascontiguousarray(array), dtype


def write_case(out: Path, case) -> dict:
    import numpy as np

    args = case.args()
    expected = case.expected(args)
    arrays, entry_args = {}, []
    for i, a in enumerate(args):
        arrays[f"a{i}"], dtype = storable(a)
        entry_args.append({"shape": list(a.shape), "dtype": dtype})
    for j, e in enumerate(expected):
        arrays[f"e{j}"], _ = storable(np.asarray(e))
    path = f"cases/{file_stem(case.name)}.npz"
    np.savez_compressed(out / path, **arrays)
    return {"name": case.name, "arch": case.arch, "symbol": symbol(case.name), "npz": path, "args": entry_args,
            "outputs": list(case.outputs), "rtol": case.rtol, "atol": case.atol, "check_exact": case.check_exact}


# ---- the bundle ------------------------------------------------------------------------------------------------------

def copy_runtime(out: Path) -> list[str]:
    """libtvm_ffi.so, libtvm_runtime.so, libtvm_runtime_cuda.so and the two packages' license files."""
    import tvm
    import tvm_ffi

    tvm_lib = Path(tvm.__file__).parent / "lib"
    ffi_lib = Path(tvm_ffi.__file__).parent / "lib"
    (out / "lib").mkdir()
    for source in (ffi_lib / "libtvm_ffi.so", tvm_lib / "libtvm_runtime.so", tvm_lib / "libtvm_runtime_cuda.so"):
        shutil.copy2(source, out / "lib" / source.name)
    copied = []
    packages = (("apache-tvm", Path(tvm.__file__).parent), ("apache-tvm-ffi", Path(tvm_ffi.__file__).parent))
    for package, folder in packages:
        dist = importlib.metadata.distribution(package)
        target = out / "licenses" / package
        target.mkdir(parents=True)
        for entry in dist.files or []:
            if entry.name in ("LICENSE", "NOTICE") or "licenses/" in str(entry):
                source = Path(dist.locate_file(entry))
                if source.is_file():
                    shutil.copy2(source, target / entry.name)
                    copied.append(f"{package}/{entry.name}")
        for name in ("LICENSE", "NOTICE"):
            if (folder / name).is_file() and not (target / name).exists():
                shutil.copy2(folder / name, target / name)
                copied.append(f"{package}/{name}")
    return sorted(set(copied))


def build(out: Path, sweep: str = "full") -> dict:
    started = time.time()
    import tvm  # noqa: F401  (TVM before the JVM)

    sys.path.insert(0, str(TESTS))
    import _gpu_cases
    import axe4j

    axe4j.install()
    axe4j.use_pip_nvcc()
    cases = _gpu_cases.all_cases()
    small = [c for c in cases if c.size == "small"]
    by_name = {c.name: c for c in cases}
    timed = [by_name[name] for name in timing_cases(sweep)]
    log(f"{len(cases)} cases in the catalog, {len(small)} small; compiling them and {len(timed)} timed GEMMs "
        f"({sweep} sweep of {len(full_timing_cases())})")

    if out.exists():
        shutil.rmtree(out)
    for folder in ("kernels", "fatbins", "cases", "bin"):
        (out / folder).mkdir(parents=True)

    t = time.time()
    built, failed = compile_groups(small + timed)
    moe_executable, moe = compile_moe()
    fp8_executable, moe_fp8 = compile_moe_fp8(sweep)
    log(f"moe-fp8-sm_90a: {4 * len(moe_fp8['runs'])} FP8 kernels (tokens "
        f"{', '.join(str(r['tokens']) for r in moe_fp8['runs'])}) lowered")
    log(f"moe-sm_90a: {10 * len(MOE_TOKENS) + 3 * len(MOE_VARIANTS) * len(MOE_VARIANT_TOKENS) + 2 * len(MOE_FUSED_VARIANTS) * len(MOE_FUSED_VARIANT_TOKENS)} kernels (FP16 and BF16, tokens {', '.join(map(str, MOE_TOKENS))}) lowered")
    lower_s = time.time() - t

    t = time.time()
    libraries, sources = [], {}
    for group, (members, executable) in built.items():
        from axe4j_tools.cuda_corpus import build as corpus_build

        executable.export_library(str(out / "kernels" / f"{group}.so"))
        source = corpus_build.cuda_source(executable)
        sha = hashlib.sha256(source.encode()).hexdigest()
        sources[sha] = (source, members[0].arch)
        libraries.append({"file": f"kernels/{group}.so", "arch": members[0].arch, "source_sha256": sha,
                          "symbols": [symbol(c.name) for c in members]})
    moe_executable.export_library(str(out / "kernels" / "moe-sm_90a.so"))
    source = corpus_build.cuda_source(moe_executable)
    sha = hashlib.sha256(source.encode()).hexdigest()
    sources[sha] = (source, "sm_90a")
    libraries.append({"file": "kernels/moe-sm_90a.so", "arch": "sm_90a", "source_sha256": sha,
                      "symbols": [name for run in moe["runs"] + moe["variants"] for name in run["symbols"].values()]})
    moe["library"] = "kernels/moe-sm_90a.so"
    fp8_executable.export_library(str(out / MOE_FP8_LIBRARY))
    source = corpus_build.cuda_source(fp8_executable)
    sha = hashlib.sha256(source.encode()).hexdigest()
    sources[sha] = (source, "sm_90a")
    libraries.append({"file": MOE_FP8_LIBRARY, "arch": "sm_90a", "source_sha256": sha,
                      "symbols": [name for run in moe_fp8["runs"] for name in run["symbols"].values()]})
    export_s = time.time() - t

    t = time.time()
    with ThreadPoolExecutor(max_workers=2) as pool:
        binaries = dict(zip(sources, pool.map(lambda item: fatbin(*item), sources.values())))
    for sha, binary in binaries.items():
        (out / "fatbins" / f"{sha}.fatbin").write_bytes(binary)
    nvcc_s = time.time() - t

    t = time.time()
    library_of = {s: lib["file"] for lib in libraries for s in lib["symbols"]}
    entries = []
    for case in small:
        if case.name in failed:
            continue
        entry = write_case(out, case)
        entry["library"] = library_of[entry["symbol"]]
        entries.append(entry)
    arrays_s = time.time() - t

    licenses = copy_runtime(out)
    shutil.copy2(HARNESS, out / "bin" / HARNESS.name)
    for item in PAYLOAD.iterdir():
        if item.is_file():
            shutil.copy2(item, out / item.name)
    (out / "moe").mkdir()
    for module in MOE_MODULES:   # router, schedule, references, peers (the Triton one among them)
        shutil.copy2(ROOT / "python" / "axe4j" / "moe" / f"{module}.py", out / "moe" / f"{module}.py")

    timings = []
    for case in timed:
        m, n, k = (int(x) for x in case.name.split("/")[1].split("_")[0].split("x"))
        timings.append({"name": case.name, "symbol": symbol(case.name), "library": library_of.get(symbol(case.name)),
                        "arch": case.arch, "m": m, "n": n, "k": k, "rtol": case.rtol, "atol": case.atol,
                        "epilogue": case.epilogue, **timed_types(case.name), **timed_workspace(case.name)})
    manifest = {
        "sweep": sweep,
        "cases": entries,
        "libraries": libraries,
        "timings": timings,
        "moe": moe,
        "moe_fp8": moe_fp8,
        "build_errors": failed,
        "licenses": licenses,
        "versions": {p: importlib.metadata.version(p) for p in ("apache-tvm", "apache-tvm-ffi", "nvidia-cuda-nvcc")},
        "build_seconds": {"lower": round(lower_s, 1), "export": round(export_s, 1), "nvcc": round(nvcc_s, 1),
                          "arrays": round(arrays_s, 1), "total": round(time.time() - started, 1)},
    }
    return manifest


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "gpu-bundle")
    parser.add_argument("--force", action="store_true", help="rebuild even when the recorded input digest matches")
    parser.add_argument("--sweep", choices=SWEEPS, default="full",
                        help="sample: one timed GEMM of each kind and tile, and the JVM bundle's (make test)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    if not HARNESS.is_file():   # the bundle carries the cuBLAS harness; build it as make native does
        log(f"{HARNESS.relative_to(ROOT)} is missing: building it with native/build.sh")
        built = subprocess.run(["bash", str(ROOT / "native" / "build.sh")], cwd=ROOT)
        if built.returncode or not HARNESS.is_file():
            log(f"native/build.sh failed (exit {built.returncode}): {HARNESS.relative_to(ROOT)} is still missing")
            return 2
    started = time.time()
    digest = input_digest()
    if not args.force and up_to_date(out, digest, args.sweep):
        log(f"{out} is up to date ({size_of(out) / 2**20:.1f} MiB); --force rebuilds")
        return 0
    manifest = build(out, args.sweep)
    manifest["input_digest"] = digest
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    size = size_of(out)
    log(f"wrote {out}: {len(manifest['cases'])} cases in {len(manifest['libraries'])} libraries, "
        f"{size / 2**20:.1f} MiB, in {time.time() - started:.0f} s ({manifest['build_seconds']})")
    if manifest["build_errors"]:
        log(f"{len(manifest['build_errors'])} cases do not compile and are left out: "
            f"{sorted(manifest['build_errors'])}")
        return 1
    if size > LIMIT:
        log(f"the bundle is {size / 2**20:.1f} MiB, over its {LIMIT >> 20} MiB limit")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
