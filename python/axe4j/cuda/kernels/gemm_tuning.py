"""Tile configurations of ``hopper_gemm_pipelined``, chosen per (arch, shape, dtype) from GPU timings when there are
some, else by a stated rule; the benchmark sweep that measures them.

The space is small and documented (docs/cuda-gemm.md, "Autotuning"): CTA tiles 128x256, 256x128 and 128x128 (two
consumer warpgroups of BM/2 rows), each alone; 128x256 also in 2x1 and 1x2 thread-block clusters and 128x128 in 2x1
clusters (TMA multicast of the shared B / A tile); BK = 64, stages from shared-memory capacity (``stages_for``),
grouped rasterization with ``group_m`` = 8, the grid = 132 SMs. A configuration applies to a shape when the builder accepts
it (any M, N, K whose rows TMA can address: K and N multiples of 8; for a cluster whole pairs of tiles) and its BM is
no taller than M rounded up to 128 rows. The GPU bundle times every applicable configuration of every shape of ``SWEEP``
against cuBLAS (``tools/gpu_bundle.py``); ``tools/import_tuning.py`` reads its ``summary.json`` into ``TUNING_FILE``,
which ``choose`` consults. Without a measurement for the shape, ``choose`` takes the first applicable configuration
in ``CONFIGS`` order whose tile count fills the SMs at least once (else the one with the most tiles), and says so.

Decode and small-M strategies (docs/cuda-gemm.md, "Decode and small-M strategies"): at M <= ``DECODE_M`` (64) also
64-row tiles (64x256, 64x128: one consumer warpgroup) and swap-AB (D^T = B A^T: N on the tile's BM = 128 or 64 rows,
M on its BN = ``swap_bn(M)`` columns); and for any configuration whose tiles leave SMs idle, split-K
(``split_for``: K split S ways, FP32 partials, the tile's last unit sums them in order). Without a measurement the
rule takes, at M <= 64, swap-AB with BM = 128 (split-K when its tiles leave SMs idle), and above it the tile rule
above, split-K'd when no configuration fills the SMs.

With a fused epilogue (``epilogue=``) the same configurations apply (its bias boxes and mbarriers fit beside every
one), and the tuned kernel's ``axe4j.tuning`` attribute ends with how the epilogue runs there (``epilogue_plan``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .hopper_gemm_pipelined import (check, epilogue_bytes, epilogue_cols, epilogue_plan, hopper_gemm_pipelined,
                                    split_k_workspace, stages_for)

TUNING_FILE = Path(__file__).with_name("gemm_tuning.json")
SMS = 132
GROUP_M = 8
BK = 64
BK_FP8 = 128
FP8_TYPES = ("float8_e4m3fn", "float8_e5m2")
# FP8 (e4m3 x e4m3, per-tensor scales, BF16 D) is timed at the square sizes from 4096 on, Llama-3-8B's gate+up at 4096
# tokens and its decode step, against torch._scaled_mm (cuBLASLt's FP8 GEMM) in the same run
SWEEP_FP8 = ((4096, 4096, 4096), (8192, 8192, 8192), (4096, 28672, 4096), (16, 4096, 4096))

# (BM, BN, cluster) in the order the rule prefers them: the widest N tile first (one m64n256 wgmma per consumer K
# step); clustered configurations last, so that the rule picks them only where measured faster
CONFIGS = ((128, 256, (1, 1)), (256, 128, (1, 1)), (128, 128, (1, 1)),
           (128, 256, (2, 1)), (128, 256, (1, 2)), (128, 128, (2, 1)))

# Decode and small M: 64-row tiles and swap-AB apply at M <= DECODE_M; swap-AB's BN is the narrowest of SWAP_BN
# holding M; split-K splits K in SPLITS ways, each split at least MIN_SPLIT_K_TILES K tiles (a full pipeline)
DECODE_M = 64
DECODE_TILES = ((64, 256), (64, 128))
SWAP_BN = (16, 32, 64)
SWAP_BM = (128, 64)
SPLITS = (8, 4, 2)
MIN_SPLIT_K_TILES = 8

# Square sizes, and LLM projections (Llama-3-8B: QKV 6144x4096, O 4096x4096, gate+up 28672x4096, down 4096x14336) at
# 128 and 4096 tokens (O at 4096 tokens is the 4096 square), as (M, N, K) with D = A B^T, A (M x K), B (N x K); and
# 8192x4096x4096. Every configuration that applies is timed.
SWEEP = ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
         (128, 6144, 4096), (128, 4096, 4096), (128, 28672, 4096), (128, 4096, 14336),
         (4096, 6144, 4096), (4096, 28672, 4096), (4096, 4096, 14336),
         (8192, 4096, 4096))

# The projections a served model runs at every token count: Llama-3-8B (above) and Qwen3-8B (gate+up 24576x4096, down
# 4096x12288; its QKV and O are Llama's), at decode and prefill M in {1, 16, 64, 512} (128 and 4096 are in SWEEP), and
# three ragged shapes. The edge tiles of these run through TMA's clipping; the configurations without clusters are
# timed (a cluster needs whole pairs of tiles).
PROJECTIONS = ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (24576, 4096), (4096, 12288))
SERVED = tuple((m, n, k) for m in (1, 16, 64, 512) for n, k in PROJECTIONS) + (
    (128, 24576, 4096), (128, 4096, 12288), (4096, 24576, 4096), (4096, 4096, 12288),
    (1000, 4000, 3000), (333, 2056, 1000), (4097, 4104, 4096))
# No GPU timings of SERVED on record yet: ``choose`` applies the rule to them.
UNMEASURED = frozenset(SERVED)


@dataclass(frozen=True)
class Config:
    bm: int
    bn: int
    cluster: tuple = (1, 1)   # CTAs along M, along N
    swap_ab: bool = False     # D^T = B A^T: BM rows over N, BN columns over M
    split_k: int = 1          # work units per tile, each 1/split_k of the K tiles

    @property
    def label(self) -> str:
        tile = ("swap_" if self.swap_ab else "") + f"{self.bm}x{self.bn}"
        if self.cluster != (1, 1):
            tile += f"_c{self.cluster[0]}x{self.cluster[1]}"
        return tile + (f"_split{self.split_k}" if self.split_k > 1 else "")

    @property
    def strategy(self) -> str:
        """The strategy in words, as explain shows it."""
        parts = ["swap-AB" if self.swap_ab else ("64-row tiles" if self.bm == 64 else "tiles")]
        if self.split_k > 1:
            parts.append(f"split-K {self.split_k}")
        return " + ".join(parts)

    def options(self, dtype: str = "float16") -> dict:
        """The builder's arguments; BK is one 128-byte swizzle row of K (64 FP16/BF16, 128 FP8 elements)."""
        bk = BK_FP8 if dtype in FP8_TYPES else BK
        options = {"bm": self.bm, "bn": self.bn, "bk": bk, "group_m": GROUP_M, "sms": SMS}
        if self.cluster != (1, 1):
            options["cluster"] = self.cluster
        if self.swap_ab:
            options["swap_ab"] = True
        if self.split_k > 1:
            options["split_k"] = self.split_k
        return options

    def workspace(self, m: int, n: int) -> tuple:
        """Split-K's (W, Count) shapes (``split_k_workspace``); () without split-K."""
        return split_k_workspace(m, n, self.bm, self.bn, self.split_k, self.swap_ab) if self.split_k > 1 else ()


@dataclass(frozen=True)
class Choice:
    config: Config
    reason: str   # where the choice comes from, as explain shows it


def key(arch: str, m: int, n: int, k: int, dtype: str) -> str:
    return f"{arch}/{dtype}/{m}x{n}x{k}"


def swap_bn(m: int) -> int:
    """Swap-AB's BN: the narrowest of ``SWAP_BN`` holding M rows (M <= ``DECODE_M``)."""
    return next(bn for bn in SWAP_BN if bn >= m)


def split_for(m: int, n: int, k: int, config: Config, dtype: str = "float16") -> int:
    """Split-K's S for a configuration whose tiles leave SMs idle: the largest of ``SPLITS`` that divides the K
    tiles into splits of at least ``MIN_SPLIT_K_TILES`` and keeps tiles x S within one wave of the SMs; 1 if none."""
    k_tiles = -(-k // (BK_FP8 if dtype in FP8_TYPES else BK))
    count = tiles(m, n, config)
    for s in SPLITS:
        if k_tiles % s == 0 and k_tiles // s >= MIN_SPLIT_K_TILES and count * s <= SMS:
            return s
    return 1


def applicable(m: int, n: int, k: int, dtype: str = "float16", epilogue=None) -> list[Config]:
    """The configurations the builder accepts for this shape (with ``epilogue``, a fused
    ``axe4j.cuda.kernels.epilogue.Epilogue``: its shared memory and column chunks counted): ``CONFIGS`` in order; at
    M <= ``DECODE_M`` the 64-row tiles and swap-AB (BM 128, 64; BN ``swap_bn(M)``); then, for each of these without
    a cluster whose tiles leave SMs idle, its split-K form (``split_for``)."""
    found = []
    fp8 = dtype in FP8_TYPES
    bk, itemsize, out = (BK_FP8, 1, "bfloat16") if fp8 else (BK, 2, dtype)
    candidates = [Config(bm, bn, cluster) for bm, bn, cluster in CONFIGS]
    if m <= DECODE_M:
        candidates += [Config(bm, bn) for bm, bn in DECODE_TILES]
        candidates += [Config(bm, swap_bn(m), swap_ab=True) for bm in SWAP_BM]
    for config in candidates:
        if not config.swap_ab and config.bm > -(-m // 128) * 128:
            continue   # a taller tile than M rounded up to 128 rows only computes rows past the end
        if epilogue is not None and config.bn % epilogue_cols(config.bn):
            continue
        extra = epilogue_bytes(m, n, config.bm, config.bn, epilogue, config.swap_ab)
        try:
            check(m, n, k, config.bm, config.bn, bk, stages_for(config.bm, config.bn, bk, itemsize, 2, extra),
                  GROUP_M, SMS, dtype, config.cluster, out_dtype=out, swap_ab=config.swap_ab, extra=extra)
        except ValueError:
            continue
        found.append(config)
    splits = [Config(c.bm, c.bn, c.cluster, c.swap_ab, split_for(m, n, k, c, dtype)) for c in found
              if c.cluster == (1, 1)]
    return found + [c for c in splits if c.split_k > 1]


def decode_picks(m: int, n: int, k: int, dtype: str = "float16") -> list[Config]:
    """The decode-strategy configurations the sweep times at M <= ``DECODE_M`` (two, the plausible winners): the
    rule's choice (swap-AB, BM = 128) and swap-AB with BM = 64 (twice the tiles) below M = 64, 64x128 tiles at M =
    64; each in its split-K form where ``applicable`` has one."""
    options = {c.label: c for c in applicable(m, n, k, dtype)}
    bases = [Config(128, swap_bn(m), swap_ab=True), Config(64, swap_bn(m), swap_ab=True) if m < DECODE_M
             else Config(64, 128)]
    picks = []
    for base in bases:
        split = Config(base.bm, base.bn, base.cluster, base.swap_ab, split_for(m, n, k, base, dtype))
        for config in (split, base):
            if config.label in options:
                picks.append(config)
                break
    return picks


def sweep_cases() -> list[tuple[tuple[int, int, int], Config]]:
    """Every (shape, configuration) the bundle times: each shape of ``SWEEP`` with each applicable configuration,
    each shape of ``SERVED`` with each applicable one without a cluster."""
    return [(shape, c) for shape in SWEEP for c in applicable(*shape) if plain(c)] + [
        (shape, c) for shape in SERVED for c in served_configs(*shape)]


def plain(config: Config) -> bool:
    """A configuration of ``CONFIGS`` (no decode strategy: BM >= 128, no swap, no split)."""
    return config.bm >= 128 and not config.swap_ab and config.split_k == 1


def served_configs(m: int, n: int, k: int, dtype: str = "float16") -> list[Config]:
    """What the sweep times at a served shape: the applicable configurations of ``CONFIGS`` without a cluster, and
    at M <= ``DECODE_M`` the ``decode_picks``."""
    base = [c for c in applicable(m, n, k, dtype) if plain(c) and c.cluster == (1, 1)]
    return base + (decode_picks(m, n, k, dtype) if m <= DECODE_M else [])


def sweep_cases_bf16() -> list[tuple[tuple[int, int, int], Config]]:
    """The BF16 part of the sweep: each shape of ``SWEEP`` with each applicable configuration without a cluster
    (the bundle names them ``..._bf16`` and times them against cuBLAS in BF16)."""
    return [(shape, c) for shape in SWEEP for c in applicable(*shape, "bfloat16") if plain(c) and c.cluster == (1, 1)]


def sweep_cases_fp8() -> list[tuple[tuple[int, int, int], Config]]:
    """The FP8 part: each shape of ``SWEEP_FP8`` with each applicable configuration without a cluster (named
    ``..._fp8``: e4m3 x e4m3 with per-tensor scales, D in BF16)."""
    return [(shape, c) for shape in SWEEP_FP8 for c in served_configs(*shape, "float8_e4m3fn")]


def tiles(m: int, n: int, config: Config) -> int:
    """Output tiles of the grid: ceil(M / BM) x ceil(N / BN), swapped ceil(N / BM) x ceil(M / BN) (edge tiles count
    whole)."""
    rows, cols = (n, m) if config.swap_ab else (m, n)
    return -(-rows // config.bm) * -(-cols // config.bn)


def load(path: Path = TUNING_FILE) -> dict:
    """The measurements: {key: {"choice": "BMxBN", "device": ..., "date": ..., "measured": [...]}}."""
    if not path.is_file():
        return {}
    return json.loads(path.read_text()).get("entries", {})


def choose(m: int, n: int, k: int, dtype: str = "float16", arch: str = "sm_90a", path: Path = TUNING_FILE,
           epilogue=None) -> Choice:
    """The configuration for this problem (with a fused ``epilogue``: among those that run it, which at the
    shapes the GEMM serves are all of them): the measured best, else the rule of the module docstring. Raises
    ValueError naming the shape when no configuration applies."""
    options = applicable(m, n, k, dtype, epilogue)
    if not options:
        try:
            check(m, n, k, *CONFIGS[0][:2], BK, stages_for(*CONFIGS[0][:2], BK), GROUP_M, SMS, dtype)
        except ValueError as error:
            raise ValueError(f"hopper_gemm_pipelined: no tile configuration of {[Config(*c).label for c in CONFIGS]} "
                             f"runs M={m}, N={n}, K={k}: {error}") from None
    entry = load(path).get(key(arch, m, n, k, dtype))
    if entry:
        by_label = {c.label: c for c in options}
        if entry["choice"] in by_label:
            timed = ", ".join(f"{r['config']} {r['tflops']:.0f}" for r in entry["measured"])
            return Choice(by_label[entry["choice"]],
                          f"measured on {entry['device']} ({entry['date']}): {timed} TFLOP/s; cuBLAS "
                          f"{entry['cublas_tflops']:.0f}")
    rule = f"rule (no measurement for {key(arch, m, n, k, dtype)})"
    by_label = {c.label: c for c in options}

    def split_form(config: Config):
        """The split-K form of ``config`` among the options, with the words saying why, or (None, "")."""
        s = split_for(m, n, k, config, dtype)
        split = by_label.get(Config(config.bm, config.bn, config.cluster, config.swap_ab, s).label) if s > 1 else None
        if split is None:
            return None, ""
        k_tiles = -(-k // (BK_FP8 if dtype in FP8_TYPES else BK))
        return split, (f"; its {tiles(m, n, config)} tiles leave SMs idle: split-K {s} ({tiles(m, n, config) * s} "
                       f"units of {k_tiles // s} K tiles, FP32 partials summed in split order)")

    if m <= DECODE_M:
        swap = by_label.get(Config(128, swap_bn(m), swap_ab=True).label)
        if swap is not None:
            split, why = split_form(swap)
            return Choice(split or swap, f"{rule}: M={m} <= {DECODE_M}: swap-AB (D^T = B A^T: N on the tile's 128 "
                                         f"rows, M on BN={swap.bn}), {tiles(m, n, swap)} tiles{why}")
    plains = [c for c in options if plain(c)]
    filling = [c for c in plains if tiles(m, n, c) >= SMS]
    if filling:
        return Choice(filling[0], f"{rule}: the first of {[c.label for c in plains]} whose {tiles(m, n, filling[0])} "
                                  f"tiles fill the {SMS} SMs")
    # ties (M = 1: every BM gives one tile row) go to the tile that computes the fewest rows and columns past the end
    most = max(plains, key=lambda c: (tiles(m, n, c), -tiles(m, n, c) * c.bm * c.bn))
    split, why = split_form(most)
    return Choice(split or most, f"{rule}: no configuration fills the {SMS} SMs; the one with the most tiles "
                                 f"({tiles(m, n, most)}), the least past the edges{why}")


def hopper_gemm_tuned(m: int, n: int, k: int, dtype: str = "float16", arch: str = "sm_90a", epilogue=None):
    """``hopper_gemm_pipelined`` with the chosen configuration; the choice is the PrimFunc's ``axe4j.tuning``
    attribute, which ``axe4j.explain`` prints. A split-K choice takes (A, B, W, Count, D) (``Config.workspace``);
    with a fused ``epilogue`` the kernel takes (A, B, C, Bias, D), split-K (A, B, C, Bias, W, Count, D), and the
    attribute says how the epilogue runs at this shape (``epilogue_plan``)."""
    choice = choose(m, n, k, dtype, arch, epilogue=epilogue)
    config = choice.config
    kernel = hopper_gemm_pipelined(m, n, k, dtype=dtype, epilogue=epilogue, **config.options(dtype))
    tile = f"swap-AB tiles {config.bm}x{config.bn} (N x M)" if config.swap_ab else f"tiles {config.bm}x{config.bn}"
    where = "" if config.cluster == (1, 1) else f" in {config.cluster[0]}x{config.cluster[1]} clusters"
    split = f", split-K {config.split_k}" if config.split_k > 1 else ""
    fused = "" if epilogue is None else "; " + epilogue_plan(m, n, config.bm, config.bn, epilogue, config.swap_ab,
                                                             config.split_k)
    return kernel.with_attr("axe4j.tuning", f"hopper_gemm_pipelined {tile}{where}{split}: {choice.reason}{fused}")


@dataclass(frozen=True)
class PaddedGemm:
    """A GEMM whose K or N TMA cannot address (rows not a multiple of 16 bytes) run on zero-padded copies: A (M x K)
    and B (N x K) padded with zero columns to K' and B with zero rows to N', the tuned kernel of (M, N', K'), and D
    the first N columns of its (M x N') result. Zeros add nothing to a dot product, so D is exact."""
    m: int
    n: int
    k: int
    n_padded: int
    k_padded: int
    kernel: object   # the PrimFunc of (M, N', K')
    config: Config = Config(128, 256)   # the tuned configuration of (M, N', K')

    def workspace(self) -> list:
        """Split-K's zero W (float32) and Count (int32) arrays, to pass between B' and D'; [] without split-K."""
        import numpy as np

        shapes = self.config.workspace(self.m, self.n_padded)
        return [np.zeros(shapes[0], np.float32), np.zeros(shapes[1], np.int32)] if shapes else []

    def pad(self, a, b):
        """(A', B', D') numpy arrays for the padded kernel: A and B copied into zeros, D' zeros."""
        import numpy as np

        a2 = np.zeros((self.m, self.k_padded), a.dtype)
        a2[:, :self.k] = a
        b2 = np.zeros((self.n_padded, self.k_padded), b.dtype)
        b2[:self.n, :self.k] = b
        return a2, b2, np.zeros((self.m, self.n_padded), a.dtype)

    def unpad(self, d_padded):
        """D: the first N columns of the padded result."""
        return d_padded[:, :self.n]


def padded_gemm(m: int, n: int, k: int, dtype: str = "float16", arch: str = "sm_90a") -> PaddedGemm:
    """The fallback for a K or N that is no multiple of 8 (``hopper_gemm_pipelined`` names the rule); shapes TMA
    addresses get no padding (``n_padded == n``, ``k_padded == k``)."""
    per = 8
    n2, k2 = -(-n // per) * per, -(-k // per) * per
    return PaddedGemm(m, n, k, n2, k2, hopper_gemm_tuned(m, n2, k2, dtype, arch), choose(m, n2, k2, dtype, arch).config)
