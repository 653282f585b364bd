"""The sizes of a mixture-of-experts layer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MoeShape:
    """``experts`` experts, each token routed to ``top_k`` of them; an expert is
    ``down(silu(gate(x)) * up(x))`` with gate, up: hidden -> intermediate and down: intermediate -> hidden."""

    experts: int
    top_k: int
    hidden: int
    intermediate: int

    def __post_init__(self):
        for name in ("experts", "top_k", "hidden", "intermediate"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"MoeShape.{name} ({value!r}) must be a positive int")
        if self.top_k > self.experts:
            raise ValueError(f"MoeShape.top_k ({self.top_k}) must be at most experts ({self.experts})")

    def flops(self, tokens: int) -> float:
        """Multiply-adds x 2 of the expert GEMMs (router excluded): per (token, expert) pair 3 GEMMs of
        hidden x intermediate."""
        return 2.0 * tokens * self.top_k * 3 * self.hidden * self.intermediate


QWEN3_30B_A3B = MoeShape(experts=128, top_k=8, hidden=2048, intermediate=768)
