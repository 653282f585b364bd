"""What a kernel author meets first (issue: a kernel author's first hour): TVM's CPU pool gets the cores this process
may use, and the CUDA interpreter reports a failing argument check with TVM's message and the shapes given."""

import tvm  # noqa: F401  (before the JVM)

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import Axis, ComposeLayout, S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j import _threads

ROOT = Path(__file__).resolve().parents[2]


def _topology(root: Path, cpus: dict[int, tuple[int, int]]) -> Path:
    for cpu, (package, core) in cpus.items():
        folder = root / f"cpu{cpu}" / "topology"
        folder.mkdir(parents=True)
        (folder / "physical_package_id").write_text(f"{package}\n")
        (folder / "core_id").write_text(f"{core}\n")
    return root


def test_physical_cores_count_hyperthread_siblings_once(tmp_path):
    sysfs = _topology(tmp_path, {0: (0, 0), 1: (0, 0), 2: (0, 1), 3: (0, 1), 4: (1, 0)})
    assert _threads.physical_cores({0, 1, 2, 3, 4}, sysfs) == 3   # two sibling pairs and one core of package 1
    assert _threads.physical_cores({0, 2}, sysfs) == 2
    assert _threads.physical_cores({0, 1}, sysfs) == 1
    assert _threads.physical_cores({7}, sysfs) == 1                # no topology: the CPU counts as a core


def test_cgroup_quota_v2_and_v1(tmp_path):
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "cpu.max").write_text("150000 100000\n")
    assert _threads.cgroup_quota(tmp_path / "v2") == 1.5
    (tmp_path / "v2" / "cpu.max").write_text("max 100000\n")
    assert _threads.cgroup_quota(tmp_path / "v2") is None
    (tmp_path / "v1" / "cpu").mkdir(parents=True)
    (tmp_path / "v1" / "cpu" / "cpu.cfs_quota_us").write_text("200000\n")
    (tmp_path / "v1" / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert _threads.cgroup_quota(tmp_path / "v1") == 2.0
    (tmp_path / "v1" / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert _threads.cgroup_quota(tmp_path / "v1") is None


def _pool_in_a_fresh_process(env: dict) -> str:
    code = "import tvm, axe4j; print(tvm.get_global_func('runtime.NumThreads')(), axe4j.THREADS_FROM)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_tvms_pool_gets_the_usable_cores_and_tvm_num_threads_still_wins():
    env = {k: v for k, v in os.environ.items() if k != "TVM_NUM_THREADS"}
    threads, source = _pool_in_a_fresh_process(env).split(" ", 1)
    assert int(threads) == _threads.usable_cores() and source.startswith("axe4j:")
    env["TVM_NUM_THREADS"] = "1"
    threads, source = _pool_in_a_fresh_process(env).split(" ", 1)
    assert threads == "1" and "set by the caller" in source


def test_the_interpreter_reports_a_wrong_shape_with_tvms_message_and_the_shapes_given():
    sys.path.insert(0, str(ROOT / "examples"))
    from cuda_kernel_demo import kernel

    axe4j.install()
    executable = axe4j.compile(kernel, tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm"))
    a, b, r = np.zeros((32, 64), "float16"), np.zeros((16, 16), "float16"), np.zeros(64, "float32")
    with pytest.raises(axe4j.cuda.interp.KernelFault) as fault:
        axe4j.cuda.interp.run(executable, a, b, r)
    message = str(fault.value)
    assert "ValueError: Invalid A.shape[0] on argument #0" in message, message
    assert "A: Tensor([64, 64], float16)" in message and "expected 64" in message, message
    assert "the arrays given: #0 float16(32, 64), #1 float16(16, 16), #2 float32(64,)" in message, message


def _swizzled_register_copy():
    """A warp copy from a 128-byte-swizzled shared tile into an ldmatrix register fragment (once one of TVM's own cases
    took it: axe4j's ldmatrix rule addressed unswizzled tiles only)."""
    swizzled = ComposeLayout(3, 3, 3, TileLayout(S[8, 64])).tile_to((64, 64), (8, 64))
    fragment = TileLayout(S[(2, 8, 2, 4, 2):(2, 4 @ laneid, 4, 1 @ laneid, 1)])

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (64, 64), "float16")
        B = T.match_buffer(B_ptr, (16, 16), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        A_smem = T.alloc_buffer((64, 64), "float16", scope="shared", layout=swizzled)
        R = T.alloc_buffer((16, 16), "float16", scope="local", layout=fragment)
        Tx.warp.copy(A_smem[:, :], A[:, :])
        T.cuda.cta_sync()
        Tx.warp.copy(R[:, :], A_smem[16:32, 48:64])
        Tx.warp.copy(B[:, :], R[:, :])

    return kernel


def _prefetched_copy():
    """A CTA's cp.async load with an L2 prefetch hint (``prefetch_size=128``): axe4j's cp.async rule does not implement
    the hint, so TVM's own case (``ldgsts``) lowers it."""

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (64, 64), "float16")
        B = T.match_buffer(B_ptr, (64, 64), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        T.thread_id([128])
        tile = T.alloc_buffer((64, 64), "float16", scope="shared", layout=TileLayout(S[64, 64]))
        Tx.cta.copy_async(tile[:, :], A[:, :], prefetch_size=128)
        T.ptx["cp.async.commit_group"]()
        T.ptx["cp.async.wait_group"](0)
        T.cuda.cta_sync()
        Tx.cta.copy(B[:, :], tile[:, :])

    return kernel


SM90 = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")


def test_a_swizzled_register_load_is_ldmatrix_through_the_swizzle_and_matches_numpy():
    axe4j.install()
    executable = axe4j.compile(_swizzled_register_copy(), SM90, strict=True)
    assert [row.variant for row in executable.lowered][1] == "axe4j-cuda-ldstmatrix"
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in executable.mod.imports[0].inspect_source("cuda")
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64).astype(np.float16)
    b = np.zeros((16, 16), np.float16)
    axe4j.cuda.interp.run(executable, a, b)
    np.testing.assert_array_equal(b, a[16:32, 48:64])


def test_a_fallback_is_marked_by_explain_and_refused_in_strict_mode(monkeypatch):
    axe4j.install()
    kernel = _prefetched_copy()
    report = axe4j.explain(kernel, SM90, file=open(os.devnull, "w"))
    lines = report.splitlines()
    fallback = [i for i, line in enumerate(lines) if line.startswith("  FALLBACK: no axe4j rule accepts this call")]
    assert len(fallback) == 1, report
    call = next(line for line in reversed(lines[:fallback[0]]) if not line.startswith(" "))
    assert "tile[0:64, 0:64], A[0:64, 0:64], prefetch_size=128" in call, report
    assert 'cp.async does not implement the config ["prefetch_size"]' in report
    executable = axe4j.compile(kernel, SM90)                        # the default: the fallback compiles
    assert [(row.variant, row.by_axe4j) for row in executable.lowered] == [("ldgsts", False),
                                                                         ("axe4j-cuda-vector", True)]
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64).astype(np.float16)
    b = np.zeros_like(a)
    axe4j.cuda.interp.run(executable, a, b)
    np.testing.assert_array_equal(b, a)
    with pytest.raises(axe4j.StrictError, match=r"strict mode: 1 tile call\(s\) lowered by TVM's own dispatch cases"):
        axe4j.compile(kernel, SM90, strict=True)
    monkeypatch.setenv("AXE4J_STRICT", "1")
    with pytest.raises(axe4j.StrictError, match="prefetch_size"):
        axe4j.compile(kernel, SM90)
    axe4j.compile(kernel, SM90, strict=False)                       # an explicit False wins over the variable


def test_an_unknown_layout_axis_is_named_with_the_axes_tvm_knows():
    axe4j.install()
    misspelled = Axis.get("lanid")
    fragment = TileLayout(S[(2, 8, 2, 4, 2):(2, 4 @ misspelled, 4, 1 @ laneid, 1)])

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (16, 16), "float16")
        B = T.match_buffer(B_ptr, (16, 16), "float16")
        T.device_entry()
        T.cta_id([1])
        T.warp_id([1])
        T.lane_id([32])
        T.thread_id([32])
        R = T.alloc_buffer((16, 16), "float16", scope="local", layout=fragment)
        Tx.warp.copy(R[:, :], A[:, :])
        Tx.warp.copy(B[:, :], R[:, :])

    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    with pytest.raises(ValueError) as error:   # TVM's scalar fallback, which warned, is not run in the default mode
        axe4j.compile(kernel, target)
    message = str(error.value)
    assert message.startswith("layout axis 'lanid' in `R"), message
    assert "4 @ Axis.lanid" in message and "did you mean laneid?" in message, message
    assert "thread axes bx, by, bz" in message and "memory axes m, P, F" in message, message


def test_a_wrong_argument_shape_on_the_cpu_names_the_expected_and_given_shapes():
    axe4j.install()

    @T.prim_func
    def kernel(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        Tx.copy(B[:, :], A[:, :])

    executable = axe4j.compile(kernel, "llvm")
    b = np.zeros((4, 8), "float32")
    with pytest.raises(ValueError, match=r"argument #0 \(A\): expected shape \[4, 8\] float32, given \[4, 6\] float32"):
        executable(np.zeros((4, 6), "float32"), b)
    with pytest.raises(TypeError, match=r"argument #0 \(A\): expected shape \[4, 8\] float32, given \[4, 8\] float64"):
        executable(np.zeros((4, 8), "float64"), b)
    a = np.arange(32, dtype="float32").reshape(4, 8)
    executable(a, b)
    np.testing.assert_array_equal(b, a)


def test_numpy_arrays_at_any_alignment_are_safe_to_pass_to_a_cpu_kernel():
    """TVM's CPU kernels assume 64-byte aligned data (an add of 64x64 float32 at 16 bytes past a multiple of 64
    faulted and killed the process); the executable passes such arrays through aligned copies, outputs included."""

    @T.prim_func
    def add(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        Tx.add(C[:, :], A[:, :], B[:, :])

    axe4j.install()
    executable = axe4j.compile(add, axe4j.host_target())

    def at(offset, values):
        raw = np.zeros(64 * 64 * 4 + 128, np.uint8)
        start = (-raw.ctypes.data) % 64 + offset
        array = raw[start:start + 64 * 64 * 4].view(np.float32).reshape(64, 64)
        array[...] = values
        return array

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64)).astype("float32"), rng.standard_normal((64, 64)).astype("float32")
    for offset in (0, 16, 32, 48):
        x, y, out = at(offset, a), at(offset, b), at(offset, 0)
        assert out.ctypes.data % 64 == offset
        executable(x, y, out)
        np.testing.assert_array_equal(out, a + b)
        np.testing.assert_array_equal(x, a)


TVM_TYPE_NAMES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
                  "float64", "bfloat16", "bool", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                  "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "float16x2", "int4")


def test_the_rules_read_every_tvm_element_type_with_tvms_bits():
    import jpype

    axe4j.install()
    parse = jpype.JClass("org.axe4j.schedules.ElementType").parse
    for name in TVM_TYPE_NAMES:
        ours, theirs = parse(name), tvm.DataType(name)
        assert (int(ours.bits()), int(ours.lanes())) == (theirs.bits, theirs.lanes), name


@pytest.mark.parametrize("dtype, reason", [
    ("float8_e4m3fn", "exp on float8_e4m3fn dst: the element-wise rules compute in float16, bfloat16, float32 and "
                      "float64; float8_e4m3fn values are only copied"),
    ("int32", "exp on int32 dst: exp needs floating-point operands (cast to float32 first)"),
])
def test_exp_on_a_type_the_rules_do_not_compute_in_is_declined_by_name(dtype, reason):
    axe4j.install()

    @T.prim_func
    def kernel(A: T.Buffer((4, 8), dtype), B: T.Buffer((4, 8), dtype)):
        Tx.exp(B[:, :], A[:, :])

    report = axe4j.explain(kernel, "llvm", file=open(os.devnull, "w"))
    assert f"axe4j-cpu-vector (prio=10): declined: {reason}" in report, report
    assert "NO CASE: no axe4j rule accepts this call and TVM has no case of its own for it" in report, report
    with pytest.raises(RuntimeError) as error:
        axe4j.compile(kernel, "llvm")
    assert reason.split(":")[0] in str(error.value) and "NumberFormatException" not in str(error.value)


def test_a_float8_copy_is_still_planned_by_the_rules():
    axe4j.install()

    @T.prim_func
    def kernel(A: T.Buffer((4, 8), "float8_e4m3fn"), B: T.Buffer((4, 8), "float8_e4m3fn")):
        Tx.copy(B[:, :], A[:, :])

    report = axe4j.explain(kernel, "llvm", file=open(os.devnull, "w"))
    assert "accepted <- chosen" in report, report
