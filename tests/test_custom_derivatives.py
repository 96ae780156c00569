"""aotc.custom_vjp, custom_jvp and checkpoint: the user's rule is what differentiates
(rules that differ from the true derivative prove it), against JAX (where installed) on
the same definitions, finite differences for checkpoint, and the error messages."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc.autodiff import DifferentiationError

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None


def _custom_vjp_functions(api, m):
    """JAX's documented custom_vjp examples, written for ``api`` (aotc or jax) and its
    numpy ``m``."""
    @api.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    def clip_fwd(lo, hi, x):
        return x, (lo, hi)

    def clip_bwd(res, g):
        lo, hi = res
        return (None, None, m.clip(g, lo, hi))

    clip_gradient.defvjp(clip_fwd, clip_bwd)

    # A pytree argument, residuals, a second output and a rule that is not the true
    # derivative (x's adjoint is scaled by 10).
    @api.custom_vjp
    def scaled(params, x):
        return params["w"] * m.sin(x), m.sum(x)

    def scaled_fwd(params, x):
        return scaled(params, x), (params["w"], m.cos(x))

    def scaled_bwd(res, cts):
        w, cos_x = res
        g, g_sum = cts
        return {"w": m.sum(g * 0.5)}, 10 * g * w * cos_x + g_sum

    scaled.defvjp(scaled_fwd, scaled_bwd)

    # nondiff_argnums: a Python function argument (JAX's `app`).
    @functools.partial(api.custom_vjp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    def app_fwd(f, x):
        return f(x), x

    def app_bwd(f, x, g):
        return (5 * g * x,)

    app.defvjp(app_fwd, app_bwd)
    return clip_gradient, scaled, app


def _custom_vjp_program(api, m):
    clip_gradient, scaled, app = _custom_vjp_functions(api, m)

    def program(x, w):
        def loss(x, w):
            out, total = scaled({"w": w}, x)
            return (m.sum(clip_gradient(-0.5, 0.5, x * 3.0) ** 2) + m.sum(out) + total
                    + m.sum(app(m.sin, x)))
        gx, gw = api.grad(loss, argnums=(0, 1))(x, w)
        # grad of grad: the second derivative differentiates the backward rule.
        second = api.grad(lambda x: api.grad(lambda y: m.sum(app(m.sin, y) ** 2))(x)[0])(x)
        # per-example gradients of the rule under vmap
        per_example = api.vmap(api.grad(lambda xi: m.sum(clip_gradient(-0.1, 0.1, xi) * xi)))(
            m.reshape(x, (2, 2)))
        return gx, gw, second, per_example

    return program


X = np.array([0.3, -0.7, 1.1, 0.05])
W = np.array(1.7)


def test_custom_vjp_rules_replace_the_derivative():
    gx, gw, second, per_example = map(np.asarray, aotc.jit(_custom_vjp_program(aotc, anp))(X, W))
    # By hand: the clipped term's gradient is 3 * clip(2 * 3x, -.5, .5); scaled's rule
    # gives 10 * w * cos(x) + 1 for x and sum(0.5) for w; app's rule 5 * x.
    want_gx = (3 * np.clip(2 * 3 * X, -0.5, 0.5) + 10 * W * np.cos(X) + 1 + 5 * X)
    np.testing.assert_allclose(gx, want_gx, rtol=1e-12)
    np.testing.assert_allclose(gw, 0.5 * X.size, rtol=1e-12)
    # The inner gradient is app's rule 5 * y * g with g = 2 sin(y) (fwd's output); to the
    # outer derivative both are ordinary code, as in JAX: 10 (sin y + y cos y).
    np.testing.assert_allclose(second, [10 * (np.sin(X[0]) + X[0] * np.cos(X[0])), 0, 0, 0],
                               rtol=1e-12)
    rows = X.reshape(2, 2)
    np.testing.assert_allclose(per_example, np.clip(rows, -0.1, 0.1) + rows, rtol=1e-12)
    if jax is not None:
        with jax.enable_x64(True):
            want = jax.jit(_custom_vjp_program(jax, jnp))(X, W)
            for got, ref in zip((gx, gw, second, per_example), want):
                np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-12)


def _custom_jvp_functions(api, m):
    @api.custom_jvp
    def log1pexp(x):
        return m.log(1.0 + m.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + m.exp(x)))

    # defjvps, two arguments; the rule for y is deliberately 3x the true one.
    @api.custom_jvp
    def f(x, y):
        return m.sin(x) * y

    f.defjvps(lambda t, ans, x, y: m.cos(x) * t * y,
              lambda t, ans, x, y: 3 * m.sin(x) * t)

    # nondiff_argnums with a static power
    @functools.partial(api.custom_jvp, nondiff_argnums=(0,))
    def power(n, x):
        return x ** n

    @power.defjvp
    def power_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        return x ** n, n * x ** (n - 1) * t * 2  # twice the true derivative

    return log1pexp, f, power


def _custom_jvp_program(api, m):
    log1pexp, f, power = _custom_jvp_functions(api, m)

    def program(big, x, y):
        stable = api.grad(lambda v: m.sum(log1pexp(v)))(big)
        naive = api.grad(lambda v: m.sum(m.log(1.0 + m.exp(v))))(big)
        gx, gy = api.grad(lambda x, y: m.sum(f(x, y)), argnums=(0, 1))(x, y)
        gp = api.grad(lambda x: m.sum(power(3, x)))(x)
        # forward mode gives the rule's tangents back
        _, tangent = api.jvp(lambda x: f(x, y), (x,), (m.ones_like(x),))
        return stable, naive, gx, gy, gp, tangent

    return program


def test_custom_jvp_rules_in_reverse_and_forward_mode():
    big = np.array([100.0, 5.0], np.float32)
    x, y = np.array([0.2, 0.9]), np.array([1.5, -0.4])
    stable, naive, gx, gy, gp, tangent = map(
        np.asarray, aotc.jit(_custom_jvp_program(aotc, anp))(big, x, y))
    # The stable rule is used: 1.0 at 100 (the plain derivative overflows to nan).
    np.testing.assert_allclose(stable, [1.0, 1 - 1 / (1 + np.exp(np.float32(5)))], rtol=1e-6)
    assert np.isnan(naive[0])
    np.testing.assert_allclose(gx, np.cos(x) * y, rtol=1e-12)
    np.testing.assert_allclose(gy, 3 * np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(gp, 2 * 3 * x ** 2, rtol=1e-12)
    np.testing.assert_allclose(tangent, np.cos(x) * y, rtol=1e-12)
    if jax is not None:
        with jax.enable_x64(True):
            want = jax.jit(_custom_jvp_program(jax, jnp))(big, x, y)
            for got, ref in zip((stable, gx, gy, gp, tangent), want[:1] + want[2:]):
                np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-6)


def _rounded_and_index_program(api, m):
    """A custom_jvp function with an integer output (its tangent: zeros, as JAX's
    float0): reverse and forward mode differentiate through the float output."""
    @api.custom_jvp
    def scaled_and_argmax(x):
        return 2 * x, m.argmax(x)

    @scaled_and_argmax.defjvp
    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        y, i = scaled_and_argmax(x)
        return (y, i), (3 * t, m.zeros_like(i))  # 3, not 2: the rule is what is used

    def program(x):
        loss = lambda x: m.sum(scaled_and_argmax(x)[0] ** 2)  # noqa: E731
        return (api.grad(loss)(x), scaled_and_argmax(x)[1],
                api.jvp(lambda x: scaled_and_argmax(x)[0], (x,), (m.ones_like(x),))[1])

    return program


def test_custom_jvp_with_an_integer_output():
    x = np.array([0.5, -1.5, 2.0])
    grad, index, tangent = map(np.asarray, aotc.jit(_rounded_and_index_program(aotc, anp))(x))
    np.testing.assert_allclose(grad, 2 * (2 * x) * 3, rtol=1e-12)
    assert index == 2
    np.testing.assert_allclose(tangent, [3.0, 3.0, 3.0], rtol=1e-12)


def _rules_under_vmap_program(api, m):
    clip_gradient, scaled, _ = _custom_vjp_functions(api, m)
    log1pexp, f, _ = _custom_jvp_functions(api, m)

    def loss(w, xs):
        def per_example(x):  # the rules inside vmap, the derivative outside
            return m.sum(clip_gradient(-0.1, 0.1, x * w) ** 2 + f(x, w))

        def nested(row):  # vmap of vmap, one rule of each kind
            return api.vmap(lambda x: log1pexp(x * w) + scaled({"w": w}, x)[1])(row)

        return m.sum(api.vmap(per_example)(xs)) + m.sum(api.vmap(nested)(xs))

    def program(w, xs):
        gw, gxs = api.grad(loss, argnums=(0, 1))(w, xs)
        _, tangent = api.jvp(lambda w: m.sum(api.vmap(lambda x: f(x, w))(xs)), (w,),
                             (m.ones_like(w),))
        return gw, gxs, tangent

    return program


def test_custom_rules_under_vmap_inside_grad():
    """The rules stay the derivative when the custom functions are vmapped and the
    derivative is taken outside the vmap (JAX batches the rules)."""
    xs = np.array([[0.3, -0.7], [1.1, 0.05], [0.2, 0.4]])
    w = np.array(1.3)
    gw, gxs, tangent = map(np.asarray, aotc.jit(_rules_under_vmap_program(aotc, anp))(w, xs))
    # By hand, per element: clip's rule clip(2xw, -.1, .1) times x (w) for w (x); f's
    # rules cos(x) w for x and 3 sin(x) for w; log1pexp's rule w (x) sigmoid(xw) for x (w);
    # scaled's second output sum(x) with its rule's "+ g_sum" for x and nothing for w.
    clipped = np.clip(2 * xs * w, -0.1, 0.1)
    sigmoid = 1 - 1 / (1 + np.exp(xs * w))
    np.testing.assert_allclose(gw, np.sum(clipped * xs + 3 * np.sin(xs) + xs * sigmoid),
                               rtol=1e-12)
    np.testing.assert_allclose(gxs, clipped * w + np.cos(xs) * w + w * sigmoid + 1, rtol=1e-12)
    np.testing.assert_allclose(tangent, np.sum(3 * np.sin(xs)), rtol=1e-12)
    if jax is not None:
        with jax.enable_x64(True):
            want = jax.jit(_rules_under_vmap_program(jax, jnp))(w, xs)
            for got, ref in zip((gw, gxs, tangent), want):
                np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-12)


def _block(x, w):
    return anp.tanh(anp.sin(x @ w) @ w.T)


def _count(text: str, op: str) -> int:
    return sum(line.strip().split(" = ")[-1].startswith(op) for line in text.splitlines())


def test_checkpoint_recomputes_and_gives_the_same_gradients():
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 4)) * 0.5

    def loss(w, remat, prevent_cse=True):
        block = aotc.checkpoint(_block, prevent_cse=prevent_cse) if remat else _block
        # a closure over w (differentiated), a static argument, and a loop
        inner = aotc.checkpoint(lambda h, k: anp.sin(h * w[0, 0]) * k, static_argnums=1) \
            if remat else (lambda h, k: anp.sin(h * w[0, 0]) * k)
        h = block(x, w)
        h = aotc.lax.fori_loop(0, 2, lambda i, h: block(h, w), h)
        return anp.sum(inner(h, 2) ** 2)

    plain = aotc.jit(aotc.value_and_grad(lambda w: loss(w, False)))
    remat = aotc.jit(aotc.value_and_grad(lambda w: loss(w, True)))
    v0, g0 = map(np.asarray, plain(w))
    v1, g1 = map(np.asarray, remat(w))
    # The backward pass keeps less of the forward pass: per checkpointed call its inputs,
    # per loop trip the carry (a [3, 4] float64 tape row), instead of every intermediate;
    # and IREE's peak of intermediate bytes falls with it (measured after the plain
    # program's larger one: each measurement has an allocator of its own).
    memory = {k: f.lower(w).compile().memory_analysis()
              for k, f in (("plain", plain), ("remat", remat))}
    kept = {k: m.residual_size_in_bytes for k, m in memory.items()}
    assert 0 < kept["remat"] < kept["plain"], kept
    peaks = {k: m.temp_size_in_bytes for k, m in memory.items()}
    assert 0 < peaks["remat"] < peaks["plain"], peaks
    np.testing.assert_allclose(v1, v0, rtol=1e-12)
    np.testing.assert_allclose(g1, g0, rtol=1e-12)
    # against finite differences
    eps = 1e-6
    fd = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        d = np.zeros_like(w)
        d[idx] = eps
        fd[idx] = (float(plain(w + d)[0]) - float(plain(w - d)[0])) / (2 * eps)
    np.testing.assert_allclose(g1, fd, rtol=1e-6, atol=1e-8)
    # The backward pass recomputes the first block (its two matmuls) behind a barrier;
    # without prevent_cse the compiler merges the recomputation into the forward pass.
    policies = aotc.checkpoint_policies
    variants = {"plain": _block, "remat": aotc.checkpoint(_block),
                "shared": aotc.checkpoint(_block, prevent_cse=False),
                "dots": aotc.checkpoint(_block, policy=policies.dots_saveable),
                "everything": aotc.checkpoint(_block, policy=policies.everything_saveable)}
    text = {k: aotc.jit(aotc.value_and_grad(lambda w, f=f: anp.sum(f(x, w)))).lower(w).as_text()
            for k, f in variants.items()}
    matmuls = {k: _count(t, "linalg.matmul") for k, t in text.items()}
    assert matmuls["remat"] == matmuls["plain"] + 2, matmuls
    # JAX's policies: everything_saveable keeps every value; aotc recomputes the rest.
    assert matmuls["shared"] == matmuls["everything"] == matmuls["plain"], matmuls
    assert matmuls["dots"] == matmuls["remat"], matmuls
    assert "util.optimization_barrier" in text["remat"]


def test_residual_bytes_count_what_the_backward_pass_reads():
    rng = np.random.default_rng(4)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 4))

    def kept(fn):
        return aotc.jit(fn).lower(w).compile().memory_analysis().residual_size_in_bytes

    # tanh's adjoint reads its input x @ w: one float64 [3, 4]
    assert kept(aotc.grad(lambda w: anp.sum(anp.tanh(x @ w)))) == 3 * 4 * 8
    # a loop records its [4, 4] carry at each of its 5 trips
    assert kept(aotc.grad(lambda w: anp.sum(aotc.lax.fori_loop(
        0, 5, lambda i, h: anp.sin(h) * w[0], w)))) == 5 * 4 * 4 * 8
    assert kept(lambda w: anp.sin(w)) == 0


def test_custom_functions_are_their_body_where_nothing_differentiates():
    clip_gradient, scaled, app = _custom_vjp_functions(aotc, anp)
    log1pexp, _, _ = _custom_jvp_functions(aotc, anp)
    remat = aotc.checkpoint(_block)

    def program(x, w):
        return (clip_gradient(-1.0, 1.0, x), scaled({"w": w}, x)[0], log1pexp(x),
                remat(x.reshape(1, 4), w * anp.ones((4, 4))))

    got = aotc.jit(program).lower(X, W).as_text()
    assert "no_inline" not in got and "aotc.custom_vjp" not in got
    out = aotc.jit(program)(X, W)
    np.testing.assert_allclose(np.asarray(out[1]), W * np.sin(X), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(out[2]), np.log1p(np.exp(X)), rtol=1e-12)
    # eagerly
    np.testing.assert_allclose(np.asarray(log1pexp(X)), np.log1p(np.exp(X)), rtol=1e-12)


def test_custom_derivative_errors():
    @aotc.custom_vjp
    def undefined(x):
        return x

    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function undefined"):
        aotc.grad(undefined)(1.0)

    @aotc.custom_vjp
    def bad_structure(x, y):
        return x * y

    bad_structure.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))
    with pytest.raises(DifferentiationError,
                       match=r"bad_structure: the backward rule must return a tuple with one "
                             r"cotangent per differentiated argument \(2\), got a sequence of 1"):
        aotc.grad(bad_structure)(1.0, 2.0)

    @aotc.custom_vjp
    def bad_shape(x):
        return x

    bad_shape.defvjp(lambda x: (x, None), lambda res, g: (anp.ones(3),))
    with pytest.raises(DifferentiationError,
                       match=r"cotangent of argument 0 has shape \(3,\), but the argument has "
                             r"shape \(2,\)"):
        aotc.grad(lambda x: anp.sum(bad_shape(x)))(np.ones(2))

    def closes_over(w):
        @aotc.custom_vjp
        def scale(x):
            return x * w

        scale.defvjp(lambda x: (x * w, None), lambda res, g: (g * w,))
        return anp.sum(scale(np.ones(2)))

    with pytest.raises(aotc.CompileError,
                       match="differentiation of the custom-derivative function scale .* with "
                             "respect to a closed-over value"):
        aotc.grad(closes_over)(3.0)

    with pytest.raises(TypeError, match="policy must be one of aotc.checkpoint_policies"):
        aotc.checkpoint(_block, policy="dots")
