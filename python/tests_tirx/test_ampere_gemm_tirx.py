"""The Ampere-style FP16 GEMM on the new TIRx lane (``axe4j.tirx.kernels.ampere_gemm``) against its 0.27 twin
(``axe4j.cuda.kernels.ampere_gemm``, compiled in .venv's Python in a process of its own): the same Java rules, the
same PTX instruction mix for sm_80 and sm_90a but for two differences of spelling (below), and D exact against numpy
in the CUDA interpreter at two shapes; a wait that lets one tile too many be pending is caught there as a race."""

import re
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
SHAPE = (128, 128, 128)
ARCHS = ("sm_80", "sm_90a")


@pytest.fixture(scope="module")
def lane_027():
    yield from _lane_027.running(Path(__file__).parent / "_ampere_027.py", "x".join(map(str, SHAPE)))


@pytest.fixture(scope="module")
def asked_027(lane_027):
    return _lane_027.answer(lane_027)


def _kernel(*shape, stages=3):
    axe4j.install()
    from axe4j.tirx.kernels.ampere_gemm import ampere_gemm

    return ampere_gemm(*shape, stages=stages)


def _nvcc() -> str:
    found = sorted((REPO / ".venv" / "lib").glob("python3*/site-packages/nvidia/cu13/bin/nvcc"))
    assert found, f"no nvcc under {REPO / '.venv'}: make python installs the nvidia-cuda-nvcc wheel"
    return str(found[0])


def _by_bytes(mix: dict) -> dict:
    """The mix with each global or shared load/store keyed by its bytes per access: 0.27 stores a pair of float16 as
    ``st.global.v2.b16``, this lane as ``st.global.b32``, the same 4 bytes a thread."""
    out = {}
    for key, count in mix.items():
        match = re.fullmatch(r"(ld|st)\.(global|shared)(?:\.v(\d))?\.b(\d+)", key)
        if match:
            key = f"{match.group(1)}.{match.group(2)} {int(match.group(3) or 1) * int(match.group(4)) // 8} bytes"
        out[key] = out.get(key, 0) + count
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_same_rules_and_ptx_mix_as_on_027(arch, asked_027):
    from axe4j import tirx as Ax

    before = len(Ax.LOWERED)
    compiled = interp.compile_tirx(_kernel(*SHAPE), _tile_kernels_tirx.target(arch))
    assert sorted({row.variant for row in Ax.LOWERED[before:]}) == asked_027["rules"]["x".join(map(str, SHAPE))]
    source = compiled.executable.mod.imports[0].inspect_source("cuda")
    ours = _by_bytes(_ptx_mix.mix(_tile_kernels_tirx.ptx(source, arch, _nvcc())))
    theirs = _by_bytes(asked_027["mix"]["x".join(map(str, SHAPE))][arch])
    # copy_async commits its own group on this lane (A's and B's: 2 a stage, 8 here), and at the end of K there is
    # no empty group to commit; 0.27 commits one a stage and an empty one at the end (6)
    assert ours.pop("cp.async.commit_group") == 8 and theirs.pop("cp.async.commit_group") == 6
    assert ours == theirs
    assert theirs["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"] == 64
    assert theirs["cp.async.cg.shared.global"] == 16 and theirs["ldmatrix.sync.aligned.m8n8.x4.shared.b16"] == 32


@pytest.mark.parametrize("shape", [SHAPE, (256, 192, 96)], ids=lambda s: "x".join(map(str, s)))
def test_exact_in_the_interpreter(shape):
    m, n, k = shape
    rng = np.random.default_rng(m + n + k)
    # small integers: every order of the float32 sums is exact, and so is D's float16
    a, b = (rng.integers(-3, 4, (rows, k)).astype("float16") for rows in (m, n))
    d = np.zeros((m, n), "float16")
    interp.run_tirx(interp.compile_tirx(_kernel(m, n, k), _tile_kernels_tirx.target("sm_80")), a, b, d)
    np.testing.assert_array_equal(d, (a.astype("float32") @ b.astype("float32").T).astype("float16"))


def test_a_wait_that_lets_a_tile_too_many_be_pending_is_a_race(monkeypatch):
    """The interpreter must see the wait's count: with 2 (stages - 1) groups pending, the ldmatrix of tile kt reads
    shared memory a cp.async still writes."""
    from axe4j.tirx import kernels
    from axe4j.tirx.kernels import ampere_gemm as module

    source = Path(module.__file__).read_text()
    assert "pending = 2 * (stages - 2)" in source
    namespace = {"__name__": "axe4j.tirx.kernels.ampere_gemm_mutated", "__package__": kernels.__name__}
    exec(compile(source.replace("pending = 2 * (stages - 2)", "pending = 2 * (stages - 1)"), module.__file__, "exec"),
         namespace)
    compiled = interp.compile_tirx(namespace["ampere_gemm"](*SHAPE), _tile_kernels_tirx.target("sm_80"))
    a, b = (np.ones((128, 128), "float16") for _ in range(2))
    with pytest.raises(interp.KernelFault, match="cp.async .* is unfinished"):
        interp.run_tirx(compiled, a, b, np.zeros((128, 128), "float16"))
