"""Redistribution benchmark on 8 ranks: axe4j's plans against XLA's GSPMD (JAX on CPU) and DTensor's per-dim order.

    make bench-mesh          (or .venv/bin/python benchmarks/bench_mesh.py [--size 1024] [--repeat 9])

Per case (global tensor size x size float32 unless the name says otherwise; meshes [8], [2,4], [4,2]):

- axe4j: the planner's bytes (received, summed over ranks) and information-theoretic minimum; the plan executed on
  8 MPI ranks (mpirun --oversubscribe; this machine has 2 cores, so 8 ranks share them), each rank's destination
  compared with the reference before timing; best of ``--repeat`` (slowest rank).
- GSPMD: the same redistribution compiled by JAX/XLA on 8 host devices (``axe4j_tools.mesh_peers.gspmd``, partial sources as a
  stacked sum), bytes counted from the compiled HLO's collectives with the same model (``axe4j_tools.mesh_peers.hlo_bytes``),
  the result compared with the reference, then timed on the same data (block_until_ready, best of ``--repeat``).
- per-dim: the bytes of DTensor's one-mesh-dim-at-a-time redistribution (``axe4j_tools.mesh_peers.per_dim``, formulas).

A request the planner or JAX refuses (rows not a multiple of 8) is reported as "refused: <message>".
Results: a table on stdout, out/bench-mesh/results.json, table.md, bench-mesh.png (bytes) and
bench-mesh-time.png. Times are of one process's shared-memory collectives on 2 cores, not of a network.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RANKS = 8


def cases(size: int) -> list:
    """(name, request) pairs; ``uneven`` rows are not a multiple of 8 (as a 50,257-row vocabulary is not)."""
    uneven = size - size // 32 + 1

    def req(mesh, src, dst, rows=size, **src_extra):
        return {"mesh": {"shape": mesh}, "global_shape": [rows, size], "element_bytes": 4,
                "src": {"placements": src, **src_extra}, "dst": {"placements": dst}}

    return [
        ("[8] S(0)->R all-gather", req([8], "[Shard(0)]", "[Replicate()]")),
        ("[8] S(0)->S(1) all-to-all", req([8], "[Shard(0)]", "[Shard(1)]")),
        ("[8] R->S(1) local slice", req([8], "[Replicate()]", "[Shard(1)]")),
        ("[8] P->S(0) reduce-scatter", req([8], "[Partial()]", "[Shard(0)]")),
        ("[8] P->R all-reduce", req([8], "[Partial()]", "[Replicate()]")),
        ("[8] rank 0->R broadcast", req([8], "[Replicate()]", "[Replicate()]", held_at=[[0, 0]])),
        (f"[8] S(0)->R, {uneven} rows", req([8], "[Shard(0)]", "[Replicate()]", rows=uneven)),
        (f"[8] S(0)->S(1), {uneven} rows", req([8], "[Shard(0)]", "[Shard(1)]", rows=uneven)),
        ("[2,4] [S(0),S(1)]->[S(1),S(0)]", req([2, 4], "[Shard(0), Shard(1)]", "[Shard(1), Shard(0)]")),
        ("[4,2] [S(0),S(1)]->[S(1),S(0)]", req([4, 2], "[Shard(0), Shard(1)]", "[Shard(1), Shard(0)]")),
        ("[2,4] [S(0),R]->[R,S(0)]", req([2, 4], "[Shard(0), Replicate()]", "[Replicate(), Shard(0)]")),
        ("[2,4] [S(0),S(1)]->[R,S(1)]", req([2, 4], "[Shard(0), Shard(1)]", "[Replicate(), Shard(1)]")),
        ("[2,4] [P,R]->[R,S(1)]", req([2, 4], "[Partial(), Replicate()]", "[Replicate(), Shard(1)]")),
        ("[2,4] [R,P]->[S(0),S(1)]", req([2, 4], "[Replicate(), Partial()]", "[Shard(0), Shard(1)]")),
        ("[4,2] [P,S(0)]->[S(1),S(0)]", req([4, 2], "[Partial(), Shard(0)]", "[Shard(1), Shard(0)]")),
    ]


def partial_count(request: dict) -> int:
    """Number of summands of a partial source (product of its Partial() mesh dims), 1 otherwise."""
    from axe4j_tools.mesh_peers import per_dim

    places = per_dim.parse(request["src"]["placements"])
    return int(np.prod([request["mesh"]["shape"][j] for j, pl in enumerate(places) if pl == per_dim.PARTIAL]))


def reference(request: dict, seed: int) -> tuple:
    """The global tensor (integer-valued float32, so sums are exact) and, for a partial source, its summands:
    ``summands[k]`` belongs to partial coordinates k (row-major over the partial mesh dims); they add up to it."""
    rng = np.random.default_rng(seed)
    values = rng.integers(-500, 500, request["global_shape"]).astype(np.float32)
    p = partial_count(request)
    if p == 1:
        return values, None
    summands = rng.integers(-50, 50, (p, *request["global_shape"])).astype(np.float32)
    summands[-1] = values - summands[:-1].sum(axis=0)
    return values, summands


def _short(error: BaseException) -> str:
    lines = [l.strip() for l in str(error).strip().splitlines() if l.strip()]
    head = next((l for l in lines if "Exception" in l or "Error" in l), lines[0] if lines else type(error).__name__)
    return head[:240]


# ---------------------------------------------------------------- launcher (plans in Java, then the two workers)

def launcher(size: int, repeat: int, out_dir: Path = ROOT / "out" / "bench-mesh") -> None:
    import tvm  # noqa: F401  (TVM before the JVM)

    import axe4j
    from axe4j import mesh
    from axe4j.mesh import launch
    from axe4j_tools.mesh_peers import per_dim

    axe4j.install()
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        jobs = []
        for i, (name, req) in enumerate(cases(size)):
            row = {"name": name, "request": req, "seed": 7 + i}
            try:
                plan = mesh.plan(req)
                (work / f"plan{i}.json").write_text(json.dumps(plan))
                row["axe4j"] = {"bytes": plan["bytes_total"], "minimum_bytes": plan["minimum_bytes"],
                                "bytes_per_rank": plan["bytes_per_rank"],
                                "steps": [s.get("kind") for s in plan.get("steps", []) if isinstance(s, dict)]}
                jobs.append(i)
            except Exception as error:  # the planner's refusal, reported in the table
                row["axe4j"] = {"refused": _short(error)}
            try:
                per_rank, moves = per_dim.bytes_per_rank(req)
                row["per_dim"] = {"bytes": sum(per_rank), "bytes_per_rank": per_rank,
                                  "moves": [f"mesh dim {m.mesh_dim} {m.collective}" for m in moves]}
            except ValueError as error:
                row["per_dim"] = {"refused": str(error)}
            rows.append(row)
        (work / "cases.json").write_text(json.dumps({"rows": rows, "jobs": jobs, "repeat": repeat}))
        env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={RANKS}")
        done = subprocess.run([sys.executable, __file__, "--gspmd", str(work)], env=env, capture_output=True,
                              text=True, timeout=900)
        if done.returncode != 0:
            raise SystemExit(f"GSPMD worker failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        gspmd_rows = json.loads((work / "gspmd.json").read_text())
        launch.run(RANKS, __file__, "--rank", str(work), timeout=1200)
        times = json.loads((work / "mpi.json").read_text())
    for i, row in enumerate(rows):
        row["gspmd"] = gspmd_rows[i]
        if str(i) in times:
            row["axe4j"]["seconds"] = times[str(i)]
    report(rows, size, out_dir)


def _cell_bytes(part: dict) -> str:
    """The byte count, or the refusal (cut to 100 characters here; results.json has it whole)."""
    if "refused" in part:
        return "refused: " + part["refused"][:100].replace("|", "/")
    return str(part["bytes"])


def _ratio(a, b) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def report(rows: list, size: int, out_dir: Path) -> None:
    from axe4j_tools import chart

    header = (f"| redistribution ({size} cols, float32, {RANKS} ranks) | axe4j bytes | minimum | GSPMD bytes "
              f"| per-dim bytes | GSPMD/axe4j | per-dim/axe4j | axe4j ms | GSPMD ms | GSPMD/axe4j time |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        a, g, d = r["axe4j"], r["gspmd"], r["per_dim"]
        ab, gb, db = a.get("bytes"), g.get("bytes"), d.get("bytes")
        a_ms = a["seconds"] * 1e3 if "seconds" in a else None
        g_ms = g["seconds"] * 1e3 if "seconds" in g else None
        # Ratios of bytes are undefined for a 0-byte plan; then the difference is what the table shows.
        lines.append(f"| {r['name']} | {_cell_bytes(a)} | {a.get('minimum_bytes', '-')} | {_cell_bytes(g)} "
                     f"| {_cell_bytes(d)} | {_ratio(gb, ab)} | {_ratio(db, ab)} "
                     f"| {'-' if a_ms is None else f'{a_ms:.2f}'} | {'-' if g_ms is None else f'{g_ms:.2f}'} "
                     f"| {_ratio(g_ms, a_ms)} |")
    table = "\n".join(lines)
    print(table)
    (out_dir / "results.json").write_text(json.dumps({"size": size, "ranks": RANKS, "rows": rows}, indent=1))
    (out_dir / "table.md").write_text(table + "\n")
    labels = [f"c{i + 1}" for i in range(len(rows))]
    mib = 1 / (1 << 20)

    def series(part, key, scale):
        return [r[part][key] * scale if key in r[part] else 0.0 for r in rows]

    # A refused side has no bar; the note under its case names it (a = axe4j, g = GSPMD, d = per-dim).
    notes = [("no " + ",".join(k for k, part in (("a", "axe4j"), ("g", "gspmd"), ("d", "per_dim"))
                                      if "refused" in r[part])) if any("refused" in r[part] for part in
                                                                      ("axe4j", "gspmd", "per_dim")) else ""
             for r in rows]
    chart.bar_chart(out_dir / "bench-mesh.png", f"bytes received, MiB (sum of {RANKS} ranks), cases as in table.md, "
                    f"no a/g/d: axe4j/GSPMD/per-dim refused", labels,
                    {"axe4j": series("axe4j", "bytes", mib), "minimum": series("axe4j", "minimum_bytes", mib),
                     "GSPMD": series("gspmd", "bytes", mib), "per-dim": series("per_dim", "bytes", mib)}, notes)
    chart.bar_chart(out_dir / "bench-mesh-time.png", f"time, ms (best of runs, {RANKS} ranks on 2 cores)", labels,
                    {"axe4j MPI": series("axe4j", "seconds", 1e3), "GSPMD": series("gspmd", "seconds", 1e3)}, notes)
    print("\n" + "\n".join(f"c{i + 1} = {r['name']}" for i, r in enumerate(rows)))
    print(f"\nwritten: {out_dir}/results.json, table.md, bench-mesh.png, bench-mesh-time.png")


# ---------------------------------------------------------------- GSPMD worker (JAX, XLA_FLAGS set by the launcher)

def _mesh_package() -> None:
    """Makes ``axe4j.mesh`` importable without ``axe4j/__init__`` (which loads TVM; jaxlib brings its own LLVM)."""
    if "axe4j" not in sys.modules:
        package = types.ModuleType("axe4j")
        package.__path__ = [str(ROOT / "python" / "axe4j")]
        sys.modules["axe4j"] = package


def gspmd_worker(work: Path) -> None:
    import time

    _mesh_package()
    from axe4j_tools.mesh_peers import gspmd, hlo_bytes

    spec = json.loads((work / "cases.json").read_text())
    out = []
    for row in spec["rows"]:
        req = row["request"]
        devices = int(np.prod(req["mesh"]["shape"]))
        try:
            values, summands = reference(req, row["seed"])
            prog = gspmd.program(req)
            exe, x = gspmd.compiled(prog, gspmd.host_input(prog, req, values, summands))
        except Exception as error:  # JAX refuses (e.g. a dim not divisible by its shards)
            out.append({"refused": f"{type(error).__name__}: {_short(error)}"})
            continue
        text = exe.as_text()
        per_device = hlo_bytes.bytes_per_device(text, devices)
        result = exe(x)
        if not np.array_equal(np.asarray(result), values):
            raise SystemExit(f"{row['name']}: GSPMD's result differs from the reference")
        best = float("inf")
        for _ in range(spec["repeat"]):
            t0 = time.perf_counter()
            exe(x).block_until_ready()
            best = min(best, time.perf_counter() - t0)
        out.append({"bytes": sum(per_device), "bytes_per_rank": per_device, "seconds": best,
                    "collectives": [f"{c.kind} groups {[len(g) for g in c.groups] or len(c.pairs)}"
                                    for c in hlo_bytes.collectives(text, devices)]})
    (work / "gspmd.json").write_text(json.dumps(out))


# ---------------------------------------------------------------- MPI rank worker

def rank_worker(work: Path) -> None:
    from mpi4py import MPI

    _mesh_package()
    from axe4j.mesh.mpi_exec import RankPlan, execute, expected_destination, local_source, split_comms, timed

    comm = MPI.COMM_WORLD
    spec = json.loads((work / "cases.json").read_text())
    times = {}
    for i in spec["jobs"]:
        row = spec["rows"][i]
        plan = json.loads((work / f"plan{i}.json").read_text())
        rp = RankPlan.of(plan, comm.rank)
        split_comms(rp, comm)
        values, summands = reference(row["request"], row["seed"])
        src = local_source(rp, plan, values.reshape(-1), None if summands is None else
                           summands.reshape(summands.shape[0], -1))
        at, want = expected_destination(rp, values.reshape(-1))
        dst, received = execute(rp, comm, src)
        ok = bool(np.array_equal(dst[at], want)) and received == plan["bytes_per_rank"][comm.rank]
        if not all(comm.allgather(ok)):
            raise SystemExit(f"{row['name']}: a rank's destination or byte count differs from the reference/plan")
        seconds = timed(comm, lambda: execute(rp, comm, src), repeat=spec["repeat"])
        if comm.rank == 0:
            times[str(i)] = seconds
        for c in rp.comms.values():
            c.Free()
    if comm.rank == 0:
        (work / "mpi.json").write_text(json.dumps(times))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("--rank", "--gspmd"):
        sys.path.insert(0, str(ROOT / "python"))
        (rank_worker if sys.argv[1] == "--rank" else gspmd_worker)(Path(sys.argv[2]))
    else:
        parser = argparse.ArgumentParser()
        parser.add_argument("--size", type=int, default=1024, help="global tensor is size x size float32")
        parser.add_argument("--repeat", type=int, default=9, help="timed runs per case (best is reported)")
        parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench-mesh", help="folder of the results")
        args = parser.parse_args()
        launcher(args.size, args.repeat, args.out)
