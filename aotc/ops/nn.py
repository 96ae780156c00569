"""Neural-network functions with ``jax.nn``'s names and semantics: activations, softmax,
logsumexp, one_hot, normalization, ``dense``; and ``lax.erf``.

They are compositions of aotc's elementwise ops and reductions, so IREE fuses each
activation into the op that produces its input. ``erf`` is one ``linalg.generic``: float32
uses ``math.erf`` (IREE's polynomial), float16 computes in float32, and float64, which
IREE's CPU code cannot lower, uses Cephes' rational approximations (``_erf_f64``).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._mlir import arith, math
from ..core import Tracer
from ..errors import TracingError, UnsupportedDtypeError
from . import elementwise as ew
from .arguments import as_tracer, normalize_axes, normalize_axis
from .contraction import matmul
from .reductions import max as reduce_max
from .reductions import mean as reduce_mean
from .reductions import sum as reduce_sum
from .scalar import _widen_f16, by_kind, cmpf, const, select
from .shape import expand_dims, reshape

EXPORTS: dict[str, list[str]] = {
    "numpy": [],
    "lax": ["erf"],
    "nn": [
        "relu", "relu6", "sigmoid", "silu", "swish", "gelu", "softplus", "leaky_relu", "elu",
        "softmax", "log_softmax", "logsumexp", "one_hot", "standardize", "dense",
        "batch_norm", "layer_norm",
    ],
}

_u = ew.ufunc


# ---- erf ------------------------------------------------------------------------------

def _polynomial(x, coefficients, dt, leading_one: bool = False):
    """Horner's rule; ``leading_one`` prepends a coefficient 1 (Cephes' p1evl)."""
    coefficients = ([1.0] if leading_one else []) + list(coefficients)
    acc = const(coefficients[0], dt)
    for c in coefficients[1:]:
        acc = math.FmaOp(acc, x, const(c, dt)).result
    return acc


# Cephes (ndtr.c) erf on |x| < 1: x T(x^2) / U(x^2); erfc on 1 <= |x| < 8:
# exp(-x^2) P(|x|) / Q(|x|). erf(8) is 1 in float64, so |x| is clamped there.
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
          7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF_U = (3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
          2.26290000613890934246e4, 4.92673942608635921086e4)
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_Q = (1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)


def _erf_f64(dt, x):
    z = arith.MulFOp(x, x).result
    small = arith.DivFOp(arith.MulFOp(x, _polynomial(z, _ERF_T, dt)).result,
                         _polynomial(z, _ERF_U, dt, leading_one=True)).result
    a = arith.MinimumFOp(math.AbsFOp(x).result, const(8.0, dt)).result  # NaN stays NaN
    e = math.ExpOp(arith.NegFOp(arith.MulFOp(a, a).result).result).result
    tail = arith.DivFOp(arith.MulFOp(e, _polynomial(a, _ERFC_P, dt)).result,
                        _polynomial(a, _ERFC_Q, dt, leading_one=True)).result
    large = math.CopySignOp(arith.SubFOp(const(1.0, dt), tail).result, x).result
    return select(cmpf("olt", math.AbsFOp(x).result, const(1.0, dt)), small, large)


def _erf_rule(dt, x):
    return _erf_f64(dt, x) if np.dtype(dt) == np.float64 else math.ErfOp(x).result


_ERF = by_kind(float=_widen_f16(_erf_rule))


def erf(x) -> Tracer:
    """jax.lax.erf: the error function, elementwise, for float arrays."""
    t = as_tracer(x, "erf")
    if not dtypes.is_float(t.dtype):
        raise UnsupportedDtypeError(
            f"erf: expected a float array (as jax.lax.erf), got {t.dtype.name}; convert it "
            f"with .astype(float32) first")
    return ew.elementwise([t], [t.dtype], t.dtype, lambda v: _ERF(t.dtype, v), "erf")


# ---- activations ----------------------------------------------------------------------

def relu(x):
    """jax.nn.relu: max(x, 0)."""
    return _u("maximum", x, 0)


def relu6(x):
    """jax.nn.relu6: min(max(x, 0), 6)."""
    return _u("minimum", _u("maximum", x, 0), 6)


def sigmoid(x):
    """jax.nn.sigmoid: 1 / (1 + exp(-x))."""
    return _u("reciprocal", _u("add", _u("exp", _u("negative", x)), 1.0))


def silu(x):
    """jax.nn.silu (swish): x * sigmoid(x)."""
    return _u("multiply", x, sigmoid(x))


swish = silu


def gelu(x, approximate: bool = True):
    """jax.nn.gelu: the tanh approximation, or with ``approximate=False`` the exact
    x (1 + erf(x / sqrt 2)) / 2."""
    x = _float(x, "gelu")
    if approximate:
        inner = _u("multiply", float(np.sqrt(2 / np.pi)),
                   _u("add", x, _u("multiply", 0.044715, _u("multiply", x, _u("square", x)))))
        return _u("multiply", x, _u("multiply", 0.5, _u("add", 1.0, _u("tanh", inner))))
    return _u("multiply", _u("multiply", 0.5, x),
              _u("add", 1.0, erf(_u("multiply", x, float(np.sqrt(0.5))))))


def softplus(x):
    """jax.nn.softplus: log(1 + exp(x)), as logaddexp(x, 0) (no overflow)."""
    return _u("add", _u("maximum", x, 0), _u("log1p", _u("exp", _u("negative", _u("absolute", x)))))


def leaky_relu(x, negative_slope=1e-2):
    """jax.nn.leaky_relu: x where x >= 0, else negative_slope * x."""
    return ew.elementwise_where(_u("greater_equal", x, 0), x, _u("multiply", negative_slope, x))


def elu(x, alpha=1.0):
    """jax.nn.elu: x where x > 0, else alpha * (exp(x) - 1)."""
    positive = _u("greater", x, 0)
    safe = ew.elementwise_where(positive, 0.0, x)
    return ew.elementwise_where(positive, x, _u("multiply", alpha, _u("expm1", safe)))


def _float(x, where: str) -> Tracer:
    """The argument as a float array: integers promote as numpy's exp does."""
    t = as_tracer(x, where)
    loop = dtypes.ufunc_loop("exp", (t.dtype,))
    return ew.astype(t, loop[0]) if not dtypes.is_float(t.dtype) else t


# ---- softmax and logsumexp ------------------------------------------------------------

def softmax(x, axis=-1):
    """jax.nn.softmax along ``axis`` (an int, a tuple or None): exp(x - max) / sum.
    A row holding +inf gives NaN, as in JAX."""
    x = _float(x, "softmax")
    e = _u("exp", _u("subtract", x, reduce_max(x, axis=axis, keepdims=True)))
    return _u("divide", e, reduce_sum(e, axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    """jax.nn.log_softmax: (x - max) - log(sum(exp(x - max)))."""
    x = _float(x, "log_softmax")
    shifted = _u("subtract", x, reduce_max(x, axis=axis, keepdims=True))
    return _u("subtract", shifted,
              _u("log", reduce_sum(_u("exp", shifted), axis=axis, keepdims=True)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """jax.nn.logsumexp: log(sum(b * exp(a))) without overflow.

    The shift is the maximum where it is finite, else 0, so rows of -inf give -inf and a
    +inf gives +inf, as in JAX. With ``b``, a negative sum gives NaN unless
    ``return_sign=True``, which returns (log|sum|, sign).
    """
    x = _float(a, "logsumexp")
    if b is not None:
        weights = as_tracer(b, "logsumexp b")
        x = ew.elementwise_where(_u("not_equal", weights, 0), x, -np.inf)
    axes = normalize_axes(axis, x.ndim, "logsumexp")
    top = reduce_max(x, axis=axes, keepdims=True)
    top = ew.elementwise_where(_u("isfinite", top), top, 0.0)
    terms = _u("exp", _u("subtract", x, top))
    if b is not None:
        terms = _u("multiply", terms, weights)
    total = reduce_sum(terms, axis=axes, keepdims=keepdims)
    shift = top if keepdims else reshape(top, total.shape)
    out = _u("add", _u("log", _u("absolute", total)), shift)
    if return_sign:
        return out, _u("sign", total)
    if b is not None:
        out = ew.elementwise_where(_u("less", total, 0), np.nan, out)
    return out


# ---- encoding and normalization -------------------------------------------------------

def one_hot(x, num_classes: int, dtype=np.float32, axis=-1):
    """jax.nn.one_hot: a new axis of size ``num_classes`` with 1 at each index; indices
    outside [0, num_classes) give all zeros."""
    t = as_tracer(x, "one_hot")
    if not isinstance(num_classes, (int, np.integer)) or num_classes < 0:
        raise TracingError(f"one_hot: num_classes must be a non-negative int, got {num_classes!r}")
    out_axis = normalize_axis(axis, t.ndim + 1, "one_hot")
    classes_shape = [1] * (t.ndim + 1)
    classes_shape[out_axis] = int(num_classes)
    classes = np.arange(num_classes, dtype=t.dtype if dtypes.kind(t.dtype) != "bool" else np.int64)
    hit = _u("equal", expand_dims(t, out_axis), classes.reshape(classes_shape))
    return ew.astype(hit, dtype)


def _rsqrt(x):
    return _u("reciprocal", _u("sqrt", x))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, *, algorithm="fast"):
    """jax.nn.standardize: (x - mean) / sqrt(variance + epsilon) over ``axis``.

    ``algorithm="fast"`` (JAX's default) computes the variance as mean(x^2) - mean^2
    clipped at 0; ``"stable"`` as mean((x - mean)^2).
    """
    x = _float(x, "standardize")
    m = mean if mean is not None else reduce_mean(x, axis, keepdims=True)
    if variance is None:
        if algorithm == "fast":
            mean_square = reduce_mean(_u("square", x), axis, keepdims=True)
            variance = _u("maximum", _u("subtract", mean_square, _u("square", m)), 0)
        elif algorithm == "stable":
            variance = reduce_mean(_u("square", _u("subtract", x, m)), axis, keepdims=True)
        else:
            raise TracingError("standardize: algorithm must be 'fast' or 'stable', "
                               f"got {algorithm!r}")
    if type(variance) in (int, float):  # a Python number stays weak: x's dtype
        variance = np.asarray(variance, x.dtype)
    return _u("multiply", _u("subtract", x, m), _rsqrt(_u("add", variance, epsilon)))



def dense(x, w, b=None):
    """A fully connected layer: x @ w (+ b)."""
    y = matmul(x, w)
    return y if b is None else _u("add", y, b)


def _along(param, x: Tracer, axes: tuple[int, ...], name: str, where: str):
    """A per-feature parameter shaped to broadcast along ``axes`` of ``x``."""
    p = as_tracer(param, f"{where} {name}")
    feature_shape = tuple(x.shape[a] for a in axes)
    if p.size == 1 and p.ndim <= 1:
        return reshape(p, ())
    if p.shape != feature_shape and not (len(axes) == 1 and p.shape == (p.size,)
                                         and p.size == feature_shape[0]):
        raise TracingError(
            f"{where}: {name} must have shape {feature_shape} (the sizes of axis "
            f"{axes if len(axes) > 1 else axes[0]} of x, shape {x.shape}), got shape {p.shape}")
    return reshape(p, tuple(x.shape[d] if d in axes else 1 for d in range(x.ndim)))


def batch_norm(x, mean, var, scale=None, offset=None, eps=1e-5, axis=-1):
    """Batch normalization at inference: (x - mean) / sqrt(var + eps) * scale + offset,
    with per-feature statistics along ``axis`` (channel-last by default)."""
    x = _float(x, "batch_norm")
    axes = (normalize_axis(axis, x.ndim, "batch_norm"),)
    y = _u("multiply", _u("subtract", x, _along(mean, x, axes, "mean", "batch_norm")),
           _rsqrt(_u("add", _along(var, x, axes, "var", "batch_norm"), eps)))
    return _affine(y, x, axes, scale, offset, "batch_norm")


def layer_norm(x, scale=None, offset=None, axis=-1, eps=1e-5):
    """Layer normalization over ``axis`` (an int or a tuple): (x - mean) / sqrt(var + eps)
    * scale + offset, the variance computed as mean((x - mean)^2)."""
    x = _float(x, "layer_norm")
    axes = normalize_axes(axis, x.ndim, "layer_norm")
    y = standardize(x, axis=axes, epsilon=eps, algorithm="stable")
    return _affine(y, x, axes, scale, offset, "layer_norm")


def _affine(y, x, axes, scale, offset, where: str):
    if scale is not None:
        y = _u("multiply", y, _along(scale, x, axes, "scale", where))
    if offset is not None:
        y = _u("add", y, _along(offset, x, axes, "offset", where))
    return y

