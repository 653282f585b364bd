"""The MoE layer on CUDA (sm_90a) with FP8 (e4m3) experts (docs/moe.md, "FP8 experts").

Weights quantised here, once, per output channel (``axe4j.moe.fp8.quantise_rows``); tokens and output in
``dtype`` (BF16 or FP16). One run: ``schedule`` (the 16-bit layer's kernel), ``quantise_x`` (the tokens gathered
into tile-padded rows and quantised per row), ``gemm1`` (e4m3 wgmma, dequantised in the epilogue, SiLU-and-mul,
routing weight -> H in ``dtype``), ``quantise_h`` (H per row), ``gemm2`` (e4m3 wgmma, dequantised, scattered to
pair order in Y), ``combine``. Kernels: ``axe4j.moe.cuda_fp8_kernels``.
"""

from __future__ import annotations

import numpy as np

from . import fp8
from .config import MoeShape
from .cuda import DEVICES, _empty, _is_tensor, numpy_dtype, schedule_kernel, target
from .cuda_fp8_kernels import H_DTYPES, chunk_sizes, gemm1_kernel, gemm2_kernel, quantise_kernel
from .cuda_kernels import ROWS, combine_kernel
from .reference import route_reference
from .schedule import TileSchedule


def kernels(shape: MoeShape, tokens: int, bn1: int = 128, bn2: int = 128, dtype: str = "bfloat16") -> dict:
    """The layer's PrimFuncs for ``tokens`` tokens, by name (``schedule`` included)."""
    if not isinstance(tokens, int) or tokens < 1:
        raise ValueError(f"axe4j.moe.cuda_fp8: tokens ({tokens!r}) must be a positive int")
    if dtype not in H_DTYPES:
        raise ValueError(f"axe4j.moe.cuda_fp8: dtype {dtype!r} (tokens, H and output) must be one of {H_DTYPES}")
    bn1, bn2 = chunk_sizes(shape, bn1, bn2)
    E, H, I = shape.experts, shape.hidden, shape.intermediate
    max_tiles = TileSchedule.max_tiles(tokens * shape.top_k, E, ROWS)
    slots = tokens * shape.top_k + ROWS
    return {"schedule": schedule_kernel(shape, tokens),
            "quantise_x": quantise_kernel(tokens, H, max_tiles, slots, dtype, gather=True),
            "gemm1": gemm1_kernel(shape, max_tiles, bn1, dtype),
            "quantise_h": quantise_kernel(max_tiles * ROWS, I, max_tiles, slots, dtype, gather=False),
            "gemm2": gemm2_kernel(shape, tokens, max_tiles, bn2),
            "combine": combine_kernel(shape, tokens, dtype)}


class Fp8MoeLayer:
    """The layer for ``tokens`` tokens with e4m3 experts. ``w1`` (experts x 2I x hidden) and ``w2`` (experts x
    hidden x I) in any floating type are quantised per output channel here (``w1q``, ``w1s``, ``w2q``, ``w2s``,
    the values the reference ``fp8.fp8_reference`` takes); the router ``wr`` stays FP32 on the host."""

    def __init__(self, shape: MoeShape, tokens: int, wr, w1, w2, *, device: str = "interp", bn1: int = 128,
                 bn2: int = 128, dtype: str = "bfloat16"):
        import tvm

        import axe4j

        if device not in DEVICES:
            raise ValueError(f"axe4j.moe.cuda_fp8.Fp8MoeLayer: device {device!r} must be one of {DEVICES}")
        E, H, I = shape.experts, shape.hidden, shape.intermediate
        for name, value, want in (("wr", wr, (E, H)), ("w1", w1, (E, 2 * I, H)), ("w2", w2, (E, H, I))):
            if tuple(np.shape(value)) != want:
                raise ValueError(f"axe4j.moe.cuda_fp8.Fp8MoeLayer: {name} has shape {np.shape(value)}, expected "
                                 f"{want} for {shape}")
        funcs = kernels(shape, tokens, bn1, bn2, dtype)
        self.shape, self.tokens, self.device, self.dtype = shape, tokens, device, numpy_dtype(dtype)
        self.max_tiles = TileSchedule.max_tiles(tokens * shape.top_k, E, ROWS)
        axe4j.use_pip_nvcc()
        self._exe = {name: axe4j.compile(func, target()) for name, func in funcs.items()}
        self._wr = np.asarray(wr, np.float32)
        self.w1q, self.w1s = fp8.quantise_rows(np.asarray(w1, np.float32))
        self.w2q, self.w2s = fp8.quantise_rows(np.asarray(w2, np.float32))
        weights = (self.w1q, self.w1s, self.w2q, self.w2s)
        if device == "gpu":
            dev = tvm.cuda(0)
            weights = tuple(tvm.runtime.tensor(a, dev) for a in weights)
        self._weights = weights

    def _tokens(self, x) -> np.ndarray:
        if np.shape(x) != (self.tokens, self.shape.hidden):
            raise ValueError(f"axe4j.moe.cuda_fp8.Fp8MoeLayer: x has shape {np.shape(x)}, expected "
                             f"({self.tokens}, {self.shape.hidden})")
        return np.ascontiguousarray(x, self.dtype)

    def route(self, x):
        logits = self._tokens(x).astype(np.float32) @ self._wr.T
        ids, weights = route_reference(logits, self.shape.top_k)
        return logits, ids, weights

    def __call__(self, x) -> np.ndarray:
        _, ids, weights = self.route(x)
        return self.experts(x, ids, weights)

    def experts(self, x, ids, weights) -> np.ndarray:
        """The expert part for a routing (ids, weights: tokens x top_k): tokens x hidden in ``dtype``; expert ids
        outside [0, experts) are raised after the run, as the 16-bit layer does."""
        calls = self.calls(x, ids, weights)
        self.launch(calls)
        error = calls[0][1][-1]
        bad = int((error if isinstance(error, np.ndarray) else error.numpy())[0])
        if bad:
            raise ValueError(f"axe4j.moe.cuda_fp8.Fp8MoeLayer: ids has {bad} expert ids outside [0, "
                             f"{self.shape.experts}); the schedule kernel left those pairs out")
        out = calls[-1][1][-1]
        return out if isinstance(out, np.ndarray) else out.numpy()

    def calls(self, x, ids, weights) -> list:
        """[(kernel name, arguments)] of one run, every array in place; the output is the last argument of the
        last call, the schedule's ``error`` the last of the first."""
        x = self._tokens(x)
        want = (self.tokens, self.shape.top_k)
        if np.shape(ids) != want or np.shape(weights) != want:
            raise ValueError(f"axe4j.moe.cuda_fp8.Fp8MoeLayer: ids {np.shape(ids)} and weights "
                             f"{np.shape(weights)} must both be {want}")
        ids, weights = np.ascontiguousarray(ids, np.int32), np.ascontiguousarray(weights, np.float32)
        H, I = self.shape.hidden, self.shape.intermediate
        rows = self.max_tiles * ROWS
        slots = self.tokens * self.shape.top_k + ROWS
        arrays = {"tile_expert": (self.max_tiles,), "tile_start": (self.max_tiles,), "tile_rows": (self.max_tiles,),
                  "slot_token": (slots,), "slot_pair": (slots,), "row_weight": (rows,), "error": (1,),
                  "x_scale": (rows,), "h_scale": (rows,)}
        a = {k: _empty(v, np.float32 if k in ("row_weight", "x_scale", "h_scale") else np.int32, self.device)
             for k, v in arrays.items()}
        host = {"xq": np.zeros((rows, H), fp8.e4m3()), "hq": np.zeros((rows, I), fp8.e4m3()),
                "h": np.zeros((rows, I), self.dtype), "y": np.zeros((self.tokens * self.shape.top_k, H), np.float32),
                "out": np.zeros((self.tokens, H), self.dtype), "x": x, "ids": ids, "weights": weights}
        if self.device == "gpu":
            import tvm

            dev = tvm.cuda(0)
            host = {k: v if _is_tensor(v) else tvm.runtime.tensor(v, dev) for k, v in host.items()}
        a.update(host)
        w1q, w1s, w2q, w2s = self._weights
        return [("schedule", (a["ids"], a["weights"], a["tile_expert"], a["tile_start"], a["tile_rows"],
                              a["slot_token"], a["slot_pair"], a["row_weight"], a["error"])),
                ("quantise_x", (a["x"], a["tile_start"], a["tile_rows"], a["slot_token"], a["xq"], a["x_scale"])),
                ("gemm1", (a["xq"], a["x_scale"], w1q, w1s, a["tile_expert"], a["tile_rows"], a["row_weight"],
                           a["h"])),
                ("quantise_h", (a["h"], a["tile_start"], a["tile_rows"], a["slot_token"], a["hq"], a["h_scale"])),
                ("gemm2", (a["hq"], a["h_scale"], w2q, w2s, a["tile_expert"], a["tile_start"], a["tile_rows"],
                           a["slot_pair"], a["y"])),
                ("combine", (a["y"], a["out"]))]

    def launch(self, calls) -> None:
        if self.device == "interp":
            from ..cuda import interp as cuda_interp

            for name, args in calls:
                cuda_interp.run(self._exe[name], *args)
            return
        for name, args in calls:
            self._exe[name](*args)
