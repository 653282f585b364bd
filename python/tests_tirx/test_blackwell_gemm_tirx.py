"""The Blackwell GEMM on the new TIRx lane (``axe4j.tirx.kernels.blackwell_gemm``) against its 0.27 twin
(``axe4j.cuda.kernels.blackwell_gemm``, compiled and interpreted in .venv's Python in a process of its own): for
sm_100a the same Java rules and the same PTX instruction mix, one CTA (FP16 and BF16) and a CTA pair
(``tcgen05.mma.cta_group::2``, the TMA loads' ``.cta_group::2`` form, commits multicast to both CTAs); D exact
against numpy and against the 0.27 lane's interpreter on the same inputs; bad shapes refused naming them; a broken
parity, a pair's load without ``.cta_group::2`` and a pair's commit to one CTA only caught by the interpreter."""

import sys
from pathlib import Path

import numpy as np
import pytest
import tvm_tirx  # noqa: F401  (before the JVM)

import axe4j
from axe4j.cuda import interp

sys.path.insert(0, str(Path(__file__).parent))
import _blackwell_inputs  # noqa: E402
import _lane_027  # noqa: E402
import _ptx_mix  # noqa: E402
import _tile_kernels_tirx  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
# (M, N, K, BN, stages, cta_group, dtype), BK 64: 4 K tiles through 2 slots (the ring wraps twice); BF16 on a 2 x 2
# grid of CTAs, 3 K tiles through 2 slots; a CTA pair per 256 x 64 tile, 2 x 2 clusters, 4 K tiles through 2 slots
CONFIGS = [(128, 128, 256, 128, 2, 1, "float16"), (256, 128, 192, 64, 2, 1, "bfloat16"),
           (512, 128, 256, 64, 2, 2, "float16")]
LABELS = [_blackwell_inputs.label(*config) for config in CONFIGS]
PAIR = LABELS[2]


@pytest.fixture(scope="module")
def lane_027():
    """The 0.27 lane's answers, computed while this lane compiles (``asked``)."""
    yield from _lane_027.running(Path(__file__).parent / "_blackwell_027.py", *LABELS)


_answer: dict = {}


def asked(lane_027):
    if not _answer:
        _answer.update(_lane_027.answer(lane_027))
    return _answer


def _nvcc() -> str:
    found = sorted((REPO / ".venv" / "lib").glob("python3*/site-packages/nvidia/cu13/bin/nvcc"))
    assert found, f"no nvcc under {REPO / '.venv'}: make python installs the nvidia-cuda-nvcc wheel"
    return str(found[0])


_compiled: dict = {}


def _compile(label):
    """(compiled kernel, the rules that lowered its calls) of a configuration, built once."""
    if label not in _compiled:
        axe4j.install()
        from axe4j import tirx as Ax
        from axe4j.tirx.kernels.blackwell_gemm import blackwell_gemm

        shape, options = _blackwell_inputs.parse(label)
        before = len(Ax.LOWERED)
        compiled = interp.compile_tirx(blackwell_gemm(*shape, **options), _tile_kernels_tirx.target("sm_100a"))
        _compiled[label] = compiled, sorted({row.variant for row in Ax.LOWERED[before:]})
    return _compiled[label]


@pytest.mark.parametrize("label", LABELS)
def test_same_rules_and_ptx_mix_as_on_027(label, lane_027):
    compiled, rules = _compile(label)
    asked_027 = asked(lane_027)
    assert rules == asked_027["rules"][label] == ["axe4j-cuda-register", "axe4j-cuda-tcgen05", "axe4j-cuda-tma",
                                                  "axe4j-cuda-tmem"]
    source = compiled.executable.mod.imports[0].inspect_source("cuda")
    ours = _ptx_mix.mix(_tile_kernels_tirx.ptx(source, "sm_100a", _nvcc()))
    assert ours == asked_027["mix"][label]
    # the instructions the kernel is there for (how many, nvcc's unrolling decides: the same on both lanes, above):
    # the tile's MMAs of the form the configuration asks (both gemm_async calls, BK / 16 = 4 each), none of the
    # other form; an mbarrier pair per slot and done; the commits, the TMA loads (.cta_group::2 for the pair)
    (_, _, k), options = _blackwell_inputs.parse(label)
    group, stages = options["cta_group"], options["stages"]
    assert ours[f"tcgen05.mma.cta_group::{group}.kind::f16"] >= 2 * 4
    assert not any(f"cta_group::{3 - group}" in key for key in ours), ours
    assert ours["mbarrier.init.shared.b64"] == 2 * stages + 1
    commit = "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64" if group == 2 \
        else "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"
    assert ours[commit] >= 2
    load = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    assert ours[load + (".cta_group::2" if group == 2 else "")] >= 2
    assert ours.get("barrier.cluster.arrive.aligned", 0) == (2 if group == 2 else 0)


@pytest.mark.parametrize("label", LABELS)
def test_exact_in_the_interpreter_and_as_on_027(label, lane_027):
    a, b, d, expected = _blackwell_inputs.arrays(label)
    interp.run_tirx(_compile(label)[0], a, b, d)
    np.testing.assert_array_equal(d.astype("float32"), expected)
    np.testing.assert_array_equal(d.astype("float32"), np.array(asked(lane_027)["d"][label], "float32"))


def _mutated(tmp_path, old, new):
    """The kernel module with ``old`` replaced by ``new``, loaded from a file of its own (TVMScript parses a
    function's source from its file)."""
    from axe4j.tirx import kernels
    from axe4j.tirx.kernels import blackwell_gemm as module

    source = Path(module.__file__).read_text()
    assert source.count(old) == 1, old
    path = tmp_path / "blackwell_gemm_mutated.py"
    path.write_text(source.replace(old, new))
    namespace = {"__name__": "axe4j.tirx.kernels.blackwell_gemm_mutated", "__package__": kernels.__name__}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["blackwell_gemm"]


ONE_CTA_WAIT = "\n" + " " * 20 + "T.cuda.mbarrier_wait(full.ptr_to([kt % stages]), (kt // stages) % 2)"


@pytest.mark.parametrize("old, new, config, fault", [
    # the MMA issuer waits for the other parity: it reads a slot whose TMA load is still in flight
    (ONE_CTA_WAIT, ONE_CTA_WAIT.replace("(kt // stages) % 2", "(kt // stages + 1) % 2"),
     (128, 64, 128, 64, 2, 1, "float16"), r"tcgen05\.mma issued by thread 32 .* while a TMA load .* is unfinished"),
    # the odd CTA's B load completes on the even CTA's mbarrier without the .cta_group::2 form
    ("leader_full[0], None, 2)\n                    Ax.copy_async(B", "leader_full[0], None, 1)\n"
     "                    Ax.copy_async(B", (256, 64, 128, 64, 2, 2, "float16"),
     r"a TMA load signals an mbarrier of another CTA without \.cta_group::2"),
    # the pair's last commit reaches the even CTA's done only: the odd CTA waits for ever
    ("done.ptr_to([0]), T.uint16(3))", "done.ptr_to([0]), T.uint16(1))", (256, 64, 128, 64, 2, 2, "float16"),
     r"deadlocks in the cluster of blocks \(0, 0, 0\), \(1, 0, 0\).* block \(1, 0, 0\): .*wait for mbarrier"),
], ids=["issuer parity", "pair load without cta_group::2", "pair commit to one CTA"])
def test_a_broken_pipeline_is_caught_by_the_interpreter(tmp_path, old, new, config, fault):
    axe4j.install()
    blackwell_gemm = _mutated(tmp_path, old, new)
    label = _blackwell_inputs.label(*config)
    shape, options = _blackwell_inputs.parse(label)
    a, b, d, _ = _blackwell_inputs.arrays(label)
    compiled = interp.compile_tirx(blackwell_gemm(*shape, **options), _tile_kernels_tirx.target("sm_100a"))
    with pytest.raises(interp.KernelFault, match=fault):
        interp.run_tirx(compiled, a, b, d)


@pytest.mark.parametrize("args, options, message", [
    ((256, 200, 256), {}, r"blackwell_gemm\(M=256, N=200, K=256, BN=128, BK=64, stages=7\): "
                          r"N=200 is not a multiple of the tile 128"),
    ((256, 256, 256), dict(bn=256), r"BN=256: the epilogue holds one accumulator row per thread"),
    ((256, 256, 256), dict(stages=8), r"8 stages of \(128 \+ 128\) x 64 need \d+ bytes of shared memory"),
    ((256, 256, 96), {}, r"K=96 is not a multiple of the tile 64"),
    ((256, 256, 256), dict(dtype="float32"), r"dtype float32: tcgen05 \.kind::f16 here multiplies float16 or"),
    ((512, 256, 256), dict(cta_group=3), r"cta_group=3: 1 \(one CTA per 128-row tile\) or 2"),
    ((384, 256, 256), dict(cta_group=2), r"cta_group=2\): M=384 is not a multiple of the tile 256"),
    ((256, 48, 256), dict(bn=48, cta_group=2), r"BN=48: with cta_group=2 each CTA loads BN/2 rows of B"),
])
def test_shapes_it_cannot_tile_are_refused_naming_them(args, options, message):
    from axe4j.tirx.kernels.blackwell_gemm import blackwell_gemm

    with pytest.raises(ValueError, match=message):
        blackwell_gemm(*args, **options)
