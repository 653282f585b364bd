"""The Triton fused-MoE peer's two kernels (axe4j.moe.triton_moe) in Triton's CPU interpreter (TRITON_INTERPRET=1),
without torch and without a GPU, against numpy: FP16 against ``moe_reference``, FP8 (e4m3, per-channel weight
scales, per-row activation scales) against ``fp8_reference``. The block sort is ``block_sort`` (numpy); the
activation between the kernels is quantised with ``axe4j.moe.fp8.quantise_rows``.

Needs only numpy, ml_dtypes and triton (no torch): the kernels' arguments are numpy arrays seen through ``NpTensor``,
the few members of a torch tensor the interpreter reads. Run it in any venv with those three:
    python3 -m venv /tmp/tri && /tmp/tri/bin/pip install triton numpy ml_dtypes
    /tmp/tri/bin/python tools/triton_moe_interp.py        # exit 0: every case within its tolerance
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"   # before triton is imported

import numpy as np  # noqa: E402

MOE = Path(__file__).resolve().parent.parent / "python" / "axe4j" / "moe"


def _load():
    """axe4j.moe's numpy half and triton_moe as the package ``moe`` (as the GPU bundle carries them): no TVM."""
    package = types.ModuleType("moe")
    package.__path__ = [str(MOE)]
    sys.modules["moe"] = package
    loaded = {}
    for name in ("config", "reference", "block_sort", "fp8", "triton_moe"):
        spec = importlib.util.spec_from_file_location(f"moe.{name}", MOE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"moe.{name}"] = module
        spec.loader.exec_module(module)
        loaded[name] = module
    return types.SimpleNamespace(**loaded)


class _Dtype:
    """One object per name, kept for the process: Triton caches type strings by the dtype object (a torch dtype is
    a singleton), so a freed object whose id is reused by another type's would be read as the old type."""

    _made: dict = {}

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    @classmethod
    def of(cls, name):
        return cls._made.setdefault(name, cls(name))


class _Storage:
    def __init__(self, array):
        self.array = array

    def data_ptr(self):
        return self.array.ctypes.data

    def cpu(self):
        return self

    def copy_(self, other):
        return self


class NpTensor:
    """A numpy array as the interpreter reads a torch tensor: it copies 'device' storage to a 'host' one and back;
    here both are the array itself, so the kernels read and write the array in place."""

    def __init__(self, array, dtype=None):
        self.array = np.ascontiguousarray(array)
        self.dtype = _Dtype.of(dtype or str(self.array.dtype))

    def data_ptr(self):
        return self.array.ctypes.data

    def untyped_storage(self):
        return _Storage(self.array)

    def storage_offset(self):
        return 0

    def size(self):
        return self.array.shape

    def stride(self):
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def new_empty(self, *args, **kwargs):
        return NpTensor(self.array, self.dtype.name)

    def set_(self, storage, offset, size, stride):
        return self

    def copy_(self, other):
        return self


def _e4m3(codes):
    return NpTensor(codes.view(np.uint8), "float8_e4m3fn")


def run_case(m, tokens, top_k, experts, hidden, inter, bm, bn, bk, group_m, fp8, seed):
    """One layer through the two kernels; returns (max |out - reference|, max |reference|)."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((experts, 2 * inter, hidden)) / np.sqrt(hidden)).astype(np.float16)
    w2 = (rng.standard_normal((experts, hidden, inter)) / np.sqrt(inter)).astype(np.float16)
    x = rng.standard_normal((tokens, hidden)).astype(np.float16)
    ids = np.stack([rng.choice(experts, top_k, replace=False) for _ in range(tokens)]).astype(np.int32)
    ids[: tokens * 2 // 3, 0] = experts - 1            # a crowded expert: several blocks, the last ragged
    weights = rng.random((tokens, top_k)).astype(np.float32)
    pairs = tokens * top_k
    sorted_pairs, block_expert, used = m.block_sort.block_sort(ids, experts, bm)
    blocks = sorted_pairs.size // bm
    flat = weights.reshape(-1).copy()
    gemm1, gemm2 = m.triton_moe._kernels()
    if fp8:
        w1q, w1s = m.fp8.quantise_rows(w1.astype(np.float32))
        w2q, w2s = m.fp8.quantise_rows(w2.astype(np.float32))
        xq, xs = m.fp8.quantise_rows(x.astype(np.float32))
        a_in, w1_in, s_x, s_w1 = _e4m3(xq), _e4m3(w1q), NpTensor(xs), NpTensor(w1s)
    else:
        a_in, w1_in, s_x, s_w1 = NpTensor(x), NpTensor(w1), NpTensor(flat), NpTensor(flat)
    act = np.zeros((pairs, inter), np.float16)
    common = dict(BM=bm, BN=bn, BK=bk, GROUP_M=group_m, FP8=fp8)
    gemm1[(blocks * (inter // bn),)](a_in, w1_in, NpTensor(act), NpTensor(sorted_pairs), NpTensor(block_expert),
                                     NpTensor(used), NpTensor(flat), s_x, s_w1, pairs, top_k, blocks, H=hidden,
                                     I=inter, **common)
    if fp8:
        aq, a_scale = m.fp8.quantise_rows(act.astype(np.float32))
        h_in, w2_in, s_h, s_w2 = _e4m3(aq), _e4m3(w2q), NpTensor(a_scale), NpTensor(w2s)
    else:
        h_in, w2_in, s_h, s_w2 = NpTensor(act), NpTensor(w2), NpTensor(flat), NpTensor(flat)
    y = np.full((pairs, hidden), np.nan, np.float32)     # every pair's row must be written
    gemm2[(blocks * (hidden // bn),)](h_in, w2_in, NpTensor(y), NpTensor(sorted_pairs), NpTensor(block_expert),
                                      NpTensor(used), s_h, s_w2, pairs, blocks, H=hidden, I=inter, **common)
    out = y.reshape(tokens, top_k, hidden).sum(axis=1)
    if fp8:
        want = m.fp8.fp8_reference(x.astype(np.float32), w1q, w1s, w2q, w2s, ids, weights, h_dtype="float16")
    else:
        want = m.reference.moe_reference(x.astype(np.float32), w1.astype(np.float32), w2.astype(np.float32), ids,
                                         weights)
    return float(np.abs(out - want).max()), float(np.abs(want).max())


CASES = [  # tokens, top_k, experts, hidden, intermediate, BM, BN, BK, GROUP_M
    (1, 2, 4, 64, 32, 16, 16, 32, 1),
    (9, 2, 4, 64, 32, 16, 16, 32, 2),
    (20, 3, 5, 64, 64, 16, 32, 32, 4),
]


def main() -> int:
    m = _load()
    bad = []
    for case in CASES:
        for fp8 in (False, True):
            diff, top = run_case(m, *case, fp8=fp8, seed=sum(case))
            tolerance = 2e-3 * max(top, 1)     # FP32 accumulation of the same values; FP16 rounding of A
            ok = diff <= tolerance             # NaN (a row left unwritten) fails too
            print(f"[triton-moe-interp] {'FP8 ' if fp8 else 'FP16'} tokens={case[0]} top_k={case[1]} "
                  f"experts={case[2]} BM={case[5]} BN={case[6]} BK={case[7]}: max |diff| {diff:.2e} "
                  f"(max |ref| {top:.2f}) {'ok' if ok else 'MISMATCH'}", flush=True)
            bad += [] if ok else [(case, fp8)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
