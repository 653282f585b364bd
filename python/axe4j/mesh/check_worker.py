"""Rank side of the redistribution checks: ``python -m axe4j.mesh.check_worker CASES.json OUTDIR``.

For every case (a plan and a seed) each rank builds its source buffer from a seeded global reference
(integer-valued float64, so partial sums are exact), executes the plan, and compares its destination buffer
with what the destination layout says it holds. Writes OUTDIR/rank<r>.json: per case, mismatches and
measured bytes.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from mpi4py import MPI

from .mpi_exec import RankPlan, execute, expected_destination, local_source


def reference(plan: dict, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The global tensor, and for a partial source its p summands (the last makes the sum exact)."""
    size = int(np.prod(plan["global_shape"]))
    rng = np.random.default_rng(seed)
    values = rng.integers(-500, 500, size).astype(np.float64)
    p = int(np.prod([plan["mesh"]["shape"][j] for j in plan["src"]["partial_dims"]] or [1]))
    if not plan["src"]["partial_dims"]:
        return values, None
    summands = rng.integers(-50, 50, (p, size)).astype(np.float64)
    summands[-1] = values - summands[:-1].sum(axis=0)
    return values, summands


def main() -> None:
    cases_path, outdir = sys.argv[1], sys.argv[2]
    comm = MPI.COMM_WORLD
    rank = comm.rank
    with open(cases_path) as f:
        cases = json.load(f)
    results = []
    for case in cases:
        plan = case["plan"]
        if len(plan["ranks"]) != comm.size:
            raise SystemExit(f"case {case['name']}: plan for {len(plan['ranks'])} ranks, running on {comm.size}")
        rp = RankPlan.of(plan, rank)
        values, summands = reference(plan, case["seed"])
        src = local_source(rp, plan, values, summands)
        dst, received = execute(rp, comm, src)
        at, want = expected_destination(rp, values)
        bad = np.flatnonzero(dst[at] != want)
        results.append({"name": case["name"], "mismatches": int(bad.size),
                        "first_bad": None if bad.size == 0 else [int(at[bad[0]]), float(dst[at[bad[0]]]),
                                                                  float(want[bad[0]])],
                        "held": int(at.size), "measured_bytes": int(received),
                        "plan_bytes": int(plan["bytes_per_rank"][rank])})
        for c in rp.comms.values():
            c.Free()
    with open(f"{outdir}/rank{rank}.json", "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
