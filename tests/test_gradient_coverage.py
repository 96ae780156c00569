"""Every differentiable public function has a gradient test: the functions the other
gradient tests (test_autodiff.py and the *_derivatives.py files) leave out are checked
here, and ``test_every_differentiable_function_is_covered`` fails when a public function
is in none of the tables and not listed as non-differentiable with its reason.

The checks are JAX's ``check_grads`` in float64: reverse mode against central finite
differences of the same function, forward mode against the finite differences along a
random direction and against reverse mode (the transposition check), and both against
``jax.grad`` where installed. Each table is one compiled program. The function's values at
the finite-difference points come from JAX (x64, all perturbations in one vmapped call)
for the cases JAX has, and from aotc (the same, vmapped) for the others, or for all
without JAX: aotc's forward values are the op tests' subject, and the batched forward of
every case was over a third of a table's IREE compile ("selection": 43 s against 27 s)."""

from __future__ import annotations

import importlib
import linecache
import re
from typing import NamedTuple

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
import aotc.scipy.linalg
from aotc.supported import NAMESPACES, import_optional, public_functions

from tests.gradient_checks import jax, reference

if jax is not None:
    import jax.numpy as jnp
    import jax.scipy.linalg


class Namespaces(NamedTuple):
    """What a case calls, so that one lambda runs on aotc and on JAX."""
    np: object
    linalg: object
    fft: object
    sl: object  # scipy.linalg
    lax: object
    lalg: object  # lax.linalg
    nn: object
    random: object


AOTC = Namespaces(anp, anp.linalg, anp.fft, aotc.scipy.linalg, aotc.lax, aotc.lax.linalg,
                  aotc.nn, aotc.random)
JAX = None if jax is None else Namespaces(jnp, jnp.linalg, jnp.fft, jax.scipy.linalg, jax.lax,
                                          jax.lax.linalg, jax.nn, jax.random)

RNG = np.random.default_rng(23)
A = RNG.uniform(0.2, 0.8, (3, 4))
B = RNG.uniform(0.2, 0.8, (1, 4))
W = RNG.uniform(0.5, 1.5, (3, 4))
SQUARE = RNG.uniform(0.5, 1.5, (3, 3))
DIRECTION = (RNG.standard_normal(A.shape), RNG.standard_normal(B.shape))
EPS = 1e-6


def _spd(m, a):
    """A symmetric positive definite 3x3 matrix made from a's first three columns."""
    s = a[:, :3] + m.np.swapaxes(a[:, :3], 0, 1)
    return s @ s + 3 * m.np.eye(3)


def _nans(m, a, x):
    """x with NaN where a > 0.7 (the nan-reductions skip them: no gradient there). The
    NaNs enter last: a NaN multiplied by b would give NaN * 0 in b's gradient, in JAX
    too."""
    return m.np.where(a > 0.7, np.nan, x)


def _w(m, x):
    """A scalar of x that weighs each position differently, quadratic (a transcendental
    here, in every case, made the tables' compiles 2x slower)."""
    return m.np.sum((x + m.np.arange(1.0, x.size + 1).reshape(x.shape)) * x)


def _each(m, xs, first=lambda x: x):
    """The sum of ``_w`` of each result of a factorization, the first through ``first``
    (``v ** 2``: an eigenvector's sign is free)."""
    return _w(m, first(xs[0])) + sum(_w(m, x) for x in xs[1:])


def _parts(m, x):
    """A scalar of a complex x: both parts, each weighed per position."""
    return _w(m, m.np.real(x)) + _w(m, m.np.imag(x)) * 0.5


def _square_from(m, a, b):
    """A well-conditioned [4, 4] matrix made from a and b."""
    return m.np.concatenate([a, b]) + 2 * m.np.eye(4)


def _mutated(m, a, b, update):
    """``update(x)`` applied in place to a copy of a * 1.5 (numpy's in-place functions),
    then weighed."""
    x = m.np.copy(a * 1.5)
    update(x, b)
    return _w(m, x)


# f(m, a, b) -> scalar; a: [3, 4] and b: [1, 4], both in (0.2, 0.8).
TABLES = {
    "elementwise": {
        "absolute, fabs, positive, negative": lambda m, a, b: m.np.sum(W * (
            m.np.absolute(a - 0.5) + m.np.fabs(b - 0.5) * m.np.positive(a)
            + m.np.negative(a) * b)),
        "array-api trig names": lambda m, a, b: m.np.sum(
            m.np.acos(a) + m.np.asin(a) * b + m.np.atan(a) + m.np.atan2(a, b)
            + m.np.acosh(a + 1) + m.np.asinh(a) * W + m.np.atanh(a * b)),
        "angles": lambda m, a, b: m.np.sum(W * (m.np.deg2rad(a) + m.np.degrees(a) * b
                                               + m.np.rad2deg(b) + m.np.radians(a) ** 2)),
        "arithmetic names": lambda m, a, b: m.np.sum(
            W * m.np.add(a, m.np.multiply(a, b)) + m.np.subtract(a, b) ** 2
            + m.np.divide(a, b + 1) + m.np.true_divide(b, a)),
        "powers": lambda m, a, b: m.np.sum(W * (m.np.power(a, b) + m.np.pow(a, 2.5)
                                               + m.np.float_power(b, a))),
        "logaddexp": lambda m, a, b: m.np.sum(W * (m.np.logaddexp(a, b)
                                                  + m.np.logaddexp2(a, b * 2))),
        "sinc, i0": lambda m, a, b: m.np.sum(W * (m.np.sinc(a * 3) + m.np.i0(a * 2 + b))),
        "copysign, ldexp": lambda m, a, b: m.np.sum(W * (m.np.copysign(a, b - 0.5)
                                                        + m.np.ldexp(a, 3) * b)),
        "remainders": lambda m, a, b: m.np.sum(W * (
            m.np.mod(a * 5, b + 1) + m.np.remainder(a * 3, b) + m.np.fmod(a * 7, b + 0.5)
            + m.np.divmod(a * 4, b + 0.3)[1] * 2 + m.np.modf(a * 3)[0] * 3)),
        # zero almost everywhere; the product with a keeps a non-zero total
        "piecewise constant": lambda m, a, b: m.np.sum(W * a * (
            m.np.ceil(a * 4) + m.np.trunc(a * 4) + m.np.rint(a * 4) + m.np.around(a * 4, 1)
            + m.np.floor_divide(a * 5, b) + m.np.sign(a - 0.5)
            + m.np.heaviside(a - 0.5, 0.5))),
        "fix": lambda m, a, b: m.np.sum(W * a * m.np.fix(a * 3 - 1)),
        "fmax, fmin, nan_to_num": lambda m, a, b: m.np.sum(W * (
            m.np.fmax(a, b) + m.np.fmin(a * 2, b) + m.np.nan_to_num(m.np.log(a - 0.5)))),
    },
    "reductions": {
        "amax, amin, ptp": lambda m, a, b: m.np.sum(m.np.amax(a * W, axis=0) * b)
        + m.np.amin(a) + m.np.ptp(a * W, axis=1).sum(),
        "average": lambda m, a, b: m.np.sum(m.np.average(a, axis=1, weights=b[0]) * W[:, 0])
        + m.np.average(a * W),
        "median, percentile, quantile": lambda m, a, b: m.np.sum(m.np.median(a * W, axis=1))
        + m.np.percentile(a * b, 30) + m.np.sum(m.np.quantile(a, m.np.array([0.2, 0.7]),
                                                              axis=0) * b),
        "nan sums and moments": lambda m, a, b: m.np.nansum(_nans(m, a, a * W))
        + m.np.nanmean(_nans(m, a, a * b)) + m.np.nanstd(_nans(m, a, a * b))
        + m.np.sum(m.np.nanvar(_nans(m, a, a), axis=1) * W[:, 0])
        + m.np.sum(m.np.nanprod(_nans(m, a, a), axis=0) * b),
        "nan extrema and order statistics": lambda m, a, b: m.np.sum(
            m.np.nanmax(_nans(m, a, a * W), axis=0) * b) + m.np.nanmin(_nans(m, a, a * W))
        + m.np.nanmedian(_nans(m, a, a * W)) + m.np.nanpercentile(_nans(m, a, a * b), 40)
        + m.np.sum(m.np.nanquantile(_nans(m, a, a), 0.6, axis=1) * W[:, 1]),
        "nan cumulative": lambda m, a, b: m.np.sum(
            W * m.np.nancumsum(_nans(m, a, a * b), axis=1))
        + m.np.sum(W * m.np.nancumprod(_nans(m, a, a + b), axis=0)),
        "cumulative_sum, cumulative_prod": lambda m, a, b: m.np.sum(
            W * m.np.cumulative_sum(a * b, axis=1)) + m.np.sum(
            W * m.np.cumulative_prod(a + b, axis=0)),
        "cov, corrcoef": lambda m, a, b: m.np.sum(SQUARE * m.np.cov(a * W))
        + m.np.sum(SQUARE * m.np.corrcoef(a + b)),
        "diff, ediff1d, gradient, trapezoid": lambda m, a, b: m.np.sum(
            W[:, 1:] * m.np.diff(a * b, axis=1) ** 2) + m.np.sum(m.np.ediff1d(a) ** 2)
        + m.np.sum(W * m.np.gradient(a * a, axis=1)) + m.np.sum(m.np.trapezoid(a, axis=1))
        + m.np.trapezoid(b[0], x=m.np.cumsum(a[0])),
    },
    "numerical": {
        "interp": lambda m, a, b: m.np.sum(W[0] * m.np.interp(
            b[0] * 2 + 0.3, m.np.cumsum(a[0]), a[1] * W[1])),
        "unwrap": lambda m, a, b: m.np.sum(W * m.np.unwrap(a * 8 * b, axis=1)),
        "convolve, correlate": lambda m, a, b: m.np.sum(
            m.np.arange(7.0) * m.np.convolve(a[0], b[0])) + m.np.sum(
            m.np.arange(5.0) * m.np.correlate(a[1], b[0, :2], "full")),
        "products": lambda m, a, b: m.np.sum(W[:, :3] * m.np.cross(a[:, :3], b[:, :3]))
        + m.np.sum(m.np.kron(a[:2, :2], b) ** 2) + m.np.vdot(a, W)
        + m.np.sum(m.np.vecdot(a, b) * W[:, 0]) + m.np.sum(m.np.matvec(a, b[0]) ** 2)
        + m.np.sum(m.np.vecmat(b[0, :3], a) * W[0]),
        "polynomials": lambda m, a, b: m.np.sum(m.np.poly(a[0]) * W[1, :] .sum())
        + m.np.sum(m.np.polyval(a[0], b[0]) * W[0]) + m.np.sum(
            m.np.polyadd(a[0], b[0, :2]) * W[2]) + m.np.sum(m.np.polysub(a[1], b[0]) ** 2)
        + m.np.sum(m.np.polymul(a[0], b[0]) ** 2) + m.np.sum(m.np.polyder(a[2]) * W[0, :3])
        + m.np.sum(m.np.polyint(a[1]) * m.np.arange(5.0)),
        "polydiv": lambda m, a, b: m.np.sum(m.np.polydiv(a[0], b[0, :2] + 1)[0] * W[0, :3])
        + m.np.sum(m.np.polydiv(a[1], b[0, :3] + 1)[1] ** 2),
        "vander": lambda m, a, b: m.np.sum(W * m.np.vander(a[:, 0] + b[0, :3], 4)),
    },
    "arrays": {
        "splits": lambda m, a, b: _w(m, m.np.array_split(a, 2, axis=1)[0])
        + _w(m, m.np.hsplit(a, 2)[1] * b[:, :2]) + _w(m, m.np.vsplit(a, 3)[2] * b)
        + _w(m, m.np.dsplit(a.reshape(3, 2, 2), 2)[1]) + _w(m, m.np.split(a, 2, axis=1)[0])
        + _w(m, m.np.unstack(a)[1] * b[0]),
        "stacks": lambda m, a, b: _w(m, m.np.hstack([a, a[:, :1] * b[0, :1]]))
        + _w(m, m.np.vstack([a, b])) + _w(m, m.np.dstack([a, a * b]))
        + _w(m, m.np.column_stack([a[:, 0], b[0, :3]])) + _w(m, m.np.concat([a, b]))
        + _w(m, m.np.block([[a], [b]])) + _w(m, m.np.append(a, b)),
        "atleast": lambda m, a, b: _w(m, m.np.atleast_1d(a[0, 0] * b[0, 0]))
        + _w(m, m.np.atleast_2d(b[0])) + _w(m, m.np.atleast_3d(a * b)),
        "axes": lambda m, a, b: _w(m, m.np.moveaxis(a[None] * b, 0, 2))
        + _w(m, m.np.rollaxis(a, 1)) + _w(m, m.np.permute_dims(a * b, (1, 0)))
        + _w(m, m.np.matrix_transpose(a)) + _w(m, m.np.expand_dims(a, 1))
        + _w(m, m.np.squeeze(b)) + _w(m, m.np.rot90(a * b)) + _w(m, m.np.fliplr(a))
        + _w(m, m.np.flipud(a * b)),
        "resize, delete, insert": lambda m, a, b: _w(m, m.np.resize(a, (2, 7)))
        + _w(m, m.np.delete(a * b, 1, axis=1)) + _w(m, m.np.insert(a, 1, b[0, :3], axis=1)),
        "diag, diagflat, tril, triu": lambda m, a, b: _w(m, m.np.diag(a)) + _w(m, m.np.diag(b[0]))
        + _w(m, m.np.diagflat(a[0] * b[0])) + _w(m, m.np.tril(a)) + _w(m, m.np.triu(a * b, 1)),
        "broadcast_arrays, meshgrid": lambda m, a, b: _w(
            m, m.np.broadcast_arrays(a, b)[1] * m.np.broadcast_arrays(a, b)[0])
        + _w(m, m.np.meshgrid(a[0], b[0, :3])[0] * m.np.meshgrid(a[0], b[0, :3])[1]),
        "copies and casts": lambda m, a, b: _w(m, m.np.copy(a) * b) + _w(m, m.np.asarray(a))
        + _w(m, m.np.array(a * b)) + _w(m, m.np.astype(a, np.float64)) + _w(m, m.np.ravel(a)),
        "swapaxes, inner, conjugate": lambda m, a, b: _w(m, m.np.swapaxes(a * b, 0, 1))
        + _w(m, m.np.inner(a, b)) + _w(m, m.np.conjugate(a)),
        "flatten": lambda m, a, b: _w(m, m.np.flatten(a * b)),
    },
    "selection": {
        "choose": lambda m, a, b: _w(m, m.np.choose(
            np.array([[0, 1, 2, 0], [1, 2, 0, 1], [2, 0, 1, 2]]), [a, a * b, a + b],
            mode="clip")),
        "compress, extract": lambda m, a, b: _w(m, m.np.compress(
            np.array([True, False, True]), a * b, axis=0))
        + _w(m, m.np.extract(np.arange(12).reshape(3, 4) % 3 == 0, a)),
        "select, piecewise": lambda m, a, b: _w(m, m.np.select([a > 0.5, a < 0.3],
                                                               [a * b, a ** 2], b))
        + _w(m, m.np.piecewise(a, [a < 0.4, a > 0.6],
                               [lambda x: x ** 2, lambda x: x * 3, lambda x: -x])),
        # the order inside each side of the partition is unspecified: weighed as a whole
        "partition": lambda m, a, b: m.np.sum(m.np.partition(a * W, 2, axis=1)[:, 2] * 3)
        + m.np.sum(m.np.partition(a * W, 2, axis=1)[:, :2] ** 2)
        + m.np.sum(m.np.partition(a * b, 1, axis=0)[1:] ** 3),
        "sets": lambda m, a, b: _w(m, m.np.unique(a * b, size=12))
        + _w(m, m.np.unique_values(a, size=12)) + _w(m, m.np.unique_all(a[0], size=4)[0])
        + _w(m, m.np.unique_counts(a[1] * b[0], size=4)[0])
        + _w(m, m.np.unique_inverse(a[2], size=4)[0])
        + _w(m, m.np.union1d(a[0], b[0], size=8)) + _w(m, m.np.intersect1d(a[0], a[0] * b[0],
                                                                             size=4))
        + _w(m, m.np.setdiff1d(a[0], b[0], size=4)) + _w(m, m.np.setxor1d(a[0], b[0], size=8)),
        "sort_complex": lambda m, a, b: _parts(m, m.np.sort_complex(a[0] * b[0])),
        "put, put_along_axis": lambda m, a, b: _w(m, m.np.put(
            a * 1.5, np.array([0, 5, 7]), b[0, :3], inplace=False))
        + _w(m, m.np.put_along_axis(a * 1.5, np.array([[1], [3], [0]]), b[0, :3, None],
                                    axis=1, inplace=False)),
        "place, putmask, copyto": lambda m, a, b: _mutated(
            m, a, b, lambda x, b: m.np.place(x, x > 0.8, b[0, :2] * 3))
        + _mutated(m, a, b, lambda x, b: m.np.putmask(x, x < 0.5, x * b))
        + _mutated(m, a, b, lambda x, b: m.np.copyto(x, b * 2, where=x > 0.6)),
        "fill_diagonal": lambda m, a, b: _w(m, m.np.fill_diagonal(a * 1.5, b[0, 1] * 2,
                                                                  inplace=False)),
    },
    "constructors": {
        "ranges": lambda m, a, b: _w(m, m.np.linspace(a[0, 0], b[0, 0] + 1, 5))
        + _w(m, m.np.logspace(a[0, 0], b[0, 1], 4))
        + _w(m, m.np.geomspace(a[0, 0], b[0, 2] + 1, 4)),
        "full, full_like, zeros_like, ones_like": lambda m, a, b: _w(
            m, m.np.full((2, 3), a[0, 0]) * b[0, :3]) + _w(m, m.np.full_like(a, b[0, 1]) * a)
        + _w(m, m.np.zeros_like(a) + m.np.ones_like(a) * a),
        "histogram_bin_edges": lambda m, a, b: _w(m, m.np.histogram_bin_edges(a * b, 4)),
        # the random bits are JAX's: the same samples, so the same gradients
        "random": lambda m, a, b: _w(m, m.random.uniform(m.random.PRNGKey(3), (3, 4),
                                                         np.float64, a * 0.5, a + b))
        + _w(m, m.random.permutation(m.random.PRNGKey(4), a * b)),
        "random choice": lambda m, a, b: _w(m, m.random.choice(m.random.PRNGKey(5),
                                                               a[0] * b[0], (3,))),
    },
    "linalg": {
        "norms": lambda m, a, b: m.linalg.vector_norm(a * b, ord=3)
        + m.linalg.matrix_norm(a) + m.linalg.matrix_norm(a * b, ord=1),
        "products": lambda m, a, b: _w(m, m.linalg.matmul(a, a.T))
        + _w(m, m.linalg.outer(a[0], b[0])) + m.linalg.tensordot(a, a * b, axes=2)
        + _w(m, m.linalg.vecdot(a, b)) + _w(m, m.linalg.diagonal(a))
        + m.linalg.trace(a[:, :3] * b[:, :3]) + _w(m, m.linalg.cross(a[:, :3], b[:, :3]))
        + _w(m, m.linalg.multi_dot([a, a.T * b[0, :3], a])),
        "matrix_power": lambda m, a, b: _w(m, m.linalg.matrix_power(_square_from(m, a, b), 3))
        + _w(m, m.linalg.matrix_power(_square_from(m, a, b), -2)),
        "tensorinv, tensorsolve": lambda m, a, b: _w(m, m.linalg.tensorinv(
            _square_from(m, a, b).reshape(2, 2, 4), ind=2))
        + _w(m, m.linalg.tensorsolve(_square_from(m, a, b).reshape(2, 2, 2, 2),
                                     b[0].reshape(2, 2))),
    },
    "fft": {
        "real transforms": lambda m, a, b: _w(m, m.fft.irfft(m.fft.rfft(a * b, axis=1) * W[:, :3]))
        + _w(m, m.fft.hfft(a[0] * b[0])) + _parts(m, m.fft.ihfft(a[1])),
        "2-d and n-d": lambda m, a, b: _parts(m, m.fft.fft2(a * b)) + _parts(m, m.fft.ifft2(a))
        + _parts(m, m.fft.rfft2(a)) + _w(m, m.fft.irfft2(m.fft.rfft2(a) * W[:, :3]))
        + _parts(m, m.fft.fftn(a * b)) + _parts(m, m.fft.ifftn(a, axes=(0,)))
        + _parts(m, m.fft.rfftn(a * b)) + _w(m, m.fft.irfftn(m.fft.rfftn(a) * b[:, :3])),
        "shifts": lambda m, a, b: _w(m, m.fft.fftshift(a * b)) + _w(m, m.fft.ifftshift(a, axes=1)),
    },
    "scipy.linalg": {
        "cholesky, inv, det": lambda m, a, b: _w(m, m.sl.cholesky(_spd(m, a)))
        + _w(m, m.sl.inv(_square_from(m, a, b))) + m.sl.det(_square_from(m, a, b)),
        # each factorization once (its derivative is the dear part of the compile)
        "qr, svd": lambda m, a, b: _each(m, m.sl.qr(_square_from(m, a, b)))
        + _each(m, m.sl.svd(a * b, full_matrices=False)[:2], lambda u: u ** 2),
        "svdvals": lambda m, a, b: _w(m, m.sl.svdvals(a * b)),
    },
    "lax elementwise": {
        "unary": lambda m, a, b: _w(m, m.lax.abs(a - 0.5) + m.lax.acos(a) + m.lax.acosh(a + 1)
                                    + m.lax.asin(a) + m.lax.asinh(a) + m.lax.atan(a)
                                    + m.lax.atanh(a) + m.lax.cbrt(a) + m.lax.cos(a)
                                    + m.lax.cosh(a) + m.lax.erf(a) + m.lax.exp(a)
                                    + m.lax.exp2(a) + m.lax.expm1(a) + m.lax.log(a)
                                    + m.lax.log1p(a) + m.lax.logistic(a) + m.lax.neg(a)),
        "more unary": lambda m, a, b: _w(m, m.lax.reciprocal(a) + m.lax.rsqrt(a) + m.lax.sin(a)
                                         + m.lax.sinh(a) + m.lax.sqrt(a) + m.lax.square(a)
                                         + m.lax.tan(a) + m.lax.tanh(a)
                                         + m.lax.integer_pow(a, 3) + m.lax.sign(a - 0.5) * a
                                         + m.lax.round(a * 4) * a + m.lax.floor(a * 4) * a
                                         + m.lax.ceil(a * 4) * a
                                         + m.lax.convert_element_type(a, np.float64)),
        "binary": lambda m, a, b: _w(m, m.lax.add(a, _bb(m, b)) * m.lax.sub(a, _bb(m, b))
                                     + m.lax.mul(a, _bb(m, b)) + m.lax.div(a, _bb(m, b))
                                     + m.lax.max(a, _bb(m, b)) + m.lax.min(a, _bb(m, b) * 2)
                                     + m.lax.rem(a * 3, _bb(m, b)) + m.lax.pow(a, _bb(m, b))
                                     + m.lax.atan2(a, _bb(m, b))),
        "choices": lambda m, a, b: _w(m, m.lax.clamp(0.3, a, 0.6)
                                      + m.lax.select(a > 0.5, a, _bb(m, b))
                                      + m.lax.select_n(a > 0.5, a * a, _bb(m, b) * 2)),
    },
    "lax arrays": {
        "shapes": lambda m, a, b: _w(m, m.lax.broadcast(b[0], (2,)))
        + _w(m, m.lax.broadcast_in_dim(b[0], (3, 4), (1,)) * a)
        + _w(m, m.lax.concatenate([a, b], 0)) + _w(m, m.lax.expand_dims(a, (0,)))
        + _w(m, m.lax.reshape(a * b, (4, 3))) + _w(m, m.lax.rev(a, (0, 1)))
        + _w(m, m.lax.squeeze(b, (0,))) + _w(m, m.lax.transpose(a * b, (1, 0)))
        + _w(m, m.lax.pad(a, 0.5, [(1, 0, 1), (0, 2, 0)])),
        "slices": lambda m, a, b: _w(m, m.lax.slice(a * b, (0, 1), (3, 4), (2, 1)))
        + _w(m, m.lax.slice_in_dim(a, 1, 3, axis=1)) + _w(m, m.lax.index_in_dim(a, 1, axis=0))
        + _w(m, m.lax.dynamic_slice(a * b, (1, 0), (2, 3)))
        + _w(m, m.lax.dynamic_slice_in_dim(a, 1, 2, axis=1))
        + _w(m, m.lax.dynamic_index_in_dim(a * b, 2, axis=1)),
        "updates": lambda m, a, b: _w(m, m.lax.dynamic_update_slice(a, b[:, :2] * 3, (1, 1)))
        + _w(m, m.lax.dynamic_update_slice_in_dim(a * b, b, 2, axis=0))
        + _w(m, m.lax.dynamic_update_index_in_dim(a, b * 2, 1, 0)),
        "full": lambda m, a, b: _w(m, m.lax.full((2, 2), a[0, 0] * b[0, 0]))
        + _w(m, m.lax.full_like(a, b[0, 1]) * a),
        "reductions": lambda m, a, b: _w(m, m.lax.reduce_sum(a * b, (1,)))
        + _w(m, m.lax.reduce_max(a * W, (0,))) + m.lax.reduce_min(a * b, (0, 1))
        + _w(m, m.lax.reduce_prod(a, (1,)))
        + _w(m, m.lax.reduce_window(a * b, 0.0, m.lax.add, (2, 2), (1, 1), "VALID"))
        + _w(m, m.lax.reduce_window(a * W, -np.inf, m.lax.max, (2, 1), (1, 1), "VALID")),
        "cumulative": lambda m, a, b: _w(m, m.lax.cumsum(a * b, axis=1))
        + _w(m, m.lax.cumprod(a, axis=0, reverse=True)) + _w(m, m.lax.cummin(a * W, axis=1)),
        "contractions": lambda m, a, b: _w(m, m.lax.dot(a, a.T * b[0, :3]))
        + _w(m, m.lax.dot_general(a, a * b, (((1,), (1,)), ((), ())))),
        "convolutions": lambda m, a, b: _w(m, m.lax.conv(a[None, None], b[None, None, :, :2],
                                                         (1, 1), "SAME"))
        + _w(m, m.lax.conv_general_dilated(a[None, None] * b, a[None, None, :2, :2], (1, 2),
                                           "VALID", rhs_dilation=(2, 1)))
        + _w(m, m.lax.conv_with_general_padding(a[None, None], b[None, None, :, :3], (1, 1),
                                                [(0, 0), (1, 1)], (1, 1), (1, 1))),
        "sorting": lambda m, a, b: _w(m, m.lax.sort(a * W, dimension=1))
        + _w(m, m.lax.sort_key_val(a[0] * b[0], a[1] * b[0])[1])
        + _w(m, m.lax.sort_key_val(a[0] * b[0], a[1])[0]) + _w(m, m.lax.top_k(a * W, 2)[0]),
    },
    "lax.linalg and nn": {
        "lax.linalg": lambda m, a, b: _w(m, m.lalg.cholesky(_spd(m, a * b)))
        + _each(m, m.lalg.eigh(_spd(m, a * b)), lambda v: v ** 2)
        + _w(m, m.lalg.lu(_square_from(m, a, b))[0])
        + _w(m, m.lalg.qr(_square_from(m, a, b))[1])
        + _w(m, m.lalg.svd(a * b, full_matrices=False)[1])
        + _w(m, m.lalg.triangular_solve(_square_from(m, a, b), a * b, left_side=False,
                                        lower=True)),
        "activations": lambda m, a, b: _w(m, m.nn.elu(a - 0.5) + m.nn.gelu(a)
                                          + m.nn.leaky_relu(a - 0.5) + m.nn.relu(a - 0.5) * b
                                          + m.nn.relu6(a * 16 - 5) + m.nn.sigmoid(a * b)
                                          + m.nn.silu(a) + m.nn.swish(a * b)
                                          + m.nn.softplus(a)),
        "softmax family": lambda m, a, b: _w(m, m.nn.log_softmax(a * b, axis=1))
        + _w(m, m.nn.softmax(a, axis=0)) + _w(m, m.nn.logsumexp(a * W, axis=1))
        + _w(m, m.nn.standardize(a * b, axis=1)),
        "layers": lambda m, a, b: _w(m, m.nn.dense(a, a.T, b[0, :3]))
        + _w(m, m.nn.layer_norm(a * b, b[0], W[0]))
        + _w(m, m.nn.batch_norm(a, b[0], b[0] + 1, W[1], W[2])),
        "pooling": lambda m, a, b: _w(m, m.nn.avg_pool((a * b)[None, :, :, None], (2, 2)))
        + _w(m, m.nn.max_pool((a * W)[None, :, :, None], (2, 3), strides=(1, 1))),
    },
}


def _bb(m, b):
    """b broadcast to a's shape (lax's binary ops take equal shapes)."""
    return m.np.broadcast_to(b, (3, 4))


def _points(a, b):
    """The central-difference points: each coordinate of (a, b) moved by +EPS, then each
    by -EPS, as two stacked batches."""
    flat = np.concatenate([a.ravel(), b.ravel()])
    moves = np.concatenate([np.eye(flat.size), -np.eye(flat.size)]) * EPS + flat
    return moves[:, :a.size].reshape(-1, *a.shape), moves[:, a.size:].reshape(-1, *b.shape)


def _on(namespaces, f):
    """The case ``f`` as a function of (a, b) calling ``namespaces`` (aotc's or JAX's)."""
    return lambda a, b: f(namespaces, a, b)


def _derivatives(cases, differenced):
    """One program: for every case, its gradient and its jvp along DIRECTION; for the cases
    in ``differenced``, its values at the finite-difference points too."""
    @aotc.jit
    def derivatives(a, b, a_points, b_points, ta, tb):
        out = {}
        for name, f in cases.items():
            g = _on(AOTC, f)
            out[name] = (aotc.grad(g, argnums=(0, 1))(a, b), aotc.jvp(g, (a, b), (ta, tb))[1])
            if name in differenced:
                out[name] += (aotc.vmap(g)(a_points, b_points),)
        return out

    return derivatives(A, B, *_points(A, B), *DIRECTION)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_gradients_match_finite_differences_and_jax(table):
    cases = TABLES[table]
    expected = _jax_references(cases)
    got = _derivatives(cases, set(cases) - set(expected))
    for name, f in cases.items():
        grads = tuple(np.asarray(g) for g in got[name][0])
        tangent = np.asarray(got[name][1])
        values = expected[name][1] if name in expected else np.asarray(got[name][2])
        half = values.size // 2
        fd = (values[:half] - values[half:]) / (2 * EPS)
        fd = (fd[:A.size].reshape(A.shape), fd[A.size:].reshape(B.shape))
        for argnum in (0, 1):
            np.testing.assert_allclose(grads[argnum], fd[argnum], rtol=1e-6, atol=1e-6,
                                       err_msg=f"{name}: gradient {argnum} vs finite differences")
        along = sum(np.sum(g * d) for g, d in zip(grads, DIRECTION))
        np.testing.assert_allclose(tangent, sum(np.sum(g * d) for g, d in zip(fd, DIRECTION)),
                                   rtol=1e-6, atol=1e-6, err_msg=f"{name}: jvp vs differences")
        np.testing.assert_allclose(tangent, along, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}: jvp vs the gradient (transposition)")
        if name in expected:
            for argnum in (0, 1):
                np.testing.assert_allclose(grads[argnum], expected[name][0][argnum], rtol=1e-9,
                                           atol=1e-12, err_msg=f"{name}: gradient {argnum} vs jax")


def _jax_references(cases) -> dict:
    """For every case JAX has: ``(jax.grad, the values at the finite-difference points)``,
    in one XLA compile; {} without JAX."""
    if jax is None:
        return {}
    compared = {name: f for name, f in cases.items() if name not in NOT_IN_JAX}

    def references(a, b, a_points, b_points):
        out = {}
        for name, f in compared.items():
            g = _on(JAX, f)
            out[name] = (jax.grad(g, argnums=(0, 1))(a, b), jax.vmap(g)(a_points, b_points))
        return out

    return reference(references, A, B, *_points(A, B))


# Cases that call a function JAX does not have, or has with other semantics.
NOT_IN_JAX = {
    "flatten": "jax.numpy has no flatten function (only the method)",
    "fix": "jax.numpy has no fix",
    "compress, extract": "JAX's compress and extract need size= under jit",
    "place, putmask, copyto": "numpy's in-place functions: JAX has none",
    "layers": "jax.nn has no dense, layer_norm or batch_norm",
    "pooling": "jax.nn has no pooling",
    "svdvals": "jax.scipy.linalg has no svdvals",
    # aotc's are JAX's with x64 off; the reference runs with it on
    "random choice": "JAX with x64 on draws choice's indices as int64: other samples",
}


# ---- coverage ---------------------------------------------------------------------------

# The gradient tables of the other test files, and how their cases name each namespace.
OTHER_TABLES = {
    "tests.test_autodiff": ("TABLES", "CONTROL", "FORWARD_CASES", "CONVOLUTIONS", "SCATTERS"),
    "tests.test_complex_derivatives": ("CASES", "CONTROL_CASES"),
    "tests.test_linalg_derivatives": ("CASES", "FACTORIZATIONS", "BEYOND_JAX",
                                      "FORWARD_FACTORIZATIONS"),
    "tests.test_complex_linalg_derivatives": ("CASES", "SHAPED"),
}
# namespace -> the prefixes a case calls it by (here: m.np., ...; elsewhere: m., L., ...)
PREFIXES = {
    "aotc.numpy": (r"m\.np\.", r"\bm\."),
    "aotc.numpy.linalg": (r"m\.linalg\.",),
    "aotc.numpy.fft": (r"m\.fft\.",),
    "aotc.scipy.linalg": (r"m\.sl\.", r"_sl\(m\)\."),
    "aotc.lax": (r"m\.lax\.", r"\bL\.", r"\blax\."),
    "aotc.lax.linalg": (r"m\.lalg\.",),
    "aotc.nn": (r"m\.nn\.",),
    "aotc.random": (r"m\.random\.",),
}


def _case_sources() -> str:

    sources = []
    tables = [TABLES[t] for t in TABLES]
    for module_name, names in OTHER_TABLES.items():
        module = importlib.import_module(module_name)
        for name in names:
            table = getattr(module, name)
            nested = all(isinstance(v, dict) for v in table.values())
            tables.extend(table.values() if nested else [table])
    for table in tables:
        for case in table.values():  # a function, or a tuple holding one
            sources.extend(_source(f) for f in (case if isinstance(case, tuple) else (case,))
                           if callable(f))
    return "\n".join(sources)


def _source(f) -> str:
    """The lines of a function's source, all of them (inspect.getsource gives a lambda's
    first line only)."""
    code = f.__code__
    last = max([end for _, end, _, _ in code.co_positions() if end is not None]
               + [code.co_firstlineno])
    return "".join(linecache.getlines(code.co_filename)[code.co_firstlineno - 1:last])


def _tested() -> set[str]:
    text = _case_sources()
    found = set()
    for namespace, prefixes in PREFIXES.items():
        for prefix in prefixes:
            found.update(f"{namespace}.{name}"
                         for name in re.findall(prefix + r"(\w+)\b(?!\.)", text))
    return found


def test_every_differentiable_function_is_covered():
    public = {f"{ns}.{name}" for ns, _, _ in NAMESPACES
              for name in public_functions(import_optional(ns))}
    listed = {f"{ns}.{name}" for ns, by_reason in NOT_DIFFERENTIABLE.items()
              for names in by_reason.values() for name in names.split()}
    missing = sorted(public - listed - _tested())
    assert not missing, (f"{len(missing)} public functions have no gradient test and no "
                         f"reason in NOT_DIFFERENTIABLE: {' '.join(missing)}")
    assert not listed - public, f"not public functions: {sorted(listed - public)}"


# namespace -> reason -> the public functions without a derivative to test, for it.
NOT_DIFFERENTIABLE = {
    "aotc.numpy": {
        "integer, boolean or index results": """all any allclose argmax argmin argpartition
            argsort argwhere array_equal array_equiv bincount count_nonzero digitize equal
            flatnonzero greater greater_equal histogram histogram2d histogramdd isclose
            iscomplex isfinite isin isinf isnan isneginf isposinf isreal less less_equal
            lexsort logical_and logical_not logical_or logical_xor nanargmax nanargmin
            nonzero not_equal searchsorted signbit""",
        "integer operands only": """bitwise_and bitwise_invert bitwise_left_shift
            bitwise_not bitwise_or bitwise_right_shift bitwise_xor gcd invert lcm left_shift
            right_shift ravel_multi_index unravel_index""",
        "no array operand: made from shapes and sizes": """bartlett blackman diag_indices
            diag_indices_from empty empty_like eye fromfunction hamming hanning identity
            indices kaiser mask_indices tri tril_indices tril_indices_from triu_indices
            triu_indices_from zeros ix_""",
        "host-side values read while tracing (numpy arrays: constants)": """from_dlpack
            frombuffer fromiter fromstring frompyfunc""",
        "dtype, shape and type queries": """broadcast_shapes can_cast iscomplexobj isdtype
            isrealobj isscalar issubdtype iterable ndim promote_types result_type shape
            size""",
        # JAX refuses these too: the float is rebuilt from the bits of its argument.
        "bit-level results (the next float, its spacing, its exponent)": """frexp nextafter
            spacing""",
        "a shape that depends on the values (refused while tracing)": "trim_zeros",
    },
    "aotc.numpy.linalg": {"integer, boolean or index results": "matrix_rank"},
    "aotc.numpy.fft": {"no array operand: made from shapes and sizes": "fftfreq rfftfreq"},
    "aotc.lax": {
        "integer, boolean or index results": """argmax argmin eq ge gt is_finite le lt ne
            reduce_and reduce_or""",
        "integer operands only": """bitwise_and bitwise_not bitwise_or bitwise_xor shift_left
            shift_right_arithmetic shift_right_logical""",
        "no array operand: made from shapes and sizes": "broadcasted_iota iota",
        "bit-level results (the next float, its spacing, its exponent)": """nextafter
            bitcast_convert_type""",
        # test_autodiff.py checks it: x * stop_gradient(x) has derivative x, not 2x
        "a derivative of zero by definition (finite differences see the value change)":
            "stop_gradient",
    },
    "aotc.lax.linalg": {"integer, boolean or index results": "lu_pivots_to_permutation"},
    "aotc.nn": {"integer, boolean or index results": "one_hot"},
    "aotc.random": {
        "keys and bits: integer results": "bits fold_in key split randint bernoulli",
        "no float operand (the samples of a key)": "normal",
    },
}
