"""The HLO byte counter of the GSPMD peer (axe4j_tools.mesh_peers.hlo_bytes): hand-written HLO, every replica-group spelling
against numpy's reading of it, and one module that XLA compiles for 8 host devices (in a JAX subprocess)."""

import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from axe4j_tools.mesh_peers.hlo_bytes import bytes_per_device, collectives, replica_groups

ROOT = Path(__file__).resolve().parents[2]

PARAMS = """
HloModule m, entry_computation_layout={(f32[16,8]{1,0})->f32[128,8]{1,0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (param: f32[16,8]) -> f32[128,8] {
  %param = f32[16,8]{1,0} parameter(0)
  %wide = f32[128,8]{1,0} parameter(1)
  %half = bf16[3,5]{1,0} parameter(2)
"""


def _module(*lines: str) -> str:
    return PARAMS + "\n".join("  " + l for l in lines) + "\n}\n"


def test_all_gather_explicit_groups():
    hlo = _module("ROOT %ag = f32[64,8]{1,0} all-gather(%param), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, "
                  "dimensions={0}, use_global_device_ids=true")
    assert bytes_per_device(hlo, 8) == [3 * 16 * 8 * 4] * 8


def test_all_gather_leaves_devices_outside_the_groups_at_zero():
    hlo = _module("ROOT %ag = f32[32,8]{1,0} all-gather(%param), replica_groups={{1,5}}, dimensions={0}")
    assert bytes_per_device(hlo, 8) == [0, 512, 0, 0, 0, 512, 0, 0]


def test_empty_groups_mean_every_device():
    hlo = _module("ROOT %ag = f32[128,8]{1,0} all-gather(%param), replica_groups={}, dimensions={0}")
    assert bytes_per_device(hlo, 8) == [7 * 512] * 8


def test_reduce_scatter_receives_p_minus_1_blocks():
    hlo = _module("ROOT %rs = f32[32,8]{1,0} reduce-scatter(%wide), replica_groups=[2,4]<=[8], dimensions={0}, "
                  "to_apply=%add")
    assert bytes_per_device(hlo, 8) == [3 * (128 * 8 // 4) * 4] * 8


def test_all_reduce_is_counted_as_a_ring_with_the_remainder_on_the_first_members():
    # n = 15 bf16 elements over groups of 4: b_k = 4, 4, 4, 3
    hlo = _module("ROOT %ar = bf16[3,5]{1,0} all-reduce(%half), replica_groups={{0,1,2,3},{4,5,6,7}}, to_apply=%add")
    want = [(3 * bk + 15 - bk) * 2 for bk in (4, 4, 4, 3)] * 2
    assert bytes_per_device(hlo, 8) == want


def test_all_to_all_tuple_and_array_forms():
    tuple_form = _module("%s0 = f32[2,8]{1,0} slice(%param), slice={[0:2], [0:8]}",
                         "%s1 = f32[2,8]{1,0} slice(%param), slice={[2:4], [0:8]}",
                         "ROOT %a2a = (f32[2,8]{1,0}, /*index=1*/f32[2,8]{1,0}) all-to-all(%s0, /*index=1*/%s1), "
                         "channel_id=1, replica_groups={{0,4},{1,5},{2,6},{3,7}}")
    assert bytes_per_device(tuple_form, 8) == [2 * 8 * 4] * 8
    array_form = _module("ROOT %a2a = f32[16,8]{1,0} all-to-all(%param), replica_groups={{0,1,2,3,4,5,6,7}}, "
                         "dimensions={0}")
    assert bytes_per_device(array_form, 8) == [7 * 16 * 8 * 4 // 8] * 8


def test_collective_permute_counts_targets_of_pairs_that_move():
    hlo = _module("ROOT %cp = f32[16,8]{1,0} collective-permute(%param), channel_id=2, "
                  "source_target_pairs={{0,0},{1,4},{4,1},{2,3}}")
    assert bytes_per_device(hlo, 8) == [0, 512, 0, 512, 512, 0, 0, 0]


def test_async_pairs_count_once_and_inline_operand_shapes_are_read():
    hlo = _module("%ags = (f32[16,8]{1,0}, f32[32,8]{1,0}) all-gather-start(f32[16,8]{1,0} %param), "
                  "replica_groups={{0,1},{2,3},{4,5},{6,7}}, dimensions={0}",
                  "ROOT %agd = f32[32,8]{1,0} all-gather-done(%ags)")
    assert bytes_per_device(hlo, 8) == [512] * 8


def test_operand_defined_nowhere_is_an_error_naming_it():
    hlo = _module("ROOT %ag = f32[64,8]{1,0} all-gather(%ghost), replica_groups={}, dimensions={0}")
    with pytest.raises(ValueError, match="ghost"):
        bytes_per_device(hlo, 8)


def test_collective_without_a_byte_model_is_refused():
    hlo = _module("ROOT %cb = f32[16,8]{1,0} collective-broadcast(%param), replica_groups={}")
    with pytest.raises(ValueError, match="collective-broadcast"):
        collectives(hlo, 8)


def _iota_groups(shape, dims, perm):
    ids = np.arange(int(np.prod(dims))).reshape(dims)
    if perm is not None:
        ids = ids.transpose(perm)
    return {tuple(r) for r in ids.reshape(shape).tolist()}


def test_iota_groups_transpose_before_reshaping():
    assert set(replica_groups("[4,2]<=[2,4]T(1,0)", 8)) == {(0, 4), (1, 5), (2, 6), (3, 7)}
    assert set(replica_groups("[2,4]<=[8]", 8)) == {(0, 1, 2, 3), (4, 5, 6, 7)}


def test_mesh_axes_groups_against_numpy():
    """Every mesh of 8 or 16 devices, every device-id permutation spelled as iota+transpose, every set of whole
    axes and of sub-axes: the parsed groups equal numpy's (device id array, move the group axes last, reshape)."""
    rng = random.Random(20261126)
    checked = 0
    for sizes in ([8], [2, 4], [4, 2], [2, 2, 2], [4, 4], [2, 8]):
        total = int(np.prod(sizes))
        names = [f"axis_{i}" for i in range(len(sizes))]
        mesh = "mesh[" + ",".join(f"'{a}'={n}" for a, n in zip(names, sizes)) + "]"
        for with_ids in (False, True):
            ids = np.arange(total)
            tail = ""
            if with_ids:
                dims = [2] * int(np.log2(total))
                perm = list(range(len(dims)))
                rng.shuffle(perm)
                ids = np.arange(total).reshape(dims).transpose(perm).reshape(-1)
                tail = f", device_ids=([{','.join(map(str, dims))}]T({','.join(map(str, perm))}))"
            # split every axis into its binary sub-axes; a group varies a chosen subset of them (major first)
            bits = [(j, int(np.log2(n))) for j, n in enumerate(sizes)]
            subs = [(j, b) for j, nb in bits for b in range(nb)]  # sub-axis b of axis j: size 2, pre = 2**b
            for r in range(1, len(subs) + 1):
                for chosen in itertools.combinations(subs, r):
                    spec = ",".join(f"'{names[j]}':({2 ** b})2" for j, b in chosen)
                    got = replica_groups(f"{mesh}{tail} {{{spec}}}", total)
                    fine = ids.reshape([2] * len(subs))  # one axis of size 2 per sub-axis, in (axis, b) order
                    group_axes = [subs.index(c) for c in chosen]
                    rest = [i for i in range(len(subs)) if i not in group_axes]
                    want = fine.transpose(rest + group_axes).reshape(-1, 2 ** r)
                    assert sorted(got) == sorted(tuple(int(d) for d in row) for row in want), (sizes, spec, tail)
                    checked += 1
            whole = replica_groups(f"{mesh}{tail} {{'{names[0]}'}}", total)
            grid = ids.reshape(sizes)
            want = np.moveaxis(grid, 0, -1).reshape(-1, sizes[0])
            assert sorted(whole) == sorted(tuple(int(d) for d in row) for row in want)
    assert checked > 100


def test_compiled_module_on_8_host_devices():
    """XLA compiles [Shard(0)] -> [Replicate()] on [8] and [Partial(), Replicate()] -> [Replicate(), Replicate()]
    on [2, 4]; the counter finds the all-gather over all 8 and the all-reduces along mesh dim 0 (groups {r, r+4}),
    with the model's bytes; the results equal the input (the stacked summands' sum)."""
    script = r"""
import json, sys, types
sys.modules["axe4j"] = types.ModuleType("axe4j"); sys.modules["axe4j"].__path__ = [sys.argv[1]]
import numpy as np
from axe4j_tools.mesh_peers import gspmd, hlo_bytes
out = []
for mesh, src, dst in (([8], "[Shard(0)]", "[Replicate()]"),
                       ([2, 4], "[Partial(), Replicate()]", "[Replicate(), Replicate()]")):
    req = {"mesh": {"shape": mesh}, "global_shape": [64, 32], "element_bytes": 4,
           "src": {"placements": src}, "dst": {"placements": dst}}
    values = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    summands = np.stack([values - 1, np.ones_like(values)])
    prog = gspmd.program(req)
    exe, x = gspmd.compiled(prog, gspmd.host_input(prog, req, values, summands))
    text = exe.as_text()
    out.append({"ok": bool(np.array_equal(np.asarray(exe(x)), values)),
                "collectives": [[c.kind, [list(g) for g in c.groups]] for c in hlo_bytes.collectives(text, 8)],
                "bytes": hlo_bytes.bytes_per_device(text, 8)})
print(json.dumps(out))
"""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    done = subprocess.run([sys.executable, "-c", script, str(ROOT / "python" / "axe4j")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"JAX subprocess failed (JAX missing? `bash ci/setup-jax.sh`):\n{done.stderr[-3000:]}"
    gather, reduce = json.loads(done.stdout.strip().splitlines()[-1])
    assert gather["ok"] and reduce["ok"]
    assert gather["collectives"] == [["all-gather", [list(range(8))]]]
    assert gather["bytes"] == [7 * (64 // 8) * 32 * 4] * 8
    assert [c[0] for c in reduce["collectives"]] == ["all-reduce"]
    assert sorted(reduce["collectives"][0][1]) == [[r, r + 4] for r in range(4)]
    n = 64 * 32
    assert reduce["bytes"] == [(n // 2 + n - n // 2) * 4] * 8  # ring over 2: b_k + n - b_k with p-1 = 1

