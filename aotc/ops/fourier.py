"""The discrete Fourier transform along one axis, as a few ``linalg.generic`` stages.

A length n = r_1 r_2 ... r_s with small factors is transformed in s Stockham stages, each
one parallel ``linalg.generic`` (one dispatch): the data of length n_cur = r m still to
transform is read as (r, m), the r-point DFT of every column is taken, the twiddle factor
w^(j2 k1) (w = exp(-+2 pi i / n_cur)) applied, and the result written as (m, r) ahead of
the digits already done, so after the last stage the output is in natural order and no
bit-reversal or transpose pass is needed. Digit k1 of the output index is an iteration
dimension of the stage; each of the r inputs is a slice of the data (so indexing maps stay
projected permutations, which every IREE backend handles), and the DFT matrix's entries
are constants read by k1 (entries known to be 1 or real skip their multiplications).
Rows j and r - j of the DFT matrix are conjugate, so each pair costs one real
multiply-add per part and row: c (x_j + x_(r-j)) + i s (x_j - x_(r-j)).

The data is carried as separate real and imaginary float tensors: a complex multiply of
known-finite twiddles is 4 multiplies and 2 adds, where the ``complex`` dialect's is the
C99 one with its inf/NaN recovery. Twiddles are tables computed in float64 at trace time;
past ``_TABLE_LIMIT`` entries a stage splits j2 = a G + b and multiplies two small tables
(w^(a G k1) w^(b k1)), so a 2^20-point transform embeds kilobytes, not megabytes.

Lengths with a prime factor above ``_LARGEST_RADIX`` go through Bluestein's algorithm
(x_j w^(j^2/2) convolved with w^(-j^2/2) by power-of-two transforms of at least 2n - 1
points), so every length costs O(n log n).

Trailing axes after the transformed one ride along as the innermost dimension of every
stage, so a transform along any axis needs no transpose.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .. import dtypes
from .._mlir import arith, dim_map, ir
from ..constants import dense_constant
from ..core import Tracer
from ..lowering import add_work, empty, extract_slice, generic, parallel, reshape_value, wrap
from .arguments import as_tracer
from .creation import zeros_like
from .rearrange import pad

_LARGEST_RADIX = 13      # larger prime factors: Bluestein
_TABLE_LIMIT = 4096      # twiddle entries per stage before the table is split in two
_RADICES = (4, 2, 3, 5, 7, 11, 13)  # the order factors are taken in (4 before 2)

Parts = tuple[Tracer, Optional[Tracer]]  # (real, imaginary); None: an imaginary part of 0


def factors(n: int) -> list[int] | None:
    """The stage radices of an n-point transform, or None where n has a prime factor
    above ``_LARGEST_RADIX``."""
    out = []
    for r in _RADICES:
        while n % r == 0:
            out.append(r)
            n //= r
    return out if n == 1 else None


def transform(parts: Parts, axis: int, inverse: bool) -> tuple[Tracer, Tracer]:
    """The unnormalized DFT (sign -1; +1 ``inverse``) of ``parts`` along ``axis``."""
    re, im = parts
    n = re.shape[axis]
    if n <= 1:
        return re, im if im is not None else zeros_like(re)
    if factors(n) is None:
        return _bluestein(parts, axis, inverse)
    shape = re.shape
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    state = [_as_state(p, (outer, n, 1, inner)) for p in (re, im)]
    done = 1
    for r in factors(n):
        state = _stage(state, r, n // (done * r), done, inner, re.dtype, inverse)
        done *= r
    return tuple(wrap(reshape_value(v, (outer, 1, n, inner), shape, re.dtype), shape, re.dtype)
                 for v in state)


def _as_state(part: Optional[Tracer], shape) -> Optional[ir.Value]:
    return None if part is None else reshape_value(part.value, part.shape, shape, part.dtype)


def roots(count: int, period: int, sign: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of sign 2 pi k / period for k in [0, count), exact at multiples of
    a quarter turn (so the DFT matrices of 2 and 4 points are exactly 0, +-1)."""
    k = np.arange(count, dtype=np.int64) % period
    angle = sign * 2 * np.pi * k / period
    c, s = np.cos(angle), np.sin(angle)
    quarter = (4 * k) % period == 0
    turns = (4 * k // period) % 4
    c = np.where(quarter, np.array([1.0, 0.0, -1.0, 0.0])[turns], c)
    s = np.where(quarter, sign * np.array([0.0, 1.0, 0.0, -1.0])[turns], s)
    return c, s


def _stage(state, r: int, m: int, done: int, inner: int, dtype, inverse: bool):
    """One radix-r stage: state (P, r m, done, inner) -> (P, m, r done, inner)."""
    sign = 1.0 if inverse else -1.0
    re, im = state
    outer = ir.RankedTensorType(re.type).shape[0]
    split = r * m > _TABLE_LIMIT
    group = _split_size(m) if split else m
    # Loop dims: p, a, b, k1, kp, t (j2 = a group + b); a is absent when not split.
    lead = [outer, m // group, group] if split else [outer, m]
    loop_shape = lead + [r, done, inner]
    rank = len(loop_shape)
    k1, data_dims = len(lead), list(range(len(lead))) + [len(lead) + 1, len(lead) + 2]
    source_shape = [outer, r] + lead[1:] + [done, inner]

    def column(part, j1):
        """Input row j1 of the (r, m) view: (P, [a,] b, done, inner)."""
        if part is None:
            return None
        view = reshape_value(part, (outer, r * m, done, inner), source_shape, dtype)
        sizes = [outer, 1] + lead[1:] + [done, inner]
        return extract_slice(view, source_shape, [0, j1] + [0] * (len(sizes) - 2), sizes,
                             None, dtype, [outer] + lead[1:] + [done, inner])

    cols_c, cols_s = _dft_columns(r, sign)

    inputs, roles = [], []

    def add(value, dims, role):
        if value is not None:
            inputs.append((value, dim_map(rank, dims)))
            roles.append(role)

    for j1 in range(r):
        add(column(re, j1), data_dims, ("x", j1, 0))
        add(column(im, j1), data_dims, ("x", j1, 1))
        # Row r - j1 is row j1 conjugated: the body pairs them and reads only row j1's.
        if j1 <= r - j1 and (not np.all(cols_c[j1] == 1.0) or np.any(cols_s[j1] != 0.0)):
            add(dense_constant(cols_c[j1].astype(dtype)), [k1], ("w", j1, 0))
            if np.any(cols_s[j1] != 0.0):
                add(dense_constant(cols_s[j1].astype(dtype)), [k1], ("w", j1, 1))
    if m > 1:
        for which, (count, scale, dim) in enumerate(_twiddle_tables(m, group, split)):
            index = (np.arange(r)[:, None] * np.arange(count)[None, :] * scale) % (r * m)
            tc, ts = _roots_at(index, r * m, sign)
            add(dense_constant(tc.astype(dtype)), [k1, dim], ("t", which, 0))
            add(dense_constant(ts.astype(dtype)), [k1, dim], ("t", which, 1))
    outs = [(empty(loop_shape, dtype), dim_map(rank, list(range(rank)))) for _ in range(2)]

    def body(*args):
        scalars = dict(zip(roles, args[:len(roles)]))
        x = [(scalars.get(("x", j, 0)), scalars.get(("x", j, 1))) for j in range(r)]
        total = x[0]
        for j in range(1, r // 2 + 1):
            c, s = scalars.get(("w", j, 0)), scalars.get(("w", j, 1))
            if j == r - j:  # the middle row of an even radix: (-1)^k1, real
                total = _plus(total, _times(x[j], (c, None)))
                continue
            # w_j x_j + conj(w_j) x_(r-j) = c (x_j + x_(r-j)) + i s (x_j - x_(r-j))
            both, apart = _plus(x[j], x[r - j]), _minus(x[j], x[r - j])
            term = _times(both, (c, None))
            if s is not None:
                term = _plus(term, (arith.NegFOp(_mul(apart[1], s)).result
                                    if apart[1] is not None else None, _mul(apart[0], s)))
            total = _plus(total, term)
        for which in (0, 1):
            if ("t", which, 0) in scalars:
                total = _times(total, (scalars[("t", which, 0)], scalars[("t", which, 1)]))
        return [_or_zero(v, dtype) for v in total]

    results = generic(inputs, outs, parallel(rank), body)
    add_work(np.prod(loop_shape, dtype=np.float64) * (3 * r + 6))
    new_shape = (outer, m, r * done, inner)
    return [reshape_value(v, loop_shape, new_shape, dtype) for v in results]


def _dft_columns(r: int, sign: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Row j1 of the r-point DFT matrix, as (cos, sin) tables over k1."""
    index = np.arange(r)[:, None] * np.arange(r)[None, :] % r
    c, s = _roots_at(index, r, sign)
    return list(c), list(s)


def _roots_at(index: np.ndarray, period: int, sign: float) -> tuple[np.ndarray, np.ndarray]:
    c, s = roots(period, period, sign)
    return c[index], s[index]


def _split_size(m: int) -> int:
    """The inner factor G of j2 = a G + b for a split twiddle table: a divisor of m near
    sqrt(m) (m is a product of small primes)."""
    best = 1
    for g in range(1, int(np.sqrt(m)) + 1):
        if m % g == 0:
            best = g
    return best


def _twiddle_tables(m: int, group: int, split: bool):
    """(entries, index scale, loop dim) of each twiddle table of a stage: one table over
    j2, or one over a (scaled by G) and one over b."""
    if not split:
        return [(m, 1, 1)]
    return [(m // group, group, 1), (group, 1, 2)]


def _times(x, w):
    """(x_re + i x_im)(w_re + i w_im) where a missing part is 0 and a missing w is 1."""
    xr, xi = x
    wr, wi = w
    if wr is None and wi is None:
        return xr, xi
    re = _mul(xr, wr)
    im = _mul(xi, wr)
    if wi is not None:
        re = _sub(re, _mul(xi, wi))
        im = _add(im, _mul(xr, wi))
    return re, im


def _plus(a, b):
    return _add(a[0], b[0]), _add(a[1], b[1])


def _minus(a, b):
    return _sub(a[0], b[0]), _sub(a[1], b[1])


def _mul(a, b):
    if a is None:  # a missing part is 0
        return None
    return arith.MulFOp(a, b).result


def _add(a, b):
    if a is None or b is None:
        return a if b is None else b
    return arith.AddFOp(a, b).result


def _sub(a, b):
    if b is None:
        return a
    if a is None:
        return arith.NegFOp(b).result
    return arith.SubFOp(a, b).result


def _or_zero(v, dtype):
    return v if v is not None else arith.ConstantOp(dtypes.mlir_type(dtype), 0.0).result


# ---- Bluestein ------------------------------------------------------------------------------

_PRECOMPUTED_LIMIT = 1 << 16  # larger convolution lengths transform the chirp at run time


def bluestein_length(n: int) -> int:
    """The convolution length of an n-point Bluestein transform: the smallest number
    of at least 2n - 1 whose factors are 2, 3 and 5."""
    m = 2 * n - 1
    while True:
        rest = m
        for p in (2, 3, 5):
            while rest % p == 0:
                rest //= p
        if rest == 1:
            return m
        m += 1


def _bluestein(parts: Parts, axis: int, inverse: bool) -> tuple[Tracer, Tracer]:
    """X_k = c_k sum_j (x_j c_j) conj(c)_(k-j) with the chirp c_j = w^(j^2 / 2): the
    chirped input convolved with the conjugate chirp by transforms of M >= 2n - 1
    points, where jk = (j^2 + k^2 - (k - j)^2) / 2 turns the DFT into a convolution."""
    re, im = parts
    n, dtype = re.shape[axis], re.dtype
    big = bluestein_length(n)
    sign = 1.0 if inverse else -1.0
    squares = (np.arange(n, dtype=np.int64) ** 2) % (2 * n)  # exact: j^2 mod 2n
    chirp_c, chirp_s = _roots_at(squares, 2 * n, sign)
    chirp = tuple(table_along(t, axis, re) for t in (chirp_c, chirp_s))
    a = cmul((re, im), chirp)
    widths = [(0, 0)] * re.ndim
    widths[axis] = (0, big - n)
    a = transform(tuple(pad(t, widths) for t in a), axis, False)
    kernel = np.zeros(big, np.complex128)  # conj(c) at -(n-1) .. n-1, wrapped around
    kernel[:n] = chirp_c - 1j * chirp_s
    kernel[big - n + 1:] = (chirp_c - 1j * chirp_s)[1:][::-1]
    if big <= _PRECOMPUTED_LIMIT:
        spectrum = np.fft.fft(kernel)
        k = tuple(table_along(t, axis, re) for t in (spectrum.real, spectrum.imag))
    else:
        trailing = re.ndim - axis - 1
        k = transform(tuple(_column(t, trailing, dtype) for t in (kernel.real, kernel.imag)),
                      0, False)
    product = transform(cmul(a, k), axis, True)
    index = (slice(None),) * axis + (slice(0, n),)
    scaled = tuple(table_along(t / big, axis, re) for t in (chirp_c, chirp_s))
    return cmul((product[0][index], product[1][index]), scaled)


def table_along(table: np.ndarray, axis: int, like: Tracer) -> Tracer:
    """A 1-d constant ``table`` in ``like``'s dtype, shaped to broadcast along ``axis`` of
    ``like`` (the axes after it have size 1)."""
    return _column(table, like.ndim - axis - 1, like.dtype)


def _column(table: np.ndarray, trailing: int, dtype) -> Tracer:
    shape = (len(table),) + (1,) * trailing
    return as_tracer(np.ascontiguousarray(table, dtype).reshape(shape), "fft")


def cmul(x, w):
    """(x_re + i x_im)(w_re + i w_im) of broadcasting Tracers (x_im may be None)."""
    xr, xi = x
    wr, wi = w
    if xi is None:
        return xr * wr, xr * wi
    return xr * wr - xi * wi, xr * wi + xi * wr
