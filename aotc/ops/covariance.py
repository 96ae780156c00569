"""``cov`` and ``corrcoef``: numpy's definitions (weighted means, ``ddof``, frequency and
analytic weights), in float64 unless a dtype is given, as numpy computes them."""

from __future__ import annotations

from .. import dtypes, x64
from ..core import Tracer
from ..errors import TracingError
from .arguments import as_tracer
from .contraction import einsum
from .creation import zeros
from .elementwise import astype, clip, elementwise_where, ufunc
from .matrix import diagonal
from .reductions import sum as sum_
from .shape import concatenate, reshape, squeeze, transpose

EXPORTS: dict[str, list[str]] = {"numpy": ["cov", "corrcoef"]}


def _variables(a, dtype, rowvar: bool, where: str) -> Tracer:
    """The observations as a (variables, observations) array of ``dtype``."""
    t = as_tracer(a, where)
    if t.ndim > 2:
        raise TracingError(f"{where}: m has more than 2 dimensions ({t.ndim})")
    t = astype(reshape(t, (1,) * (2 - t.ndim) + t.shape), dtype)
    return transpose(t) if not rowvar and t.shape[0] != 1 else t


def _weights(values, n: int, name: str) -> Tracer | None:
    if values is None:
        return None
    w = astype(as_tracer(values, f"cov {name}"), x64.default_float())
    if w.shape != (n,):
        raise TracingError(f"cov: {name} must be 1-d with one weight per observation ({n}), "
                           f"got shape {w.shape}")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None) -> Tracer:
    """numpy.cov: the covariance matrix of the variables (rows, or columns with
    ``rowvar=False``), ``y``'s appended; squeezed as numpy does."""
    if ddof is not None and ddof != int(ddof):
        raise TracingError(f"cov: ddof must be an integer, got {ddof!r}")
    dtype = (dtypes.result_type(*(as_tracer(v, "cov").dtype for v in (m, y) if v is not None),
                                x64.default_float()) if dtype is None
             else dtypes.canonicalize(dtype, "cov"))
    x = _variables(m, dtype, rowvar, "cov m")
    if x.shape[0] == 0:
        return zeros((0, 0), dtype)
    if y is not None:
        x = concatenate([x, _variables(y, dtype, rowvar, "cov y")], axis=0)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    n = x.shape[1]
    frequency, analytic = _weights(fweights, n, "fweights"), _weights(aweights, n, "aweights")
    w = frequency if analytic is None else (
        analytic if frequency is None else ufunc("multiply", frequency, analytic))
    if w is None:
        mean = ufunc("divide", sum_(x, axis=1, keepdims=True), n)
        fact = float(max(n - ddof, 0))
    else:
        w_sum = sum_(w)
        mean = ufunc("divide", sum_(ufunc("multiply", x, w), axis=1, keepdims=True),
                     astype(w_sum, dtype))
        if ddof == 0:
            fact = w_sum
        elif analytic is None:
            fact = ufunc("subtract", w_sum, ddof)
        else:
            fact = ufunc("subtract", w_sum, ufunc("divide", ufunc("multiply", ddof, sum_(
                ufunc("multiply", w, analytic))), w_sum))
        fact = elementwise_where(ufunc("less_equal", fact, 0), 0.0, fact)
    centered = ufunc("subtract", x, mean)
    weighted = centered if w is None else ufunc("multiply", centered, w)
    c = einsum("io,jo->ij", centered, weighted)
    return squeeze(ufunc("multiply", c, ufunc("divide", 1, astype(as_tracer(fact, "cov"),
                                                                     c.dtype))))


def corrcoef(x, y=None, rowvar=True, *, dtype=None) -> Tracer:
    """numpy.corrcoef: the correlation coefficients (covariances over the standard
    deviations), clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ufunc("divide", c, c)
    stddev = ufunc("sqrt", diagonal(c))
    c = ufunc("divide", c, reshape(stddev, (-1, 1)))
    c = ufunc("divide", c, reshape(stddev, (1, -1)))
    return clip(c, -1, 1)
