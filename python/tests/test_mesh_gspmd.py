"""How a redistribution request becomes a JAX program for GSPMD (axe4j_tools.mesh_peers.gspmd), without JAX: the sharding
specs, the stacked input of a partial or one-holder source, and the refusals. test_mesh_hlo_bytes.py compiles two."""

import numpy as np
import pytest

from axe4j_tools.mesh_peers import gspmd, per_dim


def _req(mesh, src, dst, shape=(8, 4), **src_extra):
    return {"mesh": {"shape": mesh}, "global_shape": list(shape), "element_bytes": 4,
            "src": {"placements": src, **src_extra}, "dst": {"placements": dst}}


def test_shards_become_partition_spec_entries_in_mesh_order():
    assert gspmd.partition_spec(per_dim.parse("[Shard(1), Shard(0)]"), 2) == ("m1", "m0")
    assert gspmd.partition_spec(per_dim.parse("[Shard(0), Shard(0)]"), 2) == (("m0", "m1"), None)
    assert gspmd.partition_spec(per_dim.parse("[Replicate(), Partial()]"), 3) == (None, None, None)
    with pytest.raises(ValueError, match="Shard\\(2\\) on mesh dim 0"):
        gspmd.partition_spec(per_dim.parse("[Shard(2)]"), 2)


def test_partial_source_is_a_stack_sharded_over_the_partial_dims():
    prog = gspmd.program(_req([2, 4], "[Partial(), Shard(1)]", "[Shard(0), Shard(1)]"))
    assert prog.kind == "sum"
    assert prog.input_spec == ("m0", None, "m1")
    assert prog.output_spec == ("m0", "m1")
    both = gspmd.program(_req([2, 4], "[Partial(), Partial()]", "[Replicate(), Replicate()]"))
    assert both.input_spec == (("m0", "m1"), None, None)  # summand k = row-major partial coordinates
    values = np.arange(32, dtype=np.float32).reshape(8, 4)
    summands = np.stack([values, np.zeros_like(values)])
    assert gspmd.host_input(prog, {}, values, summands) is summands


def test_one_holder_is_slot_c_of_a_stack_over_its_mesh_dim():
    req = _req([4], "[Replicate()]", "[Replicate()]", held_at=[[0, 2]])
    prog = gspmd.program(req)
    assert (prog.kind, prog.slot, prog.input_spec, prog.output_spec) == ("slot", 2, ("m0", None, None), (None, None))
    values = np.ones((8, 4), np.float32)
    slots = gspmd.host_input(prog, req, values, None)
    assert slots.shape == (4, 8, 4)
    assert slots[2].sum() == 32 and slots.sum() == 32


def test_partial_destination_is_refused():
    with pytest.raises(ValueError, match="partial destination"):
        gspmd.program(_req([4], "[Partial()]", "[Partial()]"))
