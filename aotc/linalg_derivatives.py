"""The derivatives of the factorizations behind ``aotc.numpy.linalg``: ``inv``, ``solve``,
``det``, ``slogdet``, ``cholesky``, ``eigh`` and ``eigvalsh``, as ``custom_jvp`` rules.

The factorizations run as sequential kernels (ops/sequential.py) that the
differentiation passes cannot look into, so each entry point here is a ``custom_jvp``
whose rule gives the tangent in closed form, the formulas JAX's rules use:

    inv       dY = -Y dA Y                              (Y = A^-1)
    solve     dx = A^-1 (db - dA x)                     (by A's LU factors)
    det       dd = d * tr(A^-1 dA)
    slogdet   dlogabs = Re tr(A^-1 dA), dsign = i Im tr(A^-1 dA) sign (zero when real)
    cholesky  dL = L Phi(L^-1 dS L^-H)                  (Phi: the lower triangle, half
                                                          the diagonal)
    eigh      dw = Re diag(V^H dS V), dV = V (F o V^H dS V) (F_ij = 1 / (w_j - w_i))
    qr, svd   JAX's rules (below), with their complex terms

For complex matrices ^H is the conjugate transpose; for real ones it is the transpose
and no conjugation is traced.

Importing this module (``aotc/__init__`` does when a differentiation name is first used)
puts them in ``linalg_kernels.KERNELS``, in place of the plain kernels.

Each tangent is a product of the tangents with factors computed from the primal values
(the inverse, the factor, the eigenvectors), so reverse mode transposes it (custom_jvp's
reverse rule is the transpose of the tangent map), vmap batches it, and the primal
program without differentiation is the plain factorization. ``cholesky`` and ``eigh``
read only the lower triangle of A (numpy's ``UPLO='L'``): their tangent is that of the
Hermitian matrix the lower triangle makes, dS = tril(dA) + tril(dA, -1)^H (the diagonal's
imaginary part ignored, as LAPACK does), so
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

import functools
from typing import Callable

from . import dtypes
from .custom_derivatives import _differentiating, custom_jvp


# How many factorizations' plain bodies are being traced: inside one, the blocked
# algorithms' leaves are plain kernels too (the factorization's own rule gives its
# derivative; leaves with rules there would only multiply the traced rules, 10x the
# compile time of a Cholesky's gradient).
_kernel_bodies = [0]


def _body(plain: Callable) -> Callable:
    """``plain``, counted in ``_kernel_bodies`` while it is traced."""
    @functools.wraps(plain)
    def body(*args):
        _kernel_bodies[0] += 1
        try:
            return plain(*args)
        finally:
            _kernel_bodies[0] -= 1
    return body


def _twice(plain: Callable, rule_with: Callable) -> Callable:
    """``plain`` as a custom_jvp function whose rule, ``rule_with(other)``, computes the
    primal values with ``other``: a second custom_jvp copy of ``plain`` with the same
    rule made the other way round. Where something differentiates, the first one
    computes its own values with the second one too (a differentiated program keeps a
    custom_jvp function's values: forward mode over reverse mode differentiates them)."""
    plain = _body(plain)
    second = custom_jvp(plain)

    def values(*args):
        return second(*args) if _differentiating() else plain(*args)

    values.__name__ = values.__qualname__ = plain.__name__
    first = custom_jvp(values)
    first.defjvp(rule_with(second))
    second.defjvp(rule_with(first))

    @functools.wraps(plain)
    def call(*args):
        return plain(*args) if _kernel_bodies[0] else first(*args)
    return call


def _numpy():
    from . import numpy as anp  # the public functions: imported late (a cycle otherwise)

    return anp


def _swap(x):
    return _numpy().swapaxes(x, -1, -2)


def _is_complex(x) -> bool:
    return dtypes.is_complex(x.dtype)


def _real_part(x):
    """The real part of a value that is real in exact arithmetic (an eigenvalue's or a
    singular value's tangent), whatever its dtype; ``x`` itself when real."""
    return _numpy().real(x) if _is_complex(x) else x


def _imaginary_diagonal(m):
    """i Im(diag(m)) as a diagonal matrix, for complex ``m`` (..., k, k)."""
    anp = _numpy()
    return 1j * anp.imag(m) * anp.eye(m.shape[-1], dtype=anp.real(m).dtype)


def _adjoint(x):
    """The conjugate transpose (the transpose of a real matrix: no conj op traced)."""
    return _numpy().conj(_swap(x)) if _is_complex(x) else _swap(x)


def _trace_of_product(a, b):
    """tr(a b) for stacks of matrices: sum(a^T * b) over the last two axes."""
    return _numpy().sum(_swap(a) * b, axis=(-2, -1))


def _hermitian_from_lower(d):
    """The Hermitian (real: symmetric) matrices whose strict lower triangle is that of
    ``d`` and whose diagonal is the real part of ``d``'s: the matrix the factorizations
    read (LAPACK's, and aotc's kernels, ignore the diagonal's imaginary parts)."""
    anp = _numpy()
    herm = anp.tril(d) + _adjoint(anp.tril(d, -1))
    return herm - _imaginary_diagonal(d) if _is_complex(d) else herm


def _inverse_rule(inverse_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        y = inverse_again(a)
        return y, -(y @ da @ y)
    return rule


def _solve_rule(solve_again):
    def rule(primals, tangents):
        # The tangent by the LU factors of a (the primal solve's, shared by
        # aotc-expose-kernels): two triangular solves, O(n^2 k), where a^-1 costs O(n^3).
        from .ops import lu

        (a, b), (da, db) = primals, tangents
        x = solve_again(a, b)
        return x, lu.solve_factored(*lu.lu(a), db - da @ x)
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
        tangent = _trace_of_product(_DIFFERENTIABLE["inverse"](a), da)
        if not _is_complex(a):
            return (sign, logabs), (_numpy().zeros_like(sign), tangent)
        # log det = log|det| + i arg det: the real part moves the modulus, the imaginary
        # part turns the sign (JAX's rule).
        anp = _numpy()
        return (sign, logabs), (1j * anp.imag(tangent) * sign, anp.real(tangent))
    return rule


def _cholesky_rule(cholesky_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        anp = _numpy()
        factor = cholesky_again(a)
        factor_inv = _DIFFERENTIABLE["inverse"](factor)
        phi = factor_inv @ _hermitian_from_lower(da) @ _adjoint(factor_inv)
        phi = anp.tril(phi) - 0.5 * phi * anp.eye(phi.shape[-1], dtype=phi.dtype)
        return factor, factor @ phi
    return rule


def _eigen_tangents(w, v, da):
    """(dw, V^H dS V) of the eigendecomposition (w, v) for the lower-triangle tangent da
    (the eigenvalues are real: dw the real part of the diagonal)."""
    rotated = _adjoint(v) @ _hermitian_from_lower(da) @ v
    return _real_part(_numpy().diagonal(rotated, 0, -2, -1)), rotated


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


def _upper_solve_right(r, b):
    """b r^-1 for upper triangular r: (r^-T b^T)^T, a solve by the blocked algorithm
    (differentiable through its leaves)."""
    from .ops import triangular

    return _swap(triangular.solve(r, _swap(b), lower=False, transposed=True))


def _qr_tangents(q, r, da):
    """(dQ, dR) of the reduced QR (q, r) of a square or tall matrix (JAX's rule:
    dA R^-1 = Q (Q^T dA R^-1) + (I - Q Q^T) dA R^-1, the first part split into a
    skew-symmetric dO (Q^T dQ) and an upper triangular dR R^-1)."""
    anp = _numpy()
    da_rinv = _upper_solve_right(r, da)
    rotated = _adjoint(q) @ da_rinv
    below = anp.tril(rotated, -1)
    skew = below - _adjoint(below)
    if _is_complex(rotated):
        # R's diagonal stays real: Q^H dQ takes the imaginary part of the diagonal.
        skew = skew + _imaginary_diagonal(rotated)
    return q @ (skew - rotated) + da_rinv, (rotated - skew) @ r


def _with_complement(full, d_first):
    """The tangent of orthonormal columns ``full`` (..., m, m) whose first k have the
    tangent ``d_first`` (..., m, k): the rest (a basis of the complement, not unique) get
    -Q (dQ^H Q_rest), the turn that keeps them orthogonal to the first k without turning
    among themselves (full^H d_full stays skew-Hermitian), so that a function of the
    complement as a subspace (its projector) has its exact derivative."""
    k = d_first.shape[-1]
    if full.shape[-1] == k:
        return d_first
    first, rest = full[..., :k], full[..., k:]
    return _numpy().concatenate([d_first, -(first @ (_adjoint(d_first) @ rest))], axis=-1)


def _qr_rule(qr_again):
    """The tangents of a QR (reduced, or complete: Q's columns beyond n by
    ``_with_complement``, R's zero rows zero)."""
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        anp = _numpy()
        q, r = qr_again(a)
        rows, cols = a.shape[-2:]
        k = min(rows, cols)
        if rows >= cols:
            dq, dr = _qr_tangents(q[..., :k], r[..., :k, :], da)
            dr = anp.concatenate([dr, anp.zeros_like(r[..., k:, :])], axis=-2)
            return (q, r), (_with_complement(q, dq), dr)
        # wide: a = [X | Y] with X square, X = Q R_X and R = [R_X | Q^H Y]
        dq, dr_square = _qr_tangents(q, r[..., :rows], da[..., :rows])
        dr_rest = _adjoint(dq) @ a[..., rows:] + _adjoint(q) @ da[..., rows:]
        return (q, r), (dq, anp.concatenate([dr_square, dr_rest], axis=-1))
    return rule


def _svd_rule(svd_again):
    """The SVD's tangents (JAX's rule): with dS = U^H dA V, ds = Re diag(dS),
    dU = U (F o (dS s + s dS^H) + i Im diag(dS) / s) + (I - U U^H) dA V / s, dV likewise
    with dS^H and no diagonal term (F_ij = 1 / (s_j^2 - s_i^2), i != j; the diagonal term,
    zero for real matrices, is the phase the complex SVD leaves to U); repeated singular
    values give inf/NaN vector derivatives, as JAX's. ``full_matrices`` U or Vh: their
    vectors beyond min(m, n) by ``_with_complement``."""
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        anp = _numpy()
        u_all, s, vh_all = svd_again(a)
        k = s.shape[-1]
        u, vh = u_all[..., :k], vh_all[..., :k, :]
        v = _adjoint(vh)
        rotated = _adjoint(u) @ da @ v
        ds = _real_part(anp.diagonal(rotated, 0, -2, -1))
        row, col = s[..., None, :], s[..., :, None]  # s_j, s_i at (i, j)
        off_diagonal = ~anp.eye(k, dtype=bool)
        f = anp.where(off_diagonal, 1 / anp.where(off_diagonal, (row + col) * (row - col), 1), 0)
        rotated_s, s_rotated = rotated * row, col * rotated
        inner_u = f * (rotated_s + _adjoint(rotated_s))
        if _is_complex(a):
            zero = s == 0
            s_inverse = anp.where(zero, 0, 1 / anp.where(zero, 1, s))
            inner_u = inner_u + _imaginary_diagonal(rotated) * s_inverse[..., None, :]
        du = u @ inner_u
        dv = v @ (f * (s_rotated + _adjoint(s_rotated)))
        rows, cols = a.shape[-2:]
        if rows > cols:
            dav = da @ v
            du = du + (dav - u @ (_adjoint(u) @ dav)) / row
        if cols > rows:
            dau = _adjoint(da) @ u
            dv = dv + (dau - v @ (vh @ dau)) / row
        return (u_all, s, vh_all), (_with_complement(u_all, du), ds,
                                    _adjoint(_with_complement(_adjoint(vh_all), dv)))
    return rule


def _svdvals_rule(svdvals_again):
    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        s = svdvals_again(a)
        u, _, vh = _DIFFERENTIABLE["svd"](a)
        return s, _real_part(_numpy().diagonal(_adjoint(u) @ da @ _adjoint(vh), 0, -2, -1))
    return rule


def _lower_inverse_rule(lower_inverse_again):
    """d(L^-1) = -L^-1 dL L^-1, dL the lower triangle of the tangent (the leaf reads
    only that)."""
    def rule(primals, tangents):
        (factor,), (d_factor,) = primals, tangents
        y = lower_inverse_again(factor)
        return y, -(y @ _numpy().tril(d_factor) @ y)
    return rule


def _lu_panel_rule(panel_again):
    """The tangent of a tall panel's LU a[order] = L U (L (m, n) unit lower, U (n, n)):
    with X = L1^-1 da[order][:n] U^-1 (L1 L's top square), dL1 = L1 tril(X, -1) and dU =
    triu(X) U (JAX's rule), and the rows below, L2 = a2 U^-1: dL2 = (da2 - L2 dU) U^-1.
    The row order is an integer: no tangent."""
    from .ops import triangular

    def rule(primals, tangents):
        (a,), (da,) = primals, tangents
        anp = _numpy()
        factors, order = panel_again(a)
        n = a.shape[-1]
        da = anp.take_along_axis(da, order[..., :, None], axis=-2)
        square = factors[..., :n, :]
        unit_lower, upper = triangular.unit_diagonal(anp.tril(square)), anp.triu(square)
        x = _upper_solve_right(upper, triangular.solve_lower(unit_lower, da[..., :n, :]))
        du = anp.triu(x) @ upper
        d_square = unit_lower @ anp.tril(x, -1) + du
        d_rest = _upper_solve_right(upper, da[..., n:, :] - factors[..., n:, :] @ du)
        return ((factors, order),
                (anp.concatenate([d_square, d_rest], axis=-2), anp.zeros_like(order)))
    return rule


def _install() -> None:
    from . import linalg_kernels
    from .ops import triangular

    rules = {"inverse": _inverse_rule, "solve": _solve_rule, "det": _det_rule,
             "slogdet": _slogdet_rule, "cholesky": _cholesky_rule, "eigh": _eigh_rule,
             "eigvalsh": _eigvalsh_rule, "qr": _qr_rule, "svd": _svd_rule,
             "svdvals": _svdvals_rule, "qr_complete": _qr_rule, "svd_full": _svd_rule}
    plain = dict(linalg_kernels.KERNELS)
    _DIFFERENTIABLE.update({name: _twice(plain[name], rule) for name, rule in rules.items()})
    linalg_kernels.KERNELS.update(_DIFFERENTIABLE)
    leaves = {"lower_inverse": _lower_inverse_rule, "lu_panel": _lu_panel_rule}
    triangular.LEAVES.update({name: _twice(triangular.LEAVES[name], rule)
                              for name, rule in leaves.items()})


# name -> the differentiable function (the rules call each other's)
_DIFFERENTIABLE: dict[str, Callable] = {}


_install()
