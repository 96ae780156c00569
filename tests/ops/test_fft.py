"""aotc.numpy.fft against numpy.fft (pocketfft): every function, lengths 1 to 1024 with
every radix and Bluestein's prime lengths, n/s cropping and padding, axes, norms, dtypes,
non-finite input, vmap against a loop, lax control flow, eager calls and the errors.

Tolerances (relative to the largest magnitude of numpy's result): float64 3e-14,
float32 3e-6; both sides round differently in every butterfly, the error grows as log n.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.errors import TracingError, UnsupportedOpError
from aotc.ops import fourier

from .conftest import raises_match

RNG = np.random.default_rng(15)
TOL = {np.dtype(np.complex128): 3e-14, np.dtype(np.float64): 3e-14,
       np.dtype(np.complex64): 3e-6, np.dtype(np.float32): 3e-6}


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                  want.dtype, want.shape)
    scale = max(np.abs(want).max(initial=0.0), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[want.dtype] * scale)


def signal(shape, dtype=np.complex128):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def one_axis_family(m, z, x):
    """Every one-axis transform of the complex signal ``z`` and the real signal ``x``
    (irfft and hfft of one term would have 0 points: numpy refuses, as the errors test)."""
    out = {"fft": m.fft.fft(z), "ifft": m.fft.ifft(z), "rfft": m.fft.rfft(x),
           "ihfft": m.fft.ihfft(x)}
    if z.shape[-1] > 1:
        out.update(irfft=m.fft.irfft(z), hfft=m.fft.hfft(z))
    return out


# Every one-axis function at lengths that take each path: 1 (no stage), 2 and 3 (one
# stage), 16 (radix 4), 17 (Bluestein), 60 (radices 4, 3, 5), 1000 (4, 2, 5, 5, 5; the
# even real transforms' packing).
FAMILY_LENGTHS = [1, 2, 3, 16, 17, 60, 1000]
# fft alone at the other radices and their mixes, Bluestein's prime lengths (97, 1009,
# and 34 = 2 x 17), split twiddle tables (4096 and 6000 points): one program.
FFT_LENGTHS = [4, 5, 7, 8, 11, 12, 13, 30, 34, 97, 243, 1009, 4096, 6000]


@pytest.mark.parametrize("n", FAMILY_LENGTHS)
def test_one_axis_transforms_match_numpy(n):
    z, x = signal((3, n)), signal((3, n), np.float64)
    got = aotc.jit(lambda z, x: one_axis_family(anp, z, x))(z, x)
    want = one_axis_family(np, z, x)
    assert got.keys() == want.keys()
    for name in want:
        close(got[name], want[name])


def test_fft_at_every_radix_and_prime_lengths():
    signals = [signal((2, n)) for n in FFT_LENGTHS]
    got = aotc.jit(lambda *zs: [anp.fft.fft(z) for z in zs])(*signals)
    for z, g in zip(signals, got):
        close(g, np.fft.fft(z))


def test_float32_gives_complex64():
    z, x = signal((2, 97), np.complex64), signal((2, 4096), np.float32)
    short = signal((2, 60), np.float32)

    def calls(m, z, x, short):
        return {"fft": m.fft.fft(z), "ifft": m.fft.ifft(z), "rfft": m.fft.rfft(x),
                "irfft": m.fft.irfft(z), "ihfft": m.fft.ihfft(short),
                "hfft": m.fft.hfft(z[:, :31])}
    got = aotc.jit(lambda *a: calls(anp, *a))(z, x, short)
    for name, want in calls(np, z, x, short).items():
        close(got[name], want)


def test_lengths_axes_and_norms():
    z = signal((4, 6, 10))
    x = signal((4, 6, 10), np.float64)

    def calls(m, z, x):
        out = {}
        for norm in (None, "backward", "ortho", "forward"):  # each norm both ways
            out[f"fft {norm}"] = m.fft.fft(z, norm=norm)
            out[f"irfft {norm}"] = m.fft.irfft(z, n=9, axis=-2, norm=norm)
        out["ifft"] = m.fft.ifft(z, n=7, axis=0, norm="ortho")
        out["rfft"] = m.fft.rfft(x, n=13, axis=1, norm="forward")
        out["hfft"] = m.fft.hfft(z, n=12, norm="ortho")
        out["ihfft"] = m.fft.ihfft(x, n=5, axis=0, norm="forward")
        out["crop"] = m.fft.fft(z, n=3, axis=1)
        out["pad"] = m.fft.fft(x, n=17)
        return out
    got = aotc.jit(lambda z, x: calls(anp, z, x))(z, x)
    for name, want in calls(np, z, x).items():
        close(got[name], want)


def test_long_transforms_along_leading_axes():
    """Split twiddle tables (past 4096 entries) with trailing axes riding along."""
    z, x = signal((8192, 3)), signal((2, 6000, 2), np.float64)
    got = aotc.jit(lambda z, x: (anp.fft.fft(z, axis=0), anp.fft.rfft(x, axis=1),
                                 anp.fft.ifft(x, axis=1)))(z, x)
    for g, w in zip(got, (np.fft.fft(z, axis=0), np.fft.rfft(x, axis=1),
                          np.fft.ifft(x, axis=1))):
        close(g, w)


def test_several_axes():
    z = signal((3, 5, 8))
    x = signal((3, 5, 8), np.float64)

    def calls(m, z, x):
        return {"fft2": m.fft.fft2(z), "ifft2": m.fft.ifft2(z, s=(4, 6)),
                "fftn": m.fft.fftn(z), "fftn axes": m.fft.fftn(z, axes=(0, 2)),
                "ifftn": m.fft.ifftn(z, s=(2, 3, 9), axes=(0, 1, 2), norm="ortho"),
                "rfft2": m.fft.rfft2(x), "rfftn": m.fft.rfftn(x, s=(6, 7), axes=(0, 1)),
                "irfft2": m.fft.irfft2(z), "irfftn": m.fft.irfftn(z, axes=(2, 0)),
                "irfftn s": m.fft.irfftn(z, s=(3, 4, 11), axes=(0, 1, 2), norm="forward")}
    got = aotc.jit(lambda z, x: calls(anp, z, x))(z, x)
    for name, want in calls(np, z, x).items():
        close(got[name], want)


def test_round_trips_and_integer_input():
    x = RNG.integers(-5, 5, (4, 33))
    got = aotc.jit(lambda x: (anp.fft.irfft(anp.fft.rfft(x), 33), anp.fft.ifft(anp.fft.fft(x)),
                              anp.fft.fft(x), anp.fft.rfftn(x.astype(bool))))(x)
    np.testing.assert_allclose(np.asarray(got[0]), x, atol=1e-13)
    np.testing.assert_allclose(np.asarray(got[1]), x, atol=1e-13)
    close(got[2], np.fft.fft(x))
    close(got[3], np.fft.rfftn(x.astype(bool)))


def test_frequencies_and_shifts():
    x = signal((4, 7), np.float64)
    got = aotc.jit(lambda x: {
        "fftfreq": anp.fft.fftfreq(8, 0.1), "rfftfreq": anp.fft.rfftfreq(9, 2.0),
        "fftshift": anp.fft.fftshift(x), "ifftshift": anp.fft.ifftshift(x),
        "shift axis": anp.fft.fftshift(x, axes=1), "ishift axes": anp.fft.ifftshift(x, (0,)),
        "centered": anp.fft.fftshift(anp.fft.fftfreq(7))})(x)
    want = {"fftfreq": np.fft.fftfreq(8, 0.1), "rfftfreq": np.fft.rfftfreq(9, 2.0),
            "fftshift": np.fft.fftshift(x), "ifftshift": np.fft.ifftshift(x),
            "shift axis": np.fft.fftshift(x, axes=1), "ishift axes": np.fft.ifftshift(x, (0,)),
            "centered": np.fft.fftshift(np.fft.fftfreq(7))}
    for name in want:
        np.testing.assert_array_equal(np.asarray(got[name]), want[name])
        assert np.asarray(got[name]).dtype == want[name].dtype


def test_numpy_functions_trace_and_eager_calls():
    z = signal((2, 12))
    got = aotc.jit(lambda z: (np.fft.fft(z), np.fft.irfft(z, axis=0)))(z)
    close(got[0], np.fft.fft(z))
    close(got[1], np.fft.irfft(z, axis=0))
    close(anp.fft.fft(z), np.fft.fft(z))  # outside a trace
    close(anp.fft.rfft2(z.real), np.fft.rfft2(z.real))


def test_non_finite_input_spreads_as_numpy():
    z = signal((3, 16))
    z[0, 3] = np.nan
    z[1, 5] = np.inf
    got = np.asarray(aotc.jit(anp.fft.fft)(z))
    want = np.fft.fft(z)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    close(got[2], want[2])


def test_vmap_matches_a_loop():
    z = signal((5, 3, 24))
    x = signal((24, 5), np.float64)
    batched = aotc.jit(aotc.vmap(lambda z: anp.fft.fft2(z, norm="ortho")))(z)
    close(batched, np.stack([np.fft.fft2(v, norm="ortho") for v in z]))
    over_axis = aotc.jit(aotc.vmap(lambda v: anp.fft.rfft(v, n=17), in_axes=1))(x)
    close(over_axis, np.stack([np.fft.rfft(x[:, i], n=17) for i in range(5)]))
    z19 = signal((4, 19))
    prime = aotc.jit(aotc.vmap(anp.fft.ifft))(z19)
    close(prime, np.stack([np.fft.ifft(v) for v in z19]))


def test_inside_lax_control_flow():
    z = signal((2, 20))

    def repeated(z):
        return aotc.lax.fori_loop(0, 3, lambda i, v: anp.fft.ifft(anp.fft.fft(v) * 2.0), z)
    close(aotc.jit(repeated)(z), z * 8.0)


def test_convolution_length_and_factors():
    assert fourier.factors(48000) == [4, 4, 4, 2, 3, 5, 5, 5]
    assert fourier.factors(17) is None
    assert fourier.bluestein_length(17) == 36 and fourier.bluestein_length(1009) == 2025


ERRORS = [
    (lambda z: anp.fft.fft(z, n=0), ValueError, ["Invalid number of FFT data points (0)"]),
    (lambda z: anp.fft.irfft(z[:, :1]), ValueError, ["Invalid number of FFT data points (0)"]),
    (lambda z: anp.fft.fft(z, norm="both"), ValueError, ["Invalid norm value 'both'",
                                                         '"ortho"']),
    (anp.fft.rfft, TracingError, ["fft.rfft: the input must be real, got complex128",
                                  "a.real"]),
    (lambda z: anp.fft.fft(z, out=z), UnsupportedOpError, ["fft.fft: out= is not supported"]),
    (lambda z: anp.fft.fft(z[0, 0]), TracingError, ["fft.fft: the input must have at least "
                                                    "one axis"]),
    (lambda z: anp.fft.fftn(z, s=(2,), axes=(0, 1)), ValueError,
     ["Shape and axes have different lengths"]),
    (lambda z: anp.fft.fft(z, n=2.5), TracingError, ["fft.fft: n must be a Python int",
                                                     "float 2.5"]),
    (lambda z: anp.fft.fft(z, axis=2), TracingError, ["fft.fft axis: axis 2 is out of bounds"]),
]


@pytest.mark.parametrize("fn, error, fragments", ERRORS, ids=lambda v: "")
def test_errors_name_the_argument(fn, error, fragments):
    with raises_match(error, *fragments):
        aotc.jit(fn)(signal((2, 4)))
