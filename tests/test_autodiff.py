"""aotc.grad and friends against central finite differences (always) and JAX (where
installed): every op family the reverse-mode pass has a rule for, pytrees, argnums,
has_aux, composition with jit/vmap and with itself, forward mode, and the errors.

Each table is one compiled program returning every case's gradient, so a table costs
one compile (the cases of a table share IREE's per-module cost)."""

from __future__ import annotations

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.autodiff import DifferentiationError

from tests.gradient_checks import (PythonLax, check_gradients, finite_difference, jax, jnp,
                                   reference)

RNG = np.random.default_rng(7)
X = RNG.uniform(0.2, 0.8, (3, 4))
Y = RNG.uniform(0.2, 0.8, (1, 4))

# f(m, a, b) -> scalar, written once for aotc.numpy, numpy and jax.numpy.
TABLES = {
    "unary": {
        "sin_cos_tan": lambda m, a, b: m.sum(m.sin(a) * b + m.cos(a) + m.tan(a)),
        "inverse_trig": lambda m, a, b: m.sum(m.arcsin(a) + m.arccos(a) * b + m.arctan(a)),
        "exp_log": lambda m, a, b: m.sum(m.exp(a) * m.log(a) + m.log1p(a) + m.expm1(b)),
        "bases": lambda m, a, b: m.sum(m.log2(a) + m.log10(a) + m.exp2(a) + m.cbrt(a)),
        "hyperbolic": lambda m, a, b: m.sum(m.sinh(a) * m.cosh(b) + m.tanh(a) + m.arctanh(a)
                                            + m.arcsinh(a) + m.arccosh(a + 1)),
        "roots": lambda m, a, b: m.sum(m.sqrt(a) + 1 / m.sqrt(a + b) + m.square(a)
                                       + m.reciprocal(a)),
        "piecewise": lambda m, a, b: m.sum(m.abs(a - 0.5) * 3 + m.floor(a * 4) + m.round(a)
                                           + m.clip(a, 0.3, 0.6) ** 2),
    },
    "binary": {
        "arith": lambda m, a, b: m.sum((a + b) * (a - b) / (a * b + 1)),
        "power": lambda m, a, b: m.sum(a ** b + a ** 3 + a ** 0.5 + 2.0 ** a),
        "arctan2_hypot": lambda m, a, b: m.sum(m.arctan2(a, b) + m.hypot(a, b)),
        "extrema": lambda m, a, b: m.sum(m.maximum(a, b) * 2 + m.minimum(a, b)),
        "where": lambda m, a, b: m.sum(m.where(a > b, a * a, b)),
    },
    "reductions": {
        "moments": lambda m, a, b: m.var(a) + m.std(a, axis=0).sum() + m.mean(a, axis=1).sum(),
        "extrema": lambda m, a, b: m.max(a, axis=0).sum() + m.min(a) + m.max(a * b),
        "logsumexp": lambda m, a, b: m.log(m.sum(m.exp(a), axis=1)).sum(),
        "softmax": lambda m, a, b: m.sum(
            m.exp(a - m.max(a, axis=1, keepdims=True))
            / m.sum(m.exp(a - m.max(a, axis=1, keepdims=True)), axis=1, keepdims=True)
            * m.arange(4.0)),
        "norm": lambda m, a, b: m.linalg.norm(a) + m.linalg.norm(a, axis=1).sum(),
        "prod": lambda m, a, b: m.prod(a, axis=1).sum() + m.prod(m.where(a > 0.5, a * b, 0.0),
                                                                   axis=0).sum(),
        "cumsum": lambda m, a, b: m.sum(m.cumsum(a * b, axis=1) ** 2) + m.sum(m.cumsum(a, 0)),
        # through a zero too: the derivative is not a quotient of products
        "cumprod": lambda m, a, b: m.sum(m.cumprod(a + b, axis=1) * m.arange(4.0))
        + m.sum(m.cumprod(m.where(a > 0.5, a, 0.0), axis=0)),
    },
    "contractions": {
        "matmul": lambda m, a, b: m.sum((a @ a.T) * 2) + m.sum(a.T @ m.ones((3, 2))),
        "einsum": lambda m, a, b: m.sum(m.einsum("ij,kj->ik", a, a * b)),
        "dot_outer": lambda m, a, b: m.dot(a[0], a[1]) + m.sum(m.outer(a[0], b[0]) ** 2),
        "tensordot": lambda m, a, b: m.sum(m.tensordot(a, a, axes=([1], [1])) ** 2),
        "batched": lambda m, a, b: m.sum(m.matmul(m.stack([a, a * 2]),
                                                  m.stack([a.T, a.T + 1])) ** 2),
    },
    "shapes": {
        "slices": lambda m, a, b: m.sum(a[1:, ::2] ** 2) + m.sum(a[0]) * 3 + a[2, 3],
        "concat_stack": lambda m, a, b: m.sum(m.concatenate([a, b * a, a[:1]], 0) ** 2)
        + m.sum(m.stack([a, a * 2], axis=1) ** 3),
        "reshape": lambda m, a, b: m.sum(m.reshape(a, (4, 3)) * m.arange(12.0).reshape(4, 3)),
        "pad": lambda m, a, b: m.sum(m.pad(a, ((1, 2), (0, 1))) ** 2
                                     * m.arange(30.0).reshape(6, 5)),
        "flip_roll": lambda m, a, b: m.sum((m.flip(a, 0) + m.roll(a, 1, axis=1))
                                           * m.arange(12.0).reshape(3, 4)),
        "tile_repeat": lambda m, a, b: m.sum(m.tile(a, (2, 1)) ** 2)
        + m.sum(m.repeat(a, 2, axis=1) ** 3),
        "broadcast": lambda m, a, b: m.sum(m.broadcast_to(b, (5, 3, 4))
                                           * m.arange(60.0).reshape(5, 3, 4)),
    },
    "gathers": {
        "take": lambda m, a, b: m.sum(a[:, m.array([0, 2, 2])] ** 2),
        "take_along_axis": lambda m, a, b: m.sum(
            m.take_along_axis(a, m.array([[0], [3], [1]]), axis=1) ** 3),
        "sort": lambda m, a, b: m.sum(m.sort(a, axis=1) * m.arange(4.0)),
        "diagonal": lambda m, a, b: m.sum(m.diagonal(a)) + m.trace(a * b),
    },
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_gradients_of_each_op_family(table):
    cases = TABLES[table]

    @aotc.jit
    def all_gradients(a, b):
        return {name: aotc.grad(lambda a, b, f=f: f(anp, a, b), argnums=(0, 1))(a, b)
                for name, f in cases.items()}

    check_gradients(all_gradients(X, Y), cases, (X, Y), jax_rtol=1e-12, what=f"{table}/")


CONTROL = {
    "fori_loop": lambda m, L, v: m.sum(L.fori_loop(0, 3, lambda i, c: m.sin(c) * v + i, v)),
    "cond": lambda m, L, v: m.sum(L.cond(v[0] > 0, lambda a: a * a * v, lambda a: a + 1,
                                         v * 2)),
    "switch": lambda m, L, v: m.sum(L.switch(1, [lambda a: a * 2, lambda a: m.sin(a) * v,
                                                 lambda a: a ** 3], v)),
    "scan": lambda m, L, v: m.sum(L.scan(lambda h, xi: (m.tanh(h * xi), h + xi), v,
                                         m.stack([v, v * 2, v * v]))[1] ** 2),
    "scan_pair_carry": lambda m, L, v: m.sum(L.scan(
        lambda c, xi: ((c[0] * xi, c[1] + c[0] * xi), c[0] + xi), (v, v * 2),
        m.stack([v, v + 1]))[0][1]),
    "cumulative ops": lambda m, L, v: m.sum(m.arange(3.0) * L.cummax(v * v, reverse=True))
    + m.sum(m.arange(3.0) * L.cumlogsumexp(v)),
    "nested": lambda m, L, v: m.sum(L.fori_loop(0, 2, lambda i, c: L.cond(
        i > 0, lambda a: a * v, lambda a: m.cos(a), c), v)),
}


def test_gradients_through_control_flow():
    x = np.array([0.3, -0.5, 0.8])

    @aotc.jit
    def all_gradients(v):
        return {name: aotc.grad(lambda v, f=f: f(anp, aotc.lax, v))(v)
                for name, f in CONTROL.items()}

    got = all_gradients(x)
    for name, f in CONTROL.items():
        expected = finite_difference(lambda v: f(np, PythonLax, v), (x,), 0)
        np.testing.assert_allclose(np.asarray(got[name]), expected, rtol=1e-6, atol=1e-7,
                                   err_msg=name)
        if jax is not None:
            expected_jax = reference(jax.grad(lambda v, f=f: f(jnp, jax.lax, v)), x)
            np.testing.assert_allclose(np.asarray(got[name]), expected_jax, rtol=1e-12,
                                       atol=1e-12, err_msg=f"{name} vs jax")


def _mlp_loss(m):
    def loss(params, x, y):
        h = m.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"] + params["b2"]
        return m.mean((out - y) ** 2)
    return loss


PARAMS = {"w1": RNG.standard_normal((3, 4)), "b1": RNG.standard_normal(4),
          "w2": RNG.standard_normal((4, 2)), "b2": RNG.standard_normal(2)}
XB, YB = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 2))


def _flat_fd(loss, params, x, y):
    """Finite differences of ``loss`` with respect to each leaf of ``params``."""
    out = {}
    for key, value in params.items():
        def of_leaf(v, key=key):
            return loss({**params, key: v}, x, y)
        out[key] = finite_difference(of_leaf, (value,), 0)
    return out


def test_pytree_parameters_value_and_grad_and_per_example_gradients():
    @aotc.jit
    def step(params, x, y):
        value, grads = aotc.value_and_grad(_mlp_loss(anp))(params, x, y)
        per_example = aotc.vmap(aotc.grad(_mlp_loss(anp)), in_axes=(None, 0, 0))(params, x, y)
        return value, grads, per_example

    value, grads, per_example = step(PARAMS, XB, YB)
    np.testing.assert_allclose(np.asarray(value), _mlp_loss(np)(PARAMS, XB, YB), rtol=1e-14)
    expected = _flat_fd(_mlp_loss(np), PARAMS, XB, YB)
    for key in PARAMS:
        np.testing.assert_allclose(np.asarray(grads[key]), expected[key], rtol=1e-6, atol=1e-8)
    # vmap of grad against a Python loop of grads, one example at a time
    for i in range(len(XB)):
        one = _flat_fd(_mlp_loss(np), PARAMS, XB[i], YB[i])
        for key in PARAMS:
            np.testing.assert_allclose(np.asarray(per_example[key][i]), one[key], rtol=1e-6,
                                       atol=1e-8, err_msg=f"example {i}, {key}")


def test_jacfwd_keeps_the_primal_values_out_of_the_batch():
    """jacfwd batches the tangents only: the tanh of ``v @ w`` (its exp and log) runs on
    the unbatched [8] values once, and the batched generics only multiply and add."""
    w = RNG.standard_normal((4, 8))
    text = aotc.jit(aotc.jacfwd(lambda v: anp.tanh(v @ w))).lower(np.ones(4)).as_text()
    dear = []
    for generic in text.split("linalg.generic")[1:]:
        header, body = generic.split("^bb0", 1)
        if "math.exp" in body.split("linalg.yield")[0]:
            dear.append(header)
    assert dear and not any("4x8x" in h or "8x4x" in h for h in dear), dear


def test_second_derivatives_jacobians_and_forward_mode():
    x = RNG.standard_normal(5)
    a = RNG.standard_normal((5, 5))

    def f(m, v):
        return m.sum(m.sin(v) * v ** 2) + v @ a @ v + m.max(m.tanh(v))

    def g(m, v):
        return m.tanh(a @ v) * v

    @aotc.jit
    def everything(v, t):
        return {
            "grad_grad": aotc.grad(lambda v: aotc.grad(lambda w: f(anp, w))(v).sum())(v),
            "hessian": aotc.hessian(lambda w: f(anp, w))(v),
            "jacrev": aotc.jacrev(lambda w: g(anp, w))(v),
            "jacfwd": aotc.jacfwd(lambda w: g(anp, w))(v),
            "jvp": aotc.jvp(lambda w: g(anp, w), (v,), (t,)),
        }

    t = RNG.standard_normal(5)
    got = everything(x, t)
    jac = np.stack([finite_difference(lambda w: g(np, w)[i], (x,), 0) for i in range(5)])
    np.testing.assert_allclose(np.asarray(got["jacrev"]), jac, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(got["jacfwd"]), jac, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(got["jvp"][0]), g(np, x), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(got["jvp"][1]), jac @ t, rtol=1e-6, atol=1e-8)
    grad_f = lambda w: finite_difference(lambda v: f(np, v), (w,), 0, 1e-5)  # noqa: E731
    hess = np.stack([finite_difference(lambda w: grad_f(w)[i], (x,), 0, 1e-4)
                     for i in range(5)])
    np.testing.assert_allclose(np.asarray(got["hessian"]), hess, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got["grad_grad"]), hess.sum(axis=0), rtol=1e-4,
                               atol=1e-5)
    if jax is not None:
        np.testing.assert_allclose(np.asarray(got["hessian"]),
                                   reference(jax.hessian(lambda w: f(jnp, w)), x), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(np.asarray(got["jacfwd"]),
                                   reference(jax.jacfwd(lambda w: g(jnp, w)), x), rtol=1e-12,
                                   atol=1e-12)


# (m, lax, a, b) -> an array: forward mode's cases, per op family.
FORWARD_CASES = {
    "elementwise": lambda m, lax, a, b: m.sin(a) * m.exp(b) + m.tanh(a * b) ** 2 / (1 + a),
    "reductions": lambda m, lax, a, b: m.max(a, axis=1) + m.sum(a * b, axis=0)[:3]
    + m.prod(a, axis=1) + m.mean(m.abs(a - 0.5)),
    "contractions": lambda m, lax, a, b: (a @ a.T) @ m.ones(3) + m.einsum("ij,kj->i", a, b),
    "shapes": lambda m, lax, a, b: m.concatenate([a[1:, ::2].reshape(-1), m.pad(a, 1).sum(0),
                                                   m.cumsum(a * b, axis=1)[:, -1]]),
    "gathers": lambda m, lax, a, b: m.take(a.reshape(-1), m.array([3, 0, 7, 7]))
    + m.sort(a, axis=1)[:, :2].sum(1).sum() + a.at[0, 1:3].add(b[0, :2])[0, :4],
    "scans": lambda m, lax, a, b: lax.cummax(a * b, axis=1) + lax.cummin(a, axis=0, reverse=True)
    + lax.cumlogsumexp(b + a, axis=1) + m.cumprod(a - b, axis=1),
    "fori_cond": lambda m, lax, a, b: lax.fori_loop(0, 3, lambda i, h: m.sin(h) * a[0], b[0])
    + lax.cond(a[0, 0] > 0.5, lambda: m.exp(a[1]), lambda: a[1] * b[1]),
    # Newton's iteration for sqrt(a * b) until it converges (a data-dependent trip count)
    "while": lambda m, lax, a, b: lax.while_loop(
        lambda s: m.max(m.abs(s[0] * s[0] - a * b)) > 1e-12,
        lambda s: ((s[0] + a * b / s[0]) / 2, s[1] + 1), (a + b, 0))[0],
}


def test_forward_mode_matches_finite_differences_and_jax():
    a, b, ta, tb = X, Y.repeat(3, 0), RNG.standard_normal(X.shape), RNG.standard_normal((3, 4))

    def cases(m, lax, a, b):
        return {k: f(m, lax, a, b) for k, f in FORWARD_CASES.items()}

    primal = aotc.jit(lambda a, b: cases(anp, aotc.lax, a, b))
    out, tangent = aotc.jit(lambda a, b, ta, tb: aotc.jvp(
        lambda a, b: cases(anp, aotc.lax, a, b), (a, b), (ta, tb)))(a, b, ta, tb)
    eps = 1e-6
    up, down = primal(a + eps * ta, b + eps * tb), primal(a - eps * ta, b - eps * tb)
    for k in FORWARD_CASES:
        fd = (np.asarray(up[k]) - np.asarray(down[k])) / (2 * eps)
        np.testing.assert_allclose(np.asarray(tangent[k]), fd, rtol=1e-6, atol=1e-7,
                                   err_msg=k)
        np.testing.assert_allclose(np.asarray(out[k]), np.asarray(primal(a, b)[k]),
                                   rtol=1e-14, err_msg=k)
    if jax is not None:
        want = reference(lambda *p: jax.jvp(lambda a, b: cases(jnp, jax.lax, a, b), p[:2],
                                            p[2:]), a, b, ta, tb)
        for k in FORWARD_CASES:
            np.testing.assert_allclose(np.asarray(tangent[k]), want[1][k], rtol=1e-12,
                                       atol=1e-12, err_msg=k)


def test_eager_calls_has_aux_argnums_and_stop_gradient():
    x = RNG.standard_normal(4).astype(np.float32)
    # eager (each jits itself), float32 stays float32
    dx = aotc.grad(lambda v: anp.sum(v * v * v))(x)
    assert np.asarray(dx).dtype == np.float32
    np.testing.assert_allclose(np.asarray(dx), 3 * x * x, rtol=1e-6)
    grads, aux = aotc.grad(lambda v, w: (anp.sum(v * w), v + w), argnums=(0, 1),
                           has_aux=True)(x, 2 * x)
    np.testing.assert_allclose(np.asarray(grads[0]), 2 * x)
    np.testing.assert_allclose(np.asarray(grads[1]), x)
    np.testing.assert_allclose(np.asarray(aux), 3 * x)
    # x * stop_gradient(x): only the first factor is differentiated
    ds = aotc.grad(lambda v: anp.sum(v * aotc.lax.stop_gradient(v)))(x)
    np.testing.assert_allclose(np.asarray(ds), x)
    out, pullback = aotc.vjp(lambda v, n: anp.sin(v) * n, x, np.int32(3))
    dv, dn = pullback(np.ones(4, np.float32))
    np.testing.assert_allclose(np.asarray(dv), 3 * np.cos(x), rtol=1e-6)
    assert dn.dtype == aotc.float0 and dn.shape == ()


def test_stop_gradient_leaves_no_barrier_in_the_compiled_module():
    lowered = aotc.jit(aotc.grad(lambda v: anp.sum(v * aotc.lax.stop_gradient(v)))).lower(
        np.ones(3))
    assert "aotc.stop_gradient" in lowered.as_text("traced")
    assert "optimization_barrier" not in lowered.as_text()


def test_modules_with_adjoints_compile_without_aggressive_fusion():
    """Reverse mode, also under vmap and in an export, compiles with build.ADJOINT_FLAGS
    (IREE's aggressive fusion failed on some adjoints); the function alone and forward
    mode keep IREE's fusion. Values are unchanged: the gradient is cos(x)."""
    from aotc.build import ADJOINT_FLAGS

    x = np.linspace(0.0, 1.0, 6)
    f = lambda v: anp.sum(anp.sin(v))  # noqa: E731
    with_adjoints = [aotc.jit(aotc.grad(f)).lower(x).flags,
                     aotc.jit(aotc.vmap(aotc.grad(f))).lower(x[None].repeat(3, 0)).flags,
                     aotc.export(aotc.grad(f), x).flags]
    without = [aotc.jit(f).lower(x).flags,
               aotc.jit(lambda v: aotc.jvp(f, (v,), (v,))[1]).lower(x).flags]
    assert all(set(ADJOINT_FLAGS) <= set(flags) for flags in with_adjoints), with_adjoints
    assert not any(set(ADJOINT_FLAGS) & set(flags) for flags in without), without
    np.testing.assert_allclose(np.asarray(aotc.jit(aotc.grad(f))(x)), np.cos(x), rtol=1e-12)


def test_errors_name_the_cause_and_the_fix():
    x = np.ones(3)
    with pytest.raises(DifferentiationError, match=r"scalar-output functions. Output had "
                                                   r"shape: \(3,\)"):
        aotc.grad(lambda v: v * 2)(x)
    with pytest.raises(DifferentiationError, match=r"requires real-valued inputs .* but got "
                                                   r"int\d+ for argument n"):
        aotc.grad(lambda v, n: anp.sum(v) * n, argnums=1)(x, 3)
    with pytest.raises(DifferentiationError, match="has_aux=True requires the function to "
                                                   "return a pair"):
        aotc.grad(lambda v: anp.sum(v), has_aux=True)(x)
    with pytest.raises(DifferentiationError, match="argnums=2 does not name a positional"):
        aotc.grad(lambda v: anp.sum(v), argnums=2)(x)
    with pytest.raises(aotc.CompileError, match=r"cannot differentiate scf.while at "
                                                r"test_autodiff.py:\d+ .*while_loop"):
        aotc.grad(lambda v: aotc.lax.while_loop(lambda c: c[0] < 3,
                                                lambda c: (c[0] + 1, c[1] * v),
                                                (0, v))[1].sum())(x)
    # frexp's mantissa and nextafter are rebuilt from their operand's bits: refused (as by
    # JAX), not silently zero. (fmod and remainder also work on bits, but carry JAX's rule:
    # aotc/ufunc_derivatives.py, tests/test_gradient_coverage.py.)
    with pytest.raises(aotc.CompileError, match=r"computes arith.\w+ \(a float rebuilt "
                                                r"from the bits of a differentiated value\)"):
        aotc.grad(lambda v: anp.sum(anp.frexp(v)[0]))(x)
    with pytest.raises(aotc.CompileError, match=r"computes arith.\w+ \(a float rebuilt "
                                                r"from the bits of a differentiated value\)"):
        aotc.grad(lambda v: anp.sum(anp.nextafter(v, 2.0)))(x)
    with pytest.raises(DifferentiationError, match=r"requires real-valued outputs .* is "
                                                   r"complex128"):
        aotc.grad(lambda v: anp.sum(v * 1j))(x)
    with pytest.raises(aotc.CompileError, match=r"cannot differentiate iree_linalg_ext.scatter "
                                                r".*pass unique_indices=True"):
        aotc.grad(lambda v: anp.sum(v.at[anp.array([0, 0])].multiply(v[:2])))(x)
    with pytest.raises(aotc.CompileError, match=r"cannot differentiate flow.dispatch.region "
                                                r"at .*no reverse-mode rule.*@rule"):
        aotc.grad(lambda v: anp.sum(anp.linalg.qr(anp.eye(3) + anp.outer(v, v), mode="raw")[0]))(x)

    @aotc.jit
    def bad_cotangent(v):
        _, pullback = aotc.vjp(lambda w: w * 2, v)
        return pullback(anp.ones(4))

    with pytest.raises(DifferentiationError, match=r"cotangent of output 0 has shape \(4,\) "
                                                   r"but the output has shape \(3,\)"):
        bad_cotangent(x)


def test_closures_over_the_callers_traced_arrays():
    """grad(lambda p: loss(p, x, y))(params) inside jit, as JAX programs write it: the
    closed-over traced arrays become arguments of the differentiated function; an
    enclosing derivative differentiates through them; vmap captures them too."""
    x = RNG.standard_normal(3)

    @aotc.jit
    def closures(v, w):
        inner = aotc.grad(lambda u: anp.sum(anp.sin(u * w) * v))(v)  # w, v closed over
        nested = aotc.grad(lambda a: aotc.grad(lambda b: anp.sum(a * b * b))(w).sum())(v)
        batched = aotc.vmap(lambda row: anp.sum(row * w))(anp.stack([v, 2 * v]))
        return inner, nested, batched

    w = RNG.standard_normal(3)
    inner, nested, batched = closures(x, w)
    # the closed-over v is a constant to this derivative (JAX's semantics)
    np.testing.assert_allclose(np.asarray(inner), w * np.cos(x * w) * x, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nested), 2 * w, rtol=1e-12)  # d/da sum(2 a w)
    np.testing.assert_allclose(np.asarray(batched), [np.sum(x * w), np.sum(2 * x * w)],
                               rtol=1e-12)


CONVOLUTIONS = {
    "conv_same_strided": lambda lax, m, x, w: m.sum(m.tanh(lax.conv_general_dilated(
        x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))) ** 2),
    "conv_dilated": lambda lax, m, x, w: m.sum(lax.conv_general_dilated(
        x, w, (1, 1), "VALID", rhs_dilation=(2, 1),
        dimension_numbers=("NHWC", "HWIO", "NHWC")) ** 2),
    "conv_1d": lambda lax, m, x, w: m.sum(lax.conv_general_dilated(
        x[:, 0], w[0], (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")) ** 2),
    "depthwise": lambda lax, m, x, w: m.sum(lax.conv_general_dilated(
        x, w[:, :, :1, :2], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=2) ** 2),
    "conv_nchw": lambda lax, m, x, w: m.sum(lax.conv_general_dilated(
        m.transpose(x, (0, 3, 1, 2)), m.transpose(w, (3, 2, 0, 1)), (1, 1), "SAME") ** 2),
    # one input channel: both operands get a zero second channel (ops/convolution.py)
    "one_channel": lambda lax, m, x, w: m.sum(m.tanh(lax.conv_general_dilated(
        x[..., :1], w[:, :, :1], (1, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
        ** 2),
    "one_channel_1d": lambda lax, m, x, w: m.sum(lax.conv_general_dilated(
        x[:, 1, :, 1:], w[1, :, 1:], (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC")) ** 2),
    "max_pool": lambda lax, m, x, w: m.sum(lax.reduce_window(
        x * w[0, 0, 0, 0], -np.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "VALID") ** 2),
    "max_pool_tiled": lambda lax, m, x, w: m.sum(lax.reduce_window(
        m.tanh(x) * w[0, 1, 0, 2], -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") ** 2),
    "avg_pool": lambda lax, m, x, w: m.sum(lax.reduce_window(
        x * w[1, 1, 1, 1], 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") ** 2),
}


def test_gradients_of_convolutions_and_pooling():
    """A filter's adjoint is a contraction, an input's a scatter of its contributions
    (the generalized op's non-projected map); checked by finite differences of aotc's own
    forward function and against JAX."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((1, 5, 5, 2)), rng.standard_normal((3, 2, 2, 3))

    @aotc.jit
    def all_gradients(a, b):
        return {name: aotc.grad(lambda a, b, f=f: f(aotc.lax, anp, a, b), argnums=(0, 1))(a, b)
                for name, f in CONVOLUTIONS.items()}

    @aotc.jit
    def all_values(a, b):
        return {name: f(aotc.lax, anp, a, b) for name, f in CONVOLUTIONS.items()}

    got = all_gradients(x, w)
    for name, f in CONVOLUTIONS.items():
        def value(a, b, name=name):
            return float(np.asarray(all_values(a, b)[name]))
        for argnum in (0, 1):
            expected = finite_difference(value, (x, w), argnum)
            np.testing.assert_allclose(np.asarray(got[name][argnum]), expected, rtol=1e-5,
                                       atol=1e-6, err_msg=f"{name} argument {argnum}")
        if jax is not None:
            expected_jax = reference(jax.grad(lambda a, b, f=f: f(jax.lax, jnp, a, b),
                                              argnums=(0, 1)), x, w)
            for argnum in (0, 1):
                np.testing.assert_allclose(np.asarray(got[name][argnum]), expected_jax[argnum],
                                           rtol=1e-10, atol=1e-12, err_msg=f"{name} vs jax")


SCATTERS = {
    "add": lambda m, a, v: m.sum((a.at[m.array([0, 2, 0]), 1].add(v)) ** 2),
    "set": lambda m, a, v: m.sum((a.at[m.array([0, 2]), 1].set(v[:2] * 3)) ** 2),
    "rows": lambda m, a, v: m.sum((a.at[m.array([2, 0])].add(
        m.stack([v, v * 2, v, v], axis=1)[:2])) ** 3),
    "subtract": lambda m, a, v: m.sum((a.at[m.array([0, 2, 0]), 1].subtract(v)) ** 2),
    "multiply": lambda m, a, v: m.sum((a.at[m.array([0, 2]), 3].multiply(
        v[:2] * 3, unique_indices=True)) ** 2),
    # repeated indices: the largest of the update and the two updates there wins
    "max": lambda m, a, v: m.sum(m.arange(12.0).reshape(3, 4)
                                 * a.at[m.array([1, 2, 1]), 2].max(v * 2)),
    "min rows": lambda m, a, v: m.sum(m.arange(12.0).reshape(3, 4) * a.at[m.array([2, 0])].min(
        m.stack([v, v * 2, v, -v], axis=1)[:2])),
}


def test_gradients_of_scatters():
    """x.at[idx].add/set: the updates' adjoint is a gather of the cotangent, the
    original's the cotangent (add) or the cotangent outside the written rows (set);
    subtract, multiply (unique indices) and min/max as scatters of those (the tangent of
    an element split among the values equal to the result there, as JAX's)."""
    a, v = RNG.standard_normal((3, 4)), RNG.standard_normal(3)

    @aotc.jit
    def all_gradients(a, v):
        return {name: aotc.grad(lambda a, v, f=f: f(anp, a, v), argnums=(0, 1))(a, v)
                for name, f in SCATTERS.items()}

    @aotc.jit
    def all_values(a, v):
        return {name: f(anp, a, v) for name, f in SCATTERS.items()}

    got = all_gradients(a, v)
    for name, f in SCATTERS.items():
        def value(a, v, name=name):
            return float(np.asarray(all_values(a, v)[name]))
        for argnum in (0, 1):
            np.testing.assert_allclose(np.asarray(got[name][argnum]),
                                       finite_difference(value, (a, v), argnum), rtol=1e-6,
                                       atol=1e-7, err_msg=f"{name} argument {argnum}")
        if jax is not None:
            expected_jax = reference(jax.grad(lambda a, v, f=f: f(jnp, a, v), argnums=(0, 1)),
                                     a, v)
            for argnum in (0, 1):
                np.testing.assert_allclose(np.asarray(got[name][argnum]), expected_jax[argnum],
                                           rtol=1e-12, atol=1e-12, err_msg=f"{name} vs jax")


def test_scatter_extrema_split_ties_and_keep_their_values():
    """Where the operand and updates tie for the maximum, each gets an equal share of the
    tangent (JAX's rule, not a finite difference's); the values keep -0.0."""
    def loss(x, u):
        out = x.at[anp.array([2, 2, 0])].max(u)
        return anp.sum(anp.array([1.0, 2.0, 3.0]) * out), out

    grads, value = aotc.jit(aotc.grad(loss, argnums=(0, 1), has_aux=True))(
        np.array([1.0, 2.0, 3.0]), np.array([3.0, 3.0, 0.5]))
    np.testing.assert_array_equal(np.asarray(grads[0]), [1.0, 2.0, 1.0])
    np.testing.assert_array_equal(np.asarray(grads[1]), [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(value), [1.0, 2.0, 3.0])
    _, value = aotc.jit(aotc.grad(loss, has_aux=True))(np.full(3, -0.0),
                                                         np.array([-1.0, -2.0, -3.0]))
    assert np.all(np.signbit(np.asarray(value)))
