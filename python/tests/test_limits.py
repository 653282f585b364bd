"""axe4j.layout under its caps: hostile requests get a prompt ValueError naming the figure and the cap.

The 64-bit edge cases are the ones the command-line tool is tested on (examples/src/test/resources/edge64.jsonl).
"""

import itertools
import json
import os
import pathlib
import re
import subprocess
import sys
import threading

import pytest
import tvm

import axe4j

ROOT = pathlib.Path(__file__).resolve().parents[2]
EDGE64 = ROOT / "examples" / "src" / "test" / "resources" / "edge64.jsonl"


def edge_cases():
    cases = [json.loads(line) for line in EDGE64.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [pytest.param(c["tvm"], id=c["name"]) for c in cases if "tvm" in c]


@pytest.mark.parametrize("case", edge_cases())
def test_64_bit_edge_cases(bridge, case):
    function = getattr(axe4j.layout, case["fn"])
    if "error" in case:
        with pytest.raises(ValueError, match=re.escape(case["error"])):
            function(*case["args"])
        return
    result = function(*case["args"])
    if isinstance(result, tvm.runtime.Object):
        result = axe4j.layout.to_text(result)
    assert result == case["result"]


def test_the_edge_set_reaches_every_function_it_names(bridge):
    functions = {c.values[0]["fn"] for c in edge_cases()}
    assert {"apply", "count", "span", "size", "slice", "tile", "equivalent", "canonicalize"} <= functions


def test_a_region_end_past_64_bits_is_an_error_not_a_wrapped_number(bridge):
    with pytest.raises(ValueError, match=r"region\[0\] end \(min \+ extent\) overflows 64 bits"):
        axe4j.layout.slice("S[8:1]", [8], [tvm.ir.Range.from_min_extent(1, 2**63 - 1)])


def test_apply_over_the_point_cap_is_refused_up_front(bridge):
    with pytest.raises(ValueError, match=r"too large: L\(1\) of S\[2:1\] \+ R\[16777216:1@laneid\] has 16777216 "
                                         r"points, more than the cap of 65536 points"):
        axe4j.layout.apply("S[2:1] + R[16777216:1@laneid]", 1)
    assert axe4j.layout.count("S[2:1] + R[16777216:1@laneid]", 1) == 16777216
    assert axe4j.layout.count("S[2:1] + R[(4096,4096):(1,1)]", [1], [2]) == 8191


def brute_force(extents_strides_axes, replica, offset, x):
    """L(x) by the definition: digits of x (last iter fastest), every replica combination; sorted, distinct."""
    digits = []
    for extent, _, _ in reversed(extents_strides_axes):
        digits.append(x % extent)
        x //= extent
    digits.reverse()
    base = dict(offset)
    for d, (_, stride, axis) in zip(digits, extents_strides_axes):
        base[axis] = base.get(axis, 0) + d * stride
    points = set()
    for combo in itertools.product(*[range(f) for f, _, _ in replica]):
        p = dict(base)
        for r, (_, t, axis) in zip(combo, replica):
            p[axis] = p.get(axis, 0) + r * t
        points.add(tuple(sorted(p.items())))
    return sorted(points)


def as_tuples(points):
    return sorted(tuple(sorted(p.items())) for p in points)


def test_iter_points_pages_through_a_set_larger_than_the_cap(bridge):
    text = "S[2:1] + R[(300,400):(1@laneid,3@warpid)] + 2@warpid"
    expected = brute_force([(2, 1, "m")], [(300, 1, "laneid"), (400, 3, "warpid")], {"warpid": 2}, 1)
    got = list(axe4j.layout.iter_points(text, 1, page=5000))
    assert len(got) == 120000
    assert as_tuples(got) == expected
    assert [tuple(sorted(p.items())) for p in got] == expected  # already in apply's (sorted) order


def test_caps_can_be_read_and_changed(bridge):
    before = axe4j.layout.limits()
    assert before == {"max_points": 65536, "max_answer_bytes": 4194304, "max_request_bytes": 1048576,
                      "max_millis": 10000}
    try:
        assert axe4j.layout.limits(max_points=10)["max_points"] == 10
        with pytest.raises(ValueError, match="has 11 points, more than the cap of 10 points"):
            axe4j.layout.apply("S[1:1] + R[11:1]", 0)
        with pytest.raises(ValueError, match=r"budget max_points \(0\) must be >= 1"):
            axe4j.layout.limits(max_points=0)
        with pytest.raises(ValueError, match="unknown budget cap 'points'"):
            axe4j.layout.limits(points=5)
        axe4j.layout.limits(max_request_bytes=100)
        with pytest.raises(ValueError, match="the layout text has more than 100 bytes"):
            axe4j.layout.canonicalize("S[(" + "1," * 60 + "1):(" + "1," * 60 + "1)]")
        axe4j.layout.limits(max_points=1 << 24, max_millis=1)
        with pytest.raises(ValueError, match="ran longer than the time cap of 1 ms"):
            axe4j.layout.apply("S[2:1] + R[16777216:1@laneid]", 1)
    finally:
        axe4j.layout.limits(**before)
    assert axe4j.layout.limits() == before


def test_hostile_and_ordinary_calls_from_eight_threads_get_exact_answers(bridge):
    cases = [
        ("S[(4,8):(8,1)] + R[2:4@warpid] + 5@warpid", [(4, 8, "m"), (8, 1, "m")], [(2, 4, "warpid")], {"warpid": 5}),
        ("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid",
         [(8, 4, "laneid"), (2, 1, "warpid"), (4, 1, "laneid"), (2, 1, "reg")], [(2, 4, "warpid")], {"warpid": 5}),
        ("S[(3,5):(-2,7)] + R[(3,3):(1,1)]", [(3, -2, "m"), (5, 7, "m")], [(3, 1, "m"), (3, 1, "m")], {}),
    ]
    wrong = []
    errors = []

    def work(seed):
        for i in range(60):
            text, shard, replica, offset = cases[(seed + i) % len(cases)]
            size = 1
            for e, _, _ in shard:
                size *= e
            x = (seed * 7 + i) % size
            points = axe4j.layout.apply(text, x)
            nonzero = [{k: v for k, v in p.items() if v != 0} for p in points]
            expected = brute_force(shard, replica, offset, x)
            if as_tuples(nonzero) != sorted(tuple((k, v) for k, v in p if v != 0) for p in expected):
                wrong.append((text, x))
            try:
                axe4j.layout.apply("S[2:1] + R[16777216:1@laneid]", 1)
                errors.append("no refusal")
            except ValueError as error:
                if "too large" not in str(error):
                    errors.append(str(error))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
    assert errors == []


def test_a_call_that_runs_the_jvm_heap_out_is_a_value_error_and_the_next_call_answers():
    """In a fresh process with a 64 MiB heap and the point cap lifted, apply of 2^24 points runs the heap out."""
    script = (
        "import tvm, axe4j\n"
        "axe4j.layout.limits(max_points=1 << 30, max_millis=600000)\n"
        "try:\n"
        "    axe4j.layout.apply('S[2:1] + R[16777216:1@laneid]', 1)\n"
        "    print('answered')\n"
        "except ValueError as error:\n"
        "    print('refused:', 'ran out of memory' in str(error))\n"
        "print(axe4j.layout.apply('S[4:1]', 2))\n"
    )
    env = dict(os.environ, AXE4J_JVM_OPTS="-Xmx64m", PYTHONPATH=str(ROOT / "python"))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["refused: True", "[{'m': 2}]"], done.stdout + done.stderr[-2000:]
