"""Builds out/tirx-gpu-bundle: the tile-op kernels of both TVM lanes (python/tests_tirx/_tile_kernels.py), the
Ampere GEMM of each (``GEMMS``) and the Hopper GEMM of each at a timing size (``TIMED``) as sm_90a cubins with their
launches and seeded arrays, for a GPU machine that has neither TVM nor a JDK (docs/gpu-bundle.md, "Both TVM lanes").
There ``run.py`` launches each through the CUDA driver API, checks it against numpy's expected arrays, checks that
the two lanes' outputs are the same bits, and with ``--timing`` times the Hopper GEMMs against cuBLAS.

Usage (``make tirx-gpu-bundle`` runs both):
    .venv-tirx/bin/python tools/tirx_gpu_bundle.py --lane tirx [--out DIR] [--only NAME ...]
    .venv/bin/python      tools/tirx_gpu_bundle.py --lane 0.27 [--out DIR] [--only NAME ...]

Each lane writes ``DIR/<lane>/<kernel>.cubin`` and ``DIR/<lane>.json``: per kernel its symbol, grid, block, cluster,
static shared bytes (its cubin's ``.nv.shared.<symbol>``), dynamic shared bytes, and its parameters in order, each
``{"array": i}`` (the device pointer of argument array i) or ``{"tensor_map": ...}`` (a CUtensorMap passed by value,
with the arguments the host function gives cuTensorMapEncodeTiled: element type, rank, dims, byte strides, box,
element strides, interleave, swizzle, L2 promotion, OOB fill, and the argument array and byte offset of its global
address); the arrays (``DIR/cases/<kernel>.npz``: ``a0, a1, ...`` the arguments with outputs zero, ``e0, ...`` the
arrays expected after the run, ``exact``; a timed GEMM: only its ``timed`` shape) are the same for both lanes. The
launch is read from what the lane compiled: on tvm_tirx from the host function's packed calls
(``axe4j.cuda.interp._tirx``), on 0.27 from the host function the CUDA interpreter runs, which also runs the kernel
here first (not the timed GEMM's). The timed GEMM is each lane's packaged ``hopper_gemm``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
KERNELS_DIR = ROOT / "python" / "tests_tirx"
ARCH = "sm_90a"
LANES = ("tirx", "0.27")


def _nvcc_on_path():
    """The nvidia-cuda-nvcc wheel's nvcc (in .venv; .venv-tirx has none) first on PATH, for both lanes' drivers."""
    found = sorted((ROOT / ".venv" / "lib").glob("python3*/site-packages/nvidia/cu13/bin/nvcc"))
    if not found:
        sys.exit(f"no nvcc under {ROOT / '.venv'}: make python installs the nvidia-cuda-nvcc wheel")
    folder = str(found[0].parent)
    os.environ["PATH"] = os.pathsep.join([folder, *(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                                   if p and p != folder)])


# the product's GEMMs on both lanes, beside the tile kernels: name -> (M, N, K)
GEMMS = {"ampere_gemm_256x192x96": (256, 192, 96)}
# the Hopper GEMM of both lanes at a size worth timing (run.py --timing, against cuBLAS): its arrays are made on the
# GPU machine (3 x 32 MiB would not fit the bundle), and 0.27's interpreter runs only its host function here
TIMED = {"hopper_gemm_4096x4096x4096": {"kind": "hopper_gemm", "mnk": (4096, 4096, 4096), "tile": (128, 128, 64, 4)}}


def gemm_arrays(name):
    """A, B (small integers: every order of the sums is exact, and so is D's float16), D zero; expected A, B, A B^T."""
    m, n, k = GEMMS[name]
    rng = np.random.default_rng(m * n + k)
    a, b = (rng.integers(-3, 4, (rows, k)).astype("float16") for rows in (m, n))
    d = (a.astype("float32") @ b.astype("float32").T).astype("float16")
    return [a, b, np.zeros((m, n), "float16")], [a, b, d], True


def _tirx_function(name):
    import _tile_kernels_tirx as lane

    if name in GEMMS:
        from axe4j.tirx.kernels.ampere_gemm import ampere_gemm

        return ampere_gemm(*GEMMS[name])
    if name in TIMED:   # the packaged kernel, as 0.27's
        from axe4j.tirx.kernels.hopper_gemm import hopper_gemm

        return hopper_gemm(*TIMED[name]["mnk"], *TIMED[name]["tile"])
    return lane.build(lane.KERNELS[name])


def static_shared(cubin: bytes, symbol: str) -> int:
    """Bytes of the kernel's static shared memory in its cubin: the size of ELF section ``.nv.shared.<symbol>`` (on
    sm_90 it includes the 1 KiB the system reserves; 0 without the section)."""
    import struct

    if cubin[:5] != b"\x7fELF\x02":
        raise ValueError(f"kernel {symbol}: its cubin is not an ELF64 file")
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    sizes = {cubin[names + h[0]:cubin.index(b"\0", names + h[0])].decode(): h[5] for h in headers}
    return int(sizes.get(f".nv.shared.{symbol}", 0))


def tensor_map_record(array, offset, dtype, rank, dims, strides, box, elements, interleave, swizzle, l2, oob,
                      forced=-1) -> dict:
    """A kernel parameter that is a tensor map, as the host encodes it (``cuTensorMapEncodeTiled``'s arguments,
    innermost dimension first): the argument array whose element at byte ``offset`` is its global address, the
    element type, rank, dims, byte strides of dims 1.. (rank - 1), box, element strides, the interleave, swizzle, L2
    promotion and OOB fill enums, and the CUDA element type forced in place of ``dtype``'s (-1: none)."""
    nums = [int(rank), *map(int, dims), *map(int, strides), *map(int, box), *map(int, elements)]
    if len(nums) != 4 * int(rank):
        raise ValueError(f"a tensor map of rank {rank}: dims {dims}, byte strides {strides}, box {box}, "
                         f"element strides {elements} (rank, rank - 1, rank, rank values expected)")
    return {"tensor_map": {"array": int(array), "offset": int(offset), "dtype": str(np.dtype(dtype)),
                           "rank": int(rank), "dims": [int(x) for x in dims], "strides": [int(x) for x in strides],
                           "box": [int(x) for x in box], "element_strides": [int(x) for x in elements],
                           "interleave": int(interleave), "swizzle": int(swizzle), "l2_promotion": int(l2),
                           "oob_fill": int(oob), "force_cu_dtype": int(forced)}}


def _tirx_tensor_maps(host, names) -> dict:
    """{host tensor-map variable: record} of the host's ``runtime.cuTensorMapEncodeTiled`` packed calls (slots: map,
    dtype, rank, address, dims, byte strides, box, element strides, interleave, swizzle, L2 promotion, OOB fill[,
    forced CUDA dtype]), the address an element of an argument at constant indices (as the interpreter reads it)."""
    from axe4j.cuda.interp import _tirx, _values

    tensors = _tirx._host_tensors(host, names)
    maps = {}
    for called, slots in _tirx._packed_calls(host):
        if called != "runtime.cuTensorMapEncodeTiled":
            continue
        dtype, rank = _tirx._constant(slots[1]), _tirx._constant(slots[2])
        address = slots[3]
        load = address.args[0] if type(address).__name__ == "Call" and len(address.args) else None
        if type(load).__name__ != "TensorLoad" or _tirx.key(load.source) not in tensors:
            raise ValueError(f"the host's tensor map {slots[0]}: its address {address} is not an element of an "
                             f"argument")
        indices = [_tirx._constant(i) for i in load.indices]
        shape = [int(n) for n in load.source.ty.shape]
        nums = [_tirx._constant(x) for x in slots[4:]]
        if dtype is None or rank is None or None in indices or None in nums[:4 * rank + 3]:
            raise ValueError(f"the host's tensor map {slots[0]}: its fields are not constants")
        flat = 0
        for i, n in zip(indices, shape):   # row-major views of the argument's data
            flat = flat * n + i
        itemsize = _values.numpy_dtype(str(load.source.ty.dtype.dtype)).itemsize
        d = nums[:rank], nums[rank:2 * rank - 1], nums[2 * rank - 1:3 * rank - 1], nums[3 * rank - 1:4 * rank - 1]
        forced = nums[4 * rank + 3] if len(nums) > 4 * rank + 3 else -1
        maps[_tirx.key(slots[0])] = tensor_map_record(tensors[_tirx.key(load.source)], flat * itemsize,
                                                      _values.numpy_dtype(dtype), rank, *d,
                                                      *nums[4 * rank - 1:4 * rank + 3], forced)
    return maps


def _tirx_kernel(name):
    """(CUDA source, cubin bytes, launch) of kernel ``name`` compiled by tvm_tirx through axe4j's dispatch."""
    import _tile_kernels_tirx as lane
    from tvm_tirx.backend.cuda.compiler import compile_source

    from axe4j.cuda import interp
    from axe4j.cuda.interp import _tirx

    function = _tirx_function(name)
    compiled = interp.compile_tirx(function, lane.target(ARCH))
    source = compiled.executable.mod.imports[0].inspect_source("cuda")
    gvar, func = _tirx.device_function(compiled.device)
    symbol = str(gvar.name_hint)
    fields = [str(f) for f in func.attrs["cuda.launch_fields"]]
    values, slots = _tirx._launch_fields(compiled.host, symbol, len(func.params), fields)
    params, maps = [], None
    for param, slot in zip(func.params, slots):
        if "TensorMap" in str(param.ty):
            maps = _tirx_tensor_maps(compiled.host, compiled.names) if maps is None else maps
            if slot is None or _tirx.key(slot) not in maps:
                raise ValueError(f"kernel {name}: parameter {param.name} is not a tensor map the host encodes")
            params.append(maps[_tirx.key(slot)])
            continue
        tensor = str(param.name).removesuffix("_ptr")
        if tensor not in compiled.names:
            raise ValueError(f"kernel {name}: parameter {param.name} is not the pointer of a tensor of "
                             f"{list(compiled.names)}")
        params.append({"array": compiled.names.index(tensor)})
    dynamic = sum(v for f, v in values.items() if "shared" in f or "smem" in f)
    launch = {"symbol": symbol, "grid": [values.get(f"grid.{a}", 1) for a in "xyz"],
              "block": [values.get(f"block.{a}", 1) for a in "xyz"],
              "cluster": [values.get(f"cluster.{a}", 1) for a in "xyz"], "dynamic_shared": int(dynamic),
              "params": params, "fields": values}
    cubin = compile_source(source, {"cuda": {"compiler": "nvcc", "target_format": "cubin"}},
                           target=lane.target(ARCH)).binary
    return source, bytes(cubin), launch


def _027_kernel(name, args, interpret=True):
    """(CUDA source, cubin bytes, launch) of kernel ``name`` compiled by TVM 0.27 through axe4j's dispatch; the
    launch is the one the CUDA interpreter's host function makes on ``args``, whose kernel the interpreter then runs
    (writing ``args``, as the GPU will) unless ``interpret`` is False (a GEMM too large to interpret)."""
    import _tile_kernels_027 as lane
    import tvm
    from tvm.support import nvcc

    import axe4j
    from axe4j.cuda.interp import _host

    target = tvm.target.Target({"kind": "cuda", "arch": ARCH}, host="llvm")
    if name in TIMED:
        from axe4j.cuda.kernels.hopper_gemm import hopper_gemm

        function = hopper_gemm(*TIMED[name]["mnk"], *TIMED[name]["tile"])
    elif name in GEMMS:
        from axe4j.cuda.kernels.ampere_gemm import ampere_gemm

        function = ampere_gemm(*GEMMS[name])
    else:
        function = lane.build(lane.KERNELS[name])
    executable = axe4j.compile(function, target)
    source = executable.mod.imports[0].inspect_source("cuda")
    with target:   # nvcc's -gencode comes from the current target's arch
        cubin = bytes(nvcc.compile_cuda(source, target_format="cubin", compiler="nvcc"))
    seen, maps = [], {}
    original, statement = _host.HostInstructions._launch, _host.HostInstructions.statement

    def encoding(self, interp, g, e, name_):
        done = statement(self, interp, g, e, name_)
        if name_ == "tirx.tensormap_encode_tiled":   # the map the interpreter just built, and its raw arguments
            encoded = interp.eval(g, e.args[0]).value
            pointer, a, rank = encoded.pointer, e.attrs, int(e.attrs.rank)
            nums = [int(interp.eval(g, x)[0]) for x in e.args[2:]]
            if pointer.space not in self.spaces:
                raise ValueError(f"kernel {name}: a tensor map whose address is in no argument array")
            maps[id(encoded)] = tensor_map_record(
                self.spaces.index(pointer.space), int(np.asarray(pointer.offset).reshape(-1)[0]),
                encoded.dtype, rank, nums[:rank], nums[rank:2 * rank - 1], nums[2 * rank - 1:3 * rank - 1],
                nums[3 * rank - 1:4 * rank - 1], a.interleave, a.swizzle, a.l2_promotion, a.oob_fill,
                a.force_cu_dtype)
        return done

    def recording(self, interp, g, e):
        name_ = str(e.args[0].value)
        tags = [str(p) for p in e.attrs.launch_params]
        n_args = len(self.program.device_function(name_).params)
        values = [interp.eval(g, a) for a in e.args[1:1 + n_args]]
        dims = [int(interp.eval(g, a)[0]) for a in e.args[1 + n_args:]]
        params = []
        for v in values:
            v = getattr(v, "value", v)
            if id(v) in maps:
                params.append(maps[id(v)])
                continue
            space = getattr(v, "space", None)
            if space is None or space not in self.spaces or int(np.asarray(v.offset).reshape(-1)[0]) != 0:
                raise ValueError(f"kernel {name}: a launch argument that is neither an argument array's start nor "
                                 f"a tensor map the host encoded: {v!r}")
            params.append({"array": self.spaces.index(space)})
        grid, block, cluster, dynamic = [1, 1, 1], [1, 1, 1], [1, 1, 1], 0
        for tag, value in zip(tags, dims):
            if tag.startswith("blockIdx."):
                grid["xyz".index(tag[-1])] = value
            elif tag.startswith("threadIdx."):
                block["xyz".index(tag[-1])] = value
            elif tag.startswith("cluster"):
                cluster["xyz".index(tag[-1])] = value
            elif tag == "tirx.use_dyn_shared_memory":
                dynamic = value
        seen.append({"symbol": name_, "grid": grid, "block": block, "cluster": cluster, "dynamic_shared": dynamic,
                     "params": params, "fields": dict(zip(tags, dims))})
        return original(self, interp, g, e) if interpret else None

    _host.HostInstructions._launch, _host.HostInstructions.statement = recording, encoding
    try:
        axe4j.cuda.interp.run(executable, *args)
    finally:
        _host.HostInstructions._launch, _host.HostInstructions.statement = original, statement
    if len(seen) != 1:
        raise ValueError(f"kernel {name}: the host function launched {len(seen)} kernels")
    return source, cubin, seen[0]


def _case(out, name, kernels):
    """The kernel's arguments, expected arrays and exactness, written to ``cases/<name>.npz``."""
    args, expected, exact = gemm_arrays(name) if name in GEMMS else kernels.arrays(name)
    np.savez(out / "cases" / f"{name}.npz", exact=np.array(exact),
             **{f"a{i}": a for i, a in enumerate(args)}, **{f"e{i}": e for i, e in enumerate(expected)})
    return args, expected, exact


def build(lane: str, out: Path, names) -> dict:
    sys.path.insert(0, str(KERNELS_DIR))
    import _tile_kernels as kernels

    import axe4j

    axe4j.install()
    _nvcc_on_path()
    if lane == "0.27":
        axe4j.use_pip_nvcc()
    (out / lane).mkdir(parents=True, exist_ok=True)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    entries = {}
    for name in names:
        if name in TIMED:   # shapes only: run.py makes and checks the arrays
            m, n, k = TIMED[name]["mnk"]
            np.savez(out / "cases" / f"{name}.npz", exact=np.array(False), timed=np.array([m, n, k]))
            args = [np.zeros((m, k), "float16"), np.zeros((n, k), "float16"), np.zeros((m, n), "float16")]
            source, cubin, launch = (_tirx_kernel(name) if lane == "tirx" else
                                     _027_kernel(name, args, interpret=False))
            launch["timed"] = [m, n, k]
        elif lane == "tirx":
            args, expected, exact = _case(out, name, kernels)
            source, cubin, launch = _tirx_kernel(name)
        else:
            args, expected, exact = _case(out, name, kernels)
            ran = [a.copy() for a in args]
            source, cubin, launch = _027_kernel(name, ran)
            if not kernels.agrees(ran, expected, exact):
                raise ValueError(f"kernel {name}: the CUDA interpreter's numbers differ from numpy's on the 0.27 lane")
        (out / lane / f"{name}.cubin").write_bytes(cubin)
        (out / lane / f"{name}.cu").write_text(source)
        if launch["symbol"].encode() not in cubin:
            raise ValueError(f"kernel {name}: symbol {launch['symbol']} is not in its cubin")
        launch["static_shared"] = static_shared(cubin, launch["symbol"])
        entries[name] = {**launch, "cubin": f"{lane}/{name}.cubin", "case": f"cases/{name}.npz", "arch": ARCH}
        print(f"[tirx-gpu-bundle] {lane:5} {name:32} grid {launch['grid']} block {launch['block']} shared "
              f"{launch['static_shared']} static + {launch['dynamic_shared']} dynamic", flush=True)
    (out / f"{lane}.json").write_text(json.dumps({"lane": lane, "arch": ARCH, "kernels": entries}, indent=1))
    return entries


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lane", choices=LANES, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "tirx-gpu-bundle")
    parser.add_argument("--only", nargs="*", help="kernel names (default: all of _tile_kernels.KERNELS that the "
                                                  "bundle's arch runs)")
    args = parser.parse_args(argv)
    if args.lane == "tirx":
        import tvm_tirx  # noqa: F401  (before the JVM)
    else:
        import tvm  # noqa: F401  (before the JVM)
    sys.path.insert(0, str(KERNELS_DIR))
    import _tile_kernels as kernels

    # the tcgen05 kernels (sm_100a only) cannot run on the bundle's sm_90a GPU
    def number(arch):
        return int(arch[3:].rstrip("a"))

    runs_here = [n for n in sorted(kernels.KERNELS) if any(number(a) <= number(ARCH) for a in kernels.archs(n))]
    names = args.only or [*runs_here, *GEMMS, *TIMED]
    build(args.lane, args.out, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
