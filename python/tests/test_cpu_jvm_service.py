"""The JVM-service path: kernels compiled here through the Java CPU rules, exported with ``export_library``,
then run by a separate Java process (``org.axe4j.schedules.RunExported``, tvm-bridge only, no Python) on the same
inputs; its outputs must equal both numpy's and the in-process run's, element for element."""

import tvm  # noqa: F401  (before the JVM)

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import R, S, TileLayout
from tvm.tirx.script import tile as Tx

import axe4j

ROOT = Path(__file__).resolve().parents[2]


def _classpath():
    jars = sorted((ROOT / "schedules" / "target").glob("schedules-*.jar"))
    jars = [j for j in jars if not j.name.endswith(("-tests.jar", "-sources.jar", "-javadoc.jar"))]
    lib = ROOT / "schedules" / "target" / "lib"
    if not jars or not lib.is_dir():
        pytest.fail(f"no schedules jar under {ROOT / 'schedules' / 'target'}: run mvn -B -o -q package -DskipTests")
    return os.pathsep.join([str(jars[0]), str(lib / "*")])


def _java():
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "java"


def _gemm_and_replicated_copy():
    tiled = TileLayout(S[(13, 10):(16, 1)] + R[2:208] + 5)

    @T.prim_func
    def service(A: T.Buffer((13 * 7,), "float32"), B: T.Buffer((7 * 10,), "float32"),
                C: T.Buffer((130,), "float32"), Df: T.Buffer((421,), "float32")):
        Av = T.decl_buffer((13, 7), "float32", data=A.data)
        Bv = T.decl_buffer((7, 10), "float32", data=B.data)
        Cv = T.decl_buffer((13, 10), "float32", data=C.data)
        Tx.gemm(Cv[:, :], Av[:, :], Bv[:, :], Cv[:, :], False, False, T.float32(1.0), T.float32(0.0))
        D = T.decl_buffer((13, 10), "float32", data=Df.data, layout=tiled)
        Tx.exp(D[:, :], Cv[:, :])

    return service


def test_exported_module_runs_from_java_with_the_same_results(tmp_path):
    axe4j.install()
    rng = np.random.default_rng(7)
    a = rng.uniform(-0.5, 0.5, 91).astype("float32")
    b = rng.uniform(-0.5, 0.5, 70).astype("float32")
    c = np.zeros(130, "float32")
    d = np.full(421, -7.0, "float32")
    lib = axe4j.compile(_gemm_and_replicated_copy(), "llvm")
    so = tmp_path / "service.so"
    lib.export_library(str(so))

    tensors = [tvm.runtime.tensor(x.copy()) for x in (a, b, c, d)]
    lib["service"](*tensors)
    in_process = [t.numpy() for t in tensors]

    files = []
    for name, x in zip("abcd", (a, b, c, d)):
        f = tmp_path / f"{name}.f32"
        x.astype("<f4").tofile(f)
        files.append(f)
    env = dict(os.environ, AXE4J_VENV=str(Path(tvm.__file__).resolve().parents[4]))
    run = subprocess.run([_java(), "-cp", _classpath(), "org.axe4j.schedules.RunExported", str(so), "service",
                          *map(str, files)], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    from_java = [np.fromfile(f, "<f4") for f in files]

    product = (a.reshape(13, 7).astype("float64") @ b.reshape(7, 10)).astype("float32")
    np.testing.assert_allclose(in_process[2].reshape(13, 10), product, rtol=1e-5, atol=1e-6)
    expected_d = np.full(421, -7.0, "float32")
    rows, cols = np.meshgrid(np.arange(13), np.arange(10), indexing="ij")
    for rep in (0, 208):
        expected_d[5 + rows * 16 + cols + rep] = np.exp(in_process[2].reshape(13, 10))
    np.testing.assert_allclose(in_process[3], expected_d, rtol=1e-6)
    for got, want in zip(from_java, in_process):
        np.testing.assert_array_equal(got, want)
