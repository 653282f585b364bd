"""The Hopper FP16 GEMM on the new TIRx lane (``axe4j.tirx.kernels.hopper_gemm``) against its 0.27 twin
(``axe4j.cuda.kernels.hopper_gemm``, compiled in .venv's Python in a process of its own): the same Java rules and the
same PTX instruction mix for sm_90a (but for one difference of spelling, below), D exact against numpy in the CUDA
interpreter at two shapes (the second: 3 x 2 CTAs, 10 K tiles through 4 slots), the ring in dynamic shared memory
(the launch's dynamic bytes are the pool's; the cubin's static ``.nv.shared`` holds only sm_90's reserved 1 KiB),
bad shapes refused naming them, and a broken parity or slot index caught by the interpreter."""

import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import tvm_tirx  # noqa: F401  (before the JVM)

import axe4j
from axe4j.cuda import interp

sys.path.insert(0, str(Path(__file__).parent))
import _lane_027  # noqa: E402
import _ptx_mix  # noqa: E402
import _tile_kernels_tirx  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
# (M, N, K, stages), 128 x 128 x 64 tiles: 4 K tiles through 2 slots (the ring wraps); the default 4 stages
CONFIGS = [(128, 128, 256, 2), (512, 256, 1024, 4)]
# 0.27 stores each pair of FP16 results as a C half2, which nvcc writes st.global.v2.b16; this lane's explicit store is
# st.global.b32: the same 4 bytes a thread, (0.27, new TIRx) counts
MIX_DIFFERS = {"st.global.v2.b16": (32, 0), "st.global.b32": (0, 32)}
RESERVED_SHARED = 1024   # sm_90's system-reserved shared memory, in the .nv.shared section of any kernel that uses it


def _label(config):
    return "x".join(map(str, config))


@pytest.fixture(scope="module")
def lane_027():
    yield from _lane_027.running(Path(__file__).parent / "_hopper_027.py", *map(_label, CONFIGS))


@pytest.fixture(scope="module")
def asked_027(lane_027):
    return _lane_027.answer(lane_027)


def _kernel(m, n, k, stages=4):
    axe4j.install()
    from axe4j.tirx.kernels.hopper_gemm import hopper_gemm

    return hopper_gemm(m, n, k, stages=stages)


def _nvcc() -> str:
    found = sorted((REPO / ".venv" / "lib").glob("python3*/site-packages/nvidia/cu13/bin/nvcc"))
    assert found, f"no nvcc under {REPO / '.venv'}: make python installs the nvidia-cuda-nvcc wheel"
    return str(found[0])


def _sections(elf: bytes) -> dict:
    """{name: size} of an ELF64 little-endian file's sections (a cubin)."""
    assert elf[:5] == b"\x7fELF\x02", "not an ELF64 file"
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]   # the section-name table's file offset
    return {elf[names + h[0]:elf.index(b"\0", names + h[0])].decode(): h[5] for h in headers}


@pytest.mark.parametrize("config", CONFIGS, ids=_label)
def test_same_rules_and_ptx_mix_as_on_027(config, asked_027):
    from axe4j import tirx as Ax

    *shape, stages = config
    before = len(Ax.LOWERED)
    compiled = interp.compile_tirx(_kernel(*shape, stages=stages), _tile_kernels_tirx.target("sm_90a"))
    assert sorted({row.variant for row in Ax.LOWERED[before:]}) == asked_027["rules"][_label(config)]
    source = compiled.executable.mod.imports[0].inspect_source("cuda")
    ours = _ptx_mix.mix(_tile_kernels_tirx.ptx(source, "sm_90a", _nvcc()))
    theirs = asked_027["mix"][_label(config)]
    assert {key: (theirs.get(key, 0), ours.get(key, 0)) for key in MIX_DIFFERS} == MIX_DIFFERS
    assert ({k: v for k, v in ours.items() if k not in MIX_DIFFERS}
            == {k: v for k, v in theirs.items() if k not in MIX_DIFFERS})
    # the instructions the kernel is there for: an mbarrier pair per slot, TMA loads, wgmma m64n128k16
    assert theirs["mbarrier.init.shared.b64"] == 2 * stages
    assert theirs["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"] >= 3
    assert theirs["wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"] >= 64 // 16   # BK / 16 a K tile


def test_the_ring_is_dynamic_shared_memory(monkeypatch):
    """The 4-stage ring (128 KiB) and its mbarriers are one shared.dyn block: the launch asks for exactly the pool's
    bytes as dynamic shared memory, the CUDA source declares no static __shared__ array, and the cubin's static
    .nv.shared section holds only the reserved 1 KiB (the ring as static arrays made it 0x20440 bytes)."""
    from tvm_tirx.backend.cuda.compiler import compile_source

    from axe4j.cuda.interp import _tirx
    from axe4j.tirx.kernels.hopper_gemm import dynamic_shared_bytes

    compiled = interp.compile_tirx(_kernel(4096, 4096, 4096), _tile_kernels_tirx.target("sm_90a"))
    gvar, func = _tirx.device_function(compiled.device)
    fields = [str(f) for f in func.attrs["cuda.launch_fields"]]
    launch, _ = _tirx._launch_fields(compiled.host, str(gvar.name_hint), len(func.params), fields)
    assert launch["dynamic_smem_bytes"] == dynamic_shared_bytes() == 4 * (128 + 128) * 64 * 2 + 2 * 4 * 8
    source = compiled.executable.mod.imports[0].inspect_source("cuda")
    declared = [line.strip() for line in source.splitlines() if "__shared__" in line]
    assert len(declared) == 1 and declared[0].startswith("extern __shared__"), declared
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(_nvcc()).parent), os.environ.get("PATH", "")]))
    cubin = bytes(compile_source(source, {"cuda": {"compiler": "nvcc", "target_format": "cubin"}},
                                 target=_tile_kernels_tirx.target("sm_90a")).binary)
    sections = _sections(cubin)
    assert sections[f".nv.shared.{gvar.name_hint}"] == RESERVED_SHARED, sections


def _arrays(m, n, k):
    rng = np.random.default_rng(m + n + k)
    # small integers: every order of the float32 sums is exact (|D| <= 4 K <= 4096), and so is D's float16 for K <= 512
    a, b = (rng.integers(-2, 3, (rows, k)).astype("float16") for rows in (m, n))
    return a, b, (a.astype("float32") @ b.astype("float32").T).astype("float16")


@pytest.mark.parametrize("config", [(128, 128, 256, 2), (256, 384, 640, 4)], ids=_label)
def test_exact_in_the_interpreter(config):
    """The second: a 3 x 2 grid of CTAs, 10 K tiles through 4 slots (the ring wraps twice)."""
    *shape, stages = config
    a, b, expected = _arrays(*shape)
    d = np.zeros(expected.shape, "float16")
    interp.run_tirx(interp.compile_tirx(_kernel(*shape, stages=stages), _tile_kernels_tirx.target("sm_90a")), a, b, d)
    np.testing.assert_array_equal(d, expected)


def _mutated(tmp_path, old, new):
    """The kernel module with ``old`` replaced by ``new``, loaded from a file of its own (TVMScript parses a
    function's source from its file)."""
    from axe4j.tirx import kernels
    from axe4j.tirx.kernels import hopper_gemm as module

    source = Path(module.__file__).read_text()
    assert source.count(old) == 1, old
    path = tmp_path / "hopper_gemm_mutated.py"
    path.write_text(source.replace(old, new))
    namespace = {"__name__": "axe4j.tirx.kernels.hopper_gemm_mutated", "__package__": kernels.__name__}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["hopper_gemm"]


@pytest.mark.parametrize("old, new, fault", [
    # the consumer waits for the other parity: it reads a slot whose TMA load is still in flight
    ("T.cuda.mbarrier_wait(full.ptr_to([kt % stages]), (kt // stages) % 2)",
     "T.cuda.mbarrier_wait(full.ptr_to([kt % stages]), (kt // stages + 1) % 2)",
     "wgmma.mma_async .* while a TMA load .* is unfinished"),
    # the consumer multiplies the next slot's A
    ("A_smem[kt % stages, part, :, :]", "A_smem[(kt + 1) % stages, part, :, :]",
     "wgmma.mma_async .* while a TMA load .* is unfinished"),
], ids=["consumer parity", "consumer slot"])
def test_a_broken_ring_is_caught_by_the_interpreter(tmp_path, old, new, fault):
    axe4j.install()
    hopper_gemm = _mutated(tmp_path, old, new)
    a, b, _ = _arrays(128, 128, 256)
    compiled = interp.compile_tirx(hopper_gemm(128, 128, 256, stages=2), _tile_kernels_tirx.target("sm_90a"))
    with pytest.raises(interp.KernelFault, match=fault):
        interp.run_tirx(compiled, a, b, np.zeros((128, 128), "float16"))


@pytest.mark.parametrize("args, message", [
    ((200, 128, 256), r"hopper_gemm\(M=200, N=128, K=256, BM=128, BN=128, BK=64, stages=4\): "
                      r"M=200 is not a multiple of the tile 128"),
    ((128, 128, 96), r"K=96 is not a multiple of the tile 64"),
    ((128, 128, 256, 128, 128, 32), r"BK=32 is not a multiple of the 128-byte swizzle row \(64 FP16\)"),
    ((128, 320, 256, 128, 320), r"BN=320: one wgmma covers N <= 256"),
    ((256, 256, 256, 128, 256, 64, 8), r"need 393216 bytes of shared memory"),
    ((128, 128, 256, 128, 128, 64, 0), r"stages=0: the ring needs at least one slot"),
    ((0, 128, 256), r"M=0 must be at least 1"),
])
def test_shapes_it_cannot_tile_are_refused_naming_them(args, message):
    from axe4j.tirx.kernels.hopper_gemm import hopper_gemm

    with pytest.raises(ValueError, match=message):
        hopper_gemm(*args)
