"""numpy's polynomial functions on coefficient arrays (highest power first): ``polyval``,
``polyadd``, ``polysub``, ``polymul``, ``polyder``, ``polyint``, ``polydiv``, ``poly``.

The number of coefficients is a shape, known at trace time, so each is numpy's own
loop unrolled over it. ``polydiv`` keeps the remainder untrimmed (JAX's
``trim_leading_zeros=False``): numpy drops its leading near-zeros, which depends on the
values. ``polyfit`` and ``roots`` need least squares and eigenvalues, which aotc lacks.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, x64
from ..core import Tracer
from ..errors import TracingError, UnsupportedOpError
from .arguments import as_tracer
from .creation import zeros, zeros_like
from .differences import convolve
from .elementwise import astype, ufunc
from .indexing import getitem
from .rearrange import atleast_1d
from .shape import concatenate, ravel, stack

EXPORTS: dict[str, list[str]] = {
    "numpy": ["polyval", "polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv",
              "poly"],
}


def _coefficients(p, where: str) -> Tracer:
    t = atleast_1d(as_tracer(p, where))
    if t.ndim != 1:
        raise TracingError(f"{where}: expected a 1-d array of coefficients, got shape {t.shape}")
    return t


def polyval(p, x) -> Tracer:
    """numpy.polyval: ``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule."""
    coefficients = _coefficients(p, "polyval p")
    y = zeros_like(as_tracer(x, "polyval x"))
    for i in range(coefficients.shape[0]):
        y = ufunc("add", ufunc("multiply", y, x), getitem(coefficients, i))
    return y


def _aligned(ufunc_name: str, a1, a2, where: str) -> Tracer:
    """``a1 op a2`` with the shorter one padded by leading zeros (of its own dtype)."""
    x, y = _coefficients(a1, f"{where} a1"), _coefficients(a2, f"{where} a2")
    gap = y.shape[0] - x.shape[0]
    if gap > 0:
        x = concatenate([zeros((gap,), x.dtype), x])
    elif gap < 0:
        y = concatenate([zeros((-gap,), y.dtype), y])
    return ufunc(ufunc_name, x, y)


def polyadd(a1, a2) -> Tracer:
    """numpy.polyadd: the sum of two polynomials."""
    return _aligned("add", a1, a2, "polyadd")


def polysub(a1, a2) -> Tracer:
    """numpy.polysub: the difference of two polynomials."""
    return _aligned("subtract", a1, a2, "polysub")


def polymul(a1, a2) -> Tracer:
    """numpy.polymul: the product of two polynomials (their convolution)."""
    return convolve(_coefficients(a1, "polymul a1"), _coefficients(a2, "polymul a2"))


def _order(m, where: str) -> int:
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 0:
        raise TracingError(f"{where}: order of derivative/integral m must be a non-negative "
                           f"integer, got {m!r}")
    return int(m)


def polyder(p, m=1) -> Tracer:
    """numpy.polyder: the ``m``-th derivative."""
    y = _coefficients(p, "polyder p")
    for _ in range(_order(m, "polyder")):
        n = y.shape[0] - 1
        y = ufunc("multiply", getitem(y, slice(None, -1)), np.arange(n, 0, -1))
    return y


def polyint(p, m=1, k=None) -> Tracer:
    """numpy.polyint: the ``m``-th antiderivative, with integration constants ``k`` (one,
    or one per integration; default 0)."""
    m = _order(m, "polyint")
    constants = np.zeros(m, float) if k is None else k
    constants = atleast_1d(as_tracer(constants, "polyint k"))
    if constants.shape[0] == 1 and m > 1:
        constants = ufunc("multiply", getitem(constants, 0), np.ones(m, float))
    if constants.shape[0] < m:
        raise TracingError(f"polyint: k must be a scalar or a rank-1 array of length 1 or "
                           f"m = {m}, got length {constants.shape[0]}")
    y = _coefficients(p, "polyint p")
    for i in range(m):
        scaled = ufunc("divide", y, np.arange(y.shape[0], 0, -1))
        y = concatenate([scaled, astype(getitem(constants, slice(i, i + 1)), scaled.dtype)])
    return y


def polydiv(u, v) -> tuple[Tracer, Tracer]:
    """numpy.polydiv: quotient and remainder; the remainder has ``u``'s length, leading
    zeros kept (JAX's ``trim_leading_zeros=False``)."""
    dividend, divisor = _coefficients(u, "polydiv u"), _coefficients(v, "polydiv v")
    dtype = dtypes.result_type(dividend.dtype, divisor.dtype, 1.0)
    rest = astype(dividend, dtype)
    m, n = dividend.shape[0] - 1, divisor.shape[0] - 1
    scale = ufunc("divide", 1.0, astype(getitem(divisor, 0), dtype))
    quotient = []
    for k in range(max(m - n + 1, 0)):
        d = ufunc("multiply", scale, getitem(rest, k))
        quotient.append(d)
        rest = rest.at[k:k + n + 1].add(ufunc("negative", ufunc("multiply", d, divisor)))
    q = stack(quotient) if quotient else zeros((1,), dtype)
    return q, rest


def poly(seq_of_zeros) -> Tracer:
    """numpy.poly: the coefficients of the monic polynomial with the given (real) roots;
    of a square matrix it needs eigenvalues, which aotc lacks."""
    zeros_ = as_tracer(seq_of_zeros, "poly")
    if zeros_.ndim == 2 and zeros_.shape[0] == zeros_.shape[1] and zeros_.shape[0] != 0:
        raise UnsupportedOpError("poly: the characteristic polynomial of a matrix needs its "
                                 "eigenvalues, which aotc cannot compute; pass the roots")
    zeros_ = ravel(zeros_)
    # numpy: mintypecode, float32 stays, every other dtype computes in float64
    dtype = np.dtype(np.float32 if zeros_.dtype == np.float32 else x64.default_float())
    a = as_tracer(np.ones(1, dtype), "poly")
    for i in range(zeros_.shape[0]):
        root = astype(getitem(zeros_, slice(i, i + 1)), dtype)
        factor = concatenate([np.ones(1, dtype), ufunc("negative", root)])
        a = convolve(a, factor)
    return a
