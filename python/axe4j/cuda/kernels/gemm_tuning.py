"""Tile configurations of ``hopper_gemm_pipelined``, chosen per (arch, shape, dtype) from GPU timings when there are
some, else by a stated rule; the benchmark sweep that measures them.

The space is small and documented (docs/cuda-gemm.md, "Autotuning"): CTA tiles 128x256, 256x128 and 128x128 (two
consumer warpgroups of BM/2 rows), each alone; 128x256 also in 2x1 and 1x2 thread-block clusters and 128x128 in 2x1
clusters (TMA multicast of the shared B / A tile); BK = 64, stages from shared-memory capacity (``stages_for``),
grouped rasterization with ``group_m`` = 8, the grid = 132 SMs. A configuration applies to a shape when the builder accepts
it (M, N, K multiples of the tile). The GPU bundle times every applicable configuration of every shape of ``SWEEP``
against cuBLAS (``tools/gpu_bundle.py``); ``tools/import_tuning.py`` reads its ``summary.json`` into ``TUNING_FILE``,
which ``choose`` consults. Without a measurement for the shape, ``choose`` takes the first applicable configuration
in ``CONFIGS`` order whose tile count fills the SMs at least once (else the one with the most tiles), and says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .hopper_gemm_pipelined import check, hopper_gemm_pipelined, stages_for

TUNING_FILE = Path(__file__).with_name("gemm_tuning.json")
SMS = 132
GROUP_M = 8
BK = 64

# (BM, BN, cluster) in the order the rule prefers them: the widest N tile first (one m64n256 wgmma per consumer K
# step); clustered configurations last, so that the rule picks them only where measured faster
CONFIGS = ((128, 256, (1, 1)), (256, 128, (1, 1)), (128, 128, (1, 1)),
           (128, 256, (2, 1)), (128, 256, (1, 2)), (128, 128, (2, 1)))

# Square sizes, and LLM projections (Llama-3-8B: QKV 6144x4096, O 4096x4096, gate+up 28672x4096, down 4096x14336) at
# 128 and 4096 tokens (O at 4096 tokens is the 4096 square), as (M, N, K) with D = A B^T, A (M x K), B (N x K); and
# 8192x4096x4096. M in {1, 16} is not offered: the kernel needs M to be a multiple of its 128-row tile.
SWEEP = ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
         (128, 6144, 4096), (128, 4096, 4096), (128, 28672, 4096), (128, 4096, 14336),
         (4096, 6144, 4096), (4096, 28672, 4096), (4096, 4096, 14336),
         (8192, 4096, 4096))


@dataclass(frozen=True)
class Config:
    bm: int
    bn: int
    cluster: tuple = (1, 1)   # CTAs along M, along N

    @property
    def label(self) -> str:
        tile = f"{self.bm}x{self.bn}"
        return tile if self.cluster == (1, 1) else f"{tile}_c{self.cluster[0]}x{self.cluster[1]}"

    def options(self) -> dict:
        options = {"bm": self.bm, "bn": self.bn, "bk": BK, "group_m": GROUP_M, "sms": SMS}
        if self.cluster != (1, 1):
            options["cluster"] = self.cluster
        return options


@dataclass(frozen=True)
class Choice:
    config: Config
    reason: str   # where the choice comes from, as explain shows it


def key(arch: str, m: int, n: int, k: int, dtype: str) -> str:
    return f"{arch}/{dtype}/{m}x{n}x{k}"


def applicable(m: int, n: int, k: int, dtype: str = "float16") -> list[Config]:
    """The configurations the builder accepts for this shape, in ``CONFIGS`` order."""
    found = []
    for bm, bn, cluster in CONFIGS:
        try:
            check(m, n, k, bm, bn, BK, stages_for(bm, bn, BK), GROUP_M, SMS, dtype, cluster)
        except ValueError:
            continue
        found.append(Config(bm, bn, cluster))
    return found


def sweep_cases() -> list[tuple[tuple[int, int, int], Config]]:
    """Every (shape, configuration) the bundle times: each shape of ``SWEEP`` with each applicable configuration."""
    return [(shape, c) for shape in SWEEP for c in applicable(*shape)]


def load(path: Path = TUNING_FILE) -> dict:
    """The measurements: {key: {"choice": "BMxBN", "device": ..., "date": ..., "measured": [...]}}."""
    if not path.is_file():
        return {}
    return json.loads(path.read_text()).get("entries", {})


def choose(m: int, n: int, k: int, dtype: str = "float16", arch: str = "sm_90a", path: Path = TUNING_FILE) -> Choice:
    """The configuration for this problem: the measured best, else the rule of the module docstring. Raises
    ValueError naming the shape when no configuration applies."""
    options = applicable(m, n, k, dtype)
    if not options:
        raise ValueError(f"hopper_gemm_pipelined: no tile configuration of {[f'{a}x{b}' for a, b, _ in CONFIGS]} "
                         f"divides M={m}, N={n}, K={k} (BK={BK})")
    entry = load(path).get(key(arch, m, n, k, dtype))
    if entry:
        by_label = {c.label: c for c in options}
        if entry["choice"] in by_label:
            timed = ", ".join(f"{r['config']} {r['tflops']:.0f}" for r in entry["measured"])
            return Choice(by_label[entry["choice"]],
                          f"measured on {entry['device']} ({entry['date']}): {timed} TFLOP/s; cuBLAS "
                          f"{entry['cublas_tflops']:.0f}")
    filling = [c for c in options if (m // c.bm) * (n // c.bn) >= SMS]
    if filling:
        return Choice(filling[0], f"rule (no measurement for {key(arch, m, n, k, dtype)}): the first of "
                                  f"{[c.label for c in options]} whose {(m // filling[0].bm) * (n // filling[0].bn)} "
                                  f"tiles fill the {SMS} SMs")
    most = max(options, key=lambda c: (m // c.bm) * (n // c.bn))
    return Choice(most, f"rule (no measurement for {key(arch, m, n, k, dtype)}): no configuration fills the {SMS} SMs;"
                        f" the one with the most tiles ({(m // most.bm) * (n // most.bn)})")


def hopper_gemm_tuned(m: int, n: int, k: int, dtype: str = "float16", arch: str = "sm_90a"):
    """``hopper_gemm_pipelined`` with the chosen configuration; the choice is the PrimFunc's ``axe4j.tuning``
    attribute, which ``axe4j.explain`` prints."""
    choice = choose(m, n, k, dtype, arch)
    kernel = hopper_gemm_pipelined(m, n, k, dtype=dtype, **choice.config.options())
    config = choice.config
    where = "" if config.cluster == (1, 1) else f" in {config.cluster[0]}x{config.cluster[1]} clusters"
    return kernel.with_attr("axe4j.tuning", f"hopper_gemm_pipelined tiles {config.bm}x{config.bn}{where}: "
                                            f"{choice.reason}")
