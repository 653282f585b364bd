"""axe4j.install() on the new TIRx (tvm_tirx) and the axe4j.layout globals on its layouts, among them the operations
tvm_tirx dropped from its own layout API (slice, constant and symbolic; tile_of; direct sum; group_many; storage;
pack/unpack) and span.

Each answer is applied at every index and checked against brute force on the source layouts, through TIRx's own C++
``apply`` (and ``tile``, ``span``, which tvm_tirx kept); and every answer equals the 0.27 lane's answer to the same
seeded question, asked in .venv's Python in a process of its own (the two TVMs cannot share one).
"""

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tvm_ffi
import tvm_tirx
from tvm_tirx.tirx.layout import Axis, ComposeLayout, Iter, TileLayout

import axe4j
from axe4j import _lane
from axe4j import layout as al

sys.path.insert(0, str(Path(__file__).parent))
import _doc_blocks  # noqa: E402
import _layout_cases as cases  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
VENV_027 = REPO / ".venv" / "bin" / "python"


@pytest.fixture(scope="module")
def answers_027():
    """The 0.27 lane's answers, computed while this module runs (started first: its JVM starts in parallel)."""
    if not VENV_027.exists():
        pytest.fail(f"{VENV_027} is missing: the 0.27 lane's venv (make python) answers the same cases")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    env.pop(_lane.LANE_ENV, None)
    process = subprocess.Popen([str(VENV_027), str(Path(__file__).parent / "_ask_027.py")], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    yield process
    if process.poll() is None:
        process.kill()


@pytest.fixture(scope="module")
def jvm(answers_027):
    return axe4j.install()


@pytest.fixture(scope="module")
def asked_027(answers_027):
    """What the 0.27 process printed, once it is done."""
    stdout, stderr = answers_027.communicate(timeout=300)
    assert answers_027.returncode == 0, stderr[-3000:]
    return json.loads(stdout)


def point(layout, i) -> dict:
    """TIRx's own (C++) answer at flat index i: ``{axis: int}`` without zeros."""
    return {str(k): int(v) for k, v in layout.apply(i).items() if int(v) != 0}


def flat(coord, shape) -> int:
    x = 0
    for c, d in zip(coord, shape):
        x = x * d + c
    return x


def product(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def added(a: dict, b: dict) -> dict:
    out = {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}
    return {k: v for k, v in out.items() if v != 0}


def evaluate(expr, env: dict) -> int:
    """A TIR integer expression at the variables' values (Var, IntImm, +, -, *, //, %)."""
    if isinstance(expr, int):
        return expr
    kind = type(expr).__name__
    if kind == "IntImm":
        return int(expr.value)
    if kind == "Var":
        return env[str(expr.name)]
    ops = {"Add": lambda x, y: x + y, "Sub": lambda x, y: x - y, "Mul": lambda x, y: x * y,
           "FloorDiv": lambda x, y: x // y, "FloorMod": lambda x, y: x % y}
    if kind not in ops:
        raise AssertionError(f"unexpected expression {expr} ({kind})")
    return ops[kind](evaluate(expr.a, env), evaluate(expr.b, env))


def test_install_shares_tvm_tirx_registry_and_libraries(jvm):
    assert _lane.name() == "tvm_tirx" and "tvm" not in sys.modules
    assert axe4j.version() == jvm.version
    tirx_lib = Path(tvm_tirx.__file__).parent / "lib"
    assert str(tirx_lib.resolve()) in jvm.tvm_libdirs
    # Java built this layout through tvm_tirx's constructors, in this process's registry.
    parsed = al.parse("S[(4,8):(8@laneid,1)] + 3")
    assert isinstance(parsed, TileLayout)
    assert point(parsed, 9) == {"laneid": 8, "m": 4}
    names = set(tvm_ffi.registry.list_global_func_names())
    for op in ("slice", "tile_of", "direct_sum", "group_many", "storage", "pack", "unpack", "span"):
        assert "axe4j.layout." + op in names


def test_java_reads_tvm_tirx_layouts_field_by_field(jvm):
    """tirx.Axis is an ffi.Enum on tvm_tirx (its name in _str_index): every iter, offset and swizzle survives."""
    layout = TileLayout.from_iters([Iter(2, 16, Axis.get("warpid")), Iter(4, 8, Axis.get("laneid")),
                                    Iter(8, 1, Axis.get("m"))], [Iter(2, 64, Axis.get("m"))], {Axis.get("m"): 5})
    assert al.to_text(layout) == "S[(2,4,8):(16@warpid,8@laneid,1)] + R[2:64] + 5"
    swizzled = ComposeLayout(3, 3, 3, TileLayout.from_iters([Iter(8, 64, Axis.m), Iter(64, 1, Axis.m)], [], {}))
    assert al.to_text(swizzled) == "Swizzle<3,3,3> o S[(8,64):(64,1)]"
    for i in range(0, 512, 7):
        assert [{a: x for a, x in p.items() if x} for p in al.apply(swizzled, i)] == [point(swizzled, i)], i


def test_slice_against_the_source_at_every_index(jvm):
    sliced = 0
    for case in cases.slice_cases():
        layout = cases.build(case["spec"])
        answer = al.slice(layout, case["shape"], case["region"])
        if answer is None:
            continue
        sliced += 1
        box = [e - b for b, e in case["region"]]
        for k, coord in enumerate(itertools.product(*map(range, box))):
            source = [b + c for (b, _), c in zip(case["region"], coord)]
            assert point(answer, k) == point(layout, flat(source, case["shape"])), (case, k)
    assert sliced >= 30


def test_symbolic_slice_at_every_start_and_index(jvm):
    v = tvm_tirx.tirx.Var("v", "int32")
    checked = 0
    for case in cases.symbolic_slice_cases():
        layout = cases.build(case["spec"])
        answer = al.slice(layout, case["shape"], cases.symbolic_region(case, v))
        if answer is None:
            continue
        checked += 1
        w, (c0, c1) = case["width"], case["cols"]
        for start in range(case["shape"][0] // w):
            for k, (r, c) in enumerate(itertools.product(range(w), range(c1 - c0))):
                at = {str(a): evaluate(e, {"v": start}) for a, e in answer.apply(k).items()}
                got = {a: x for a, x in at.items() if x != 0}
                assert got == point(layout, flat([start * w + r, c0 + c], case["shape"])), (case, start, k)
    assert checked >= 30


def test_tile_of_recovers_each_factor_of_tirx_tiling(jvm):
    for case in cases.tile_cases():
        inner, outer = cases.tile(case["inner"]), cases.tile(case["outer"])
        outer_shape, inner_shape = case["outer_shape"], case["inner_shape"]
        tiled = inner.tile(outer, outer_shape, inner_shape)   # TIRx's own tiling (C++)
        tiled_shape = [o * i for o, i in zip(outer_shape, inner_shape)]
        found_outer = al.tile_of(inner, tiled, tiled_shape, inner_shape, "inner")
        found_inner = al.tile_of(outer, tiled, tiled_shape, outer_shape, "outer")
        assert found_outer is not None and found_inner is not None, case
        # TIRx's tile cannot group a layout without iters (size 1): give it the iter (1):(1).
        found_outer, found_inner = (f if len(f.shard) else TileLayout.from_iters([Iter(1, 1, Axis.m)], [], f.offset)
                                    for f in (found_outer, found_inner))
        again = [inner.tile(found_outer, outer_shape, inner_shape), found_inner.tile(outer, outer_shape, inner_shape)]
        for i in range(product(tiled_shape)):
            expected = point(tiled, i)
            assert [point(t, i) for t in again] == [expected, expected], (case, i)


def test_direct_sum_is_the_sum_of_its_addends(jvm):
    for case in cases.direct_sum_cases():
        left, right = cases.tile(case["left"]), cases.tile(case["right"])
        ls, rs = case["left_shape"], case["right_shape"]
        answer = al.direct_sum(right, left, ls, rs)
        interleaved = [d for pair in zip(ls, rs) for d in pair]
        for coord in itertools.product(*map(range, interleaved)):
            expected = added(point(left, flat(coord[0::2], ls)), point(right, flat(coord[1::2], rs)))
            assert point(answer, flat(coord, interleaved)) == expected, (case, coord)


def test_group_many_keeps_the_map_and_splits_at_every_shape(jvm):
    for case in cases.group_many_cases():
        layout = cases.tile(case["spec"])
        split, seps = al.group_many(layout, case["shapes"])
        for i in range(product(case["shapes"][0])):
            assert point(split, i) == point(layout, i), (case, i)
        extents = [int(it.extent) for it in split.shard]
        for shape, one in zip(case["shapes"], seps):
            assert [product(extents[a:b]) for a, b in zip(one, one[1:])] == shape, (case, seps)


def test_storage_is_where_the_elements_live(jvm):
    for case in cases.storage_cases():
        layout = cases.tile(case["spec"])
        answer = al.storage(layout)
        memory = {point(layout, i).get("m", 0) for i in range(cases.size(case["spec"]))}
        stored = [point(answer, i) for i in range(int(answer.size()))]
        assert all(set(p) <= {"m"} for p in stored), (case, stored)
        assert {p.get("m", 0) for p in stored} == memory, case


def test_unpack_then_pack_elementwise(jvm):
    for case in cases.pack_cases():
        layout, n = cases.tile(case["spec"]), case["num"]
        unpacked = al.unpack(layout, n)
        packed = al.pack(unpacked, n)
        for i in range(cases.size(case["spec"])):
            source = point(layout, i)
            for j in range(n):
                expected = dict(source, m=source.get("m", 0) * n + j)
                assert point(unpacked, i * n + j) == {a: x for a, x in expected.items() if x != 0}, (case, i, j)
            assert point(packed, i) == source, (case, i)


def test_span_is_one_past_the_largest_coordinate(jvm):
    for case in cases.span_cases():
        layout = cases.tile(case["spec"])
        memory = [point(layout, i).get("m", 0) for i in range(cases.size(case["spec"]))]
        assert al.span(layout, "m") == max(memory) + 1 == int(layout.span("m")), case
        assert al.span(layout) == int(layout.span()), case


def test_every_answer_equals_the_027_lane(jvm, asked_027):
    ours = cases.answers()
    theirs = asked_027
    assert theirs["lane"] == "tvm"
    for op, answers in ours.items():
        assert answers == theirs["answers"][op], op
    assert sum(a not in (None, "error") for a in ours["slice"] + ours["symbolic_slice"]) >= 60


def test_java_alone_loads_tvm_tirx_by_its_library_names():
    """No Python TVM in the process: tvm-bridge finds tvm_tirx's libraries in the venv (lane tvm_tirx) and Java's
    layout globals build and read tvm_tirx layouts."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), AXE4J_VENV=sys.prefix)
    run = subprocess.run([sys.executable, str(Path(__file__).parent / "_jvm_hosted.py")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    hosted = json.loads(run.stdout.splitlines()[-1])
    assert hosted["python_tvm_modules"] == []
    names = [Path(p).name for p in hosted["loaded"]]
    assert names == ["libtvm_ffi.so", "libtvm_runtime.so", "libtvm_tirx_compiler.so",
                     "libtvm_tirx_llvm_backend_native.so"], hosted["loaded"]
    assert all("/tvm_tirx/lib/" in p for p in hosted["loaded"][1:]), hosted["loaded"]
    assert hosted["type_key"] == "tirx.TileLayout"
    assert hosted["text"] == "S[(4,8):(8@laneid,1)] + 3"
    assert hosted["apply"] == "[{laneid=8, m=4}]"


def test_every_code_block_of_tvm_versions_md_runs_on_its_lane(jvm, asked_027):
    """docs/tvm-versions.md: each block names its lane; tvm_tirx blocks run here, tvm blocks ran in .venv."""
    every = _doc_blocks.blocks()
    assert every and all(b["language"] == "python" and b["lane"] in ("tvm", "tvm_tirx") for b in every), \
        [(b["line"], b["language"], b["lane"]) for b in every]
    ran = _doc_blocks.run("tvm_tirx") + asked_027["doc_blocks"]
    assert sorted(r["line"] for r in ran) == [b["line"] for b in every]
    failed = [r for r in ran if r["error"]]
    assert not failed, "\n".join(f"docs/tvm-versions.md:{r['line']}\n{r['error']}" for r in failed)


def test_version_report_names_tvm_tirx():
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    run = subprocess.run([sys.executable, "-m", "axe4j", "--version"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"TVM {tvm_tirx.__version__} at {Path(tvm_tirx.__file__).parent}" in run.stdout, run.stdout


def test_get_scope_and_well_formedness_as_tvm_tirx_answers(jvm):
    """get_scope gives tvm_tirx's ThreadScopes; verify_well_formed (0.27's name) agrees with check_well_formed."""
    import random

    rng = random.Random(4609)
    checked = 0
    for _ in range(60):
        spec = cases.random_spec(rng, iters=(1, 4), axes=("m", "laneid", "warpid", "wid_in_wg", "wgid"))
        layout = cases.tile(spec)
        try:
            layout.check_well_formed()
            theirs = layout.get_scope()
        except Exception:  # noqa: BLE001 - tvm_tirx raises on a layout that is not well formed
            theirs = "error"
        assert al.verify_well_formed(layout) == (theirs != "error"), spec
        if theirs == "error":
            continue
        ours = al.get_scope(layout)
        assert (None if ours is None else tuple(map(str, ours))) == \
            (None if theirs is None else tuple(map(str, theirs))), spec
        checked += ours is not None
    assert checked >= 20
