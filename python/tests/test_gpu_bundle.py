"""make gpu-bundle (tools/gpu_bundle.py, docs/gpu-bundle.md): the bundle holds every small case of the GPU catalog and
stays under 64 MiB; its runner says there is no GPU here and exits 0; its ctypes binding of the tvm-ffi C ABI loads an
exported CPU module and runs it on host memory; the CUDA source in each exported library is the one its fatbin was
made from; and the runner's whole path (workers, comparison, a crash, a hang, the summary) works on CPU kernels.

The bundle is built once into out/gpu-bundle and rebuilt only when its inputs change (the builder records their
digest), so a second run of this module takes seconds."""

import tvm  # noqa: F401  (before anything that could start the JVM)

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from tvm.script import tirx as T

import _gpu_cases

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "out" / "gpu-bundle"
PAYLOAD = ROOT / "tools" / "gpu-bundle"
LIMIT = 64 << 20


def _clean_env():
    """The environment of a process that must not see this checkout's TVM: no PYTHONPATH, nothing preloaded."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD")}


@pytest.fixture(scope="module")
def bundle() -> Path:
    if not (ROOT / "native" / "build" / "cublas_gemm_bench").is_file():
        subprocess.run(["bash", "native/build.sh"], cwd=ROOT, check=True, capture_output=True, text=True)
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_bundle.py"), "--sweep", "sample"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return BUNDLE


@pytest.fixture(scope="module")
def manifest(bundle) -> dict:
    return json.loads((bundle / "manifest.json").read_text())


def test_bundle_stays_under_64_mib_and_holds_no_compiler(bundle):
    size = sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file())
    assert size <= LIMIT, f"the bundle is {size / 2**20:.1f} MiB"
    libraries = sorted(p.name for p in (bundle / "lib").iterdir())
    assert libraries == ["libtvm_ffi.so", "libtvm_runtime.so", "libtvm_runtime_cuda.so"]
    assert not list(bundle.rglob("libtvm_compiler*"))
    for package in ("apache-tvm", "apache-tvm-ffi"):
        assert (bundle / "licenses" / package / "LICENSE").is_file()
        assert (bundle / "licenses" / package / "NOTICE").is_file()
    assert (bundle / "bin" / "cublas_gemm_bench").is_file() and (bundle / "README.md").is_file()
    for item in PAYLOAD.iterdir():
        if not item.is_file():   # the builder copies the payload's files (not a __pycache__ an import left)
            continue
        assert (bundle / item.name).read_bytes() == item.read_bytes(), f"{item.name} differs from tools/gpu-bundle"


def test_every_small_case_of_the_catalog_is_in_the_bundle_with_its_arrays(bundle, manifest):
    small = {c.name: c for c in _gpu_cases.all_cases() if c.size == "small"}
    assert manifest["build_errors"] == {}
    assert {c["name"] for c in manifest["cases"]} == set(small)
    symbols = {s for library in manifest["libraries"] for s in library["symbols"]}
    for entry in manifest["cases"]:
        case = small[entry["name"]]
        assert entry["symbol"] in symbols and entry["arch"] == case.arch
        assert (entry["outputs"], entry["rtol"], entry["atol"]) == (list(case.outputs), case.rtol, case.atol)
        with np.load(bundle / entry["npz"]) as data:
            assert len([k for k in data.files if k.startswith("a")]) == len(entry["args"])
            assert len([k for k in data.files if k.startswith("e")]) == len(case.outputs)
    timings = manifest["timings"]
    sys.path.insert(0, str(ROOT / "tools"))
    import gpu_bundle
    from axe4j.cuda.kernels import gemm_tuning

    sweep = [(f"hopper_gemm_pipelined/{m}x{n}x{k}_{c.label}", (m, n, k)) for (m, n, k), c in gemm_tuning.sweep_cases()]
    bf16 = [(f"hopper_gemm_pipelined/{m}x{n}x{k}_{c.label}_bf16", (m, n, k))
            for (m, n, k), c in gemm_tuning.sweep_cases_bf16()]
    fp8 = [(f"hopper_gemm_pipelined/{m}x{n}x{k}_{c.label}_fp8", (m, n, k))
           for (m, n, k), c in gemm_tuning.sweep_cases_fp8()]
    full = [("hopper_gemm/8192x4096x4096", (8192, 4096, 4096))] + sweep + bf16 + fp8 + [
        ("hopper_gemm_pipelined/8192x4096x4096_128x256_fused", (8192, 4096, 4096))]
    assert list(gpu_bundle.timing_cases("full")) == [name for name, _ in full]

    def extended(m, n, k, name):   # the decode, ragged, BF16 and FP8 GEMMs, in their own library
        return (m, n, k) in gemm_tuning.SERVED or name.endswith(("_bf16", "_fp8"))

    def kind(m, n, name):
        if name.endswith(("_bf16", "_fp8")):
            return name.rsplit("_", 1)[1]
        return "decode" if m <= 64 else "ragged" if m % 128 or n % 128 else "served"

    # the sample this module builds: the first of each (kind, tile) of the FP16 SWEEP and, apart, of the rest, and the
    # GEMMs the JVM GPU bundle times
    seen, sample = set(), []
    for name, (m, n, k) in full:
        if name.startswith("hopper_gemm_pipelined/") and not name.endswith("_fused") and name not in (
                "hopper_gemm_pipelined/8192x8192x8192_128x256", "hopper_gemm_pipelined/4096x4096x4096_128x256",
                "hopper_gemm_pipelined/4096x28672x4096_128x256"):
            tag = (extended(m, n, k, name), kind(m, n, name), name.split("/")[1].split("_", 1)[1])
            if tag in seen:
                continue
            seen.add(tag)
        sample.append((name, (m, n, k)))
    # built here with --sweep sample; a full bundle (make gpu-bundle) serves that request as well
    assert [(t["name"], (t["m"], t["n"], t["k"])) for t in timings] == {"sample": sample, "full": full}[
        manifest["sweep"]]
    assert {kind(m, n, name) for name, (m, n, k) in sample if extended(m, n, k, name)} == {
        "decode", "served", "ragged", "bf16", "fp8"}
    # SWEEP's 12 shapes x the applicable configurations of 6, SERVED's 31 shapes without clusters, and two decode
    # strategies (swap-AB, 64-row tiles, split-K) at each of SERVED's 18 shapes with M <= 64 (docs/cuda-gemm.md)
    assert len(sweep) == 60 + sum(len([c for c in gemm_tuning.applicable(*shape) if c.cluster == (1, 1)
                                       and gemm_tuning.plain(c)]) for shape in gemm_tuning.SERVED) + 2 * 18
    assert len([name for name, _ in sweep if "swap_" in name or "_64x" in name]) == 2 * 18
    # a split-K GEMM's W (S, tiles, BM, BN) and Count (tiles x consumers) shapes travel with its timing (the harness
    # passes zeros before D)
    configs = {f"hopper_gemm_pipelined/{m}x{n}x{k}_{c.label}{suffix}": c
               for cases, suffix in ((gemm_tuning.sweep_cases(), ""), (gemm_tuning.sweep_cases_bf16(), "_bf16"),
                                     (gemm_tuning.sweep_cases_fp8(), "_fp8")) for (m, n, k), c in cases}
    assert any(c.split_k > 1 for c in configs.values()) and any("workspace" in t for t in timings)
    for timing in timings:
        config = configs.get(timing["name"])
        assert ("workspace" in timing) == (config is not None and config.split_k > 1), timing["name"]
        if "workspace" in timing:
            count = gemm_tuning.tiles(timing["m"], timing["n"], config)
            assert timing["workspace"] == [[config.split_k, count, config.bm, config.bn],
                                           [count * (1 if config.bm == 64 else 2)]], timing["name"]
    assert {t["dtype"] for t in timings} == {"float16", "bfloat16", "float8_e4m3fn"}
    assert all(t.get("scale") and t["out_dtype"] == "bfloat16" for t in timings if t["name"].endswith("_fp8"))
    for timing in timings:
        assert timing["arch"] == "sm_90a" and timing["symbol"] in symbols and timing["library"]
        assert timing["library"].startswith("kernels/gemm-sweep-") == extended(
            timing["m"], timing["n"], timing["k"], timing["name"]), timing["name"]
    assert [t["epilogue"] for t in timings if t["epilogue"]] == [
        {"alpha": 0.5, "beta": 0.25, "bias": True, "activation": "silu"}]


def test_stored_arrays_are_the_catalogs(bundle, manifest):
    """A sample of cases: the npz holds args() and expected(args), bfloat16 as its bit patterns."""
    small = {c.name: c for c in _gpu_cases.all_cases() if c.size == "small"}
    for entry in manifest["cases"][::23] + [e for e in manifest["cases"] if "bf16" in e["name"]][:3]:
        case = small[entry["name"]]
        args = case.args()
        with np.load(bundle / entry["npz"]) as data:
            for i, a in enumerate(args):
                stored = data[f"a{i}"]
                assert entry["args"][i] == {"shape": list(a.shape), "dtype": str(a.dtype)}
                assert stored.tobytes() == np.ascontiguousarray(a).tobytes(), f"{case.name} argument {i}"
            for j, e in enumerate(case.expected(args)):
                assert data[f"e{j}"].tobytes() == np.ascontiguousarray(e).tobytes(), f"{case.name} expected {j}"


def test_runner_says_there_is_no_gpu_and_exits_0(bundle, tmp_path):
    out = subprocess.run([sys.executable, str(bundle / "run.py"), "--out", str(tmp_path)], capture_output=True,
                         text=True, env=_clean_env(), timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("no GPU: "), out.stdout


def _run_in_bundle_python(code: str, bundle: Path, timeout=120):
    """``code`` in a fresh Python that has only the bundle on its path (no TVM package, no venv libraries)."""
    script = f"import sys\nsys.path.insert(0, {str(bundle)!r})\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-I", "-B", "-c", script], capture_output=True, text=True, env=_clean_env(),
                          timeout=timeout)


def _cpu_library(path: Path, spin_and_crash: bool = False):
    """A CPU module: twice (B = 2 A + 1), and optionally spin (never returns) and crash (writes far out of bounds)."""
    @T.prim_func
    def twice(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
        for i in range(2):
            for j in range(3):
                B[i, j] = A[i, j] * T.float32(2.0) + T.float32(1.0)

    funcs = {"twice": twice.with_attr("global_symbol", "twice")}
    if spin_and_crash:
        @T.prim_func
        def spin(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
            for i in range(2147483647):
                for j in range(2147483647):
                    B[0, 0] = B[0, 0] + A[0, 0]

        @T.prim_func
        def crash(A: T.Buffer((2, 3), "float32"), B: T.Buffer((6,), "float32")):
            for i in range(6):
                B[i * 300000000] = A[0, 0]

        funcs["spin"] = spin.with_attr("global_symbol", "spin")
        funcs["crash"] = crash.with_attr("global_symbol", "crash")
    tvm.compile(tvm.IRModule(funcs), target="llvm").export_library(str(path))


def test_ctypes_binding_loads_an_exported_cpu_module_and_runs_it_on_host_memory(bundle, tmp_path):
    _cpu_library(tmp_path / "cpu.so")
    out = _run_in_bundle_python(f"""
        import ctypes
        import numpy as np
        import tvm_ffi_ctypes as ffi

        runtime = ffi.Runtime({str(bundle / "lib")!r})
        twice = runtime.load_module({str(tmp_path / "cpu.so")!r}).function("twice")
        a = np.arange(6, dtype="float32").reshape(2, 3)
        b = np.zeros_like(a)
        result = twice(ffi.Tensor(a.ctypes.data, a.shape, "float32"), ffi.Tensor(b.ctypes.data, b.shape, "float32"))
        assert result is None
        assert (b == 2 * a + 1).all(), b
        try:
            twice(ffi.Tensor(a.ctypes.data, (3, 2), "float32"), ffi.Tensor(b.ctypes.data, b.shape, "float32"))
            raise SystemExit("a wrong shape was accepted")
        except ffi.FFIError as error:
            assert error.kind == "ValueError" and "shape" in str(error), error
        try:
            runtime.load_module({str(tmp_path / "cpu.so")!r}).function("missing")
            raise SystemExit("a missing function was found")
        except KeyError:
            pass
        # a Python function as a global, called through the C ABI with a long and a short string
        runtime.register("bundle.test.echo", lambda text: ("got " + text).encode())
        echo = runtime.global_function("bundle.test.echo")
        assert echo("a string longer than seven bytes") == b"got a string longer than seven bytes"
        assert echo("short") == b"got short"
        runtime.register("bundle.test.fail", lambda: 1 / 0)
        try:
            runtime.global_function("bundle.test.fail")()
            raise SystemExit("no error")
        except ffi.FFIError as error:
            assert "division by zero" in str(error), error
        import sys
        assert "tvm" not in sys.modules and "tvm_ffi" not in sys.modules
        print("ok")
    """, bundle)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def test_each_library_hands_the_cuda_loader_the_source_its_fatbin_was_made_from(bundle, manifest):
    """Loading an exported library passes its CUDA module, serialized as [fmt][function table][code], to the global
    ffi.Module.load_from_bytes.cuda; a stand-in for it (this machine has no CUDA driver for the real one) checks
    that the format is "cuda" and the code's sha256 names a fatbin of the bundle: the one the runner's
    tvm_callback_cuda_compile returns on a GPU."""
    out = _run_in_bundle_python(f"""
        import hashlib, json, os, struct
        import tvm_ffi_ctypes as ffi

        bundle = {str(bundle)!r}
        runtime = ffi.Runtime(os.path.join(bundle, "lib"))
        seen = []

        def stand_in(blob):
            n = struct.unpack_from("<Q", blob, 0)[0]
            fmt = blob[8:8 + n].decode()
            code = next(blob[o + 8:] for o in range(8 + n, len(blob) - 8)
                        if struct.unpack_from("<Q", blob, o)[0] == len(blob) - o - 8)
            seen.append((fmt, hashlib.sha256(code).hexdigest()))
            raise RuntimeError("stand-in")

        runtime.register("ffi.Module.load_from_bytes.cuda", stand_in)
        manifest = json.load(open(os.path.join(bundle, "manifest.json")))
        for library in manifest["libraries"]:
            try:
                runtime.load_module(os.path.join(bundle, library["file"]))
            except ffi.FFIError as error:
                assert "stand-in" in str(error), error
        print(json.dumps(seen))
    """, bundle)
    assert out.returncode == 0, out.stdout + out.stderr
    seen = json.loads(out.stdout)
    assert [fmt for fmt, _ in seen] == ["cuda"] * len(manifest["libraries"])
    assert [sha for _, sha in seen] == [lib["source_sha256"] for lib in manifest["libraries"]]
    for _, sha in seen:
        binary = (bundle / "fatbins" / f"{sha}.fatbin").read_bytes()
        assert binary[:4] == bytes.fromhex("50ed55ba"), "not a fatbin"


def test_libraries_export_every_case_symbol(bundle, manifest):
    for library in manifest["libraries"]:
        out = subprocess.run(["nm", "-D", "--defined-only", str(bundle / library["file"])], capture_output=True,
                             text=True, check=True)
        exported = {line.split()[-1] for line in out.stdout.splitlines()}
        missing = [s for s in library["symbols"] if f"__tvm_ffi_{s}" not in exported]
        assert not missing, f"{library['file']} lacks {missing[:5]}"


def test_runner_path_on_cpu_kernels_passes_fails_survives_a_crash_and_a_hang(bundle, tmp_path):
    """A bundle of CPU cases run by run.py --device cpu: the correct kernel passes, a function the library lacks is
    an error, a wrong expected output fails naming the element, the kernel that never returns times out, the one
    that writes far out of bounds crashes its worker, and the cases after each run in a new worker."""
    mini = tmp_path / "bundle"
    mini.mkdir()
    for item in PAYLOAD.iterdir():
        if item.is_file():
            shutil.copy2(item, mini / item.name)
    shutil.copytree(bundle / "lib", mini / "lib")
    (mini / "kernels").mkdir()
    (mini / "cases").mkdir()
    _cpu_library(mini / "kernels" / "cpu.so", spin_and_crash=True)
    a = np.arange(6, dtype="float32").reshape(2, 3)
    cases = []
    for name, symbol, expected in [("cpu/twice", "twice", 2 * a + 1), ("cpu/missing", "absent", a),
                                   ("cpu/wrong", "twice", 2 * a),
                                   ("cpu/spin", "spin", a), ("cpu/after_spin", "twice", 2 * a + 1),
                                   ("cpu/crash", "crash", a), ("cpu/after_crash", "twice", 2 * a + 1)]:
        second = np.zeros((6,) if symbol == "crash" else (2, 3), "float32")
        npz = f"cases/{len(cases)}.npz"
        np.savez_compressed(mini / npz, a0=a, a1=second, e0=expected.reshape(second.shape))
        cases.append({"name": name, "arch": "cpu", "symbol": symbol, "npz": npz,
                      "library": "kernels/cpu.so", "args": [{"shape": [2, 3], "dtype": "float32"},
                                                            {"shape": list(second.shape), "dtype": "float32"}],
                      "outputs": [1], "rtol": 1e-6, "atol": 0.0, "check_exact": name == "cpu/wrong"})
    (mini / "manifest.json").write_text(json.dumps({"cases": cases, "libraries": [], "build_errors": {},
                                                    "timings": [{"name": "x", "arch": "sm_90a", "library": None}]}))
    out = subprocess.run([sys.executable, str(mini / "run.py"), "--device", "cpu", "--timeout", "5", "--out",
                          str(tmp_path / "results")], capture_output=True, text=True, env=_clean_env(), timeout=180)
    assert out.returncode == 1, out.stdout + out.stderr
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    status = {c["name"]: c["status"] for c in summary["cases"]}
    assert status == {"cpu/twice": "pass", "cpu/missing": "error", "cpu/wrong": "fail", "cpu/spin": "timeout",
                      "cpu/after_spin": "pass", "cpu/crash": "crash", "cpu/after_crash": "pass"}, out.stderr
    missing = next(c for c in summary["cases"] if c["name"] == "cpu/missing")
    assert "no function absent" in missing["message"], missing
    wrong = next(c for c in summary["cases"] if c["name"] == "cpu/wrong")["outputs"][0]
    assert wrong["mismatches"] == 6 and wrong["first_mismatch"] == {"index": [0, 0], "got": 1.0, "expected": 0.0}
    table = (tmp_path / "results" / "summary.md").read_text()
    assert "| cpu/wrong | fail | 1 | 6 |" in table and "| cpu/spin | timeout |" in table
    assert summary["counts"] == {"pass": 3, "error": 1, "fail": 1, "timeout": 1, "crash": 1}


def test_moe_kernels_of_every_type_and_token_count_are_in_the_bundle(bundle, manifest):
    """The MoE timing's library: the kernels of axe4j.moe.cuda (the schedule kernel too) per (type, token count),
    exported, with the max_tiles the host schedule pads to; the numpy half of axe4j.moe and the peers beside
    them."""
    sys.path.insert(0, str(ROOT / "tools"))
    import gpu_bundle
    from axe4j.moe import QWEN3_30B_A3B
    from axe4j.moe.cuda_kernels import ROWS
    from axe4j.moe.schedule import TileSchedule

    moe = manifest["moe"]
    assert moe["rows"] == ROWS and moe["shape"] == {"experts": 128, "top_k": 8, "hidden": 2048, "intermediate": 768}
    runs = {(r["dtype"], r["tokens"]): r for r in moe["runs"]}
    assert set(runs) == {(d, t) for d in ("float16", "bfloat16") for t in gpu_bundle.MOE_TOKENS}
    library = next(lib for lib in manifest["libraries"] if lib["file"] == moe["library"])
    kinds = {tuple(sorted(v["symbols"])) for v in moe["variants"]}
    assert kinds == {("combine", "gemm1", "gemm2"), ("combine", "experts")}
    assert set(library["symbols"]) >= {s for v in moe["variants"] for s in v["symbols"].values()}
    for (dtype, tokens), run in runs.items():
        assert set(run["symbols"]) == {"gemm1", "gemm2", "combine", "experts", "schedule"}
        assert set(run["symbols"].values()) <= set(library["symbols"])
        assert run["max_tiles"] == TileSchedule.max_tiles(tokens * QWEN3_30B_A3B.top_k, QWEN3_30B_A3B.experts, ROWS)
    for module in gpu_bundle.MOE_MODULES:
        assert (bundle / "moe" / f"{module}.py").read_text() == \
            (ROOT / "python" / "axe4j" / "moe" / f"{module}.py").read_text()


def test_fp8_moe_kernels_are_in_their_own_library_at_the_sweeps_token_counts(bundle, manifest):
    """The FP8 experts (axe4j.moe.cuda_fp8): quantise_x, gemm1, quantise_h and gemm2 per token count (a sample
    bundle: 16 tokens; a full one: every MoE token count) in kernels/moe-fp8-sm_90a.so, with its fatbin; schedule and
    combine are the BF16 run's of the same token count, the very PrimFuncs cuda_fp8 builds; the JVM GPU bundle does
    not carry the FP8 library."""
    import tvm

    sys.path.insert(0, str(ROOT / "tools"))
    import gpu_bundle
    import jvm_gpu_bundle
    from axe4j.moe import QWEN3_30B_A3B, cuda, cuda_fp8
    from axe4j.moe.cuda_kernels import ROWS
    from axe4j.moe.schedule import TileSchedule

    fp8 = manifest["moe_fp8"]
    assert fp8["library"] == "kernels/moe-fp8-sm_90a.so" != manifest["moe"]["library"]
    assert [r["tokens"] for r in fp8["runs"]] == list(gpu_bundle.moe_fp8_tokens(manifest["sweep"]))
    assert gpu_bundle.moe_fp8_tokens("sample") == (16,) and gpu_bundle.moe_fp8_tokens("full") == gpu_bundle.MOE_TOKENS
    libraries = {lib["file"]: lib for lib in manifest["libraries"]}
    library = libraries[fp8["library"]]
    assert (bundle / fp8["library"]).is_file()
    assert (bundle / "fatbins" / f"{library['source_sha256']}.fatbin").read_bytes()[:4] == bytes.fromhex("50ed55ba")
    bf16 = {r["tokens"]: r for r in manifest["moe"]["runs"] if r["dtype"] == "bfloat16"}
    for run in fp8["runs"]:
        tokens = run["tokens"]
        assert run["dtype"] == "bfloat16" and run["weight_dtype"] == "float8_e4m3fn"
        assert run["symbols"] == {k: f"moe_fp8_{k}_{tokens}_tokens_bf16"
                                  for k in ("quantise_x", "gemm1", "quantise_h", "gemm2")}
        assert set(run["symbols"].values()) <= set(library["symbols"])
        assert run["shared_symbols"] == {k: bf16[tokens]["symbols"][k] for k in ("schedule", "combine")}
        assert set(run["shared_symbols"].values()) <= set(libraries[manifest["moe"]["library"]]["symbols"])
        assert run["max_tiles"] == TileSchedule.max_tiles(tokens * QWEN3_30B_A3B.top_k, QWEN3_30B_A3B.experts, ROWS)
        assert set(run["scales"]) == {"w1", "w2", "x", "h", "formula"}
    ours = cuda_fp8.kernels(QWEN3_30B_A3B, 16, dtype="bfloat16")
    sixteen_bit = cuda.kernels(QWEN3_30B_A3B, 16, dtype="bfloat16")
    tvm.ir.assert_structural_equal(ours["combine"], sixteen_bit["combine"])
    tvm.ir.assert_structural_equal(ours["schedule"], cuda.schedule_kernel(QWEN3_30B_A3B, 16))
    assert fp8["library"] not in jvm_gpu_bundle.LIBRARIES


def _bundle_moe_bench(bundle):
    """The bundle's moe_bench.py as a module (it imports torch only where it runs on the GPU)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bundle_moe_bench", bundle / "moe_bench.py")
    module = importlib.util.module_from_spec(spec)
    before, writes = list(sys.path), sys.dont_write_bytecode
    sys.dont_write_bytecode = True   # no __pycache__ in the bundle
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:], sys.dont_write_bytecode = before, writes
    return module


def test_moe_bench_fp8_arguments_are_the_fp8_kernels_parameters(bundle, manifest):
    """moe_bench.py's FP8 run passes each kernel its parameters' shapes and types, in order (checked against the
    PrimFuncs of axe4j.moe.cuda_fp8 at the bundle's 16-token run), and names an array of the wrong shape."""
    from types import SimpleNamespace

    from axe4j.moe import QWEN3_30B_A3B, cuda_fp8

    bench = _bundle_moe_bench(bundle)
    moe = manifest["moe"]
    run = next(r for r in manifest["moe_fp8"]["runs"] if r["tokens"] == 16)
    spec = bench.fp8_arrays(run, moe["shape"], moe["rows"])
    tensors = {name: SimpleNamespace(shape=shape) for name, (shape, _) in spec.items()}
    calls = bench.fp8_calls({k: k for k, _ in bench.FP8_CALLS}, tensors, spec, lambda t, dtype: (t.shape, dtype))
    funcs = cuda_fp8.kernels(QWEN3_30B_A3B, 16, dtype="bfloat16")
    assert [name for name, _ in calls] == ["schedule", "quantise_x", "gemm1", "quantise_h", "gemm2", "combine"]
    for name, args in calls:
        # a TIRx PrimFunc's buffer parameter is a Var with the buffer's shape and dtype (_gpu_cases.params)
        assert [(tuple(int(d) for d in p.shape), str(p.dtype)) for p in funcs[name].params] == list(args), name
    wrong = dict(tensors, xq=SimpleNamespace(shape=(1, 1)))
    with pytest.raises(ValueError, match=r"xq has shape \(1, 1\), the kernel quantise_x takes"):
        bench.fp8_calls({k: k for k, _ in bench.FP8_CALLS}, wrong, spec, lambda t, dtype: t)


def test_bundle_schedule_without_tvm_equals_axe4js(bundle, tmp_path):
    """moe_bench.py schedules on the GPU machine with the bundle's copy of axe4j.moe's numpy half (no TVM there):
    the same tile arrays as axe4j's, for a routing with empty experts and a crowded one."""
    from axe4j.moe.schedule import schedule, tile_arrays

    rng = np.random.default_rng(3)
    ids = np.stack([rng.choice(16, 4, replace=False) for _ in range(100)]).astype(np.int32)
    ids[:40, 0] = 5                                      # expert 5 crowded: 40+ rows over several 16-row tiles
    ids[ids == 7] = 8                                    # expert 7 empty (8 may now repeat in a row: fine here)
    weights = rng.random(ids.shape).astype(np.float32)
    np.savez(tmp_path / "routing.npz", ids=ids, weights=weights)
    want = tile_arrays(schedule(ids, weights, 16, 16), 64)
    out = _run_in_bundle_python(f"""
        import numpy as np
        from moe.schedule import schedule, tile_arrays
        assert "tvm" not in sys.modules
        r = np.load({str(tmp_path / "routing.npz")!r})
        got = tile_arrays(schedule(r["ids"], r["weights"], 16, 16), 64)
        np.savez({str(tmp_path / "got.npz")!r}, **got)
    """, bundle)
    assert out.returncode == 0, out.stderr
    got = np.load(tmp_path / "got.npz")
    assert sorted(got.files) == sorted(want)
    for name, array in want.items():
        np.testing.assert_array_equal(got[name], array, err_msg=name)
    assert want["tile_rows"].max() == 16 and 7 not in want["tile_expert"][want["tile_rows"] > 0]


def test_moe_bench_says_why_it_does_not_run_here_and_exits_0(bundle, tmp_path):
    out = subprocess.run([sys.executable, str(bundle / "moe_bench.py"), "--out", str(tmp_path)], capture_output=True,
                         text=True, env=_clean_env(), timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("[moe-bench] not run: "), out.stdout
    assert not (tmp_path / "moe.json").exists()


def test_moe_bench_table_has_a_row_per_run_and_names_missing_peers(bundle):
    out = _run_in_bundle_python("""
        import moe_bench
        row = lambda dtype, tokens, ms: {"tokens": tokens, "dtype": dtype, "axe4j_ms": ms, "axe4j_tflops": 1.0,
                                         "axe4j_three_kernels_ms": 3 * ms,
                                         "axe4j_vs_reference": {"matches": True},
                                         "peers": {"P": {"ms": 2 * ms, "axe4j_speedup": 2.0}, "Q": {"error": "E"}}}
        result = {"device": "D", "torch": "t", "peers_missing": {"V": "no module"},
                  "rows": [row("float16", 1, 0.5), row("bfloat16", 64, 0.25)]}
        print(moe_bench.markdown(result))
    """, bundle)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "| float16 | 1 | 0.500 | 1.0 | True | 1.500 | 1.000 | 2.00 | error | - |" in lines, out.stdout
    assert "| bfloat16 | 64 | 0.250 | 1.0 | True | 0.750 | 0.500 | 2.00 | error | - |" in lines, out.stdout
    assert "- V: no module" in lines
