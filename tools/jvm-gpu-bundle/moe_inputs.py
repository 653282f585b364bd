"""Inputs of the MoE kernels for the Java runner, with numpy only: tokens, weights, routing, the host tile schedule
(``moe/schedule.py``, what ``axe4j.moe.cuda`` computes before its launches) and the numpy reference at sampled tokens.

For each run of ``manifest.json``'s ``moe`` (tokens, dtype) writes ``OUT/moe-<tokens>-<dtype>/``: ``x.npy``,
``ids.npy``, ``tile_expert.npy``, ``tile_start.npy``, ``tile_rows.npy``, ``row_weight.npy``, ``slot_token.npy``,
``slot_pair.npy``, ``reference.npy`` (float32 rows) and ``reference_rows.npy`` (their token indices); and once per
dtype ``OUT/w1-<dtype>.npy``, ``OUT/w2-<dtype>.npy``. 16-bit arrays are written as their bit patterns (uint16).
Weights and tokens are seeded normal values (``--seed``), scaled as ``moe_bench.py`` scales them.

usage: python3 moe_inputs.py --out DIR [--seed 0] [--sample 64]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def to_bits(array: np.ndarray, dtype: str) -> np.ndarray:
    """float32 -> the 16-bit pattern of ``dtype`` (round to nearest even), and the float32 values those bits hold."""
    if dtype == "float16":
        half = array.astype(np.float16)
        return half.view(np.uint16), half.astype(np.float32)
    bits = array.astype(np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return rounded, (rounded.astype(np.uint32) << 16).view(np.float32)


def main(argv=None) -> int:
    from moe.reference import moe_reference, route_reference
    from moe.schedule import schedule, tile_arrays

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=64, help="tokens checked against the reference per run")
    args = parser.parse_args(argv)
    moe = json.loads((HERE / "manifest.json").read_text())["moe"]
    shape, rows = moe["shape"], moe["rows"]
    E, K, H, I = shape["experts"], shape["top_k"], shape["hidden"], shape["intermediate"]
    rng = np.random.default_rng(args.seed)
    router = rng.standard_normal((E, H), dtype=np.float32)
    args.out.mkdir(parents=True, exist_ok=True)
    weights = {}
    for run in moe["runs"]:
        dtype, T = run["dtype"], run["tokens"]
        if dtype not in weights:
            w1_bits, w1 = to_bits(rng.standard_normal((E, 2 * I, H), dtype=np.float32) / np.float32(H ** 0.5), dtype)
            w2_bits, w2 = to_bits(rng.standard_normal((E, H, I), dtype=np.float32) / np.float32(I ** 0.5), dtype)
            np.save(args.out / f"w1-{dtype}.npy", w1_bits)
            np.save(args.out / f"w2-{dtype}.npy", w2_bits)
            weights[dtype] = (w1, w2)
        w1, w2 = weights[dtype]
        x_bits, x = to_bits(rng.standard_normal((T, H), dtype=np.float32), dtype)
        ids, routing = route_reference(x @ router.T, K)
        plan = schedule(ids, routing, E, rows)
        folder = args.out / f"moe-{T}-{dtype}"
        folder.mkdir(exist_ok=True)
        np.save(folder / "x.npy", x_bits)
        np.save(folder / "ids.npy", ids.astype(np.int32))
        for name, array in tile_arrays(plan, run["max_tiles"]).items():
            np.save(folder / f"{name}.npy", array)
        np.save(folder / "slot_token.npy", plan.slot_token.astype(np.int32))
        np.save(folder / "slot_pair.npy", plan.slot_pair.astype(np.int32))
        sample = np.sort(rng.choice(T, size=min(T, args.sample), replace=False)).astype(np.int32)
        reference = moe_reference(x[sample], w1, w2, ids[sample], routing[sample]).astype(np.float32)
        np.save(folder / "reference.npy", reference)
        np.save(folder / "reference_rows.npy", sample)
        print(f"[moe-inputs] {dtype} {T} tokens: {plan.tile_expert.shape[0]} tiles, {sample.size} reference rows",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
