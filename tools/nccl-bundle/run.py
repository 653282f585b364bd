"""Runs axe4j's NCCL executor on this machine's GPU(s) with the plans of this bundle and checks against numpy.

Needs Python 3 with numpy and PyTorch with CUDA (torch's CUDA tensors are the caller-managed device buffers;
its NCCL is the one loaded unless AXE4J_NCCL_LIB names another); mpi4py only for more than one rank.

    python out/nccl-bundle/run.py --out out/nccl-results                  # the 1-rank world, GPU 0
    mpirun -np 4 python out/nccl-bundle/run.py --out out/nccl-results     # 4 ranks, one GPU each

For every plan whose world has this many ranks, and every element type of the plan's width, each rank fills its
source buffer from one global reference (integers whose sums are exact in the type, large enough for int32/int64
that a floating-point sum would lose them), runs the plan, and compares its destination with the elements its
layout says it holds, exactly. Then: the refusals (a 16-bit integer tensor, a dtype of the wrong width), the raw
device-pointer path, and the time of a 1024x1024 reduce-scatter plan per type against torch's copy of the same
bytes. Writes ``summary.json`` and ``summary.md`` to --out; exits 1 when a check fails, 0 otherwise (also
without a GPU, saying so).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import mpi_exec  # noqa: E402  (the bundle's copy)
import nccl_runtime as nr  # noqa: E402

# Summands are drawn from [lo, hi): sums of up to 4 stay exact in the type.
RANGES = {"float16": (-8, 8), "bfloat16": (-8, 8), "float32": (-1000, 1000), "float64": (-2**40, 2**40),
          "int8": (-20, 20), "uint8": (0, 50), "int32": (-2**28, 2**28), "uint32": (0, 2**29),
          "int64": (-2**60, 2**60), "uint64": (0, 2**60)}
WORD = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """int64 values as the bits of ``dtype`` in a same-width signed integer array (numpy has no bfloat16)."""
    if dtype == "bfloat16":  # the upper half of a float32, exact for these small integers
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.int16)
    return values.astype(dtype).view(WORD[np.dtype(dtype).itemsize])


def decode(bits: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        return (bits.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.view(dtype)


def expected_as(values: np.ndarray, dtype: str) -> np.ndarray:
    return values.astype(np.float64) if dtype == "bfloat16" else values.astype(dtype)


def world() -> tuple[int, int, object]:
    """(size, rank, mpi communicator or None) from the MPI launcher's environment."""
    launched = "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ
    if not launched:
        return 1, 0, None  # a plain `python run.py`: the 1-rank world without MPI
    # under mpirun, even with one rank, the unique id goes through MPI (Communicator.from_mpi)
    from mpi4py import MPI

    return MPI.COMM_WORLD.size, MPI.COMM_WORLD.rank, MPI.COMM_WORLD


class Device:
    """torch CUDA tensors of any of the ten types, filled and read through same-width integer views."""

    def __init__(self, torch, device: int):
        self.torch = torch
        self.device = torch.device("cuda", device)
        self.word = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}

    def tensor(self, bits: np.ndarray, dtype: str):
        t = self.torch.from_numpy(np.ascontiguousarray(bits)).to(self.device)
        return t.view(getattr(self.torch, dtype))

    def zeros(self, n: int, dtype: str):
        width = nr.DTYPES[dtype][1]
        return self.torch.zeros(n, dtype=self.word[width], device=self.device).view(getattr(self.torch, dtype))

    def read(self, t, dtype: str) -> np.ndarray:
        self.torch.cuda.synchronize(self.device)
        return decode(t.view(self.word[nr.DTYPES[dtype][1]]).cpu().numpy(), dtype)


def reference(plan: dict, seed: int, dtype: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The global values (int64) and, for a partial source, the summands (same on every rank: seeded)."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(plan["global_shape"]))
    lo, hi = RANGES[dtype]
    partial = plan["src"]["partial_dims"]
    if not partial:
        return rng.integers(lo, hi, size=size, dtype=np.int64), None
    groups = int(np.prod([plan["mesh"]["shape"][j] for j in partial]))
    summands = rng.integers(lo, hi, size=(groups, size), dtype=np.int64)
    return summands.sum(axis=0), summands


def check_case(comm, dev: Device, plan: dict, seed: int, dtype: str, raw_pointers: bool = False) -> dict:
    rp = mpi_exec.RankPlan.of(plan, comm.rank)
    whole, summands = reference(plan, seed, dtype)
    src = dev.tensor(encode(mpi_exec.local_source(rp, plan, whole, summands), dtype), dtype)
    dst = dev.zeros(rp.dst_size, dtype)
    run = comm.plan(rp, plan["element_bytes"])
    try:
        if raw_pointers:
            run.run(src.data_ptr(), dst.data_ptr(), dtype=dtype, stream=0)
        else:
            run.run(src, dst)
        got = dev.read(dst, dtype)
    finally:
        run.close()
    at, want = mpi_exec.expected_destination(rp, whole)
    want = expected_as(want, dtype)
    bad = int(np.count_nonzero(got[at] != want))
    return {"ok": bad == 0, "mismatches": bad, "dst_elements": int(rp.dst_size),
            "received_bytes": run.info.received_bytes, "plan_bytes": plan["bytes_per_rank"][comm.rank]}


def refusals(comm, dev: Device, plan: dict) -> list:
    """What the binding must refuse, with its message."""
    torch = dev.torch
    rp = mpi_exec.RankPlan.of(plan, comm.rank)
    run = comm.plan(rp, plan["element_bytes"])
    out = []
    try:
        for label, args in (("int16 tensors", (torch.zeros(rp.src_size, dtype=torch.int16, device=dev.device),
                                                torch.zeros(rp.dst_size, dtype=torch.int16, device=dev.device))),
                            ("float16 on a 4-byte plan", (dev.zeros(rp.src_size, "float16"),
                                                          dev.zeros(rp.dst_size, "float16"))),
                            ("host tensors", (torch.zeros(rp.src_size), torch.zeros(rp.dst_size)))):
            try:
                run.run(*args)
                out.append({"case": label, "refused": False, "message": ""})
            except (TypeError, ValueError) as e:
                out.append({"case": label, "refused": True, "message": str(e)})
    finally:
        run.close()
    return out


def timing(comm, dev: Device, plan: dict, dtype: str, repeat: int = 30) -> dict:
    """Median time of the plan (gather, collective, scatter) against torch's copy of the source's bytes."""
    torch = dev.torch
    rp = mpi_exec.RankPlan.of(plan, comm.rank)
    src = dev.zeros(rp.src_size, dtype)
    dst = dev.zeros(rp.dst_size, dtype)
    copy_dst = dev.zeros(rp.src_size, dtype)
    run = comm.plan(rp, plan["element_bytes"])

    def median_ms(body) -> float:
        for _ in range(3):
            body()
        times = []
        for _ in range(repeat):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            body()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return float(np.median(times))

    try:
        plan_ms = median_ms(lambda: run.run(src, dst))
        copy_ms = median_ms(lambda: copy_dst.copy_(src))
    finally:
        run.close()
    nbytes = rp.src_size * nr.DTYPES[dtype][1]
    return {"dtype": dtype, "src_bytes": nbytes, "plan_ms": plan_ms, "copy_ms": copy_ms,
            "plan_GBps": nbytes / plan_ms / 1e6, "received_bytes": run.info.received_bytes}


def markdown(summary: dict) -> str:
    lines = [f"# NCCL executor on {summary['device']}", "",
             f"world {summary['world']} rank(s), {summary['setup']}, NCCL {summary['nccl_version']}, torch {summary['torch']}",
             "",
             f"**{summary['passed']} passed, {summary['failed']} failed**", "",
             "| dtype | cases | passed |", "|---|---:|---:|"]
    for dtype in nr.DTYPES:
        mine = [c for c in summary["cases"] if c["dtype"] == dtype]
        lines.append(f"| {dtype} | {len(mine)} | {sum(c['ok'] for c in mine)} |")
    failed = [c for c in summary["cases"] if not c["ok"]]
    if failed:
        lines += ["", "Failures:", ""] + [f"- {c['plan']} {c['dtype']}: {c.get('error') or c['mismatches']}"
                                          for c in failed]
    lines += ["", "| refusal | refused | message |", "|---|---|---|"]
    lines += [f"| {r['case']} | {r['refused']} | {r['message']} |" for r in summary["refusals"]]
    lines += ["", "| timed plan | dtype | plan ms | torch copy ms | GB/s (source bytes) |", "|---|---|---:|---:|---:|"]
    lines += [f"| {t['plan']} | {t['dtype']} | {t['plan_ms']:.4f} | {t['copy_ms']:.4f} | {t['plan_GBps']:.1f} |"
              for t in summary["timing"]]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="nccl-results")
    out = Path(parser.parse_args().out)
    size, rank, mpi = world()
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        if rank == 0:
            out.mkdir(parents=True, exist_ok=True)
            why = "no PyTorch" if torch is None else "no CUDA GPU visible to PyTorch"
            (out / "summary.json").write_text(json.dumps({"gpu": False, "reason": why}))
            print(f"{why}: nothing run")
        return 0
    try:
        lib = nr.library()
        comm = nr.Communicator.from_mpi(mpi) if mpi is not None else nr.Communicator.single(device=0, lib=lib)
    except Exception as e:  # noqa: BLE001  (the reason goes into the summary)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"setup-error-rank{rank}.json").write_text(json.dumps(
            {"gpu": True, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}))
        print(f"rank {rank}: setting up NCCL failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    dev = Device(torch, comm.device)
    index = json.loads((HERE / "plans" / "index.json").read_text())
    cases, timed, refused = [], [], []
    for i, entry in enumerate(index):
        if entry["world"] != size:
            continue
        plan = json.loads((HERE / entry["file"]).read_text())
        for dtype, (code, width) in nr.DTYPES.items():
            if width != entry["element_bytes"]:
                continue
            if entry["timed"]:
                if dtype in ("float32", "bfloat16", "float64", "uint8"):
                    timed.append({"plan": entry["name"], **timing(comm, dev, plan, dtype)})
                continue
            try:
                result = check_case(comm, dev, plan, seed=16 * i + code, dtype=dtype)
            except Exception as e:  # noqa: BLE001  (recorded, and the run goes on)
                result = {"ok": False, "mismatches": -1, "error": f"{type(e).__name__}: {e}",
                          "trace": traceback.format_exc()[-2000:]}
            cases.append({"plan": entry["name"], "dtype": dtype, **result})
        if entry["name"].endswith("4B/partial->shard") and not refused:
            refused = refusals(comm, dev, plan)
            raw = check_case(comm, dev, plan, seed=1, dtype="int32", raw_pointers=True)
            cases.append({"plan": entry["name"] + " (raw device pointers)", "dtype": "int32", **raw})
    summary = {"gpu": True, "device": torch.cuda.get_device_name(comm.device), "world": size, "rank": rank,
               "setup": "unique id over MPI (Communicator.from_mpi)" if mpi is not None
               else "1-rank world without MPI (Communicator.single)",
               "nccl_version": lib.nccl_version(), "nccl_library": lib.nccl_path, "torch": torch.__version__,
               "cases": cases, "refusals": refused, "timing": timed}
    if mpi is not None:
        everyone = mpi.gather(summary, root=0)
        if rank != 0:
            comm.close()
            return 0
        summary["cases"] = [dict(c, rank=r) for r, s in enumerate(everyone) for c in s["cases"]]
        summary["timing"] = [dict(t, rank=r) for r, s in enumerate(everyone) for t in s["timing"]]
    comm.close()
    summary["passed"] = sum(c["ok"] for c in summary["cases"])
    summary["failed"] = len(summary["cases"]) - summary["passed"]
    refusals_ok = all(r["refused"] for r in summary["refusals"]) and bool(summary["refusals"])
    summary["refusals_ok"] = refusals_ok
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "summary.md").write_text(markdown(summary))
    print(markdown(summary))
    return 0 if summary["failed"] == 0 and refusals_ok else 1


if __name__ == "__main__":
    sys.exit(main())
