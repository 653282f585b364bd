"""fp32 GEMM through axe4j's blocked CPU rule against numpy.matmul (OpenBLAS) over a sweep of shapes, same run;
then float16 and bfloat16 A and B into a float32 D (:data:`SIXTEEN_BIT`).

Each shape is compiled once for ``axe4j.host_target()``; then rounds alternate the two sides (ours, numpy, ours,
numpy, ...), each turn after a pause and an untimed call (the other side's threads stop spinning), and each side
keeps its best round: on a shared machine a neighbour's load hits both sides alike and the
best round is the one it least disturbed. A round times ``number`` back-to-back calls (about 50 ms of work) into
preallocated outputs on both sides (``numpy.matmul(a, b, out=d)``). Both sides read the same numpy arrays (axe4j's
kernel borrows them by DLPack; :func:`measure` says why), and axe4j is also timed on TVM's own tensors. Results: one
row per shape with both GFLOP/s, the ratios and the plan explain showed; written as JSON and as a PNG bar chart
(``axe4j_tools.chart``).

The 16-bit rows (``rows_16bit`` in the JSON) have no 16-bit peer: numpy has no fast float16 or bfloat16 GEMM (at
512^3 on the AVX-512 machine of docs/cpu-dispatch.md, numpy's float16 matmul ran 0.8 GFLOP/s and ml_dtypes'
bfloat16 one 24, against about 200 for OpenBLAS float32), so the baseline is numpy's float32 matmul (OpenBLAS) on
float32 copies of the same 16-bit values, converted before timing. axe4j reads the 16-bit arrays (half the bytes of
A and B) and widens them itself; its results are checked against that same numpy product.
"""

from __future__ import annotations

import io
import json
import os
import platform
import re
import time
from pathlib import Path

import numpy as np
import tvm
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j

SQUARES = (256, 512, 1024, 2048, 4096)
SKINNY = ((1, 4096, 4096), (8, 4096, 4096), (64, 4096, 4096))   # M rows against a 4096 x 4096 B
ODD = ((511, 769, 257), (1000, 1000, 1000))
SIXTEEN_BIT = ((1024, 1024, 1024), (8, 4096, 4096))   # each for float16 and bfloat16
SIXTEEN_BIT_BASELINE = ("numpy.matmul in float32 on float32 copies of the same 16-bit values (numpy has no fast "
                        "float16/bfloat16 GEMM); the copies are made before timing")
ROUND_SECONDS = 0.05
# The pause before each turn. After its last call OpenBLAS's worker spins about 0.12 s and TVM's about 0.065 s
# (CPU time the process burns while it sleeps, 2026-12-07, emeraldrapids, 2 vCPUs). With 0.1 s the body timed right
# after numpy lost to OpenBLAS's spinning thread: three compiles of one kernel, timed in turn, gave the first of them
# 0.89-0.91 of numpy at 256^3 and 512^3 and the other two 1.06-1.22; with 0.3 s the first still ran 0.91x the others
# at 512^3, with 0.6 s all three agreed within 3%.
SETTLE_SECONDS = 0.5


def shapes() -> list[tuple[int, int, int]]:
    return [(n, n, n) for n in SQUARES] + list(SKINNY) + list(ODD)


def gemm_kernel(m, n, k, dtype="float32"):
    """D (float32) = A @ B with A and B of ``dtype``."""
    @T.prim_func
    def gemm(A: T.Buffer((m, k), dtype), B: T.Buffer((k, n), dtype), C: T.Buffer((m, n), "float32"),
             D: T.Buffer((m, n), "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, False, T.float32(1.0), T.float32(0.0))

    return gemm


def plan_of(kernel, target) -> str:
    """The blocked rule's choice as explain prints it: tile, K block, u block, parallel loop."""
    report = axe4j.explain(kernel, target, file=io.StringIO())
    rows = re.search(r"row kernel, vector dim \w, (\d+)-column chunks, parallel=(\w+)", report)
    if rows:
        return f"row kernel, {rows.group(1)}-column chunks, par={'chunks' if rows.group(2) == 'True' else 'serial'}"
    found = re.search(r"register tile (\d+x\d+) vector dim \w, K block (\d+), (\d+)-row blocks", report)
    if not found:
        return "?"
    over = re.search(r"parallel over \d+ (u blocks|v panels)|its \d+ (v panels)", report)
    where = "serial" if not over else ("u blocks" if over.group(1) == "u blocks" else "v panels")
    packed = "" if "read in place" not in report else " B in place"
    region = " one region" if "one parallel region" in report else ""
    return f"{found.group(1)} kc={found.group(2)} mc={found.group(3)} par={where}{region}{packed}"


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def isa_flags() -> list[str]:
    try:
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split(":", 1)[1].split()
    except (OSError, StopIteration):
        return []
    return [f for f in ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_fp16",
                        "amx_tile") if f in flags]


def interleaved_best(bodies: dict, rounds: int, number: int) -> dict[str, float]:
    """Best seconds per call for each body, timing them in turn each round. Before its turn a body waits
    :data:`SETTLE_SECONDS` and runs once untimed: the other side's worker threads spin a while after their last
    call (OpenBLAS's and TVM's pools both do), and would otherwise steal cores from the first timed calls."""
    best = {name: float("inf") for name in bodies}
    for _ in range(rounds):
        for name, body in bodies.items():
            time.sleep(SETTLE_SECONDS)
            body()
            start = time.perf_counter()
            for _ in range(number):
                body()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def numpy_array(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` in memory numpy allocated, 64-byte aligned (what TVM needs to borrow it by DLPack).
    numpy asks the kernel for transparent huge pages on every allocation of 4 MiB or more
    (``madvise(MADV_HUGEPAGE)``); TVM's CPU allocator does not."""
    raw = np.empty(values.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    copy = raw[start:start + values.nbytes].view(values.dtype).reshape(values.shape)
    copy[...] = values
    return copy


def measure(m, n, k, rounds, target) -> dict:
    """Both sides on the same arrays: axe4j's kernel borrows numpy's A, B, C and D by DLPack, so a difference is the
    kernels' and not the allocators'. Also timed on TVM's own tensors (``tvm.runtime.tensor`` copies, 4 KiB pages):
    at 1 x 4096 x 4096, a stream of B's 64 MiB, that alone moved the ratio from 0.95 to 0.68 (same run)."""
    rng = np.random.default_rng(7)
    a = numpy_array(rng.standard_normal((m, k)).astype("float32"))
    b = numpy_array(rng.standard_normal((k, n)).astype("float32"))
    c, d = numpy_array(np.zeros((m, n), "float32")), numpy_array(np.zeros((m, n), "float32"))
    kernel = gemm_kernel(m, n, k)
    lib = axe4j.compile(kernel, target)
    func = lib["gemm"]
    borrowed = [tvm.runtime.from_dlpack(x) for x in (a, b, c, d)]
    own = [tvm.runtime.tensor(x) for x in (a, b, c, d)]
    tolerance = {"rtol": 1e-3, "atol": 1e-2 * max(1.0, (k / 256) ** 0.5)}
    for args in (borrowed, own):
        func(*args)
        np.testing.assert_allclose(args[3].numpy(), a @ b, **tolerance)
    out = numpy_array(np.empty((m, n), "float32"))
    flops = 2.0 * m * n * k
    bodies = {"axe4j": lambda: func(*borrowed), "numpy": lambda: np.matmul(a, b, out=out),
              "axe4j on TVM tensors": lambda: func(*own)}
    once = interleaved_best(bodies, 1, 1)
    number = max(1, int(ROUND_SECONDS / max(min(once.values()), 1e-7)))
    best = interleaved_best(bodies, rounds, number)
    ours, theirs = flops / best["axe4j"] / 1e9, flops / best["numpy"] / 1e9
    own_gflops = flops / best["axe4j on TVM tensors"] / 1e9
    return {"shape": f"{m}x{n}x{k}", "M": m, "N": n, "K": k, "axe4j_gflops": round(ours, 1),
            "numpy_gflops": round(theirs, 1), "ratio": round(ours / theirs, 3),
            "axe4j_tvm_tensors_gflops": round(own_gflops, 1), "ratio_tvm_tensors": round(own_gflops / theirs, 3),
            "plan": plan_of(kernel, target), "calls_per_round": number, "rounds": rounds}


def numpy_dtype(dtype: str):
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def measure_16bit(m, n, k, dtype, rounds, target) -> dict:
    """axe4j's GEMM of 16-bit A, B into float32 D against numpy's float32 matmul of the same values (see the module
    docstring: numpy has no fast 16-bit GEMM)."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k)).astype(numpy_dtype(dtype))
    b = rng.standard_normal((k, n)).astype(numpy_dtype(dtype))
    a32, b32 = a.astype("float32"), b.astype("float32")
    zeros = np.zeros((m, n), "float32")
    kernel = gemm_kernel(m, n, k, dtype)
    lib = axe4j.compile(kernel, target)
    func = lib["gemm"]
    args = [tvm.runtime.tensor(x) for x in (a, b, zeros, zeros)]
    func(*args)
    # float32 sums of the same products in another order: within K * 2^-23 * (|A| @ |B|)
    scale = np.abs(a32) @ np.abs(b32)
    assert (np.abs(args[3].numpy() - a32 @ b32) <= k * 2.0 ** -23 * scale + 1e-30).all(), f"{m}x{n}x{k} {dtype}"
    out = np.empty((m, n), "float32")
    bodies = {"axe4j": lambda: func(*args), "numpy": lambda: np.matmul(a32, b32, out=out)}
    once = interleaved_best(bodies, 1, 1)
    number = max(1, int(ROUND_SECONDS / max(min(once.values()), 1e-7)))
    best = interleaved_best(bodies, rounds, number)
    flops = 2.0 * m * n * k
    ours, theirs = flops / best["axe4j"] / 1e9, flops / best["numpy"] / 1e9
    widening = widening_of(axe4j.explain(kernel, target, file=io.StringIO()))
    return {"shape": f"{m}x{n}x{k}", "M": m, "N": n, "K": k, "dtype": dtype, "axe4j_gflops": round(ours, 1),
            "numpy_fp32_gflops": round(theirs, 1), "ratio": round(ours / theirs, 3), "plan": plan_of(kernel, target),
            "widening": widening, "calls_per_round": number, "rounds": rounds}


def widening_of(report: str) -> str:
    """How explain says the 16-bit operands become float32, in a few words."""
    if "F16C vcvtph2ps" in report:
        return "F16C vcvtph2ps"
    if "__extendhfsf2" in report:
        return "__extendhfsf2 calls"
    if "16 bits to the top of a float32" in report:
        return "16-bit shift"
    return "?"


def sweep_16bit(rounds: int, target) -> list[dict]:
    rows = []
    for m, n, k in SIXTEEN_BIT:
        for dtype in ("float16", "bfloat16"):
            row = measure_16bit(m, n, k, dtype, rounds, target)
            rows.append(row)
            print(f"gemm {row['shape']:>15s} {dtype:8s}->fp32: axe4j {row['axe4j_gflops']:7.1f} GFLOP/s, numpy fp32 "
                  f"copies {row['numpy_fp32_gflops']:7.1f} GFLOP/s, ratio {row['ratio']:.2f}  [{row['plan']}; "
                  f"widened by {row['widening']}]", flush=True)
    print(f"16-bit rows: baseline is {SIXTEEN_BIT_BASELINE}")
    return rows


def sweep(out_dir: Path, rounds: int = 5, only=None, sixteen_bit: bool = True) -> dict:
    target = axe4j.host_target()
    from axe4j.cpu import target as cpu_target

    isa, bits, registers = cpu_target.isa_of(target)
    machine = {"cpu": cpu_name(), "mcpu": str(target.attrs["mcpu"]), "isa": isa, "vector_bits": bits,
               "vector_registers": registers, "flags": isa_flags(), "cpus": os.cpu_count(),
               "tvm_threads": cpu_target.cores(), "caches": cpu_target.cache_bytes(),
               "blas": _blas_name()}
    rows = []
    for m, n, k in (only or shapes()):
        row = measure(m, n, k, rounds, target)
        rows.append(row)
        print(f"gemm {row['shape']:>15s} fp32: axe4j {row['axe4j_gflops']:7.1f} GFLOP/s, "
              f"numpy {row['numpy_gflops']:7.1f} GFLOP/s, ratio {row['ratio']:.2f} (on TVM's own tensors "
              f"{row['ratio_tvm_tensors']:.2f})  [{row['plan']}]", flush=True)
    result = {"machine": machine, "method": f"best of {rounds} interleaved rounds, each about "
              f"{ROUND_SECONDS * 1000:.0f} ms of calls, each turn after a {SETTLE_SECONDS:g} s pause and an untimed "
              f"call; both sides on the same numpy arrays (axe4j borrows them by "
              f"DLPack), and axe4j also on TVM's own tensors", "rows": rows}
    if sixteen_bit:
        result["rows_16bit"] = sweep_16bit(rounds, target)
        result["baseline_16bit"] = SIXTEEN_BIT_BASELINE
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "gemm-sweep.json").write_text(json.dumps(result, indent=2))
    from axe4j_tools import chart

    chart.bar_chart(out_dir / "gemm-sweep.png",
                    f"fp32 GEMM GFLOP/s, axe4j vs numpy ({machine['mcpu']}, {isa}, {machine['tvm_threads']} threads)",
                    [r["shape"] for r in rows],
                    {"axe4j": [r["axe4j_gflops"] for r in rows], "numpy": [r["numpy_gflops"] for r in rows]},
                    [f"{r['ratio']:.2f}x" for r in rows])
    print(f"wrote {out_dir / 'gemm-sweep.json'} and {out_dir / 'gemm-sweep.png'}")
    print(markdown_table(result))
    return result


def markdown_table(result) -> str:
    lines = ["| shape M x N x K | axe4j GFLOP/s | numpy GFLOP/s | axe4j/numpy | on TVM's own tensors | plan |",
             "|---|---:|---:|---:|---:|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['shape']} | {r['axe4j_gflops']} | {r['numpy_gflops']} | {r['ratio']:.2f} | "
                     f"{r['ratio_tvm_tensors']:.2f} | {r['plan']} |")
    if result.get("rows_16bit"):
        lines += ["", "| shape M x N x K | A, B | axe4j GFLOP/s | numpy fp32 on fp32 copies | axe4j/numpy | plan |",
                  "|---|---|---:|---:|---:|---|"]
        for r in result["rows_16bit"]:
            lines.append(f"| {r['shape']} | {r['dtype']} | {r['axe4j_gflops']} | {r['numpy_fp32_gflops']} | "
                         f"{r['ratio']:.2f} | {r['plan']}; {r['widening']} |")
    return "\n".join(lines)


def _blas_name() -> str:
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001  (older numpy: no dict mode)
        return "unknown"
