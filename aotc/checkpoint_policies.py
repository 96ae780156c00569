"""``aotc.checkpoint_policies``: JAX's names for what ``checkpoint`` may keep.

A policy says which values of a checkpointed function the backward pass may keep
instead of recomputing. aotc keeps all of them (``everything_saveable``: as if the
function were not checkpointed) or none: every other policy recomputes everything, as
``nothing_saveable``, so a program written for JAX gives the same values with less
memory and more compute than under JAX (the values a policy names, such as matmul
results, are recomputed too).

>>> f = aotc.checkpoint(anp.sin, policy=aotc.checkpoint_policies.dots_saveable)
>>> print(float(aotc.grad(f)(0.0)))
1.0
"""

from __future__ import annotations

from typing import Callable


def everything_saveable(*_, **__) -> bool:
    return True


def nothing_saveable(*_, **__) -> bool:
    return False


# JAX's policies that keep some values: aotc recomputes those too (module docstring).
dots_saveable = checkpoint_dots = nothing_saveable
dots_with_no_batch_dims_saveable = checkpoint_dots_with_no_batch_dims = nothing_saveable


def save_only_these_names(*names: str) -> Callable:
    return nothing_saveable


def save_any_names_but_these(*names: str) -> Callable:
    return nothing_saveable


save_anything_except_these_names = save_any_names_but_these


def save_from_both_policies(left: Callable, right: Callable) -> Callable:
    return everything_saveable if everything_saveable in (left, right) else nothing_saveable


def keeps_everything(policy: Callable | None) -> bool:
    """Whether ``checkpoint`` with ``policy`` keeps every value (recomputes nothing)."""
    return policy is everything_saveable
