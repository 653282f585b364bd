"""The GPU bundle of both TVM lanes (``make tirx-gpu-bundle``, tools/tirx_gpu_bundle.py): built here for three tile
kernels, a TMA kernel, the Hopper GEMM and the Ampere GEMM, each lane's launch must be the one the other lane compiled
(grid, block, cluster, dynamic shared bytes, which array each kernel parameter points to, and each tensor-map
parameter's cuTensorMapEncodeTiled arguments), each cubin must hold its kernel's symbol, the arrays must be
_tile_kernels'; the runner, in a Python without a CUDA driver, says there is no GPU and exits 0, and its ctypes
packing of kernel and encode arguments is checked without a device."""

import ctypes
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "tirx_gpu_bundle.py"
RUNNER = REPO / "tools" / "tirx-gpu-bundle" / "run.py"
VENV_027 = REPO / ".venv" / "bin" / "python"
# three arrays used by all three params; one array (B) that the kernel never reads; an mma over float16
NAMES = ["add_cta_f32", "cast_cta_f32_to_f16", "mma_16x8x16_f16"]
GEMM = "ampere_gemm_256x192x96"   # 0.27 launches its CTAs as a (3, 4) grid, the new lane's kernel as (12)
# tensor-map parameters: the new lane keeps the TMA copy's tile static, 0.27 in dynamic shared memory; both lanes'
# Hopper GEMMs carve their rings from dynamic shared memory
TMA = ["tma_2d_f16_64x64", "hopper_gemm_128x128x256"]
RESERVED_SHARED = 1024   # sm_90's system-reserved shared memory, in the .nv.shared section of any kernel that uses it

sys.path.insert(0, str(Path(__file__).parent))
import _tile_kernels  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from tirx_gpu_bundle import gemm_arrays  # noqa: E402


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("tirx-gpu-bundle")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    env.pop("AXE4J_TVM_LANE", None)
    lane_027 = subprocess.Popen([str(VENV_027), str(TOOL), "--lane", "0.27", "--out", str(out), "--only", *NAMES, *TMA, GEMM],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = subprocess.run([sys.executable, str(TOOL), "--lane", "tirx", "--out", str(out), "--only", *NAMES, *TMA, GEMM],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    stdout, stderr = lane_027.communicate(timeout=600)
    assert lane_027.returncode == 0, stderr[-3000:]
    return out


def test_both_lanes_launch_each_kernel_alike(bundle):
    lanes = {lane: json.loads((bundle / f"{lane}.json").read_text())["kernels"] for lane in ("tirx", "0.27")}
    assert sorted(lanes["tirx"]) == sorted(lanes["0.27"]) == sorted([*NAMES, *TMA, GEMM])
    ours, theirs = lanes["tirx"][GEMM], lanes["0.27"][GEMM]
    assert np.prod(ours["grid"]) == np.prod(theirs["grid"]) == (256 // 64) * (192 // 64)
    assert ours["block"] == theirs["block"] == [128, 1, 1] and ours["params"] == theirs["params"]
    for name in NAMES:
        ours, theirs = lanes["tirx"][name], lanes["0.27"][name]
        for key in ("grid", "block", "cluster", "dynamic_shared", "params"):
            assert ours[key] == theirs[key], (name, key, ours[key], theirs[key])
        assert ours["block"][0] == _tile_kernels.KERNELS[name].get("threads", ours["block"][0])
    # cast reads A and writes C: B (array 1) is no parameter on either lane
    assert [p["array"] for p in lanes["tirx"]["cast_cta_f32_to_f16"]["params"]] == [0, 2]


def test_each_cubin_holds_its_kernel_and_the_arrays_are_the_tests(bundle):
    for lane in ("tirx", "0.27"):
        kernels = json.loads((bundle / f"{lane}.json").read_text())["kernels"]
        for name, entry in kernels.items():
            cubin = (bundle / entry["cubin"]).read_bytes()
            assert cubin[:4] == b"\x7fELF" and entry["symbol"].encode() in cubin, (lane, name)
    for name in [*NAMES, *TMA, GEMM]:
        args, expected, exact = gemm_arrays(name) if name == GEMM else _tile_kernels.arrays(name)
        case = np.load(bundle / "cases" / f"{name}.npz")
        assert bool(case["exact"]) == exact
        for i, (a, e) in enumerate(zip(args, expected)):
            assert np.array_equal(case[f"a{i}"], a) and np.array_equal(case[f"e{i}"], e)


def test_the_runner_without_a_gpu_says_so(bundle, tmp_path):
    runner = bundle / "run.py"
    runner.write_text(RUNNER.read_text())
    done = subprocess.run([sys.executable, str(runner), "--out", str(tmp_path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode == 0 and "no GPU here" in done.stdout, (done.stdout, done.stderr)


def _map(**fields):
    return {"tensor_map": {"array": 0, "offset": 0, "dtype": "float16", "rank": 2, "dims": [128, 128],
                           "strides": [256], "box": [64, 64], "element_strides": [1, 1], "interleave": 0,
                           "swizzle": 0, "l2_promotion": 2, "oob_fill": 0, "force_cu_dtype": -1, **fields}}


def test_both_lanes_encode_the_same_tensor_maps(bundle):
    lanes = {lane: json.loads((bundle / f"{lane}.json").read_text())["kernels"] for lane in ("tirx", "0.27")}
    for name in TMA:
        ours, theirs = lanes["tirx"][name], lanes["0.27"][name]
        for key in ("grid", "block", "cluster", "params"):
            assert ours[key] == theirs[key], (name, key, ours[key], theirs[key])
    # TMA copy: A's and B's 128 x 128 float16 (rows of 256 bytes), a 64 x 64 box, no swizzle
    assert lanes["tirx"]["tma_2d_f16_64x64"]["params"] == [_map(array=0), _map(array=1)]
    # Hopper GEMM D = A B^T: A (M x K) and B (N x K) by 64-element (128-byte, swizzled 128B) K boxes, D a pointer
    spec = _tile_kernels.KERNELS["hopper_gemm_128x128x256"]
    (m, n, k), (bm, bn, bk, _) = spec["mnk"], spec["tile"]
    a, b, d = lanes["tirx"]["hopper_gemm_128x128x256"]["params"]
    assert d == {"array": 2}
    for map_, rows, array in ((a["tensor_map"], m, 0), (b["tensor_map"], n, 1)):
        assert map_["array"] == array and map_["offset"] == 0 and map_["dtype"] == "float16"
        assert map_["dims"] == [k, rows] and map_["strides"] == [2 * k] and map_["box"][0] == bk
        assert map_["swizzle"] == 3 and map_["interleave"] == 0 and map_["element_strides"] == [1, 1]
    assert a["tensor_map"]["box"][1] * 2 == bm and b["tensor_map"]["box"][1] == bn   # two consumer halves of A


def test_the_hopper_gemms_ring_is_dynamic_shared_memory_on_both_lanes(bundle):
    """The recorded dynamic bytes are the ring's and its mbarriers' on both lanes; the new lane's cubin holds no
    static shared array (its .nv.shared section is sm_90's reserved 1 KiB), where the ring as static arrays had
    0x20440 bytes at 4 stages."""
    from axe4j.cuda.kernels.hopper_shape import ring_bytes

    lanes = {lane: json.loads((bundle / f"{lane}.json").read_text())["kernels"] for lane in ("tirx", "0.27")}
    (bm, bn, bk, stages) = _tile_kernels.KERNELS["hopper_gemm_128x128x256"]["tile"]
    ours, theirs = lanes["tirx"]["hopper_gemm_128x128x256"], lanes["0.27"]["hopper_gemm_128x128x256"]
    assert ours["dynamic_shared"] == theirs["dynamic_shared"] == ring_bytes(bm, bn, bk, stages) + 2 * stages * 8
    assert ours["static_shared"] == theirs["static_shared"] == RESERVED_SHARED
    assert lanes["tirx"]["tma_2d_f16_64x64"]["static_shared"] > RESERVED_SHARED   # a static tile shows there


@pytest.fixture(scope="module")
def runner():
    spec = importlib.util.spec_from_file_location("tirx_gpu_bundle_run", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kernel_params_point_at_each_value(runner):
    encoded = bytes(range(128))
    params = [_map(array=1), {"array": 1}, {"scalar": -7, "dtype": "int32"}, {"array": 0}]
    array, _keep = runner.pack_params(params, [0x7F0000001000, 0x7F0000200000], {0: encoded})
    assert ctypes.sizeof(array) == 4 * 8
    assert array[0] % 64 == 0 and ctypes.string_at(array[0], 128) == encoded   # the map, by value, 64-byte aligned
    assert ctypes.c_uint64.from_address(array[1]).value == 0x7F0000200000
    assert ctypes.c_int32.from_address(array[2]).value == -7
    assert ctypes.c_uint64.from_address(array[3]).value == 0x7F0000001000
    with pytest.raises(ValueError, match="parameter 0 is a tensor map that was not encoded"):
        runner.pack_params(params, [0, 0], {})
    with pytest.raises(ValueError, match="parameter 0: scalar type float16"):
        runner.pack_params([{"scalar": 1, "dtype": "float16"}], [], {})


def test_encode_arguments_are_the_recorded_ones(runner):
    record = _map(array=0, offset=4096, dtype="float32", rank=3, dims=[48, 32, 4], strides=[192, 6144],
                  box=[32, 32, 1], element_strides=[1, 1, 1], swizzle=3, l2_promotion=2, oob_fill=1)["tensor_map"]
    dtype, rank, address, dims, strides, box, elements, interleave, swizzle, l2, oob = \
        runner.encode_arguments(record, 0x10000)
    assert (dtype.value, rank.value, address.value) == (7, 3, 0x10000 + 4096)   # CU_TENSOR_MAP_DATA_TYPE_FLOAT32
    assert list(dims) == [48, 32, 4] and list(strides) == [192, 6144] and ctypes.sizeof(dims) == 3 * 8
    assert list(box) == [32, 32, 1] and list(elements) == [1, 1, 1] and ctypes.sizeof(box) == 3 * 4
    assert (interleave.value, swizzle.value, l2.value, oob.value) == (0, 3, 2, 1)
    assert runner.encode_arguments(dict(record, force_cu_dtype=11), 0)[0].value == 11   # forced (TFLOAT32)
    with pytest.raises(ValueError, match="rank 3 with dims"):
        runner.encode_arguments(dict(record, strides=[192]), 0)
    with pytest.raises(ValueError, match="element type int8"):
        runner.encode_arguments(dict(record, dtype="int8"), 0)


def test_a_cluster_launch_config_is_cuda_h_s_layout(runner):
    # CUlaunchConfig: 7 unsigned (grid, block, shared), the stream at 32, attrs at 40, numAttrs at 48;
    # CUlaunchAttribute: the id, padding to 8, a 64-byte value
    assert ctypes.sizeof(runner._Config) == 56 and runner._Config.stream.offset == 32
    assert runner._Config.attrs.offset == 40 and runner._Config.num_attrs.offset == 48
    assert ctypes.sizeof(runner._Attribute) == 72 and runner._Attribute.value.offset == 8
    config, attribute = runner.launch_config([8, 4, 1], [384, 1, 1], [2, 1, 1], 131072)
    assert list(config.grid) == [8, 4, 1] and list(config.block) == [384, 1, 1] and config.shared == 131072
    assert config.num_attrs == 1 and config.attrs.contents.id == 4
    assert list(config.attrs.contents.value[:3]) == [2, 1, 1]


def test_gemm_checks_hold_and_fail(runner, tmp_path):
    mnk = (64, 48, 256)
    runner.WORK = tmp_path
    for kind in runner.INPUT_KINDS:
        reference = runner.gemm_reference(mnk, kind)
        a, b = runner.gemm_inputs(mnk, kind)
        assert np.array_equal(reference, a.astype("float32") @ b.astype("float32").T)
        exact = reference.astype("float16")
        assert runner.gemm_close(exact, reference, kind)
        off = exact.copy()
        off[3, 5] = np.float16(off[3, 5] * 1.01 + 1)
        assert not runner.gemm_close(off, reference, kind)
    assert len(set(runner.gemm_inputs((4, 4, 64), "structured")[0].reshape(-1).tolist())) <= 5


class _FakeDriverLib:
    """libcuda's calls the runner makes for a launch, answered on the host: the encode writes a map derived from its
    arguments, the launches keep the bytes each kernelParams entry points at."""

    def __init__(self):
        self.launches = []

    def cuTensorMapEncodeTiled(self, map_address, dtype, rank, address, dims, strides, box, elements, *enums):
        seen = [dtype.value, rank.value, address.value, *dims, *strides, *box, *elements, *(e.value for e in enums)]
        ctypes.memmove(map_address, np.resize(np.array(seen, np.uint64), 16).tobytes(), 128)
        return 0

    def _keep(self, how, params, sizes, config=None):
        self.launches.append((how, [ctypes.string_at(params[i], n) for i, n in enumerate(sizes)], config))
        return 0

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        return self._keep(("plain", gx, gy, gz, bx, by, bz, shared), params, self.sizes)

    def cuLaunchKernelEx(self, config, function, params, extra):
        c = config._obj
        return self._keep(("ex", *c.grid, *c.block, c.shared, *c.attrs.contents.value[:3]), params, self.sizes)


def test_the_driver_launches_with_the_encoded_map_by_value(runner):
    driver = runner.Driver.__new__(runner.Driver)   # no libcuda: the calls go to the fake
    driver.lib = lib = _FakeDriverLib()
    record = _map(array=1, offset=256)
    encoded = driver.encode(record["tensor_map"], 0x5000)
    want = [6, 2, 0x5000 + 256, 128, 128, 256, 64, 64, 1, 1, 0, 0, 2, 0]   # FLOAT16, rank 2, address + offset, ...
    assert np.frombuffer(encoded, np.uint64)[:14].tolist() == want
    entry = {"symbol": "k", "grid": [2, 1, 1], "block": [128, 1, 1], "dynamic_shared": 8200,
             "params": [record, {"array": 0}]}
    lib.sizes = [128, 8]
    driver.launch(None, entry, [0x9000, 0x5000], {0: encoded})
    driver.launch(None, dict(entry, cluster=[2, 1, 1]), [0x9000, 0x5000], {0: encoded})
    (plain, values, _), (ex, values_ex, _) = lib.launches
    assert plain == ("plain", 2, 1, 1, 128, 1, 1, 8200) and ex == ("ex", 2, 1, 1, 128, 1, 1, 8200, 2, 1, 1)
    assert values == values_ex == [encoded, (0x9000).to_bytes(8, "little")]
