"""GEMM + reduce-scatter with tensor parallelism over 4 CPU ranks (Open MPI), checked against numpy.

C = A @ B with the contraction dimension K split over a 1-D mesh of 4 ranks: A is [Shard(1)], B is [Shard(0)].
Each rank runs an axe4j-compiled CPU GEMM on its shards, which gives a partial C (every rank holds a summand of
the whole M x N result: layout [Partial()]); the planner's reduce-scatter turns it into [Shard(0)], rows
M/4 per rank. The launcher plans (Java, once), compiles the GEMM once and exports it as a shared library;
the ranks load it with ``tvm.runtime.load_module`` and execute the JSON plan with mpi4py. No JVM on the ranks.

    .venv/bin/python examples/gemm_reduce_scatter.py
"""

import tvm  # noqa: F401  (TVM before the JVM)

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

RANKS, M, K, N = 4, 64, 128, 48
KL = K // RANKS  # contraction slice per rank


def gemm_kernel():
    from tvm.script import tirx as T
    from tvm.tirx.script import tile as Tx

    @T.prim_func
    def gemm(A: T.Buffer((M, KL), "float32"), B: T.Buffer((KL, N), "float32"), Z: T.Buffer((M, N), "float32"),
             C: T.Buffer((M, N), "float32")):
        Tx.gemm(C[:, :], A[:, :], B[:, :], Z[:, :], False, False, T.float32(1.0), T.float32(0.0))

    return gemm


def request(tensor_placements: str, shape, **more) -> dict:
    return {"mesh": {"shape": [RANKS]}, "global_shape": list(shape), "element_bytes": 4, **more,
            "tensor": {"placements": tensor_placements}}


def launcher() -> None:
    import axe4j
    from axe4j import mesh
    from axe4j.mesh import launch

    axe4j.install()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype("float32")
    b = rng.standard_normal((K, N)).astype("float32")
    rs = {"mesh": {"shape": [RANKS]}, "global_shape": [M, N], "element_bytes": 4,
          "src": {"placements": "[Partial()]"}, "dst": {"placements": "[Shard(0)]"}}
    print(mesh.explain(rs))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lib = axe4j.compile(gemm_kernel(), axe4j.host_target())
        lib.export_library(str(work / "gemm.so"))
        (work / "plan.json").write_text(mesh.plan_text(rs))
        a_shards = mesh.local_shards(request("[Shard(1)]", a.shape))
        b_shards = mesh.local_shards(request("[Shard(0)]", b.shape))
        for r in range(RANKS):
            for name, full, shards in (("a", a, a_shards), ("b", b, b_shards)):
                lo, hi = shards[r]["lo"], shards[r]["hi"]
                np.save(work / f"{name}{r}.npy", full[lo[0]:hi[0], lo[1]:hi[1]])
        launch.run(RANKS, __file__, "--rank", str(work), timeout=300)
        c_shards = mesh.local_shards(request("[Shard(0)]", (M, N)))
        c = np.zeros((M, N), "float32")
        moved = []
        for r in range(RANKS):
            lo, hi = c_shards[r]["lo"], c_shards[r]["hi"]
            c[lo[0]:hi[0], lo[1]:hi[1]] = np.load(work / f"c{r}.npy").reshape(c_shards[r]["local_shape"])
            moved.append(json.loads((work / f"bytes{r}.json").read_text()))
    want = a @ b
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3)
    plan_bytes = json.loads(mesh.plan_text(rs))["bytes_per_rank"]
    assert moved == plan_bytes, (moved, plan_bytes)
    print(f"result check: C = A @ B ({M}x{K} @ {K}x{N}) on {RANKS} ranks matches numpy (every element); "
          f"bytes received per rank {moved} = the plan's count")


def rank_worker(work: Path) -> None:
    from mpi4py import MPI

    from axe4j.mesh.mpi_exec import RankPlan, execute

    comm = MPI.COMM_WORLD
    r = comm.rank
    plan = json.loads((work / "plan.json").read_text())
    gemm = tvm.runtime.load_module(str(work / "gemm.so"))["gemm"]
    a = np.load(work / f"a{r}.npy")
    b = np.load(work / f"b{r}.npy")
    args = [tvm.runtime.tensor(np.ascontiguousarray(x)) for x in (a, b, np.zeros((M, N), "float32"),
                                                                   np.zeros((M, N), "float32"))]
    gemm(*args)
    partial = args[3].numpy().reshape(-1)  # this rank's summand of C, in the [Partial()] layout's buffer order
    rp = RankPlan.of(plan, r)
    assert rp.src_size == partial.size, (rp.src_size, partial.size)
    c_local, received = execute(rp, comm, partial)
    np.save(work / f"c{r}.npy", c_local)
    (work / f"bytes{r}.json").write_text(json.dumps(received))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--rank":
        rank_worker(Path(sys.argv[2]))
    else:
        launcher()
