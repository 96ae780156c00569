"""Forward error bounds: how far aotc's value of each program value may be from numpy's.

Every value of a program carries, beside numpy's result, a per-element bound (float64,
0 for exact) and a mask of zeros whose sign is not determined (``loose``: the sign of
``max(-0.0, 0.0)`` or of a sum that cancels depends on an order neither side fixes). A
step's bound comes from its op's kind:

- ``exact``: correctly rounded or no rounding at all (``+``, ``*``, ``/``, ``sqrt``, casts,
  comparisons of exact values, data movement): exact inputs give a result equal bit
  for bit; inexact ones give how far perturbing them moves the result, plus one ulp.
- ``rounded:<k>``: a math function, within ``k`` ulps of numpy's on each side.
- ``linear``: a sum of products (reductions, contractions, convolutions, scans): the
  perturbation of its absolute inputs plus the summation error, ``terms * eps *
  op(|inputs|)``, for any order of summation.
- ``product``: a product of several factors (``prod``, repeated ``.at[].multiply``):
  ``linear``, and where a partial product may underflow to zero, not checked.
- ``move``: data movement whose result elements are input elements (reshape, gather,
  pad, ``.at[].set``): the bounds move with the data (the op applied to the bounds).
- ``max``: results that are some input element chosen by comparisons (``sort``, ``max``
  reductions): every element gets the largest input bound.
- ``discrete``: an integer, boolean or integer-valued result (comparisons, ``floor``,
  ``argmax``, float-to-int casts): the perturbed inputs must give the same result,
  else the step is redrawn (``Unsettled``), and the result is exact.

Perturbing tries every corner (each float operand moved by +bound or -bound, zeros of
loose sign flipped), two random per-element sign patterns and three random points
inside the bounds (a chaotic function, cos of 1e73, shows its spread; an element that
changes completely at a neighbouring float is not checked); a step whose
pattern of NaNs and infinities changes under perturbation is redrawn too.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

SAFETY = 2.0  # perturbation measures a local slope; leave room for curvature


class Unsettled(Exception):
    """The step's result is not pinned down by the bounds of its inputs: redraw it."""


@dataclass
class Value:
    data: Any  # numpy array, or a Python scalar (a program argument)
    bound: Any = 0.0  # float64 array of data's shape, or 0.0 (exact everywhere)
    loose: Any = False  # bool array: zeros of either sign

    @property
    def exact(self) -> bool:
        return not np.any(self.bound) and not np.any(self.loose)

    @property
    def is_float(self) -> bool:
        return np.asarray(self.data).dtype.kind == "f"


def quiet(fn: Callable, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _spacing(out: np.ndarray) -> np.ndarray:
    """One ulp of each element (at the dtype's largest finite value, the ulp below it:
    numpy's spacing there is infinite, and 0 ulps of it NaN: program 46516)."""
    finite = np.abs(np.where(np.isfinite(out), out, 0).astype(out.dtype))
    with np.errstate(over="ignore"):
        up = np.abs(np.spacing(finite))
    below = finite - np.nextafter(finite, np.zeros_like(finite))
    return np.where(np.isinf(up), below, up).astype(np.float64)


def _corner(v: Value, sign, rng) -> Any:
    if not v.is_float or (not np.any(v.bound) and not np.any(v.loose)):
        return v.data
    data = np.asarray(v.data)
    if sign in ("ulp+", "ulp-"):  # the neighbouring float, where the bound allows one
        toward = np.asarray(np.inf if sign == "ulp+" else -np.inf, data.dtype)
        return np.where(np.asarray(v.bound) > 0, np.nextafter(data, toward), data)
    if sign == "random":  # an independent sign per element
        sign = rng.choice([-1.0, 1.0], size=data.shape)
    elif sign == "inside":  # a point inside the box: chaotic functions (cos of 1e73) show
        sign = rng.uniform(-1.0, 1.0, size=data.shape)
    moved = data.astype(np.float64) + sign * np.asarray(v.bound)
    moved = moved.astype(data.dtype)
    if np.any(v.loose):
        flip = np.asarray(v.loose) & (data == 0) & (np.asarray(sign) < 0)
        moved = np.where(flip, -moved, moved)
    return moved


def _trials(fn: Callable, operands: list[Value], rng) -> list[np.ndarray]:
    inexact = [i for i, v in enumerate(operands) if v.is_float and not v.exact]
    signs = list(itertools.product([1.0, -1.0], repeat=len(inexact)))
    signs += [("random",) * len(inexact)] * 2 + [("inside",) * len(inexact)] * 3
    results = []
    for pattern in signs:
        args = [v.data for v in operands]
        for i, s in zip(inexact, pattern):
            args[i] = _corner(operands[i], s, rng)
        results.append(np.asarray(quiet(fn, *args)))
    return results


def _chaotic(fn: Callable, operands: list[Value], out: np.ndarray) -> np.ndarray:
    """Elements that move by half their size or more (or become or stop being NaN or
    infinite) when the inexact operands move to a neighbouring float: cos of sinh(170),
    whose argument's ulp is 3.4 radians, changes completely between neighbours, which
    the corners and random points can all miss. Those are not checked."""
    inexact = [i for i, v in enumerate(operands) if v.is_float and not v.exact]
    found = np.zeros(out.shape, bool)
    for sign in ("ulp+", "ulp-"):
        args = [v.data for v in operands]
        for i in inexact:
            args[i] = _corner(operands[i], sign, None)
        t = np.asarray(quiet(fn, *args))
        if t.shape != out.shape:
            return np.ones(out.shape, bool)
        a, b = out.astype(np.float64), t.astype(np.float64)
        moved = np.abs(b - a) > 0.5 * np.abs(a)
        found |= np.where(np.isfinite(a) & np.isfinite(b), moved,
                          (np.isnan(a) != np.isnan(b)) | (np.isinf(a) != np.isinf(b)))
    return found


def _same_nonfinite(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind != "f":
        return True
    return bool(np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(
        np.where(np.isinf(a), np.sign(a), 0), np.where(np.isinf(b), np.sign(b), 0)))


def _deviation(out: np.ndarray, trials: list[np.ndarray]) -> np.ndarray:
    dev = np.zeros(out.shape, np.float64)
    for t in trials:
        if t.shape != out.shape or not _same_nonfinite(out, t):
            raise Unsettled("perturbing the inputs changes the result's shape or NaNs/infs")
        finite = np.isfinite(out) if out.dtype.kind == "f" else np.ones(out.shape, bool)
        diff = np.abs(t.astype(np.float64) - out.astype(np.float64))
        dev = np.maximum(dev, np.where(finite, diff, 0))
    return dev


def _reaching(operands: list[Value], shape, mask_of: Callable) -> np.ndarray:
    """The result elements an operand element marked by ``mask_of`` may reach: its own
    position for elementwise ops, every element otherwise."""
    reached = np.zeros(shape, bool)
    for v in operands:
        if v.is_float:
            mask = np.asarray(mask_of(v))
            try:
                reached |= np.broadcast_to(mask, shape)
            except ValueError:  # not elementwise
                reached |= bool(mask.any())
    return reached


def _broadcast_inexact(operands: list[Value], shape) -> np.ndarray:
    return _reaching(operands, shape, lambda v: (np.asarray(v.bound) > 0) | np.asarray(v.loose))


def _broadcast_loose(operands: list[Value], shape) -> np.ndarray:
    return _reaching(operands, shape, lambda v: v.loose)


def _operand_magnitude(operands: list[Value], shape) -> np.ndarray:
    """The largest operand magnitude at each result position (elementwise ops), or over
    all operands (reductions, contractions)."""
    magnitude = np.zeros(shape, np.float64)
    for v in operands:
        data = np.abs(np.asarray(v.data).astype(np.float64))
        finite = np.where(np.isfinite(data), data, 0)
        try:
            magnitude = np.maximum(magnitude, np.broadcast_to(finite, shape))
        except ValueError:
            magnitude = np.maximum(magnitude, finite.max(initial=0))
    return magnitude


def _abs_operands(operands: list[Value], plus_bound: bool) -> list:
    out = []
    for v in operands:
        data = np.asarray(v.data)
        if data.dtype.kind in "iuf":  # integers too: the mean of an int array is a float
            a = np.abs(data.astype(np.float64))
            out.append(a + np.asarray(v.bound) if plus_bound and v.is_float else a)
        else:
            out.append(v.data)
    return out


def _clipped(operands: list[Value], side: str) -> list:
    """The operands' finite magnitudes clipped from below at 1 (``high``: a product or
    sum of them bounds every partial one from above) or nonzero ones from above at 1
    (``low``: their product bounds every partial product from below); infinite and
    (for ``low``) zero elements count as 1."""
    out = []
    for v in operands:
        data = np.asarray(v.data)
        if data.dtype.kind not in "iuf":
            out.append(v.data)
            continue
        a = np.abs(data.astype(np.float64))
        if side == "high":
            out.append(np.where(np.isfinite(a), np.maximum(a, 1.0), 1.0))
        else:
            out.append(np.where(np.isfinite(a) & (a > 0), np.minimum(a, 1.0), 1.0))
    return out


def propagate(kind: str, fn: Callable, operands: list[Value], out: np.ndarray, rng,
              terms: int = 1) -> Value:
    """The bound of ``out = fn(*operands)`` for an op of ``kind``."""
    with np.errstate(all="ignore"):
        value = _propagate(kind, fn, operands, np.asarray(out), rng, terms)
    if np.ndim(value.bound):  # inf - inf in a perturbed corner: the element is unverifiable
        value.bound = np.where(np.isnan(value.bound), np.inf, value.bound)
    return value


def _propagate(kind, fn, operands, out, rng, terms) -> Value:
    inputs_exact = all(v.exact for v in operands)
    is_float = out.dtype.kind == "f"
    if kind == "discrete" or not is_float:
        if any(v.is_float and np.any(np.isinf(v.bound)) for v in operands):
            # an unchecked operand element (an overflowing sum: inf or nan) has no
            # perturbation to settle a decision on
            raise Unsettled("a decision on an operand whose value is not pinned down")
        if not inputs_exact:
            for t in _trials(fn, operands, rng):
                nan_equal = out.dtype.kind == "f"
                if t.shape != out.shape or not np.array_equal(t, out, equal_nan=nan_equal):
                    raise Unsettled("perturbing the inputs changes a discrete result")
        if is_float:  # a zero of loose sign stays one (rint(-0.0) is -0.0)
            return Value(out, 0.0, _broadcast_loose(operands, out.shape) & (out == 0))
        return Value(out)
    if kind == "move":
        if inputs_exact:
            return Value(out)
        bound_args = [np.asarray(v.bound, np.float64) * np.ones(np.shape(v.data)) if v.is_float
                      else v.data for v in operands]
        loose_args = [(np.asarray(v.loose) * np.ones(np.shape(v.data))).astype(np.float64)
                      if v.is_float else v.data for v in operands]
        bound = np.asarray(quiet(fn, *bound_args), np.float64)
        loose = np.asarray(quiet(fn, *loose_args), np.float64) > 0
        return Value(out, np.broadcast_to(bound, out.shape).copy(),
                     np.broadcast_to(loose, out.shape).copy())
    if kind == "max":
        worst = max((float(np.max(v.bound, initial=0)) for v in operands if v.is_float), default=0)
        any_loose = any(bool(np.any(v.loose)) for v in operands if v.is_float)
        return Value(out, np.full(out.shape, worst), np.full(out.shape, any_loose) | (out == 0))
    eps = float(np.finfo(out.dtype).eps)
    if kind in ("linear", "product", "mean"):
        # The summation error is within terms * eps of the terms' magnitude: the op of the
        # absolute inputs for sums of products; for differences (x - 1, loops of c*3 - 1)
        # the larger of the result and the operands.
        base = np.abs(np.asarray(quiet(fn, *_abs_operands(operands, False)), np.float64))
        magnitude = np.maximum(np.maximum(base, np.abs(out.astype(np.float64))),
                               _operand_magnitude(operands, out.shape))
        bound = terms * eps * magnitude
        if not inputs_exact:
            dev = _deviation(out, _trials(fn, operands, rng))  # also: NaN/inf settled
            grown = np.asarray(quiet(fn, *_abs_operands(operands, True)), np.float64)
            bound = bound + SAFETY * np.maximum(grown - base, dev)
        bound = np.where(np.isfinite(out), bound, 0) if out.dtype.kind == "f" else bound
        # where a partial result may overflow (the finite terms' magnitudes, at least 1
        # each, exceed out's range) or, in a product, a partial product underflow to zero
        # (the nonzero factors below 1 multiply to zero, or to less than out's smallest
        # normal: times an infinite factor, nan in one order and inf in another;
        # programs 26494, 67680), the result depends on the order
        # and on a product contracted into an fma: the element is not checked (infinite
        # and NaN inputs otherwise give the same inf or nan in any order: those are)
        high = np.abs(np.asarray(quiet(fn, *_clipped(operands, "high")), np.float64))
        if kind == "mean":  # the partial sums, not the mean (program 78357)
            high = high * terms
        checked = high <= float(np.finfo(out.dtype).max)
        if kind == "product":
            # (in out's precision: factors of float32 whose product is 1e-46 in float64
            # have partial products that are zero in float32, program 67680; and below
            # the smallest normal, which IREE's CPU runtime flushes to zero, 77731)
            tiny = float(np.finfo(out.dtype).tiny) if out.dtype.kind == "f" else 0
            checked &= np.abs(np.asarray(quiet(fn, *_clipped(operands, "low")),
                                         np.float64)) > tiny
        bound = np.where(checked, bound, np.inf)
        # nor where an operand element is not checked (aotc's value there may differ,
        # and a sum over it with an infinite term is inf or nan by it: program 50950)
        bound = np.where(_reaching(operands, out.shape,
                                   lambda v: np.isinf(np.asarray(v.bound, np.float64))),
                         np.inf, bound)
        return Value(out, np.broadcast_to(bound, out.shape).copy(), np.ones(out.shape, bool))
    ulps = 0.0 if kind == "exact" else float(kind.split(":")[1])
    bound = ulps * _spacing(out)
    loose = np.zeros(out.shape, bool)
    if not inputs_exact:
        dev = _deviation(out, _trials(fn, operands, rng))
        inexact = _broadcast_inexact(operands, out.shape)
        bound = bound + SAFETY * dev + np.where(inexact | (dev > 0), _spacing(out), 0)
        # where rounding the inputs moves the result by half its size (cos of a huge
        # argument), perturbation cannot bound it: the element is not checked; nor where
        # an operand element is not checked (an overflowing sum: inf, or nan from
        # inf - inf, in an order numpy's and aotc's sums need not share)
        bound = np.where(SAFETY * dev > 0.5 * np.abs(out.astype(np.float64)), np.inf, bound)
        bound = np.where(_chaotic(fn, operands, out), np.inf, bound)
        unchecked = _reaching(operands, out.shape,
                              lambda v: np.isinf(np.asarray(v.bound, np.float64)))
        bound = np.where(unchecked, np.inf, bound)
        loose = inexact & (out == 0)
    return Value(out, bound, loose)


def subnormal(out) -> bool:
    out = np.asarray(out)
    if out.dtype.kind != "f":
        return False
    mag = np.abs(out[np.isfinite(out)])
    return bool(np.any((mag > 0) & (mag < np.finfo(out.dtype).tiny)))


def disagreement(got, want: Value) -> str | None:
    """None if ``got`` (aotc's) is within ``want``'s bound of numpy's value, else why not."""
    with np.errstate(all="ignore"):
        return _disagreement(np.asarray(got), np.asarray(want.data), want)


def _disagreement(got, ref, want: Value) -> str | None:
    if got.dtype != ref.dtype:
        return f"dtype {got.dtype}, numpy gives {ref.dtype}"
    if got.shape != ref.shape:
        return f"shape {got.shape}, numpy gives {ref.shape}"
    if ref.dtype.kind != "f":
        bad = got != ref
    else:
        bound = np.broadcast_to(np.asarray(want.bound, np.float64), ref.shape)
        loose = np.broadcast_to(np.asarray(want.loose), ref.shape)
        g, r = got.astype(np.float64), ref.astype(np.float64)
        nonfinite = ~np.isfinite(r) & ~np.isinf(bound)
        bad = nonfinite & ~((np.isnan(g) & np.isnan(r)) | (g == r))
        finite = np.isfinite(r)
        # an unchecked element (infinite bound) may be anything, NaN included
        far = finite & ~np.isinf(bound) & ~(np.abs(g - r) <= bound)
        sign = finite & (bound == 0) & ~loose & (r == 0) & (np.signbit(g) != np.signbit(r))
        bad = bad | far | sign
    if not np.any(bad):
        return None
    where = tuple(int(i) for i in np.argwhere(np.asarray(bad))[0]) if ref.ndim else ()
    g_at, r_at = got[where] if got.ndim else got, ref[where] if ref.ndim else ref
    b_at = np.broadcast_to(np.asarray(want.bound), ref.shape)[where] if ref.dtype.kind == "f" else 0
    return (f"{int(np.sum(bad))} of {ref.size} elements differ; first at {where}: aotc {g_at!r}, "
            f"numpy {r_at!r} (bound {float(b_at):.3g})")
