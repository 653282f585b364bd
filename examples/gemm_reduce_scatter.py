"""GEMM + reduce-scatter with tensor parallelism over 4 CPU ranks (Open MPI), unfused and overlapped, against numpy.

C = A @ B with the contraction dimension K split over a 1-D mesh of 4 ranks: A is [Shard(1)], B is [Shard(0)].
Each rank runs an axe4j-compiled CPU GEMM on its shards, which gives a partial C (every rank holds a summand of
the whole M x N result: layout [Partial()]); the planner's reduce-scatter turns it into [Shard(0)], rows
M/4 per rank. The launcher plans (Java, once), compiles the GEMMs once and exports them as a shared library;
the ranks load it with ``tvm.runtime.load_module`` and execute the JSON plans with mpi4py. No JVM on the ranks.

Two variants, same data, both checked against numpy:

- **unfused**: the whole GEMM, then the plan's (blocking) reduce-scatter of all of C;
- **overlapped**: C in ``blocks`` row blocks. Block i holds, of every rank's M/4 output rows, the i-th slice of
  M/4/blocks rows, so its [Partial()] -> [Shard(0)] plan (one plan, the block's shape) hands each rank the next
  slice of its own rows. Rank r computes block i's summand (A's rows of that block, precomputed once, @ its B
  shard), starts the block's reduce-scatter with ``Ireduce_scatter_block`` and computes block i+1 while it is in
  flight, then waits for it and copies the rows into its C shard.

The ranks time the GEMM alone, the reduce-scatter alone and both variants in ``--repeat`` interleaved rounds
(slowest rank per run) and the launcher prints best and median.

    .venv/bin/python examples/gemm_reduce_scatter.py [--m 1024 --k 1024 --n 1024 --blocks 4 --repeat 7]
"""

import tvm  # noqa: F401  (TVM before the JVM)

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

RANKS = 4


def gemm_kernel(m: int, kl: int, n: int):
    from tvm.script import tirx as T
    from tvm.tirx.script import tile as Tx

    @T.prim_func
    def gemm(A: T.Buffer((m, kl), "float32"), B: T.Buffer((kl, n), "float32"), Z: T.Buffer((m, n), "float32"),
             C: T.Buffer((m, n), "float32")):
        Tx.gemm(C[:, :], A[:, :], B[:, :], Z[:, :], False, False, T.float32(1.0), T.float32(0.0))

    return gemm


def request(tensor_placements: str, shape, **more) -> dict:
    return {"mesh": {"shape": [RANKS]}, "global_shape": list(shape), "element_bytes": 4, **more,
            "tensor": {"placements": tensor_placements}}


def reduce_scatter_request(shape) -> dict:
    return {"mesh": {"shape": [RANKS]}, "global_shape": list(shape), "element_bytes": 4,
            "src": {"placements": "[Partial()]"}, "dst": {"placements": "[Shard(0)]"}}


def block_rows(m: int, blocks: int, i: int) -> np.ndarray:
    """Rows of C in block i: of each rank's M/4 rows, slice i of M/4/blocks (in rank order)."""
    mr, mb = m // RANKS, m // RANKS // blocks
    return np.concatenate([r * mr + i * mb + np.arange(mb) for r in range(RANKS)])


def parse_args(argv):
    p = argparse.ArgumentParser(description="tensor-parallel GEMM + reduce-scatter on 4 MPI ranks")
    p.add_argument("--m", type=int, default=1024)
    p.add_argument("--k", type=int, default=1024)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--blocks", type=int, default=4, help="row blocks of the overlapped variant")
    p.add_argument("--repeat", type=int, default=7, help="interleaved timing rounds (best and median reported)")
    args = p.parse_args(argv)
    if args.k % RANKS or args.m % (RANKS * args.blocks):
        p.error(f"K must split over {RANKS} ranks and M into {RANKS} x blocks row slices: "
                f"m={args.m} k={args.k} blocks={args.blocks}")
    return args


def launcher(args) -> None:
    import axe4j
    from axe4j import mesh
    from axe4j.mesh import launch

    axe4j.install()
    m, k, n, blocks = args.m, args.k, args.n, args.blocks
    kl, mblock = k // RANKS, m // blocks
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    rs, rs_block = reduce_scatter_request((m, n)), reduce_scatter_request((mblock, n))
    print(mesh.explain(rs))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        from tvm.ir import IRModule

        whole = gemm_kernel(m, kl, n).with_attr("global_symbol", "gemm")
        block = gemm_kernel(mblock, kl, n).with_attr("global_symbol", "gemm_block")
        lib = axe4j.compile(IRModule({"gemm": whole, "gemm_block": block}), axe4j.host_target())
        lib.export_library(str(work / "gemm.so"))
        (work / "plan.json").write_text(mesh.plan_text(rs))
        (work / "plan_block.json").write_text(mesh.plan_text(rs_block))
        (work / "args.json").write_text(json.dumps(vars(args)))
        a_shards = mesh.local_shards(request("[Shard(1)]", a.shape))
        b_shards = mesh.local_shards(request("[Shard(0)]", b.shape))
        for r in range(RANKS):
            for name, full, shards in (("a", a, a_shards), ("b", b, b_shards)):
                lo, hi = shards[r]["lo"], shards[r]["hi"]
                np.save(work / f"{name}{r}.npy", full[lo[0]:hi[0], lo[1]:hi[1]])
        launch.run(RANKS, __file__, "--rank", str(work), timeout=600)
        c_shards = mesh.local_shards(request("[Shard(0)]", (m, n)))
        results = {}
        for variant in ("unfused", "overlapped"):
            c = np.zeros((m, n), "float32")
            for r in range(RANKS):
                lo, hi = c_shards[r]["lo"], c_shards[r]["hi"]
                c[lo[0]:hi[0], lo[1]:hi[1]] = np.load(work / f"c_{variant}{r}.npy").reshape(c_shards[r]["local_shape"])
            results[variant] = c
        moved = [json.loads((work / f"bytes{r}.json").read_text()) for r in range(RANKS)]
        times = json.loads((work / "times.json").read_text())
    want = a @ b
    for variant, c in results.items():
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3 * np.sqrt(k), err_msg=variant)
    plan_bytes = json.loads(mesh.plan_text(rs))["bytes_per_rank"]
    assert moved == plan_bytes, (moved, plan_bytes)
    print(f"result check: C = A @ B ({m}x{k} @ {k}x{n}) on {RANKS} ranks matches numpy (every element), unfused "
          f"and overlapped ({blocks} blocks); bytes received per rank {moved} = the plan's count")
    for stat in ("best", "median"):
        t = {k: v[stat] for k, v in times.items()}
        print(f"times ({stat} of {args.repeat} interleaved rounds, slowest rank, ms): GEMM alone {t['gemm']:.2f}, "
              f"reduce-scatter alone {t['reduce_scatter']:.2f}; unfused (GEMM then reduce-scatter) "
              f"{t['unfused']:.2f}; overlapped ({blocks} blocks) {t['overlapped']:.2f}; unfused/overlapped "
              f"{t['unfused'] / t['overlapped']:.2f}x")


def rank_worker(work: Path) -> None:
    from mpi4py import MPI

    from axe4j.mesh.mpi_exec import RankPlan, execute, split_comms, timed

    comm = MPI.COMM_WORLD
    r = comm.rank
    args = json.loads((work / "args.json").read_text())
    m, n, blocks, repeat = args["m"], args["n"], args["blocks"], args["repeat"]
    mblock = m // blocks
    lib = tvm.runtime.load_module(str(work / "gemm.so"))
    gemm, gemm_block = lib["gemm"], lib["gemm_block"]
    a = np.load(work / f"a{r}.npy")
    b = np.load(work / f"b{r}.npy")
    t = tvm.runtime.tensor
    a_t, b_t = t(np.ascontiguousarray(a)), t(np.ascontiguousarray(b))
    zeros, partial = t(np.zeros((m, n), "float32")), t(np.zeros((m, n), "float32"))
    rp = RankPlan.of(json.loads((work / "plan.json").read_text()), r)
    rp_block = RankPlan.of(json.loads((work / "plan_block.json").read_text()), r)
    split_comms(rp, comm)
    split_comms(rp_block, comm)
    (step,) = rp_block.steps
    assert step["kind"] == "reduce_scatter" and len(rp_block.copies) == 1, "block plan: one reduce-scatter"
    sub = rp_block.comms[0]
    copy_from, copy_to = rp_block.copies[0][1], rp_block.copies[0][2]
    # Per block: A's rows (laid out once, like a weight), the block's partial C and its reduce-scatter buffers.
    a_blocks = [t(np.ascontiguousarray(a[block_rows(m, blocks, i)])) for i in range(blocks)]
    zb = t(np.zeros((mblock, n), "float32"))
    partial_blocks = [t(np.zeros((mblock, n), "float32")) for _ in range(blocks)]
    # numpy views of the GEMMs' outputs (DLPack, no copy): what MPI reads.
    partial_view = np.from_dlpack(partial).reshape(-1)
    block_views = [np.from_dlpack(x).reshape(-1) for x in partial_blocks]
    sends = [np.empty(step["send_idx"].size, "float32") for _ in range(blocks)]
    outs = [np.empty(step["out_size"], "float32") for _ in range(blocks)]
    rows = m // RANKS // blocks
    c_over = np.zeros((m // RANKS, n), "float32")

    def unfused():
        gemm(a_t, b_t, zeros, partial)
        return execute(rp, comm, partial_view)

    def start(i):
        gemm_block(a_blocks[i], b_t, zb, partial_blocks[i])
        np.take(block_views[i], step["send_idx"], out=sends[i])
        return sub.Ireduce_scatter_block(sends[i], outs[i], op=MPI.SUM)

    def finish(i, request):
        request.Wait()
        block = np.zeros(rp_block.dst_size, "float32")
        block[copy_to] = outs[i][copy_from]
        c_over[i * rows:(i + 1) * rows] = block.reshape(rows, n)

    def overlapped():
        pending = start(0)
        for i in range(1, blocks):
            nxt = start(i)  # block i's GEMM runs while block i-1's reduce-scatter is in flight
            finish(i - 1, pending)
            pending = nxt
        finish(blocks - 1, pending)
        return c_over

    c_unfused, received = unfused()
    c_overlapped = overlapped().reshape(-1).copy()
    # Interleaved rounds (the machine's load drifts): each round times every variant once.
    rounds = {"gemm": [], "reduce_scatter": [], "unfused": [], "overlapped": []}
    bodies = {"gemm": lambda: gemm(a_t, b_t, zeros, partial),
              "reduce_scatter": lambda: execute(rp, comm, partial_view), "unfused": unfused,
              "overlapped": overlapped}
    for _ in range(repeat):
        for name, body in bodies.items():
            rounds[name].append(timed(comm, body, 1))
    np.save(work / f"c_unfused{r}.npy", c_unfused)
    np.save(work / f"c_overlapped{r}.npy", c_overlapped)
    (work / f"bytes{r}.json").write_text(json.dumps(received))
    if r == 0:
        (work / "times.json").write_text(json.dumps({k: {"best": min(v) * 1e3, "median": float(np.median(v)) * 1e3}
                                                     for k, v in rounds.items()}))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--rank":
        rank_worker(Path(sys.argv[2]))
    else:
        launcher(parse_args(sys.argv[1:]))
