"""Runs both TVM lanes' tile-op kernels on this machine's GPU (an sm_90 one: H100, H200) and checks them.

Needs Python 3 with numpy and CuPy for CUDA 13, and a CUDA driver; no TVM, no compiler: the kernels are the cubins
``tools/tirx_gpu_bundle.py`` wrote with their launches (``tirx.json``, ``0.27.json``) and arrays (``cases/``).

For each lane and kernel: the arguments go to device memory, the kernel runs with the grid, block and dynamic shared
bytes its lane compiled, the arrays come back and must equal numpy's expected ones (exactly, or within 2 ulp where
the case says the kernel computes a transcendental). Then the two lanes' arrays must be the same bits, kernel by
kernel. A lane runs in a worker process; a kernel that crashes it (or hangs past ``--timeout``) fails alone and a
new worker goes on with the next. Writes ``summary.json`` and ``summary.md`` to ``--out``.

Without a GPU it says so and exits 0. Exit status otherwise: 0 when every kernel passed on both lanes and the lanes
agree, 1 when not.

usage: python3 run.py [--out DIR] [--only TEXT] [--timeout S]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LANES = ("tirx", "0.27")


def agrees(got, expected, exact) -> bool:
    if exact:
        return all(np.array_equal(g, e) for g, e in zip(got, expected))
    return all(np.allclose(g, e, rtol=2 * np.finfo(e.dtype).eps, atol=0) for g, e in zip(got, expected))


def _arrays(entry):
    case = np.load(HERE / entry["case"])
    n = sum(1 for k in case.files if k.startswith("a"))
    return [case[f"a{i}"] for i in range(n)], [case[f"e{i}"] for i in range(n)], bool(case["exact"])


def worker(lane: str, names: list[str]) -> None:
    """Runs ``names`` of ``lane`` here, one JSON line per kernel (the arrays it left in ``out/<lane>/``)."""
    import cupy as cp

    kernels = json.loads((HERE / f"{lane}.json").read_text())["kernels"]
    for name in names:
        entry = kernels[name]
        args, expected, exact = _arrays(entry)
        device = [cp.asarray(a) for a in args]
        function = cp.RawModule(path=str(HERE / entry["cubin"])).get_function(entry["symbol"])
        if entry["dynamic_shared"] > 48 * 1024:
            function.max_dynamic_shared_size_bytes = entry["dynamic_shared"]
        function(tuple(entry["grid"]), tuple(entry["block"]), tuple(device[p["array"]] for p in entry["params"]),
                 shared_mem=entry["dynamic_shared"])
        cp.cuda.Device().synchronize()
        got = [d.get() for d in device]
        np.savez(WORK / lane / f"{name}.npz", **{f"g{i}": g for i, g in enumerate(got)})
        print(json.dumps({"name": name, "passed": agrees(got, expected, exact)}), flush=True)


def run_lane(lane: str, names: list[str], timeout: float) -> dict:
    """{name: "passed" | "wrong" | a failure}: the lane's kernels in workers, a new one after each crash."""
    results, left = {}, list(names)
    while left:
        command = [sys.executable, __file__, "--worker", lane, "--out", str(WORK), *left]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout * len(left))
            stdout, stderr, code = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired as error:
            stdout = (error.stdout or b"").decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
            stderr, code = "timed out", None
        for line in stdout.splitlines():
            if line.startswith("{"):
                reply = json.loads(line)
                results[reply["name"]] = "passed" if reply["passed"] else "wrong"
        left = [n for n in left if n not in results]
        if left:   # the first kernel not reported took the worker down
            tail = " | ".join(stderr.strip().splitlines()[-2:])[-300:]
            results[left[0]] = f"failed ({'timeout' if code is None else f'exit {code}'}): {tail}"
            left = left[1:]
    return results


def main(argv=None) -> int:
    global WORK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tirx-gpu-results"))
    parser.add_argument("--only", default="", help="run the kernels whose name contains this text")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per kernel")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("names", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    WORK = args.out
    if args.worker:
        worker(args.worker, args.names)
        return 0
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
    except Exception as error:   # noqa: BLE001  (no CuPy, no driver, no device)
        print(f"no GPU here ({type(error).__name__}: {error}); nothing run")
        return 0
    capability = cp.cuda.Device().compute_capability   # "90" on an H100 or H200
    if capability != "90":
        print(f"this GPU is sm_{capability}; the bundle's cubins are sm_90a (H100, H200): nothing run")
        return 0
    manifests = {lane: json.loads((HERE / f"{lane}.json").read_text())["kernels"] for lane in LANES}
    names = sorted(n for n in manifests["tirx"] if args.only in n)
    for lane in LANES:
        (WORK / lane).mkdir(parents=True, exist_ok=True)
    results = {lane: run_lane(lane, names, args.timeout) for lane in LANES}
    same = {}
    for name in names:
        if all(results[lane][name] == "passed" for lane in LANES):
            got = [np.load(WORK / lane / f"{name}.npz") for lane in LANES]
            same[name] = all(np.array_equal(got[0][k].view(np.uint8), got[1][k].view(np.uint8)) for k in got[0].files)
    rows = ["| kernel | tvm_tirx | 0.27 | same bits |", "|---|---|---|---|"]
    rows += [f"| {n} | {results['tirx'][n]} | {results['0.27'][n]} | {same.get(n, '-')} |" for n in names]
    passed = sum(all(results[lane][n] == "passed" for lane in LANES) and same.get(n) for n in names)
    rows.append(f"\n{passed} of {len(names)} kernels passed on both lanes with the same bits")
    (WORK / "summary.md").write_text("\n".join(rows) + "\n")
    (WORK / "summary.json").write_text(json.dumps({"results": results, "same_bits": same}, indent=1))
    print("\n".join(rows))
    return 0 if passed == len(names) else 1


WORK = Path("tirx-gpu-results")

if __name__ == "__main__":
    sys.exit(main())
