"""The derivatives of the factorizations behind ``aotc.numpy.linalg``: ``inv``, ``solve``,
``det``, ``slogdet``, ``cholesky``, ``eigh`` and ``eigvalsh``, as ``custom_jvp`` rules.

The factorizations run as sequential kernels (ops/sequential.py) that the
differentiation passes cannot look into, so each entry point here is a ``custom_jvp``
whose rule gives the tangent in closed form, the formulas JAX's rules use:

    inv       dY = -Y dA Y                              (Y = A^-1)
    solve     dx = A^-1 (db - dA x)
    det       dd = d * tr(A^-1 dA)
    slogdet   dlogabs = tr(A^-1 dA), the sign's tangent is zero
    cholesky  dL = L Phi(L^-1 dS L^-T)                  (Phi: the lower triangle, half
                                                          the diagonal)
    eigh      dw = diag(V^T dS V), dV = V (F o V^T dS V) (F_ij = 1 / (w_j - w_i), i != j)

Importing this module (``aotc/__init__`` does when a differentiation name is first used)
puts them in ``linalg.KERNELS``, in place of the plain kernels.

Each tangent is a product of the tangents with factors computed from the primal values
(the inverse, the factor, the eigenvectors), so reverse mode transposes it (custom_jvp's
reverse rule is the transpose of the tangent map), vmap batches it, and the primal
program without differentiation is the plain factorization. ``cholesky`` and ``eigh``
read only the lower triangle of A (numpy's ``UPLO='L'``): their tangent is that of the
symmetric matrix the lower triangle makes, dS = tril(dA) + tril(dA, -1)^T, so
derivatives with respect to the upper triangle are zero, as finite differences of the
same function give (JAX symmetrizes the input first: its gradients split each
off-diagonal pair in halves; both agree in symmetric directions). Repeated eigenvalues
give inf/NaN eigenvector derivatives, as JAX's; a singular matrix gives inf/NaN
derivatives of ``inv``, ``solve``, ``det`` and ``slogdet``.

Every function is made twice (``_twice``): inside a function's own rule the function is
its plain body, which cannot be differentiated again, so each rule (and, under
differentiation, the function's own values) computes its primal values with the other
copy, which keeps its rule: the rules are differentiable too (``hessian``,
``jacfwd(jacrev(...))``, ``grad(grad(...))``).
"""

from __future__ import annotations

from typing import Callable

from .custom_derivatives import _differentiating, custom_jvp


def _twice(plain: Callable, rule_with: Callable) -> Callable:
    """``plain`` as a custom_jvp function whose rule, ``rule_with(other)``, computes the
    primal values with ``other``: a second custom_jvp copy of ``plain`` with the same
    rule made the other way round. Where something differentiates, the first one
    computes its own values with the second one too (a differentiated program keeps a
    custom_jvp function's values: forward mode over reverse mode differentiates them)."""
    second = custom_jvp(plain)

    def values(*args):
        return second(*args) if _differentiating() else plain(*args)

    values.__name__ = values.__qualname__ = plain.__name__
    first = custom_jvp(values)
    first.defjvp(rule_with(second))
    second.defjvp(rule_with(first))
    return first


def _numpy():
    from . import numpy as anp  # the public functions: imported late (a cycle otherwise)

    return anp


def _swap(x):
    return _numpy().swapaxes(x, -1, -2)


def _trace_of_product(a, b):
    """tr(a b) for stacks of matrices: sum(a^T * b) over the last two axes."""
    return _numpy().sum(_swap(a) * b, axis=(-2, -1))


def _symmetric_from_lower(d):
    """The symmetric matrices whose lower triangle is that of ``d``."""
    anp = _numpy()
    return anp.tril(d) + _swap(anp.tril(d, -1))


def _inverse_rule(inverse_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        y = inverse_again(a)
        return y, -(y @ da @ y)
    return rule


def _solve_rule(solve_again):
    def rule(primals, tangents):
        (a, b), (da, db) = primals, tangents
        x = solve_again(a, b)
        return x, _DIFFERENTIABLE["inverse"](a) @ (db - da @ x)
    return rule


def _det_rule(det_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        d = det_again(a)
        return d, d * _trace_of_product(_DIFFERENTIABLE["inverse"](a), da)
    return rule


def _slogdet_rule(slogdet_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        sign, logabs = slogdet_again(a)
        logabs_tangent = _trace_of_product(_DIFFERENTIABLE["inverse"](a), da)
        return (sign, logabs), (_numpy().zeros_like(sign), logabs_tangent)
    return rule


def _cholesky_rule(cholesky_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        anp = _numpy()
        factor = cholesky_again(a)
        factor_inv = _DIFFERENTIABLE["inverse"](factor)
        phi = factor_inv @ _symmetric_from_lower(da) @ _swap(factor_inv)
        phi = anp.tril(phi) - 0.5 * phi * anp.eye(phi.shape[-1], dtype=phi.dtype)
        return factor, factor @ phi
    return rule


def _eigen_tangents(w, v, da):
    """(dw, V^T dS V) of the eigendecomposition (w, v) for the lower-triangle tangent da."""
    rotated = _swap(v) @ _symmetric_from_lower(da) @ v
    return _numpy().diagonal(rotated, 0, -2, -1), rotated


def _eigh_rule(eigh_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        anp = _numpy()
        w, v = eigh_again(a)
        dw, rotated = _eigen_tangents(w, v, da)
        gaps = w[..., None, :] - w[..., :, None]  # w_j - w_i at (i, j)
        off_diagonal = ~anp.eye(w.shape[-1], dtype=bool)
        f = anp.where(off_diagonal, 1 / anp.where(off_diagonal, gaps, 1), 0)
        return (w, v), (dw, v @ (f * rotated))
    return rule


def _eigvalsh_rule(eigvalsh_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        w = eigvalsh_again(a)
        _, v = _DIFFERENTIABLE["eigh"](a)
        return w, _eigen_tangents(w, v, da)[0]
    return rule


def _install() -> None:
    from . import linalg

    rules = {"inverse": _inverse_rule, "solve": _solve_rule, "det": _det_rule,
             "slogdet": _slogdet_rule, "cholesky": _cholesky_rule, "eigh": _eigh_rule,
             "eigvalsh": _eigvalsh_rule}
    plain = dict(linalg.KERNELS)
    _DIFFERENTIABLE.update({name: _twice(plain[name], rule) for name, rule in rules.items()})
    linalg.KERNELS.update(_DIFFERENTIABLE)


# name -> the differentiable function (the rules call each other's)
_DIFFERENTIABLE: dict[str, Callable] = {}


_install()
