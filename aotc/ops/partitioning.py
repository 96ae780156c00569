"""Partial orders: ``partition``, ``argpartition`` and ``lexsort``.

``partition`` promises only that the element at ``kth`` is where a sort would put it, the
smaller ones before it and the others after; a full stable sort keeps that promise for
every ``kth`` at once (JAX's top_k-based result has the same property and, like this one,
not numpy's order inside the two parts). ``lexsort`` is a chain of stable argsorts, from
the first key (least significant) to the last (primary).
"""

from __future__ import annotations

import numpy as np

from ..core import Tracer
from ..errors import TracingError
from .arguments import as_tracer, normalize_axis, static_value
from .selection import take_along_axis
from .sorting import argsort, sort

EXPORTS: dict[str, list[str]] = {"numpy": ["partition", "argpartition", "lexsort"]}


def _checked_kth(x: Tracer, kth, axis, where: str) -> int | None:
    """The axis (None: flattened) after checking every ``kth`` is a static in-range int."""
    ax = None if axis is None else normalize_axis(axis, x.ndim, where)
    n = x.size if ax is None else x.shape[ax]
    kth = static_value(kth, f"{where} kth")
    for k in np.atleast_1d(kth):
        if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
            raise TracingError(f"{where}: kth must be an int or ints, got {kth!r}")
        if not -n <= k < n:
            raise TracingError(f"{where}: kth {int(k)} is out of bounds for an axis of "
                               f"size {n}")
    return ax


def partition(a, kth, axis=-1, kind="introselect", order=None) -> Tracer:
    """numpy.partition: the element at each ``kth`` in its sorted place, smaller ones
    before it, the rest after (here: sorted, which has that property)."""
    x = as_tracer(a, "partition")
    return sort(x, axis=_checked_kth(x, kth, axis, "partition"))


def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> Tracer:
    """numpy.argpartition: indices that partition ``a`` around each ``kth`` (here: the
    stable sort's, which partition it)."""
    x = as_tracer(a, "argpartition")
    return argsort(x, axis=_checked_kth(x, kth, axis, "argpartition"))


def lexsort(keys, axis=-1) -> Tracer:
    """numpy.lexsort: indices sorting by the last key, ties broken by the one before,
    and so on (``keys``: a sequence of arrays, or the rows of a 2-d array)."""
    rows = list(keys) if not isinstance(keys, Tracer) else [keys[i] for i in
                                                            range(keys.shape[0])]
    if not rows:
        raise TracingError("lexsort: need at least one key")
    tracers = [as_tracer(k, f"lexsort key {i}") for i, k in enumerate(rows)]
    shapes = {t.shape for t in tracers}
    if len(shapes) != 1:
        raise TracingError(f"lexsort: all keys need to be the same shape, got "
                           f"{sorted(shapes)}")
    if tracers[0].ndim == 0:
        raise TracingError("lexsort: the keys must have at least one dimension")
    ax = normalize_axis(axis, tracers[0].ndim, "lexsort")
    order = argsort(tracers[0], axis=ax)
    for key in tracers[1:]:
        # stable: equal later keys keep the order the earlier keys gave
        order = take_along_axis(order, argsort(take_along_axis(key, order, axis=ax),
                                               axis=ax), axis=ax)
    return order
