"""aotc's float64 sin, cos, tan, arcsin, arccos, arctan, arctan2 (passes/libm, put in by
the CPU targets' aotc-expand-math pass) against the exact values (mpmath at 1500 bits,
enough for the reduction of the largest float64), and float32 sin, cos, tan (computed in
float64 by aotc-expand-math-f32) within half an ulp and a little: correctly rounded but
for double rounding.

Every result must be within 2 ulp of the exact value (ulp: the spacing of floats at the
exact value; the measured maximum is 1.2, just below a power of two, where the spacing
halves), as numpy's own are (and at times not: it is 8 ulp off at
cos(5.319372648326541e+255)), and
special values (+-0, +-inf, NaN, the domain edges) must be numpy's exactly, signs included.
One compiled function computes all seven, so the suite pays one compile.
"""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp

from .conftest import jit_call

mpmath = pytest.importorskip("mpmath")

UNARY = {"sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
         "arcsin": mpmath.asin, "arccos": mpmath.acos, "arctan": mpmath.atan}

# Arguments near multiples of pi/2, where the reduction must keep 61 bits more than the
# result has: the closest float64 (6381956970095103 * 2**797), and others found by search.
HARD = [6381956970095103 * 2.0 ** 797, 5.319372648326541e+255, 1.0e22, 2.0 ** 1023,
        np.finfo(np.float64).max, 2.0 ** 20, 2.0 ** 20 + 0.5, 1647099.3291652855,
        np.pi / 2, np.pi, 3 * np.pi / 2, 1e6 * np.pi, 0.6744, 0.7853981633974483]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 0.975, 1.0000000000000002,
           np.finfo(np.float64).tiny, 2.0 ** -27, 2.0 ** -60, 2.0 ** 66]


TINY = np.finfo(np.float64).tiny


def _arguments(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sign = rng.choice([-1.0, 1.0], 1200)
    parts = [
        rng.uniform(-4, 4, 1200),                           # the kernels' intervals
        rng.uniform(-2.0 ** 20, 2.0 ** 20, 600),            # Cody-Waite's whole range
        sign * 10.0 ** rng.uniform(6.2, 308, 1200),         # Payne-Hanek's
        sign * 10.0 ** rng.uniform(-307, 0, 1200),          # small magnitudes
        rng.uniform(-1, 1, 1200),                           # arcsin/arccos's domain
    ]
    values = np.concatenate(parts + [np.array(HARD), -np.array(HARD)])
    return values


def _ulps(got: float, exact) -> float:
    exact_float = float(exact)
    if got == exact_float or (got == 0 and abs(exact_float) < TINY):
        return 0.0  # subnormal results are flushed to zero by IREE's CPU runtime
    return float(abs(mpmath.mpf(got) - exact) / np.spacing(abs(exact_float)))


def _every_function(x, y):
    out = {name: getattr(anp, name)(x) for name in UNARY}
    out["arctan2"] = anp.arctan2(y, x)
    return out


@pytest.fixture(scope="module")
def results():
    x = _arguments()
    y = np.random.default_rng(1).permutation(x)
    with np.errstate(all="ignore"):
        return x, y, jit_call(_every_function, x, y)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_within_two_ulp_of_exact(results, name):
    x, _, got = results
    exact_fn = UNARY[name]
    mpmath.mp.prec = 1500
    worst = (0.0, None)
    for xi, gi in zip(x, got[name]):
        if name in ("arcsin", "arccos") and abs(xi) > 1:
            assert np.isnan(gi), (name, xi, gi)
            continue
        if name == "tan" and abs(xi) > 1e300:
            continue  # mpmath.tan of the largest floats: checked through sin/cos instead
        err = _ulps(float(gi), exact_fn(mpmath.mpf(float(xi))))
        worst = max(worst, (err, xi), key=lambda w: w[0])
    assert worst[0] <= 2.0, f"{name}: {worst[0]:.2f} ulp at x = {worst[1]!r}"


def test_arctan2_within_two_ulp_of_exact(results):
    x, y, got = results
    mpmath.mp.prec = 200
    errors = [(_ulps(float(g), mpmath.atan2(mpmath.mpf(float(b)), mpmath.mpf(float(a)))), b, a)
              for a, b, g in zip(x, y, got["arctan2"])]
    worst = max(errors, key=lambda e: e[0])
    assert worst[0] <= 2.0, f"arctan2: {worst[0]:.2f} ulp at y, x = {worst[1]!r}, {worst[2]!r}"


def test_special_values_are_numpys():
    x = np.array(SPECIAL + [-v for v in SPECIAL])
    # arctan2 of every pair of signed zeros, infinities, NaN and ones (C99's table).
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])
    ya, xa = (a.ravel() for a in np.meshgrid(edges, edges))
    x_all = np.concatenate([x, xa])
    y_all = np.concatenate([x, ya])
    got = jit_call(_every_function, x_all, y_all)
    with np.errstate(all="ignore"):
        for name in UNARY:
            want = getattr(np, name)(x_all)
            _assert_same_with_signs(got[name], want, name)
        _assert_same_with_signs(got["arctan2"], np.arctan2(y_all, x_all), "arctan2")


def _assert_same_with_signs(got, want, name):
    """Equal where numpy's result is 0, inf or NaN (exact by definition), within 1 ulp
    elsewhere; the same signs everywhere."""
    exact = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(got[exact], want[exact], err_msg=name)
    np.testing.assert_array_max_ulp(got[~exact], want[~exact], maxulp=1)
    numbers = ~np.isnan(want)  # a NaN's sign means nothing (numpy's differ by CPU)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]),
                                  err_msg=f"{name}: signs")


def test_float32_trig_is_correctly_rounded_but_for_double_rounding():
    rng = np.random.default_rng(2)
    sign = rng.choice([-1.0, 1.0], 3000)
    x = np.concatenate([
        rng.uniform(-10, 10, 1000),
        sign[:1000] * 10.0 ** rng.uniform(1, 38.5, 1000),  # up to 3.2e38
        rng.uniform(2.0 ** 19, 2.0 ** 21, 1000),           # around the reductions' switch
        [3.4e38, 1e20, 16777215.0, 2.0 ** 20],
    ]).astype(np.float32)
    got = jit_call(lambda v: {n: getattr(anp, n)(v) for n in ("sin", "cos", "tan")}, x)
    mpmath.mp.prec = 400
    for name in ("sin", "cos", "tan"):
        worst = (0.0, None)
        for xi, gi in zip(x, got[name]):
            exact = UNARY[name](mpmath.mpf(float(xi)))
            spacing = float(np.spacing(np.abs(np.float32(float(exact)))))
            err = float(abs(mpmath.mpf(float(gi)) - exact)) / spacing
            worst = max(worst, (err, xi), key=lambda w: w[0])
        assert worst[0] <= 0.501, f"float32 {name}: {worst[0]:.3f} ulp at x = {worst[1]!r}"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_math_of_constant_specials_is_numpys(dtype):
    """NaN, inf and -inf that the compiler knows (``x * 0 + nan``) reach math functions
    computed at compile time: float32 exp, cosh and sinh came back as garbage or memory
    never written (IREE's expansion converts NaN to an integer, which LLVM folds to
    poison), float16 sin as 0 (aotc's own reduction did the same: fuzzer program 17509).
    Every unary function of the specials, and power with them as base, in one compile."""
    names = ["exp", "log", "cosh", "tanh", "expm1", "exp2", "log1p", "sinh", "sqrt", "cbrt",
             "arctan", "log2", "log10", "sin", "cos", "tan", "arcsin", "arccos", "arcsinh",
             "arccosh", "arctanh", "rint", "floor"]
    t = np.dtype(dtype).type
    x = np.array([0, 1, 2], dtype)

    def specials(m, x):
        out = []
        for special in (np.nan, np.inf, -np.inf):
            s = x * 0 + t(special)
            out += [getattr(m, name)(s) for name in names] + [m.power(s, x)]
        return out

    got = aotc.jit(lambda x: specials(anp, x))(x)
    with np.errstate(all="ignore"):
        for g, w in zip(got, specials(np, x)):
            np.testing.assert_array_equal(np.asarray(g), w)
