"""The manifest export_library writes beside a library (axe4j.manifest): each function's arguments with shape, dtype
and role, checked against the PrimFuncs; roles derived from what the function writes, overridable; the device."""

import json
import sys
from pathlib import Path

import pytest
import tvm
from tvm import te
from tvm.script import tirx as T

import axe4j
from axe4j import manifest as manifests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "serve"))
import build_kernel  # noqa: E402


def matmul(m, k, p):
    a = te.placeholder((m, k), dtype="float32", name="A")
    b = te.placeholder((k, p), dtype="float32", name="B")
    r = te.reduce_axis((0, k), name="r")
    c = te.compute((m, p), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return te.create_prim_func([a, b, c]).with_attr("global_symbol", "matmul")


def scaled(n):
    @T.prim_func
    def scale(X: T.Buffer((n,), "int32"), Y: T.Buffer((n, 2), "float64")):
        T.func_attr({"global_symbol": "scale"})
        for i in range(n):
            Y[i, 0] = T.Cast("float64", X[i]) * T.float64(2.0)
            Y[i, 1] = T.float64(1.0)
    return scale


def expected_args(func, outputs):
    return [{"name": p.name, "shape": [int(d) for d in p.shape], "dtype": str(p.dtype),
             "role": "output" if p.name in outputs else "input"} for p in func.params]


def test_te_kernels_get_shapes_dtypes_and_written_outputs(tmp_path):
    module = tvm.IRModule({"matmul": matmul(5, 7, 3), "scale": scaled(4)})
    executable = tvm.compile(module, target="llvm")
    path = axe4j.export_library(executable, tmp_path / "two.so", functions=module)
    written = json.loads(manifests.manifest_of(path).read_text())
    assert written["library"] == "two.so" and written["format"] == 1
    assert written["device"] == {"kind": "cpu", "target": "llvm"}
    by_name = {f["name"]: f["args"] for f in written["functions"]}
    assert by_name == {"matmul": expected_args(module["matmul"], {"C"}),
                       "scale": expected_args(module["scale"], {"Y"})}
    assert by_name["scale"][0] == {"name": "X", "shape": [4], "dtype": "int32", "role": "input"}


def test_axe4j_compile_keeps_the_primfuncs_and_tile_call_destinations_are_outputs(tmp_path):
    func = build_kernel.gemm_then_rowsum(16)
    target = axe4j.host_target()
    executable = axe4j.compile(func, target)
    path = axe4j.export_library(executable, tmp_path / "g.so")
    written = json.loads(manifests.manifest_of(path).read_text())
    (entry,) = written["functions"]
    assert entry["name"] == "gemm_then_rowsum"
    # Tx.gemm(C, A, B, Z) writes C; Tx.sum(r, C) writes r; B (an alias over Bf's data) and Z are only read
    assert [(a["name"], a["shape"], a["role"]) for a in entry["args"]] == [
        ("A", [16, 16], "input"), ("Bf", [256], "input"), ("Z", [16, 16], "input"), ("C", [16, 16], "output"),
        ("r", [16], "output")]
    assert written["device"] == {"kind": "cpu", "target": str(target)}


def test_roles_override_and_unknown_names_are_refused_before_writing(tmp_path):
    module = tvm.IRModule({"matmul": matmul(2, 2, 2)})
    executable = tvm.compile(module, target="llvm")
    path = axe4j.export_library(executable, tmp_path / "m.so", functions=module,
                                roles={"matmul": {"C": "inout"}})
    args = json.loads(manifests.manifest_of(path).read_text())["functions"][0]["args"]
    assert [a["role"] for a in args] == ["input", "input", "inout"]
    with pytest.raises(ValueError, match=r"names \['D'\], which are not its arguments"):
        axe4j.export_library(executable, tmp_path / "bad.so", functions=module, roles={"matmul": {"D": "output"}})
    with pytest.raises(ValueError, match="role 'out' of argument C"):
        axe4j.export_library(executable, tmp_path / "bad.so", functions=module, roles={"matmul": {"C": "out"}})
    assert not list(tmp_path.glob("bad.so*")), "a refused manifest leaves no library behind"


def test_plain_tvm_executable_without_functions_gets_no_manifest_and_a_stale_one_goes(tmp_path):
    module = tvm.IRModule({"matmul": matmul(2, 2, 2)})
    executable = tvm.compile(module, target="llvm")
    path = tmp_path / "m.so"
    manifests.manifest_of(path).write_text("{}")
    axe4j.export_library(executable, path)
    assert path.exists() and not manifests.manifest_of(path).exists()


def test_cuda_device_names_arch_and_fatbin_folder():
    func = scaled(8)
    written = manifests.build(Path("/x/k.so"), func, cuda_arch="sm_90a")
    assert written["device"] == {"kind": "cuda", "arch": "sm_90a", "fatbins": "k.so.fatbins"}


def test_symbolic_and_scalar_arguments_are_refused_by_name():
    @T.prim_func
    def with_scalar(A: T.Buffer((4,), "float32"), n: T.int32):
        T.func_attr({"global_symbol": "with_scalar"})
        A[0] = T.Cast("float32", n)

    with pytest.raises(ValueError, match="argument n is a scalar"):
        manifests.build(Path("k.so"), with_scalar)
    n = te.var("n")
    a = te.placeholder((n,), dtype="float32", name="A")
    b = te.compute((n,), lambda i: a[i] + 1, name="B")
    symbolic = te.create_prim_func([a, b]).with_attr("global_symbol", "inc")
    with pytest.raises(ValueError, match="argument A has a symbolic shape"):
        manifests.build(Path("k.so"), symbolic)
