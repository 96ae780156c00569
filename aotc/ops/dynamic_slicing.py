"""``aotc.lax.dynamic_slice`` and its ``*_in_dim`` forms: slices at starts traced at run
time, clamped so the slice stays inside the operand (``jax.lax.dynamic_slice``'s rule);
``dynamic_starts`` and ``in_dim`` check and clamp the starts for ``updates.py``'s
``dynamic_update_slice`` too."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import Tracer
from ..errors import TracingError
from . import shape as shape_ops
from .arguments import as_tracer, normalize_axis
from .indexing import clamped_starts, slice_at

EXPORTS: dict[str, list[str]] = {
    "methods": [],
    "numpy": [],
    "lax": ["dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim"],
    "nn": [],
}


def _start_list(start_indices, ndim: int, where: str) -> list:
    if isinstance(start_indices, Tracer):
        if start_indices.ndim != 1:
            raise TracingError(f"{where}: start_indices must be a sequence or a 1-d array, "
                               f"got a traced array of shape {start_indices.shape}")
        starts = [start_indices[i] for i in range(start_indices.shape[0])]
    else:
        starts = list(np.asarray(start_indices).tolist()) if isinstance(start_indices, np.ndarray) \
            else list(start_indices)
    if len(starts) != ndim:
        raise TracingError(
            f"{where}: expected one start index per operand dimension ({ndim}), got "
            f"{len(starts)}"
        )
    for s in starts:
        if isinstance(s, Tracer) and (s.ndim or dtypes.kind(s.dtype) not in ("int", "uint")):
            raise TracingError(f"{where}: start indices must be integer scalars, got a traced "
                               f"{s.dtype.name}{list(s.shape)}")
    return starts


def dynamic_starts(operand: Tracer, start_indices, sizes, where: str,
                   allow_negative_indices=True) -> list:
    """Validated, clamped starts for a slice of ``sizes`` (jax.lax's dynamic slicing)."""
    starts = _start_list(start_indices, operand.ndim, where)
    for d, (n, size) in enumerate(zip(operand.shape, sizes)):
        if not 0 <= size <= n:
            raise TracingError(
                f"{where}: slice size {size} along dimension {d} does not fit the operand's "
                f"size {n} (operand shape {operand.shape}, sizes {tuple(sizes)})"
            )
    return clamped_starts(operand.shape, starts, sizes, bool(allow_negative_indices))


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True) -> Tracer:
    """jax.lax.dynamic_slice: ``operand[s0:s0+k0, s1:s1+k1, ...]`` with traced starts.

    Starts are clamped so the slice fits (a start past the end reads the last
    ``slice_sizes`` elements); negative starts count from the end first.

    >>> rows = aotc.jit(lambda x, i: aotc.lax.dynamic_slice(x, (i, 0), (2, x.shape[1])))
    >>> x = np.arange(6, dtype=np.int32).reshape(3, 2)
    >>> rows(x, np.int32(1))        # rows i, i+1
    Array([[2, 3],
           [4, 5]], dtype=int32)
    >>> rows(x, np.int32(5))        # clamped: the last two rows
    Array([[2, 3],
           [4, 5]], dtype=int32)
    """
    x = as_tracer(operand, "dynamic_slice operand")
    sizes = [int(s) for s in slice_sizes]
    if len(sizes) != x.ndim:
        raise TracingError(f"dynamic_slice: expected {x.ndim} slice sizes, got {tuple(sizes)}")
    starts = dynamic_starts(x, start_indices, sizes, "dynamic_slice", allow_negative_indices)
    return slice_at(x, starts, sizes)


def in_dim(operand, index, axis: int, where: str) -> tuple[Tracer, int, list]:
    """(operand, axis, start indices) for the ``*_in_dim`` forms: ``index`` on ``axis``."""
    x = as_tracer(operand, f"{where} operand")
    ax = normalize_axis(axis, x.ndim, where)
    starts = [0] * x.ndim
    starts[ax] = index
    return x, ax, starts


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices=True) -> Tracer:
    """jax.lax.dynamic_slice_in_dim: ``slice_size`` elements from ``start_index`` on ``axis``."""
    x, ax, starts = in_dim(operand, start_index, axis, "dynamic_slice_in_dim")
    sizes = list(x.shape)
    sizes[ax] = int(slice_size)
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices=True) -> Tracer:
    """jax.lax.dynamic_index_in_dim: element ``index`` of ``axis`` (kept as size 1 with
    ``keepdims``)."""
    x, ax, _ = in_dim(operand, index, axis, "dynamic_index_in_dim")
    out = dynamic_slice_in_dim(x, index, 1, ax, allow_negative_indices=allow_negative_indices)
    return out if keepdims else shape_ops.squeeze(out, ax)
