"""The MoE layer on CUDA (sm_90a): FP16 or BF16 tokens and weights, FP32 accumulation, output in the input type
(docs/moe.md, "CUDA (sm_90a)").

Kernels (``axe4j.moe.cuda_kernels``) per token count: ``gemm1`` (gather + GEMM1 gate/up + SiLU-and-mul +
routing weight -> H), ``gemm2`` (H W2[e]^T, each row scattered to its pair's row of Y) and ``combine``
(out[t] = sum_j Y[t k + j], a sum over the middle dim of Y seen as tokens x k x hidden); with ``fused=True``
``experts`` runs GEMM1 and GEMM2 in one kernel, GEMM2 of a tile starting as soon as GEMM1 of that tile is done,
then ``combine`` (on an H200 no faster at 16-1024 tokens and 9% slower at 4096, so not the default: docs/moe.md).

The expert-sorted tile schedule (64-row tiles) runs, with ``schedule="device"`` (the default), as the kernel
``schedule`` (``axe4j.moe.schedule_kernel``) launched before the others on the uploaded routing: nothing goes back
to the host between the router and the combine. With ``schedule="host"`` it is made on the host in numpy
(``axe4j.moe.schedule``, the reference the kernel equals array for array) and uploaded. The router runs on the host
in numpy (``route_reference``). ``MoeLayer`` answers ``layer(x)``, ``route(x)`` and ``experts(x, ids, weights)``
like ``axe4j.moe.cpu.MoeLayer``; ``device="interp"`` runs the kernels in axe4j's CPU interpreter of lowered CUDA
kernels (``axe4j.cuda.interp``), ``device="gpu"`` on ``tvm.cuda(0)``.
"""

from __future__ import annotations

import numpy as np

from .config import MoeShape
from .cuda_kernels import ROWS, chunk_sizes, combine_kernel, experts_kernel, gemm1_kernel, gemm2_kernel, sync_words
from .reference import route_reference
from .schedule import TileSchedule, schedule, tile_arrays  # noqa: F401  (tile_arrays: the kernels' view)
from .schedule_kernel import schedule_kernel as _schedule_kernel

DEVICES = ("interp", "gpu")
SCHEDULES = ("device", "host")   # where the tile schedule is made: the kernel ``schedule`` or numpy
DTYPES = ("float16", "bfloat16")   # of tokens, expert weights, H and the output; accumulation is FP32


def numpy_dtype(dtype: str):
    if dtype not in DTYPES:
        raise ValueError(f"axe4j.moe.cuda: dtype {dtype!r} must be one of {DTYPES}")
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.float16


def target():
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")


def kernels(shape: MoeShape, tokens: int, bn1: int = 128, bn2: int = 128, dtype: str = "float16",
            fused: bool = False) -> dict:
    """The layer's PrimFuncs for ``tokens`` tokens: {"gemm1", "gemm2", "combine"}, or with ``fused``
    {"experts", "combine"}."""
    if not isinstance(tokens, int) or tokens < 1:
        raise ValueError(f"axe4j.moe.cuda: tokens ({tokens!r}) must be a positive int")
    numpy_dtype(dtype)
    bn1, bn2 = chunk_sizes(shape, bn1, bn2)
    max_tiles = TileSchedule.max_tiles(tokens * shape.top_k, shape.experts, ROWS)
    if fused:
        return {"experts": experts_kernel(shape, tokens, max_tiles, bn1, bn2, dtype),
                "combine": combine_kernel(shape, tokens, dtype)}
    return {"gemm1": gemm1_kernel(shape, tokens, max_tiles, bn1, dtype),
            "gemm2": gemm2_kernel(shape, tokens, max_tiles, bn2, dtype),
            "combine": combine_kernel(shape, tokens, dtype)}


def schedule_kernel(shape: MoeShape, tokens: int):
    """The PrimFunc ``schedule`` of the layer for ``tokens`` tokens (64-row tiles, ``max_tiles`` as the expert
    kernels'): (ids, weights, tile_expert, tile_start, tile_rows, slot_token, slot_pair, row_weight, error)."""
    if not isinstance(tokens, int) or tokens < 1:
        raise ValueError(f"axe4j.moe.cuda: tokens ({tokens!r}) must be a positive int")
    pairs = tokens * shape.top_k
    return _schedule_kernel(tokens, shape.top_k, shape.experts, ROWS,
                            TileSchedule.max_tiles(pairs, shape.experts, ROWS))


class MoeLayer:
    """The layer for ``tokens`` tokens. Weights as in ``axe4j.moe.cpu.MoeLayer`` (router ``wr``: experts x hidden;
    ``w1``: experts x 2*intermediate x hidden, gate rows then up rows; ``w2``: experts x hidden x intermediate);
    ``w1``, ``w2``, the tokens and the output are ``dtype`` (FP16 or BF16). ``schedule``: ``"device"`` (the
    kernel ``schedule`` first in ``calls``) or ``"host"`` (numpy, then an upload)."""

    def __init__(self, shape: MoeShape, tokens: int, wr, w1, w2, *, device: str = "interp", bn1: int = 128,
                 bn2: int = 128, dtype: str = "float16", fused: bool = False, schedule: str = "device"):
        import tvm

        import axe4j

        if device not in DEVICES:
            raise ValueError(f"axe4j.moe.cuda.MoeLayer: device {device!r} must be one of {DEVICES}")
        if schedule not in SCHEDULES:
            raise ValueError(f"axe4j.moe.cuda.MoeLayer: schedule {schedule!r} must be one of {SCHEDULES}")
        E, H, I = shape.experts, shape.hidden, shape.intermediate
        for name, value, want in (("wr", wr, (E, H)), ("w1", w1, (E, 2 * I, H)), ("w2", w2, (E, H, I))):
            if tuple(value.shape if hasattr(value, "shape") else np.shape(value)) != want:
                raise ValueError(f"axe4j.moe.cuda.MoeLayer: {name} has shape {np.shape(value)}, expected {want} "
                                 f"for {shape}")
        funcs = kernels(shape, tokens, bn1, bn2, dtype, fused)
        if schedule == "device":
            funcs["schedule"] = schedule_kernel(shape, tokens)
        self.shape, self.tokens, self.device, self.dtype = shape, tokens, device, numpy_dtype(dtype)
        self.fused, self.schedule = fused, schedule
        self.max_tiles = TileSchedule.max_tiles(tokens * shape.top_k, E, ROWS)
        axe4j.use_pip_nvcc()
        self._exe = {name: axe4j.compile(func, target()) for name, func in funcs.items()}
        self._wr = np.asarray(wr, np.float32)
        if device == "gpu":   # weights given as tvm tensors on the GPU stay there (in dtype); arrays are copied over
            dev = tvm.cuda(0)
            self._w1, self._w2 = (a if isinstance(a, tvm.runtime.Tensor) else
                                  tvm.runtime.tensor(np.ascontiguousarray(a, self.dtype), dev) for a in (w1, w2))
        else:
            self._w1 = np.ascontiguousarray(w1, self.dtype)
            self._w2 = np.ascontiguousarray(w2, self.dtype)

    def _tokens(self, x) -> np.ndarray:
        if np.shape(x) != (self.tokens, self.shape.hidden):
            raise ValueError(f"axe4j.moe.cuda.MoeLayer: x has shape {np.shape(x)}, expected "
                             f"({self.tokens}, {self.shape.hidden})")
        return np.ascontiguousarray(x, self.dtype)

    def route(self, x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(logits, ids, weights) from the host router: FP32 logits of the tokens (as ``dtype``), top-k, softmax."""
        logits = self._tokens(x).astype(np.float32) @ self._wr.T
        ids, weights = route_reference(logits, self.shape.top_k)
        return logits, ids, weights

    def __call__(self, x) -> np.ndarray:
        _, ids, weights = self.route(x)
        return self.experts(x, ids, weights)

    def experts(self, x, ids, weights) -> np.ndarray:
        """The expert part for a routing (ids, weights: tokens x top_k): tokens x hidden in ``dtype``. With the device
        schedule, an expert id outside [0, experts) is found by the kernel (``error``) and raised here, after the
        run; the host schedule raises before it."""
        calls = self.calls(x, ids, weights)
        self.launch(calls)
        if self.schedule == "device":
            error = calls[0][1][-1]
            bad = int((error if isinstance(error, np.ndarray) else error.numpy())[0])
            if bad:
                raise ValueError(f"axe4j.moe.cuda.MoeLayer: ids has {bad} expert ids outside [0, "
                                 f"{self.shape.experts}); the schedule kernel left those pairs out")
        out = calls[-1][1][-1]
        return out if isinstance(out, np.ndarray) else out.numpy()

    def _routing(self, ids, weights):
        """(ids, weights) as int32 and float32 tokens x top_k arrays; tensors already on the GPU are kept as they
        are for the device schedule (no upload), numpy-like values are converted (ids only where the values fit)."""
        want = (self.tokens, self.shape.top_k)
        out = []
        for name, value, dtype, kind in (("ids", ids, np.int32, "iu"), ("weights", weights, np.float32, "f")):
            if self.device == "gpu" and self.schedule == "device" and _is_tensor(value):
                if tuple(value.shape) != want or str(value.dtype) != np.dtype(dtype).name:
                    raise ValueError(f"axe4j.moe.cuda.MoeLayer: {name} is a {value.dtype} tensor of shape "
                                     f"{tuple(value.shape)}, expected {np.dtype(dtype).name} {want}")
                out.append(value)
                continue
            array = np.asarray(value.numpy() if _is_tensor(value) else value)
            if array.shape != want:
                raise ValueError(f"axe4j.moe.cuda.MoeLayer: {name} has shape {array.shape}, expected {want}")
            if array.dtype.kind not in kind:
                raise ValueError(f"axe4j.moe.cuda.MoeLayer: {name} has dtype {array.dtype}, expected "
                                 f"{'an integer' if name == 'ids' else 'a floating'} type")
            converted = np.ascontiguousarray(array, dtype)
            if name == "ids" and not np.array_equal(converted, array):
                raise ValueError("axe4j.moe.cuda.MoeLayer: ids has values that do not fit int32")
            out.append(converted)
        return tuple(out)

    def calls(self, x, ids, weights) -> list:
        """[(kernel name, arguments)] of one run for a routing, every array in place (on the GPU for
        ``device="gpu"``); the output is the last argument of the last call. With ``schedule="device"`` the first
        call is ``schedule`` (ids, weights, tile_expert, tile_start, tile_rows, slot_token, slot_pair, row_weight,
        error): the routing is uploaded once (not at all when given as GPU tensors) and nothing is read back; its
        ``error`` (1 int32) counts the pairs whose expert id is outside [0, experts), which it leaves out. With
        ``schedule="host"`` the schedule is made here in numpy and uploaded."""
        x = self._tokens(x)
        ids, weights = self._routing(ids, weights)
        E, H, I = self.shape.experts, self.shape.hidden, self.shape.intermediate
        slots = self.tokens * self.shape.top_k + ROWS
        h = np.zeros((self.max_tiles * ROWS, I), self.dtype)                 # tile-padded rows: 64 i + r
        y = np.zeros((self.tokens * self.shape.top_k, H), np.float32)        # pair order: row t k + j
        out = np.zeros((self.tokens, H), self.dtype)
        sync = np.zeros(sync_words(self.max_tiles), np.int32)   # the fused kernel's counters; 0 after each launch
        if self.schedule == "host":
            plan = schedule(ids, weights, E, ROWS)
            tiles = dict(tile_arrays(plan, self.max_tiles), slot_token=plan.slot_token, slot_pair=plan.slot_pair)
        else:   # the kernel writes every element of these
            tiles = {"tile_expert": (self.max_tiles,), "tile_start": (self.max_tiles,),
                     "tile_rows": (self.max_tiles,), "slot_token": (slots,), "slot_pair": (slots,),
                     "row_weight": (self.max_tiles * ROWS,), "error": (1,)}
            tiles = {k: _empty(v, np.float32 if k == "row_weight" else np.int32, self.device)
                     for k, v in tiles.items()}
        if self.device == "gpu":
            import tvm

            dev = tvm.cuda(0)
            x, h, y, out, sync, ids, weights = (a if _is_tensor(a) else tvm.runtime.tensor(a, dev)
                                                for a in (x, h, y, out, sync, ids, weights))
            tiles = {k: v if _is_tensor(v) else tvm.runtime.tensor(v, dev) for k, v in tiles.items()}
        first = []
        if self.schedule == "device":
            first = [("schedule", (ids, weights, tiles["tile_expert"], tiles["tile_start"], tiles["tile_rows"],
                                   tiles["slot_token"], tiles["slot_pair"], tiles["row_weight"], tiles["error"]))]
        te, ts, tr = tiles["tile_expert"], tiles["tile_start"], tiles["tile_rows"]
        if self.fused:
            return first + [("experts", (x, self._w1, self._w2, te, ts, tr, tiles["slot_token"], tiles["slot_pair"],
                                         tiles["row_weight"], h, y, sync)),
                            ("combine", (y, out))]
        return first + [("gemm1", (x, self._w1, te, ts, tr, tiles["slot_token"], tiles["row_weight"], h)),
                        ("gemm2", (h, self._w2, te, ts, tr, tiles["slot_pair"], y)),
                        ("combine", (y, out))]

    def launch(self, calls) -> None:
        """Runs the kernels of ``calls`` in order (in the interpreter, or queued on the GPU)."""
        if self.device == "interp":
            from ..cuda import interp as cuda_interp

            for name, args in calls:
                cuda_interp.run(self._exe[name], *args)
            return
        for name, args in calls:
            self._exe[name](*args)


def _is_tensor(value) -> bool:
    import tvm

    return isinstance(value, tvm.runtime.Tensor)


def _empty(shape, dtype, device):
    """An array the schedule kernel fills: uninitialised on the GPU; in the interpreter filled with -1 (a value no
    element of a schedule has), so an element the kernel leaves unwritten shows."""
    if device == "gpu":
        import tvm

        return tvm.runtime.empty(shape, np.dtype(dtype).name, tvm.cuda(0))
    return np.full(shape, -1, dtype)


def __getattr__(name):
    """``bench`` moved to ``axe4j.moe.cuda_bench.bench`` (which uses this module; this one does not import it)."""
    if name == "bench":
        import importlib
        import warnings

        warnings.warn("axe4j.moe.cuda.bench moved to axe4j.moe.cuda_bench.bench (axe4j.moe.cuda.bench goes in the "
                      "next release)", DeprecationWarning, stacklevel=2)
        return importlib.import_module(__package__ + ".cuda_bench").bench
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
