"""``aotc.numpy.fft``: numpy.fft for traced arrays.

Every transform is the one-axis DFT of ops/fourier.py (mixed-radix Stockham stages,
Bluestein for lengths with a large prime factor) applied axis by axis, on separate real
and imaginary parts, so real input skips the arithmetic of a zero imaginary part. numpy's
rules: ``n``/``s`` crop or zero-pad the input along each axis before transforming;
``norm`` is "backward" (1/n on the inverse), "ortho" (1/sqrt(n) both ways) or "forward"
(1/n on the forward transform); float32 (and float16) give complex64, float64, integers
and bools complex128 (complex64 for everything with x64 off, as JAX); ``irfft`` ignores
the imaginary parts of the zero- and Nyquist-frequency terms as numpy's does.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import dtypes, x64
from ._mlir import complex_dialect as cx
from .core import Tracer, make_public
from .errors import TracingError
from .ops import complex_parts, fourier, shape as _shape
from .ops import elementwise as ew
from .ops.arguments import as_tracer, normalize_axis
from .ops.creation import zeros_like
from .ops.rearrange import pad, roll
from .ops.statistics import _no_out

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
           "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# ---- parts, lengths and scales -----------------------------------------------------------

class _Parts:
    """A complex array as its real part and imaginary part (None: zero) of ``dtype``'s
    parts, ``dtype`` the complex result type."""

    def __init__(self, re: Tracer, im: Optional[Tracer], dtype: np.dtype):
        self.re, self.im, self.dtype = re, im, np.dtype(dtype)

    @property
    def shape(self):
        return self.re.shape

    def map(self, fn) -> "_Parts":
        return _Parts(fn(self.re), None if self.im is None else fn(self.im), self.dtype)

    def complex(self) -> Tracer:
        im = self.im if self.im is not None else zeros_like(self.re)
        out = np.dtype(self.dtype)
        return ew.elementwise([self.re, im], [self.re.dtype, im.dtype], out,
                              lambda a, b: cx.CreateOp(dtypes.mlir_type(out), a, b).result,
                              "fft")


def _complex_dtype(part: np.dtype) -> np.dtype:
    return np.dtype(np.complex128 if part == np.float64 else np.complex64)


def _parts(a, where: str, real_only: bool = False) -> _Parts:
    """``a`` as parts of numpy's transform dtype; ``real_only``: the real transforms'
    input, where numpy drops the imaginary part of a complex one (with a warning)."""
    t = as_tracer(a, where)
    if dtypes.is_complex(t.dtype):
        if real_only:
            raise TracingError(f"{where}: the input must be real, got {t.dtype} (numpy "
                               f"discards the imaginary part; pass a.real to do so)")
        re, im = complex_parts.real(t), complex_parts.imag(t)
        return _Parts(re, im, t.dtype)
    if t.dtype == np.float16:
        t = ew.astype(t, np.float32)
    elif not dtypes.is_float(t.dtype):
        t = ew.astype(t, x64.default_float())
    return _Parts(t, None, _complex_dtype(t.dtype))


def _length(n, default: int, where: str) -> int:
    if n is None:
        n = default
    elif isinstance(n, Tracer) or not isinstance(n, (int, np.integer)):
        raise TracingError(f"{where}: n must be a Python int (the transform length is part "
                           f"of the compiled program), got {type(n).__name__} {n!r}")
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return int(n)


def _check_norm(norm) -> str:
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or '
                         f'"forward".')
    return norm


def _scale(norm: str, n: int, inverse: bool) -> Optional[float]:
    """The factor numpy's ``norm`` puts on an n-point transform (None: 1)."""
    if norm == "ortho":
        return 1.0 / np.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else None


def _scaled(p: _Parts, factor: Optional[float]) -> _Parts:
    return p if factor is None else p.map(lambda t: _times_factor(t, factor))


def _times_factor(t: Tracer, factor: Optional[float]) -> Tracer:
    return t if factor is None else t * np.asarray(factor, t.dtype)


def _resized(p: _Parts, n: int, axis: int) -> _Parts:
    """numpy's ``n``: the input cropped or zero-padded to n along ``axis``."""
    have = p.shape[axis]
    if n == have:
        return p
    if n < have:
        index = (slice(None),) * axis + (slice(0, n),)
        return p.map(lambda t: t[index])
    widths = [(0, 0)] * len(p.shape)
    widths[axis] = (0, n - have)
    return p.map(lambda t: pad(t, widths))


def _axis(a: Tracer, axis, where: str) -> int:
    if a.ndim == 0:
        raise TracingError(f"{where}: the input must have at least one axis, got a 0-d "
                           f"array")
    return normalize_axis(axis, a.ndim, f"{where} axis")


# ---- one axis ----------------------------------------------------------------------------

def _c2c(p: _Parts, n: int, axis: int, norm: str, inverse: bool) -> _Parts:
    p = _resized(p, n, axis)
    if p.shape[axis] == 0:
        return p
    re, im = fourier.transform((p.re, p.im), axis, inverse)
    return _scaled(_Parts(re, im, p.dtype), _scale(norm, n, inverse))


def _r2c(p: _Parts, n: int, axis: int, norm: str) -> _Parts:
    """The first n // 2 + 1 terms of the transform of real ``p``. An even length packs
    the even and odd samples as one complex signal of n / 2 points (half the work):
    with Z its transform, X_k = E_k + w^k O_k, where E_k = (Z_k + conj Z_(n/2-k)) / 2
    and O_k = (Z_k - conj Z_(n/2-k)) / 2i are the transforms of the even and odd
    samples and w = exp(-2 pi i / n)."""
    p = _resized(p, n, axis)
    if n % 2 or n < 4:
        re, im = fourier.transform((p.re, None), axis, False)
        index = (slice(None),) * axis + (slice(0, n // 2 + 1),)
        return _scaled(_Parts(re[index], im[index], p.dtype), _scale(norm, n, False))
    even, odd = _deinterleave(p.re, axis)
    z = fourier.transform((even, odd), axis, False)
    first = (slice(None),) * axis + (slice(0, 1),)
    a, b = (_shape.concatenate([t, t[first]], axis) for t in z)  # Z_0 .. Z_(n/2)
    c, d = (_shape.flip(t, axis) for t in (a, b))  # Z_(n/2 - k)
    half = np.asarray(0.5, a.dtype)
    odd_part = fourier.cmul(((b + d) * half, (c - a) * half), _roots_along(n, axis, a, False))
    re, im = (a + c) * half + odd_part[0], (b - d) * half + odd_part[1]
    return _scaled(_Parts(re, im, p.dtype), _scale(norm, n, False))


def _c2r(p: _Parts, n: int, axis: int, norm: str) -> Tracer:
    """The real n-point inverse of the Hermitian spectrum whose first n // 2 + 1 terms
    ``p`` holds (cropped or zero-padded to that), the rest conj(p[n - k]); the imaginary
    parts of the zero- and (even n) Nyquist-frequency terms are ignored. An even length
    undoes ``_r2c``'s packing: Z_k = E_k + i O_k with E_k = (X_k + conj X_(n/2-k)) / 2,
    O_k = (X_k - conj X_(n/2-k)) / (2 w^k), whose n/2-point inverse holds the even
    samples in its real part and the odd ones in its imaginary part."""
    p = _resized(p, n // 2 + 1, axis)
    factor = _scale(norm, n, True)
    im = p.im if p.im is not None else zeros_like(p.re)
    if n % 2 or n < 4:
        mirrored = n - (n // 2 + 1)
        re = p.re
        if mirrored:
            index = (slice(None),) * axis + (slice(1, mirrored + 1),)
            re = _shape.concatenate([re, _shape.flip(re[index], axis)], axis)
            im = _shape.concatenate([im, -_shape.flip(im[index], axis)], axis)
        out, _ = fourier.transform((re, im), axis, True)
        return _times_factor(out, factor)
    ends = np.ones(n // 2 + 1)
    ends[[0, -1]] = 0.0  # numpy ignores these imaginary parts
    a, b = p.re, im * fourier.table_along(ends, axis, im)
    c, d = _shape.flip(a, axis), _shape.flip(b, axis)  # X_(n/2 - k)
    o_re, o_im = fourier.cmul((a - c, b + d), _roots_along(n, axis, a, True))  # 2 O
    lead = (slice(None),) * axis + (slice(0, n // 2),)
    z_re, z_im = ((a + c) - o_im)[lead], ((b - d) + o_re)[lead]  # 2 Z = 2 E + 2 i O
    even, odd = fourier.transform((z_re, z_im), axis, True)
    return _times_factor(_interleave(even, odd, axis), factor)  # n x: the n-point inverse


def _deinterleave(x: Tracer, axis: int) -> tuple[Tracer, Tracer]:
    """The even and odd samples of ``x`` along ``axis``."""
    split = x.shape[:axis] + (x.shape[axis] // 2, 2) + x.shape[axis + 1:]
    pairs = _shape.reshape(x, split)
    pick = lambda k: pairs[(slice(None),) * (axis + 1) + (k,)]  # noqa: E731
    return pick(0), pick(1)


def _interleave(even: Tracer, odd: Tracer, axis: int) -> Tracer:
    pairs = _shape.stack([even, odd], axis + 1)
    shape = even.shape[:axis] + (2 * even.shape[axis],) + even.shape[axis + 1:]
    return _shape.reshape(pairs, shape)


def _roots_along(n: int, axis: int, like: Tracer, inverse: bool):
    """cos and sin of -+2 pi k / n for k <= n / 2, as constants shaped to broadcast
    along ``axis`` of ``like``."""
    c, s = fourier.roots(n // 2 + 1, n, 1.0 if inverse else -1.0)
    return fourier.table_along(c, axis, like), fourier.table_along(s, axis, like)


# ---- numpy.fft ---------------------------------------------------------------------------

def fft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """numpy.fft.fft: the one-dimensional discrete Fourier transform."""
    return _one_axis(a, n, axis, norm, out, "fft.fft", inverse=False)


def ifft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """numpy.fft.ifft: the one-dimensional inverse discrete Fourier transform."""
    return _one_axis(a, n, axis, norm, out, "fft.ifft", inverse=True)


def _one_axis(a, n, axis, norm, out, where, inverse) -> Tracer:
    _no_out(out, where)
    p = _parts(a, where)
    ax = _axis(p.re, axis, where)
    return _c2c(p, _length(n, p.shape[ax], where), ax, _check_norm(norm), inverse).complex()


def rfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """numpy.fft.rfft: the transform of a real input, its n // 2 + 1 non-negative
    frequency terms."""
    _no_out(out, "fft.rfft")
    p = _parts(a, "fft.rfft", real_only=True)
    ax = _axis(p.re, axis, "fft.rfft")
    return _r2c(p, _length(n, p.shape[ax], "fft.rfft"), ax, _check_norm(norm)).complex()


def irfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """numpy.fft.irfft: the real inverse of ``rfft``; n defaults to 2 (m - 1) for m
    input terms."""
    _no_out(out, "fft.irfft")
    p = _parts(a, "fft.irfft")
    ax = _axis(p.re, axis, "fft.irfft")
    n = _length(n, 2 * (p.shape[ax] - 1), "fft.irfft")
    return _c2r(p, n, ax, _check_norm(norm))


def hfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """numpy.fft.hfft: the real transform of a Hermitian-symmetric signal given by its
    first half: irfft(conj(a), n) with the opposite normalization."""
    _no_out(out, "fft.hfft")
    p = _parts(a, "fft.hfft")
    ax = _axis(p.re, axis, "fft.hfft")
    n = _length(n, 2 * (p.shape[ax] - 1), "fft.hfft")
    conj = _Parts(p.re, None if p.im is None else -p.im, p.dtype)
    return _c2r(conj, n, ax, _SWAPPED[_check_norm(norm)])


def ihfft(a, n=None, axis=-1, norm=None, out=None) -> Tracer:
    """numpy.fft.ihfft: the inverse of ``hfft``: conj(rfft(a, n)) with the opposite
    normalization."""
    _no_out(out, "fft.ihfft")
    p = _parts(a, "fft.ihfft", real_only=True)
    ax = _axis(p.re, axis, "fft.ihfft")
    n = _length(n, p.shape[ax], "fft.ihfft")
    half = _r2c(p, n, ax, _SWAPPED[_check_norm(norm)])
    return _Parts(half.re, -half.im, half.dtype).complex()


# ---- several axes ------------------------------------------------------------------------

def _nd_axes(t: Tracer, s, axes, where: str) -> tuple[list, list]:
    """numpy's (s, axes): axes default to all (or the last len(s)); s to their lengths."""
    if axes is None:
        axes = list(range(t.ndim)) if s is None else list(range(t.ndim - len(s), t.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = [normalize_axis(ax, t.ndim, f"{where} axes") for ax in axes]
    if s is None:
        s = [None] * len(axes)
    s = [None if n == -1 else n for n in s]  # numpy 2: -1 keeps the axis's length
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    return s, axes


def _c2c_nd(a, s, axes, norm, out, where, inverse) -> Tracer:
    _no_out(out, where)
    p = _parts(a, where)
    s, axes = _nd_axes(p.re, s, axes, where)
    norm = _check_norm(norm)
    for n, ax in reversed(list(zip(s, axes))):
        p = _c2c(p, _length(n, p.shape[ax], where), ax, norm, inverse)
    return p.complex()


def fftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    """numpy.fft.fftn: the transform along ``axes`` (all by default)."""
    return _c2c_nd(a, s, axes, norm, out, "fft.fftn", inverse=False)


def ifftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    """numpy.fft.ifftn: the inverse transform along ``axes`` (all by default)."""
    return _c2c_nd(a, s, axes, norm, out, "fft.ifftn", inverse=True)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    """numpy.fft.fft2: the transform along the last two axes."""
    return _c2c_nd(a, s, axes, norm, out, "fft.fft2", inverse=False)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    """numpy.fft.ifft2: the inverse transform along the last two axes."""
    return _c2c_nd(a, s, axes, norm, out, "fft.ifft2", inverse=True)


def rfftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    """numpy.fft.rfftn: rfft along the last of ``axes``, then fft along the others."""
    _no_out(out, "fft.rfftn")
    p = _parts(a, "fft.rfftn", real_only=True)
    s, axes = _nd_axes(p.re, s, axes, "fft.rfftn")
    norm = _check_norm(norm)
    p = _r2c(p, _length(s[-1], p.shape[axes[-1]], "fft.rfftn"), axes[-1], norm)
    for n, ax in reversed(list(zip(s[:-1], axes[:-1]))):
        p = _c2c(p, _length(n, p.shape[ax], "fft.rfftn"), ax, norm, False)
    return p.complex()


def irfftn(a, s=None, axes=None, norm=None, out=None) -> Tracer:
    """numpy.fft.irfftn: ifft along all but the last of ``axes``, then irfft along it
    (its length defaults to 2 (m - 1))."""
    _no_out(out, "fft.irfftn")
    p = _parts(a, "fft.irfftn")
    s, axes = _nd_axes(p.re, s, axes, "fft.irfftn")
    norm = _check_norm(norm)
    for n, ax in reversed(list(zip(s[:-1], axes[:-1]))):
        p = _c2c(p, _length(n, p.shape[ax], "fft.irfftn"), ax, norm, True)
    last = _length(s[-1], 2 * (p.shape[axes[-1]] - 1), "fft.irfftn")
    return _c2r(p, last, axes[-1], norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    """numpy.fft.rfft2: rfftn along the last two axes."""
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> Tracer:
    """numpy.fft.irfft2: irfftn along the last two axes."""
    return irfftn(a, s, axes, norm, out)


# ---- frequencies and shifts ----------------------------------------------------------------

def fftfreq(n, d=1.0, device=None, *, dtype=None) -> Tracer:
    """numpy.fft.fftfreq: the sample frequencies [0, 1, ..., -1] / (d n) (constants)."""
    return _frequencies(np.fft.fftfreq, n, d, dtype, "fft.fftfreq")


def rfftfreq(n, d=1.0, device=None, *, dtype=None) -> Tracer:
    """numpy.fft.rfftfreq: the non-negative sample frequencies of ``rfft`` (constants)."""
    return _frequencies(np.fft.rfftfreq, n, d, dtype, "fft.rfftfreq")


def _frequencies(numpy_fn, n, d, dtype, where: str) -> Tracer:
    if isinstance(n, Tracer) or not isinstance(n, (int, np.integer)):
        raise TracingError(f"{where}: n must be a Python int, got {type(n).__name__}")
    out = np.dtype(dtype) if dtype is not None else x64.default_float()
    if isinstance(d, Tracer):
        base = as_tracer(numpy_fn(int(n), 1.0).astype(out), where)
        return ew.ufunc("divide", base, d)
    return as_tracer(numpy_fn(int(n), float(d)).astype(out), where)


def fftshift(x, axes=None) -> Tracer:
    """numpy.fft.fftshift: the zero-frequency term moved to the center."""
    return _shift(x, axes, "fft.fftshift", lambda n: n // 2)


def ifftshift(x, axes=None) -> Tracer:
    """numpy.fft.ifftshift: the inverse of ``fftshift``."""
    return _shift(x, axes, "fft.ifftshift", lambda n: -(n // 2))


def _shift(x, axes, where: str, amount) -> Tracer:
    t = as_tracer(x, where)
    if axes is None:
        axes = tuple(range(t.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    axes = tuple(normalize_axis(ax, t.ndim, f"{where} axes") for ax in axes)
    if not axes:
        return t
    return roll(t, [amount(t.shape[ax]) for ax in axes], axes)


make_public("fft", globals(), __all__)  # eager outside a trace (aotc/eager.py)
