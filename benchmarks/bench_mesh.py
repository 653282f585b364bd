"""Redistribution benchmark on 4 MPI ranks: bytes moved versus the information-theoretic minimum, and the time of
the planned collectives versus a naive gather-everything-to-rank-0-and-scatter, per redistribution kind, in one run.

    make bench-mesh          (or .venv/bin/python benchmarks/bench_mesh.py [--size 1024])

Each rank checks its destination buffer against the global reference before timing. Results: a table on stdout
and out/bench-mesh/results.json. Ranks share this machine's cores (mpirun --oversubscribe), so times are of the
local shared-memory transport, not of a network.
"""

import tvm  # noqa: F401  (TVM before the JVM)

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RANKS = 4


def cases(size: int) -> dict:
    def req(mesh, src, dst):
        return {"mesh": {"shape": mesh}, "global_shape": [size, size], "element_bytes": 4, "src": src, "dst": dst}

    def pl(text, **extra):
        return {"placements": text, **extra}

    return {
        "shard->replicate (all-gather)": req([4], pl("[Shard(0)]"), pl("[Replicate()]")),
        "replicate->shard (local slice)": req([4], pl("[Replicate()]"), pl("[Shard(1)]")),
        "shard(0)->shard(1) (all-to-all)": req([4], pl("[Shard(0)]"), pl("[Shard(1)]")),
        "partial->shard (reduce-scatter)": req([4], pl("[Partial()]"), pl("[Shard(0)]")),
        "partial->replicate (all-reduce)": req([4], pl("[Partial()]"), pl("[Replicate()]")),
        "one rank->replicate (broadcast)": req([4], pl("[Replicate()]", held_at=[[0, 0]]), pl("[Replicate()]")),
        "2x2 [S(0),S(1)]->[R,S(1)] (all-gather, dim 0)": req([2, 2], pl("[Shard(0), Shard(1)]"),
                                                             pl("[Replicate(), Shard(1)]")),
        "2x2 [P,S(0)]->[S(1),S(0)] (reduce-scatter, dim 0)": req([2, 2], pl("[Partial(), Shard(0)]"),
                                                                 pl("[Shard(1), Shard(0)]")),
    }


def launcher(size: int) -> None:
    import axe4j
    from axe4j import mesh
    from axe4j.mesh import launch

    axe4j.install()
    out_dir = ROOT / "out" / "bench-mesh"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        names = []
        for i, (name, req) in enumerate(cases(size).items()):
            (work / f"plan{i}.json").write_text(mesh.plan_text(req))
            names.append(name)
        (work / "names.json").write_text(json.dumps(names))
        launch.run(RANKS, __file__, "--rank", str(work), timeout=580)
        rows = json.loads((work / "results.json").read_text())
    header = (f"| redistribution ({size}x{size} float32, {RANKS} ranks) | bytes moved | minimum | moved/min "
              f"| plan ms | naive ms | naive/plan |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = "-" if r["minimum_bytes"] == 0 else f"{r['bytes'] / r['minimum_bytes']:.2f}"
        lines.append(f"| {r['name']} | {r['bytes']} | {r['minimum_bytes']} | {ratio} | {r['plan_s'] * 1e3:.2f} "
                     f"| {r['naive_s'] * 1e3:.2f} | {r['naive_s'] / r['plan_s']:.1f}x |")
    table = "\n".join(lines)
    print(table)
    (out_dir / "results.json").write_text(json.dumps(rows, indent=1))
    (out_dir / "table.md").write_text(table + "\n")


def rank_worker(work: Path) -> None:
    from mpi4py import MPI

    sys.path.insert(0, str(ROOT / "python"))
    from axe4j.mesh.check_worker import reference
    from axe4j.mesh.mpi_exec import RankPlan, execute, expected_destination, local_source, naive, split_comms, timed

    comm = MPI.COMM_WORLD
    names = json.loads((work / "names.json").read_text())
    rows = []
    for i, name in enumerate(names):
        plan = json.loads((work / f"plan{i}.json").read_text())
        plans = [RankPlan.of(plan, r) for r in range(comm.size)]
        rp = plans[comm.rank]
        split_comms(rp, comm)
        values, summands = reference(plan, 7 + i)
        values = values.astype(np.float32)
        summands = None if summands is None else summands.astype(np.float32)
        src = local_source(rp, plan, values, summands)
        at, want = expected_destination(rp, values)
        dst, received = execute(rp, comm, src)
        naive_dst = naive(rp, plans, comm, src, values.size)
        ok = bool(np.array_equal(dst[at], want)) and bool(np.array_equal(naive_dst[at], want))
        assert received == plan["bytes_per_rank"][comm.rank], (name, received)
        plan_s = timed(comm, lambda: execute(rp, comm, src))
        naive_s = timed(comm, lambda: naive(rp, plans, comm, src, values.size))
        oks = comm.gather(ok, root=0)
        if comm.rank == 0:
            if not all(oks):
                raise SystemExit(f"{name}: a rank's destination differs from the reference")
            rows.append({"name": name, "bytes": plan["bytes_total"], "minimum_bytes": plan["minimum_bytes"],
                         "steps": [s["kind"] for s in plan["steps"]], "plan_s": plan_s, "naive_s": naive_s})
        for c in rp.comms.values():
            c.Free()
    if comm.rank == 0:
        (work / "results.json").write_text(json.dumps(rows))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--rank":
        rank_worker(Path(sys.argv[2]))
    else:
        parser = argparse.ArgumentParser()
        parser.add_argument("--size", type=int, default=1024, help="global tensor is size x size float32")
        launcher(parser.parse_args().size)
