"""Redistribution plans executed by MPI ranks (Open MPI, mpi4py) match a global numpy reference.

The launcher (this process) plans every pair in Java, writes the plans to a file and starts one ``mpirun``
per rank count; each rank executes every plan and reports mismatches and the bytes it received, measured from
the buffers it handed to MPI. Seeded: the seed and the request of a failing case are in the message.
"""

import tvm  # noqa: F401  (TVM before the JVM)

import json
import random

import pytest

from axe4j import mesh
from axe4j.mesh import launch
from axe4j.mesh.cases import MESHES, named_requests, random_request

SEED = 20261123
PER_MESH = 14  # random pairs per mesh shape: 5 meshes -> 70 pairs, plus the named ones


def _extra_requests(m: list) -> dict:
    """Uneven (padded) shards, and a pair without a usable common refinement (planned element by element)."""
    def req(shape, src, dst):
        return {"mesh": {"shape": m}, "global_shape": shape, "element_bytes": 8, "src": src, "dst": dst}

    rep = "[" + ", ".join(["Replicate()"] * len(m)) + "]"
    first = "[Shard(0)" + ", Replicate()" * (len(m) - 1) + "]"
    last = "[Shard(1)" + ", Replicate()" * (len(m) - 1) + "]"
    partial = "[Partial()" + ", Replicate()" * (len(m) - 1) + "]"
    out = {
        "uneven shard(0)->shard(1)": req([11, 7], {"placements": first}, {"placements": last}),
        "uneven partial->shard(0)": req([13, 5], {"placements": partial}, {"placements": first}),
        "uneven shard(0)->replicate": req([9], {"placements": first}, {"placements": rep}),
    }
    if m == [2]:
        # radices [3, 4k, 2] and [2, 6k, 2] split one range of 12k differently: 12k > 2^16 values to enumerate,
        # so the element-wise planner plans it (reducing every element, an all-reduce)
        k = 1 << 15
        out["no refinement, partial->replicate"] = req(
            [24 * k], {"layout": f"S[(3,{4 * k},2):({8 * k},2,1)] + R[2:1@gpuid]", "partial_dims": [0]},
            {"layout": f"S[(2,{6 * k},2):({12 * k},2,1)] + R[2:1@gpuid]"})
    return out


def _cases(n_ranks: int) -> list[dict]:
    rng = random.Random(SEED + n_ranks)
    cases = []
    for m in MESHES[n_ranks]:
        for i in range(PER_MESH):
            req = random_request(rng, m)
            cases.append({"name": f"mesh {m} random #{i} (seed {SEED + n_ranks})", "request": req})
        for name, req in named_requests(m, [16, 8] if len(m) == 1 or m[1] <= 2 else [16, 16]).items():
            cases.append({"name": f"mesh {m} {name}", "request": req})
        for name, req in _extra_requests(m).items():
            cases.append({"name": f"mesh {m} {name}", "request": req})
    for k, c in enumerate(cases):
        c["seed"] = SEED * 100 + k
        c["plan"] = mesh.plan(c["request"])
    return cases


@pytest.mark.parametrize("n_ranks", [2, 4, 8])
def test_plans_deliver_on_mpi_ranks(n_ranks, tmp_path):
    cases = _cases(n_ranks)
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    launch.run(n_ranks, "axe4j.mesh.check_worker", str(path), str(tmp_path), timeout=170)
    per_rank = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(n_ranks)]
    assert len(cases) >= 14
    for i, case in enumerate(cases):
        for r in range(n_ranks):
            res = per_rank[r][i]
            where = f"{case['name']} rank {r}: request {json.dumps(case['request'])}"
            assert res["mismatches"] == 0, f"{where}: {res['mismatches']} wrong elements, first {res['first_bad']}"
            assert res["measured_bytes"] == res["plan_bytes"], f"{where}: measured {res['measured_bytes']} bytes"
        plan = case["plan"]
        total = sum(plan["bytes_per_rank"])
        assert total == plan["bytes_total"] == plan["minimum_bytes"] + plan["excess_bytes"]
        # the symbolic planner is at the lower bound in every case, partial and uneven included
        if plan["planner"] == "symbolic" or not plan["src"]["partial_dims"]:
            assert plan["at_minimum"] and total == plan["minimum_bytes"], case["name"]


def test_random_pairs_cover_every_collective():
    kinds = set()
    count = 0
    for n in (2, 4, 8):
        for case in _cases(n):
            count += 1
            for step in case["plan"]["steps"]:
                kinds.update(step["kind"].split("+"))
    assert count >= 50
    # all_reduce only from the element-wise fallback (the symbolic planner reduce-scatters, then forwards)
    assert {"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "broadcast"} <= kinds, kinds


def test_named_kinds_choose_their_collective():
    reqs = named_requests([4], [16, 8])
    want = {"shard->replicate": ["all_gather"], "replicate->shard": [], "shard(0)->shard(1)": ["all_to_all"],
            "partial->shard": ["reduce_scatter"], "partial->replicate": ["reduce_scatter", "all_gather"],
            "one rank->replicate": ["broadcast"]}
    for name, req in reqs.items():
        p = mesh.plan(req)
        assert [s["kind"] for s in p["steps"]] == want[name], (name, mesh.explain(req))
    text = mesh.explain(reqs["partial->shard"])
    assert "reduce_scatter over mesh dims [0] (groups of 4)" in text, text


def test_plans_are_box_lists_of_the_second_format():
    req = named_requests([4], [16, 8])["shard(0)->shard(1)"]
    p = mesh.plan(req)
    assert p["format"] == "axe4j.mesh.plan/2" and p["planner"] == "symbolic" and p["at_minimum"]
    send = p["ranks"][0]["steps"][0]["send"]
    assert all(set(b) == {"base", "extents", "strides"} for b in send), send
    fallback = mesh.plan(_extra_requests([2])["no refinement, partial->replicate"])
    assert fallback["planner"] == "element" and "no common refinement" in fallback["note"]


def test_box_expansion_is_row_major():
    from axe4j.mesh.mpi_exec import box_offsets, boxes_offsets, pairs
    box = {"base": 5, "extents": [2, 3], "strides": [10, 2]}
    assert box_offsets(box).tolist() == [5, 7, 9, 15, 17, 19]
    runs = [{"base": 4, "extents": [2], "strides": [1]}, {"base": 0, "extents": [], "strides": []}]
    assert boxes_offsets(runs).tolist() == [4, 5, 0]
    frm, to = pairs([[box, {"base": 0, "extents": [2, 3], "strides": [3, 1]}]])
    assert frm.tolist() == [5, 7, 9, 15, 17, 19] and to.tolist() == list(range(6))


def test_local_shards_and_layout():
    req = {"mesh": {"shape": [2, 2]}, "global_shape": [64, 128], "tensor": {"placements": "[Shard(1), Shard(0)]"}}
    shards = mesh.local_shards(req)
    assert [s["local_shape"] for s in shards] == [[32, 64]] * 4
    assert shards[1]["region"] == "[32:64, 0:64]" and shards[2]["region"] == "[0:32, 64:128]"
    assert mesh.layout(req) == "S[(2,32,2,64):(1@gpuid,64,2@gpuid,1)]"


def test_overlapping_layout_is_rejected_with_its_name():
    req = {"mesh": {"shape": [4]}, "global_shape": [8], "tensor": {"layout": "S[(4,2):(1@gpuid,0)]"}}
    with pytest.raises(Exception, match="overlapping data"):
        mesh.local_shards(req)
