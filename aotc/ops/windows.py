"""Window functions (``bartlett``, ``blackman``, ``hamming``, ``hanning``, ``kaiser``) and
the modified Bessel function of order zero, ``i0``, that the Kaiser window is made of.

A window's length M is static, so numpy computes the window at trace time and it becomes
a constant; only ``kaiser`` with a traced ``beta`` is computed in the traced program.
``i0`` is numpy's algorithm (Cephes): Chebyshev series in ``x/2 - 2`` for ``|x| <= 8`` and
in ``32/x - 2`` beyond, summed by Clenshaw's recurrence, times ``exp(|x|)`` -- elementwise
arithmetic only, in the input's float dtype (integers in float64), as numpy computes it.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, x64
from ..core import Tracer, current_trace
from ..errors import TracingError, UnsupportedDtypeError
from .arguments import as_tracer, static_value
from .elementwise import astype, elementwise_where, ufunc

EXPORTS: dict[str, list[str]] = {
    "numpy": ["bartlett", "blackman", "hamming", "hanning", "kaiser", "i0"],
}

# Cephes' Chebyshev coefficients of exp(-x) i0(x), as numpy's _i0A (on [0, 8]) and _i0B
# (exp(-x) sqrt(x) i0(x) on [8, inf)) hold them.
_I0_SMALL = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0_LARGE = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)


def _chebyshev(x: Tracer, coefficients) -> Tracer:
    """Clenshaw's sum of a Chebyshev series at ``x`` (Cephes' chbevl, as numpy's)."""
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = ufunc("add", ufunc("subtract", ufunc("multiply", x, b1), b2), c)
    return ufunc("multiply", 0.5, ufunc("subtract", b0, b2))


def i0(x) -> Tracer:
    """numpy.i0: the modified Bessel function of the first kind, order 0, elementwise, in
    the input's float dtype (integers and bools in float64)."""
    t = as_tracer(x, "i0")
    if not dtypes.is_float(t.dtype):
        if t.dtype.kind == "c":
            raise UnsupportedDtypeError("i0: complex arguments are not supported (numpy "
                                        f"refuses them too), got {t.dtype}")
        t = astype(t, x64.default_float())
    a = ufunc("absolute", t)
    grows = ufunc("exp", a)
    small = ufunc("multiply", grows, _chebyshev(ufunc("subtract", ufunc("divide", a, 2.0),
                                                      2.0), _I0_SMALL))
    large = ufunc("divide", ufunc("multiply", grows, _chebyshev(
        ufunc("subtract", ufunc("divide", 32.0, a), 2.0), _I0_LARGE)), ufunc("sqrt", a))
    return elementwise_where(ufunc("less_equal", a, 8.0), small, large)


def _window_length(M, where: str) -> int:
    M = static_value(M, f"{where} window length M")
    if isinstance(M, bool) or not isinstance(M, (int, np.integer, float, np.floating)) \
            or int(M) != M:
        raise TracingError(f"{where}: the window length M must be an integer, got {M!r}")
    return int(M)


def _numpy_window(name: str):
    numpy_fn = getattr(np, name)

    def window(M) -> Tracer:
        return current_trace().constant(numpy_fn(_window_length(M, name)))

    window.__name__ = window.__qualname__ = name
    window.__doc__ = (f"numpy.{name}: the {name.capitalize()} window of static length M "
                      f"(float64, computed by numpy: a constant).")
    return window


bartlett, blackman, hamming, hanning = (
    _numpy_window(n) for n in ("bartlett", "blackman", "hamming", "hanning"))


def kaiser(M, beta) -> Tracer:
    """numpy.kaiser: the Kaiser window ``i0(beta sqrt(1 - ((n - a)/a)**2)) / i0(beta)``,
    a = (M - 1)/2, of static length M; a traced ``beta`` is computed in the program."""
    length = _window_length(M, "kaiser")
    if not isinstance(beta, Tracer):
        return current_trace().constant(np.kaiser(length, beta))
    if length <= 1:
        return current_trace().constant(np.ones(max(length, 0)))
    alpha = (length - 1) / 2.0
    ratio = (np.arange(length) - alpha) / alpha
    beta = astype(beta, dtypes.result_type(beta.dtype, x64.default_float()))
    argument = ufunc("multiply", beta, np.sqrt(1 - ratio * ratio))
    return ufunc("divide", i0(argument), i0(beta))

