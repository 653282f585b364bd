"""The fused epilogue of the GEMM kernels: D = act(alpha * A B^T + beta * C + bias), computed in float32 registers
on the accumulator's own layout before D is converted and stored.

``C`` has D's shape and type and is read only when ``beta != 0``; ``bias`` is a float32 vector over N (one value
per output column) read only when ``bias`` is set; ``act`` is ``None``, ``"relu"`` (max(x, 0)) or ``"silu"``
(x / (1 + e^-x)). A kernel built with an epilogue takes (A, B, C, Bias, D), with split-K (A, B, C, Bias, W, Count, D).
"""

from __future__ import annotations

from dataclasses import dataclass

ACTIVATIONS = (None, "relu", "silu")


@dataclass(frozen=True)
class Epilogue:
    alpha: float = 1.0
    beta: float = 0.0
    bias: bool = False
    activation: str | None = None

    def __post_init__(self):
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"Epilogue: activation {self.activation!r} is not one of {ACTIVATIONS}")
        for name in ("alpha", "beta"):
            if not isinstance(getattr(self, name), (int, float)) or isinstance(getattr(self, name), bool):
                raise ValueError(f"Epilogue: {name}={getattr(self, name)!r} must be a number")

    @property
    def label(self) -> str:
        parts = [f"alpha={self.alpha:g}", f"beta={self.beta:g}"] + (["bias"] if self.bias else []) + \
            ([self.activation] if self.activation else [])
        return ",".join(parts)

    def reference(self, a, b, c, bias, dtype):
        """numpy: the epilogue applied to A B^T in float32, converted to ``dtype``."""
        import numpy as np

        x = self.alpha * (a.astype(np.float32) @ b.astype(np.float32).T)
        if self.beta != 0:
            x = x + np.float32(self.beta) * c.astype(np.float32)
        if self.bias:
            x = x + bias.astype(np.float32)[None, :]
        if self.activation == "relu":
            x = np.maximum(x, 0)
        elif self.activation == "silu":
            x = x / (1 + np.exp(-x))
        return x.astype(dtype)
