"""The estimated work of a traced function, for the runtime's driver choice."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Work:
    """The estimated work of one call: all of it (flops; elementwise ops and reductions
    count one per element) and the part matmul-like contractions do, which runs about ten
    times as much of it per second (the runtime's driver choice weighs them:
    runtime/device.py)."""

    total: float = 0.0
    contraction: float = 0.0

    def __add__(self, other: "Work") -> "Work":
        return Work(self.total + other.total, self.contraction + other.contraction)

    def __sub__(self, other: "Work") -> "Work":
        return Work(self.total - other.total, self.contraction - other.contraction)

    def __mul__(self, factor: float) -> "Work":
        return Work(self.total * factor, self.contraction * factor)

    __rmul__ = __mul__
