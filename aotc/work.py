"""The estimated work of a traced function, for the runtime's driver choice.

A trace (``core.Trace``) sums ``Work`` as ops are emitted, and ops; a loop body counts
once per trip (``scale_since``). A custom-derivative call counts its forward function
where it is called (``Trace.custom_work``: the part of ``work`` it does) and keeps its
rule's work and ops apart (``Trace.rule_work``, ``rule_ops``): reverse mode
(``autodiff.trace_vjp``) counts the primal ops, twice the others for their derivative,
and the rules once, except while a custom_jvp rule's tangent map is transposed
(``Trace.transposing_tangents``), whose custom calls act on primal values.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Work:
    """The estimated work of one call: all of it (flops; elementwise ops and reductions
    count one per element), the part matmul-like contractions do, which runs about ten
    times as much of it per second, and the part matrix-vector products do: they read
    each element of their matrix once, so they run at the speed of memory, as elementwise
    ops do (the runtime's driver choice weighs the parts: runtime/device.py)."""

    total: float = 0.0
    contraction: float = 0.0
    matvec: float = 0.0

    def __add__(self, other: "Work") -> "Work":
        return Work(self.total + other.total, self.contraction + other.contraction,
                    self.matvec + other.matvec)

    def __sub__(self, other: "Work") -> "Work":
        return Work(self.total - other.total, self.contraction - other.contraction,
                    self.matvec - other.matvec)

    def __mul__(self, factor: float) -> "Work":
        return Work(self.total * factor, self.contraction * factor, self.matvec * factor)

    __rmul__ = __mul__

    def batched(self, size: int) -> "Work":
        """The work of ``size`` examples run as one batch (``vmap``). A matrix-vector
        product batched over its vector with the matrix shared is a matmul that reads the
        matrix once for the whole batch: the batch's matrix-vector flops count as matmul
        flops. (Batched over the matrix too, each example still streams its own: counted
        as matmul flops, that work is underestimated, which keeps such a function on one
        thread, as before matrix-vector products were told apart.)"""
        return Work(self.total * size, (self.contraction + self.matvec) * size)


def count_custom_call(outer, forward, backward) -> None:
    """A custom-derivative call in ``outer``, its functions traced as ``forward`` and
    ``backward``: the forward function runs; the backward one runs only where ``outer``
    is differentiated (``count_derivative``), and the rules of the custom calls inside
    either only for a second derivative (not counted)."""
    outer.work += forward.work
    outer.ops += forward.ops
    _add_custom_calls(outer, forward.work, backward.work, backward.ops)


def count_derivative(outer, inner, forward: bool) -> None:
    """The function traced as ``inner`` and its derivative, built in ``outer``: forward
    mode the primal ops and their tangents; reverse mode the primal ops, twice the
    non-custom ones for their derivative, and the custom calls' rules, except while a
    custom_jvp rule's tangent map is transposed (its custom calls act on primal values).
    The custom calls stay custom calls in ``outer``: their rules run again if it is
    differentiated again."""
    if forward:
        outer.work += 2 * inner.work
    else:
        outer.work += inner.work + 2 * (inner.work - inner.custom_work)
        if not outer.transposing_tangents:
            outer.work += inner.rule_work
            outer.ops += inner.rule_ops
    outer.ops += inner.ops
    _add_custom_calls(outer, inner.custom_work, inner.rule_work, inner.rule_ops)


def count_batch(outer, inner, size: int) -> None:
    """The function traced as ``inner`` run on a batch of ``size`` examples (``vmap``):
    the same ops, each on the whole batch (``Work.batched``)."""
    outer.work += inner.work.batched(size)
    outer.ops += inner.ops
    _add_custom_calls(outer, inner.custom_work.batched(size), inner.rule_work.batched(size),
                      inner.rule_ops)


def _add_custom_calls(outer, custom_work: Work, rule_work: Work, rule_ops: float) -> None:
    """Custom calls in ``outer``: their forward functions' work (part of ``work``) and
    their rules', counted where ``outer`` is differentiated (``count_derivative``)."""
    outer.custom_work += custom_work
    outer.rule_work += rule_work
    outer.rule_ops += rule_ops


def tally(trace) -> tuple:
    """The estimates ``trace`` holds so far, for ``scale_since``."""
    return trace.work, trace.ops, trace.custom_work, trace.rule_work, trace.rule_ops


def scale_since(trace, before: tuple, factor: int) -> None:
    """Counts what was traced since ``before`` (``tally``) ``factor`` times (at least
    once): a loop body, once per trip."""
    scale = max(factor, 1)
    (trace.work, trace.ops, trace.custom_work, trace.rule_work, trace.rule_ops) = (
        old + (now - old) * scale for old, now in zip(before, tally(trace)))
