"""What the gradient tests share: central finite differences, JAX as a float64
reference (where installed), the check of a table of gradients against both, and lax's
control flow as plain Python for the finite differences (``PythonLax``)."""

from __future__ import annotations

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # the finite-difference checks still run
    jax = jnp = None


def reference(fn, *args):
    """``fn(*args)`` with JAX in float64 (only for this call: the other test modules in
    this process rely on JAX's default, x64 disabled), under ``jax.jit``: one XLA compile
    costs less than JAX's eager op-by-op dispatch of a derivative."""
    with jax.enable_x64(True):
        return jax.tree_util.tree_map(np.asarray, jax.jit(fn)(*args))


def finite_difference(f, args: tuple, argnum: int, eps: float = 1e-6) -> np.ndarray:
    x = np.array(args[argnum], dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        call = lambda v: f(*args[:argnum], v, *args[argnum + 1:])  # noqa: E731
        out[i] = (call(hi) - call(lo)) / (2 * eps)
    return out


def complex_finite_difference(f, args, argnum):
    """Of ``f(numpy, *args)``: dL/dx - i dL/dy with respect to a complex argument z = x +
    iy (JAX's convention), dL/dx with respect to a real one."""
    z = args[argnum]
    if not np.iscomplexobj(z):
        return finite_difference(lambda *a: f(np, *a), args, argnum)

    def part(rebuild, value):
        def of_part(*a):
            return f(np, *a[:argnum], rebuild(a[argnum]), *a[argnum + 1:])
        return finite_difference(of_part, args[:argnum] + (value,) + args[argnum + 1:], argnum)

    return (part(lambda re: re + 1j * z.imag, z.real)
            - 1j * part(lambda im: z.real + 1j * im, z.imag))


def check_gradients(got: dict, cases: dict, args: tuple, *, atol: float = 1e-6,
                    jax_rtol: float = 1e-12, jax_atol: float = 1e-12, what: str = "") -> None:
    """``got[name]`` (the gradients of ``cases[name](m, *args)`` with respect to every
    argument) against finite differences of the numpy version (JAX's convention for a
    complex argument) and against jax.grad."""
    argnums = tuple(range(len(args)))
    for name, f in cases.items():
        for argnum in argnums:
            expected = complex_finite_difference(f, args, argnum)
            np.testing.assert_allclose(np.asarray(got[name][argnum]), expected, rtol=1e-6,
                                       atol=atol, err_msg=f"{what}{name} argument {argnum}")
        if jax is not None:
            expected_jax = reference(jax.grad(lambda *a, f=f: f(jnp, *a), argnums=argnums),
                                     *args)
            for argnum in argnums:
                np.testing.assert_allclose(np.asarray(got[name][argnum]), expected_jax[argnum],
                                           rtol=jax_rtol, atol=jax_atol,
                                           err_msg=f"{what}{name} vs jax, argument {argnum}")


class PythonLax:
    """lax's control flow and cumulative ops as plain Python, for the finite-difference
    reference."""

    @staticmethod
    def fori_loop(lower, upper, body, carry):
        for i in range(lower, upper):
            carry = body(i, carry)
        return carry

    @staticmethod
    def cond(pred, true_fn, false_fn, *operands):
        return true_fn(*operands) if pred else false_fn(*operands)

    @staticmethod
    def switch(index, branches, *operands):
        return branches[index](*operands)

    @staticmethod
    def cummax(x, axis=0, reverse=False):
        return PythonLax._accumulate(np.maximum, x, axis, reverse)

    @staticmethod
    def cumlogsumexp(x, axis=0, reverse=False):
        return PythonLax._accumulate(np.logaddexp, x, axis, reverse)

    @staticmethod
    def _accumulate(ufunc, x, axis, reverse):
        if reverse:
            return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
        return ufunc.accumulate(x, axis=axis)

    @staticmethod
    def scan(f, carry, xs):
        ys = []
        for x in xs:
            carry, y = f(carry, x)
            ys.append(y)
        return carry, np.stack(ys)
