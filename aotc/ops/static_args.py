"""The trace-time arguments of the rearranging and creation ops, read with numpy's rules.

Shapes, widths, positions and pad values are static: these helpers check them and
normalize them to numpy values (``static_ints``; ``pad``'s modes, its per-axis
``(before, after)`` pairs and its constants stored as numpy stores them; ``insert``'s
positions), raising ``TracingError`` (or ``UnsupportedOpError`` for numpy features aotc
lacks) with numpy's wording. They build no MLIR: ``aotc.ops.rearrange`` and
``aotc.ops.creation`` lower what they return.
"""

from __future__ import annotations

import numpy as np

from ..core import Tracer
from ..errors import TracingError, UnsupportedOpError
from .arguments import normalize_axis, static_value


def static_ints(value, where: str, what: str) -> np.ndarray:
    """An integer argument known at trace time (a Python int, a sequence, a numpy array)."""
    value = static_value(value, f"{where} {what}")
    array = np.asarray(value)
    if array.size and array.dtype.kind not in "iu":
        raise TracingError(f"{where}: {what} must be integers, got {value!r}")
    return array.astype(np.int64)


def known_value(value, what: str):
    """A value needed at trace time: itself, or for a traced array made from a constant
    (``jnp.array([0.25, 0.75])``) and not written into since, that constant; any other
    traced array raises ``TracingError`` ("{what} must be static ...")."""
    if isinstance(value, Tracer) and value._trace.constant_value(value) is None:
        raise TracingError(f"{what} must be static (a Python value or a numpy array), got a "
                           f"traced array computed in the function; pass it as a static "
                           f"argument")
    return static_value(value, what)


# ---- pad ------------------------------------------------------------------------------

# numpy's modes: those aotc traces (with the keywords each accepts) and the others.
PAD_MODES = {
    "constant": ("constant_values",),
    "empty": (),
    "edge": (),
    "wrap": (),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}
NUMPY_ONLY_PAD_MODES = ("linear_ramp", "maximum", "mean", "median", "minimum")


def pad_pairs(value, ndim: int, where: str, what: str) -> list:
    """numpy's broadcasting of a pad argument to one (before, after) pair per axis.

    As in numpy, one value or one pair gives numpy scalars and longer forms give Python
    scalars (``tolist``), which numpy stores into the array with different overflow
    checks (-1 into uint8: 255 from a numpy scalar, OverflowError from a Python int).
    """
    array = np.asarray(value)
    if array.size == 1:
        return [(array.reshape(1)[0],) * 2] * ndim
    if array.size == 2 and array.shape != (2, 1):
        return [tuple(array.reshape(2))] * ndim
    try:
        return np.broadcast_to(array, (ndim, 2)).tolist()
    except ValueError:
        raise TracingError(
            f"{where}: {what} {value!r} has shape {np.shape(value)}, which does not give one "
            f"(before, after) pair per axis of a {ndim}-d array: pass an int, a pair "
            f"(before, after), or {ndim} pairs"
        ) from None


def pad_widths(pad_width, ndim: int) -> list[tuple[int, int]]:
    """``pad_width`` (an int, a pair, one pair per axis, or a dict ``{axis: width}``) as
    one (before, after) pair of non-negative ints per axis."""
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            both = (width, width) if isinstance(width, (int, np.integer)) else tuple(width)
            seq[normalize_axis(axis, ndim, "pad pad_width")] = both
        pad_width = seq
    widths = static_ints(pad_width, "pad", "pad_width")
    pairs = pad_pairs(widths, ndim, "pad", "pad_width")
    if any(w < 0 for pair in pairs for w in pair):
        raise TracingError(f"pad: pad_width {pad_width!r} has negative widths; widths must be >= 0")
    return [(int(b), int(a)) for b, a in pairs]


def stored_as(value, dtype: np.dtype, where: str):
    """``value`` converted as numpy assigns it into an array of ``dtype``."""
    cell = np.zeros((), dtype)
    try:
        cell[()] = value
    except (TypeError, ValueError, OverflowError) as e:
        shown = value.item() if isinstance(value, np.generic) else value
        raise TracingError(
            f"{where}: {shown!r} cannot be stored in a {dtype.name} array: {e}"
        ) from None
    return cell[()]


def check_pad_mode(mode, kwargs: dict) -> None:
    """Raises unless ``mode`` is one aotc traces and ``kwargs`` are keywords it takes."""
    if callable(mode):
        raise UnsupportedOpError("pad: a function as mode is not supported; use one of "
                                 f"{', '.join(PAD_MODES)}")
    if mode in NUMPY_ONLY_PAD_MODES:
        raise UnsupportedOpError(
            f"pad: mode {mode!r} is not supported by aotc; supported modes are "
            f"{', '.join(PAD_MODES)}"
        )
    if mode not in PAD_MODES:
        raise TracingError(f"pad: mode {mode!r} is not one of numpy's modes: "
                           f"{', '.join(list(PAD_MODES) + list(NUMPY_ONLY_PAD_MODES))}")
    unknown = set(kwargs) - set(PAD_MODES[mode])
    if unknown:
        takes = list(PAD_MODES[mode]) or "none"
        raise TracingError(f"pad: unsupported keyword arguments for mode {mode!r}: "
                           f"{sorted(unknown)} (mode {mode!r} takes {takes})")
    if kwargs.get("reflect_type", "even") != "even":
        raise UnsupportedOpError(f"pad: reflect_type={kwargs['reflect_type']!r} is not supported; "
                                 f"only the default 'even' is")


# ---- insert ---------------------------------------------------------------------------

def insert_positions(obj, n: int, where: str) -> np.ndarray:
    """numpy's index argument of insert: a slice, an int, ints or booleans (static)."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n))
    obj = static_value(obj, f"{where} obj")
    positions = np.asarray(obj)
    if positions.dtype == np.bool_:
        if positions.ndim != 1:
            raise TracingError(f"{where}: a boolean obj must be one dimensional, got shape "
                               f"{positions.shape}")
        return np.flatnonzero(positions)
    if positions.size == 0:
        return positions.astype(np.int64)
    if positions.dtype.kind not in "iu":
        raise TracingError(f"{where}: obj must be integers, a slice or booleans, got {obj!r}")
    if positions.ndim > 1:
        raise TracingError(f"{where}: index array obj must be one dimensional or scalar, "
                           f"got shape {positions.shape}")
    return positions.astype(np.int64)
