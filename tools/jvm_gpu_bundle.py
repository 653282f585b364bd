"""make jvm-gpu-bundle: the JVM runtime, a set of the catalog's sm_90a kernels and a runner, for a GPU machine without a
JDK, TVM or network.

Writes ``out/jvm-gpu-bundle/`` (docs/jvm-gpu-bundle.md), at most 64 MiB less the checkout and 1 MiB (it and the checkout travel in one 64 MiB
GPU call), from the GPU bundle (``make gpu-bundle``, which
this builds or finds up to date) and the built jars:

* ``jre/``: a ``jlink`` runtime of java.base, jdk.unsupported (JNA), java.logging and jdk.httpserver (the service);
* ``jars/``: tvm-bridge and its dependencies, the bundle's Java runner (``org.axe4j.benchmarks.gpu``), the
  ``examples/serve`` service;
* ``lib/``: libtvm_ffi.so, libtvm_runtime.so, libtvm_runtime_cuda.so (no compiler), ``licenses/``;
* ``kernels/`` and ``fatbins/``: the sm_90a libraries (the catalog's axe4j and upstream lowerings, with the Hopper
  GEMMs, and the MoE layer) and the fatbins the bridge serves for them;
* ``cases/``: the carried cases' inputs and expected outputs, smallest first within the size budget;
* ``manifest.json`` (the carried cases, GEMMs and MoE runs, for ``run.py``) and ``jvm-manifest.json`` (the same for
  the Java runner, plus the launch-overhead kernel and the served kernel);
* ``run.sh``, ``driver.py`` and the Python half: ``run.py``, ``tvm_ffi_ctypes.py``, ``moe_bench.py``, ``moe/``,
  ``moe_inputs.py``, ``python_device_service.py``, ``bin/cublas_gemm_bench``.

On the GPU machine: ``out/jvm-gpu-bundle/run.sh --out DIR``.

usage: jvm_gpu_bundle.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import gpu_bundle   # tools/, beside this script

ROOT = Path(__file__).resolve().parents[1]
GPU_BUNDLE = ROOT / "out" / "gpu-bundle"
PAYLOAD = ROOT / "tools" / "jvm-gpu-bundle"
PYTHON_PAYLOAD = ROOT / "tools" / "gpu-bundle"
LIMIT = 64 << 20                 # what one GPU-machine call carries, the checkout included
MARGIN = 1 << 20                 # kept free beyond the checkout: the checkout grows between build and call
MANIFESTS = 1 << 20              # kept free for the manifests, written after the cases are picked
ARCH = "sm_90a"
LIBRARIES = ("kernels/axe4j-sm_90a.so", "kernels/upstream-sm_90a.so", "kernels/moe-sm_90a.so")
GEMMS = gpu_bundle.JVM_TIMED_GEMMS   # built in every GPU bundle, a sample one too
MOE_TOKENS = (16, 4096)
MOE_DTYPE = "bfloat16"
LAUNCH_CASE = "corpus/copy_async_cp_async_cta_f16/sm_90a"
SERVE_CASE = "hopper_gemm/256x256x256"
JRE_MODULES = ("java.base", "jdk.unsupported", "java.logging", "jdk.httpserver")
RUNNER_PACKAGE = "org/axe4j/benchmarks/gpu/"


def log(message: str) -> None:
    print(f"[jvm-gpu-bundle] {message}", file=sys.stderr, flush=True)


def checkout_bytes() -> int:
    """What travels with the bundle in a GPU call: the files git tracks, and the untracked ones it does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.split(b"\0")
    return sum((ROOT / name.decode()).stat().st_size for name in listed if name and (ROOT / name.decode()).is_file())


def budget_bytes() -> int:
    """The most the bundle may take: a 64 MiB call less this checkout and a margin."""
    return LIMIT - checkout_bytes() - MARGIN


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size


def jlink(out: Path) -> None:
    java_home = Path(subprocess.run(["java", "-XshowSettings:properties", "-version"], capture_output=True, text=True)
                     .stderr.split("java.home = ")[1].splitlines()[0].strip())
    jlink_tool = java_home / "bin" / "jlink"
    if not jlink_tool.is_file():
        raise SystemExit(f"no jlink in {java_home}/bin: a JDK 17 (not a JRE) is needed to build the bundle")
    subprocess.run([str(jlink_tool), "--add-modules", ",".join(JRE_MODULES), "--strip-debug", "--no-man-pages",
                    "--no-header-files", "--compress=2", "--output", str(out)], check=True)
    strip = shutil.which("strip")
    if strip:   # jlink keeps libjvm's symbol table (4 MB); the JVM needs only the dynamic symbols
        for library in out.rglob("*.so"):
            subprocess.run([strip, "--strip-unneeded", str(library)], check=True)
    version = subprocess.run([str(out / "bin" / "java"), "-version"], capture_output=True, text=True)
    if version.returncode != 0:
        raise SystemExit(f"the jlink runtime does not start: {version.stderr}")


def runner_jar(out: Path) -> None:
    classes = ROOT / "benchmarks" / "target" / "classes"
    found = sorted(p for p in (classes / RUNNER_PACKAGE).glob("*.class"))
    if not found:
        raise SystemExit(f"no compiled runner in {classes / RUNNER_PACKAGE}: run `mvn -pl benchmarks -am package`")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nMain-Class: "
                                              "org.axe4j.benchmarks.gpu.GpuBundleRunner\n")
        for path in found:
            jar.write(path, str(path.relative_to(classes)))


def jars(out: Path) -> list[str]:
    out.mkdir()
    bridge = sorted(p for p in (ROOT / "tvm-bridge" / "target").glob("tvm-bridge-*.jar")
                    if not p.name.endswith(("-sources.jar", "-javadoc.jar")))
    serve = ROOT / "examples" / "serve" / "target" / "axe4j-serve-1.0.0.jar"
    missing = [str(p) for p in (*bridge[:1], serve) if not p.is_file()] if bridge else ["tvm-bridge/target/*.jar"]
    if missing:
        raise SystemExit(f"missing {missing}: run `mvn install` and `mvn -f examples/serve/pom.xml package`")
    for path in [bridge[0], *sorted((ROOT / "tvm-bridge" / "target" / "lib").glob("*.jar")), serve]:
        shutil.copy2(path, out / path.name)
    runner_jar(out / "axe4j-gpu-runner.jar")
    return sorted(p.name for p in out.iterdir())


def pick_cases(manifest: dict, budget: int) -> tuple[list[dict], list[str]]:
    """The sm_90a cases of the carried libraries, smallest npz first, within ``budget`` bytes; the MoE layer's own
    cases (megabytes each) are left to the MoE run."""
    candidates = [c for c in manifest["cases"] if c["arch"] == ARCH and c["library"] in LIBRARIES
                  and not c["name"].startswith("moe_cuda/")]
    candidates.sort(key=lambda c: ((GPU_BUNDLE / c["npz"]).stat().st_size, c["name"]))
    chosen, left, used = [], [], 0
    for case in candidates:
        size = (GPU_BUNDLE / case["npz"]).stat().st_size
        if used + size <= budget or case["name"] == SERVE_CASE:
            chosen.append(case)
            used += size
        else:
            left.append(case["name"])
    chosen.sort(key=lambda c: [x["name"] for x in manifest["cases"]].index(c["name"]))
    return chosen, left


def build(out: Path) -> dict:
    started = time.time()
    # the sample sweep: this bundle carries none of the sweep's own library, and a full bundle serves it as well
    subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_bundle.py"), "--sweep", "sample"], check=True)
    manifest = json.loads((GPU_BUNDLE / "manifest.json").read_text())
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    log("jlink")
    jlink(out / "jre")
    jar_names = jars(out / "jars")
    for folder in ("lib", "licenses", "moe", "bin"):
        shutil.copytree(GPU_BUNDLE / folder, out / folder)
    for item in sorted(PYTHON_PAYLOAD.glob("*.py")):
        shutil.copy2(item, out / item.name)
    for item in sorted(PAYLOAD.iterdir()):
        shutil.copy2(item, out / item.name)
    (out / "kernels").mkdir()
    (out / "fatbins").mkdir()
    libraries = [lib for lib in manifest["libraries"] if lib["file"] in LIBRARIES]
    for lib in libraries:
        shutil.copy2(GPU_BUNDLE / lib["file"], out / lib["file"])
        name = f"fatbins/{lib['source_sha256']}.fatbin"
        shutil.copy2(GPU_BUNDLE / name, out / name)
    (out / "cases").mkdir()
    allowed = budget_bytes()
    budget = allowed - MANIFESTS - size_of(out)
    cases, left = pick_cases(manifest, budget)
    for case in cases:
        shutil.copy2(GPU_BUNDLE / case["npz"], out / case["npz"])
    by_name = {t["name"]: t for t in manifest["timings"]}
    missing = [g for g in GEMMS if g not in by_name]
    if missing:
        raise SystemExit(f"the GPU bundle has no timed GEMM {missing}")
    gemms = [by_name[g] for g in GEMMS]
    moe = dict(manifest["moe"])
    moe["runs"] = [r for r in moe["runs"] if r["tokens"] in MOE_TOKENS and r["dtype"] == MOE_DTYPE]
    moe["variants"] = []
    case_by_name = {c["name"]: c for c in manifest["cases"]}
    launch, serve = case_by_name[LAUNCH_CASE], case_by_name[SERVE_CASE]
    serve_kernel = {"module": serve["library"], "function": serve["symbol"], "args": serve["args"],
                    "inputs": [i for i in range(len(serve["args"])) if i not in serve["outputs"]],
                    "outputs": serve["outputs"], "npz": serve["npz"], "rtol": serve["rtol"], "atol": serve["atol"]}
    (out / "serve-kernel.json").write_text(json.dumps(serve_kernel, indent=1) + "\n")
    python_manifest = {"cases": cases, "libraries": libraries, "timings": gemms, "moe": moe,
                       "build_errors": {}, "versions": manifest.get("versions", {})}
    (out / "manifest.json").write_text(json.dumps(python_manifest, indent=1) + "\n")
    jvm_manifest = {"arch": ARCH, "cases": cases, "gemms": gemms, "moe": moe, "launch": launch,
                    "serve": serve_kernel, "jars": jar_names, "jre_modules": list(JRE_MODULES),
                    "cases_left_out": left, "versions": manifest.get("versions", {})}
    (out / "jvm-manifest.json").write_text(json.dumps(jvm_manifest, indent=1) + "\n")
    (out / "run.sh").chmod(0o755)
    total = size_of(out)
    if total > allowed:
        raise SystemExit(f"the bundle is {total / 2**20:.1f} MiB, over the {allowed / 2**20:.1f} MiB that leave room "
                         f"for the checkout ({checkout_bytes() / 2**20:.1f} MiB) in a {LIMIT >> 20} MiB GPU call")
    log(f"wrote {out}: {len(cases)} cases ({len(left)} left out for size), {len(gemms)} GEMMs, "
        f"{len(moe['runs'])} MoE runs, {total / 2**20:.1f} MiB, in {time.time() - started:.0f} s")
    return {"cases": len(cases), "left_out": len(left), "bytes": total}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "jvm-gpu-bundle")
    args = parser.parse_args(argv)
    build(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
