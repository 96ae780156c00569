"""The symmetric eigensolver kernels: ``symmetric_eigen`` and ``symmetric_eigenvalues``.

Built from ``sequential.py``'s blocks and registered in its table, like the other
sequential kernels: one dispatch per batch of matrices, rebuilt by vmap's rule with the
vmap batch merged in. The algorithms are LAPACK's and EISPACK's (see ``_symmetric_eigen``);
the working matrix is kept transposed so that every inner loop runs along memory.
"""

from __future__ import annotations

from typing import Sequence

from .._mlir import arith, index_constant, ir, math
from . import kernel_scalars as ks
from .sequential import (_batched_kernel, _get, _householder, _hypot, _loop, _next, _put,
                         _sum, _sums, _when, _zero, kernel)


# At most this many QL iterations per eigenvalue (LAPACK's steqr limit): input that does
# not converge (NaN) cannot hang.
SWEEPS = 30


def _index(value: int) -> ir.Value:
    return index_constant(value)


def _sub(a: ir.Value, b) -> ir.Value:
    return arith.SubIOp(a, _index(b) if isinstance(b, int) else b).result


def _float(element: ir.Type, value: float) -> ir.Value:
    return arith.ConstantOp(element, value).result


@kernel("symmetric_eigen", result_dims=((0,), (0, 1), (0,), (0,), (0,)))
def symmetric_eigen(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    return _symmetric_eigen(inputs, "symmetric_eigen", vectors=True)


@kernel("symmetric_eigenvalues", result_dims=((0,), (0, 1), (0,), (0,), (0,)))
def symmetric_eigenvalues(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """symmetric_eigen without the eigenvectors: no Q, no rotations of it (about 4/3 n^3
    flops instead of 9 n^3); the second result is the reduced matrix, scratch."""
    return _symmetric_eigen(inputs, "symmetric_eigenvalues", vectors=False)


def _symmetric_eigen(inputs: Sequence[ir.Value], name: str, vectors: bool) -> list[ir.Value]:
    """Eigenvalues (ascending) and eigenvectors of a symmetric n x n matrix, reading its
    lower triangle, in three steps on the vectors' result:

    1. Householder tridiagonalization (LAPACK's sytd2, uplo='L'): reflector i zeros
       column i below the subdiagonal, and the trailing block takes the symmetric rank-2
       update A - v w^T - w v^T (w = tau A v - tau/2 (tau v^T A v) v), lower half only.
    2. Q of those reflectors, in place (LAPACK's orgtr: the vectors move one column to the
       right, then org2r accumulates them backwards).
    3. The implicit QL method with Wilkinson shifts on the tridiagonal (EISPACK's tql2),
       each rotation applied to Q's columns; at most ``SWEEPS`` iterations per
       eigenvalue (LAPACK's limit), so input that does not converge (NaN) cannot hang.
       Then a selection sort puts the eigenvalues in ascending order.

    The eigenvectors come back as rows (the working matrix is kept transposed). The third
    to fifth results are scratch (the off-diagonal, the reflectors' tau, a work vector),
    left for the caller to drop: a dispatch has no room for temporaries."""
    (a,) = inputs
    t = ir.RankedTensorType(a.type)
    n = t.shape[-1]
    element = t.element_type
    part = ks.real_type(element)  # the eigenvalues' and the tridiagonal's
    eps = 2.0 ** (-52 if isinstance(part, ir.F64Type) else -23)

    def per_matrix(at, outs):
        d, z, e, taus, work = outs

        def zt(i, j):
            """Element (i, j) of the working matrix, kept transposed: the reflectors,
            Q's columns and the rotated pairs of columns lie along rows in memory."""
            return at(j, i)
        zero = ks.zero(element)
        z = _loop(0, n, [z], lambda i, z: [_loop(0, n, [z], lambda k, z: [
            _put(_get(a, at(i, k)), z, zt(i, k))])[0]])[0]
        # ---- 1. tridiagonalization -----------------------------------------------------
        def reduce(i, z, e, taus, work):
            head = _next(i)
            _, off_diagonal, tau, factor = _householder(lambda r: _get(z, zt(r, i)), head, n,
                                                        element)
            z = _loop(_next(head), n, [z], lambda r, z: [_put(ks.mul(
                _get(z, zt(r, i)), factor), z, zt(r, i))])[0]
            z = _put(ks.constant(element, 1.0), z, zt(head, i))  # v's first element

            # work = tau A22 v, A22 read from its lower half column by column (LAPACK's
            # symv/hemv loop: each column adds to the rows below it and, conjugated, to
            # its own row; the diagonal's real part alone)
            work = _loop(head, n, [work], lambda r, work: [_put(zero, work, at(r))])[0]

            def times_column(c, work):
                vc = _get(z, zt(c, i))

                def below(r, work):
                    arc = _get(z, zt(r, c))
                    work = _put(ks.add(_get(work, at(r)), ks.mul(arc, vc)), work, at(r))
                    return [ks.mul(ks.conj(arc), _get(z, zt(r, i)))], [work]
                (acc,), (work,) = _sums(_next(c), n, [ks.scale(ks.real(_get(z, zt(c, c))), vc)],
                                        below, state=[work])
                return [_put(ks.add(_get(work, at(c)), acc), work, at(c))]
            work = _loop(head, n, [work], times_column)[0]
            work = _loop(head, n, [work], lambda r, work: [_put(ks.mul(
                tau, _get(work, at(r))), work, at(r))])[0]
            dot = _sum(head, n, zero, lambda r: ks.mul(
                ks.conj(_get(work, at(r))), _get(z, zt(r, i))))
            shift = ks.scale(_float(part, -0.5), ks.mul(tau, dot))
            work = _loop(head, n, [work], lambda r, work: [_put(ks.add(
                _get(work, at(r)), ks.mul(shift, _get(z, zt(r, i)))),
                work, at(r))])[0]

            def update(c, z):
                """Column c of the lower half, rows c and below (along memory): the
                rank-2 update A - v w^H - w v^H (LAPACK's syr2/her2)."""
                vc, wc = ks.conj(_get(z, zt(c, i))), ks.conj(_get(work, at(c)))
                return [_loop(c, n, [z], lambda r, z: [_put(ks.sub(
                    _get(z, zt(r, c)), ks.add(ks.mul(_get(z, zt(r, i)), wc),
                                              ks.mul(_get(work, at(r)), vc))),
                    z, zt(r, c))])[0]]
            z = _loop(head, n, [z], update)[0]
            z = _put(off_diagonal, z, zt(head, i))
            return [z, _put(ks.real(off_diagonal), e, at(i)), _put(tau, taus, at(i)), work]
        z, e, taus, work = _loop(0, n - 1, [z, e, taus, work], reduce)
        e = _put(_zero(part), e, at(_index(n - 1)))
        d = _loop(0, n, [d], lambda i, d: [_put(ks.real(_get(z, zt(i, i))), d, at(i))])[0]

        # ---- 2. Q, in place -------------------------------------------------------------
        if vectors:
            z = _form_q(z, taus, at, zt, n, element)


        # ---- 3. implicit QL on the tridiagonal (d, e), rotations applied to z -----------
        small, real_zero = _float(part, eps), _zero(part)

        def eigenvalue(j, d, e, z, total_shift, largest):
            """Eigenvalue j: QL iterations on the block j..m, m the first negligible
            off-diagonal from j on."""
            magnitude = arith.AddFOp(math.AbsFOp(_get(d, at(j))).result,
                                     math.AbsFOp(_get(e, at(j))).result).result
            largest = arith.MaximumFOp(largest, magnitude).result
            threshold = arith.MulFOp(small, largest).result

            def negligible(e, idx):
                return arith.CmpFOp(arith.CmpFPredicate.OLE, math.AbsFOp(
                    _get(e, at(idx))).result, threshold).result

            def search(k, found, m):
                hit = arith.AndIOp(arith.XOrIOp(found, _true()).result,
                                   negligible(e, k)).result
                return [arith.OrIOp(found, hit).result, arith.SelectOp(hit, k, m).result]
            _, m = _loop(j, n, [_false(), _index(n - 1)], search)

            def sweep(_, d, e, z, total_shift):
                active = arith.AndIOp(
                    arith.CmpIOp(arith.CmpIPredicate.ugt, m, j).result,
                    arith.XOrIOp(negligible(e, j), _true()).result).result
                rotated = zt if vectors else None
                return _when(active, [d, e, z, total_shift], lambda d, e, z, f: _ql_step(
                    d, e, z, f, j, m, at, rotated, n, part))
            d, e, z, total_shift = _loop(0, SWEEPS, [d, e, z, total_shift], sweep)
            d = _put(arith.AddFOp(_get(d, at(j)), total_shift).result, d, at(j))
            return [d, _put(real_zero, e, at(j)), z, total_shift, largest]
        d, e, z, _, _ = _loop(0, n, [d, e, z, real_zero, real_zero], eigenvalue)

        def select(i, d, z):
            d, k = _selection_step(d, at, i, n, arith.CmpFPredicate.OLT)
            if not vectors:
                return [d, z]
            return [d, _loop(0, n, [z], lambda r, z: [_put(
                _get(z, zt(r, k)), _put(_get(z, zt(r, i)), z, zt(r, k)), zt(r, i))])[0]]
        d, z = _loop(0, n, [d, z], select)
        return [d, z, e, taus, work]
    return _batched_kernel(name, a, 2, [((n,), part), ((n, n), element), ((n,), part),
                                        ((n,), element), ((n,), element)], per_matrix)


def _selection_step(values, at, i, n, before) -> tuple[ir.Value, ir.Value]:
    """One step of a selection sort of ``values`` (n,): the first position k >= i whose
    value comes ``before`` (a float predicate: OLT ascending, OGT descending) all others
    from i on swaps with position i; returns the values and k."""
    def better(j, best, k):
        take = arith.CmpFOp(before, _get(values, at(j)), best).result
        return [arith.SelectOp(take, _get(values, at(j)), best).result,
                arith.SelectOp(take, j, k).result]
    best, k = _loop(_next(i), n, [_get(values, at(i)), i], better)
    return _put(best, _put(_get(values, at(i)), values, at(k)), at(i)), k


def _true() -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result


def _false() -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result


def _ql_step(d, e, z, total_shift, first, m, at, zt, n, element):
    """One implicit QL iteration with a Wilkinson shift on the block first..m of the
    tridiagonal (EISPACK's tql2 loop body), each rotation applied to columns i, i+1 of z
    (``zt`` its element's position; None: no vectors)."""
    one, two = _float(element, 1.0), _float(element, 2.0)
    second = _next(first)
    g = _get(d, at(first))
    el = _get(e, at(first))
    p = arith.DivFOp(arith.SubFOp(_get(d, at(second)), g).result,
                     arith.MulFOp(two, el).result).result
    r = _hypot(p, one)
    r = arith.SelectOp(arith.CmpFOp(arith.CmpFPredicate.OLT, p, _zero(element)).result,
                       arith.NegFOp(r).result, r).result
    pr = arith.AddFOp(p, r).result
    d = _put(arith.DivFOp(el, pr).result, d, at(first))
    dl1 = arith.MulFOp(el, pr).result
    d = _put(dl1, d, at(second))
    h = arith.SubFOp(g, _get(d, at(first))).result
    d = _loop(_next(second), n, [d], lambda i, d: [_put(arith.SubFOp(_get(d, at(i)), h).result,
                                                    d, at(i))])[0]
    total_shift = arith.AddFOp(total_shift, h).result
    el1 = _get(e, at(second))

    def rotation(t, d, e, z, p, c, c2, s, s2, c3):
        i = _sub(_sub(m, 1), t)  # m-1 down to first
        i1 = _next(i)
        c3, c2, s2 = c2, c, s
        ei = _get(e, at(i))
        g = arith.MulFOp(c, ei).result
        h = arith.MulFOp(c, p).result
        r = _hypot(p, ei)
        e = _put(arith.MulFOp(s, r).result, e, at(i1))
        s = arith.DivFOp(ei, r).result
        c = arith.DivFOp(p, r).result
        di = _get(d, at(i))
        p = arith.SubFOp(arith.MulFOp(c, di).result, arith.MulFOp(s, g).result).result
        d = _put(arith.AddFOp(h, arith.MulFOp(s, arith.AddFOp(
            arith.MulFOp(c, g).result, arith.MulFOp(s, di).result).result).result).result,
            d, at(i1))

        def rotate(k, z):
            """The real rotation on columns i, i1 of z (complex ones part by part)."""
            left, right = _get(z, zt(k, i)), _get(z, zt(k, i1))
            z = _put(ks.add(ks.scale(s, left), ks.scale(c, right)), z, zt(k, i1))
            return [_put(ks.sub(ks.scale(c, left), ks.scale(s, right)), z, zt(k, i))]
        if zt is not None:
            z = _loop(0, n, [z], rotate)[0]
        return [d, e, z, p, c, c2, s, s2, c3]
    zero = _zero(element)
    count = _sub(m, first)
    d, e, z, p, c, c2, s, s2, c3 = _loop(0, count, [d, e, z, _get(d, at(m)), one, one, zero,
                                                    zero, one], rotation)
    p = arith.NegFOp(arith.DivFOp(arith.MulFOp(arith.MulFOp(arith.MulFOp(arith.MulFOp(
        s, s2).result, c3).result, el1).result, _get(e, at(first))).result, dl1).result).result
    e = _put(arith.MulFOp(s, p).result, e, at(first))
    d = _put(arith.MulFOp(c, p).result, d, at(first))
    return [d, e, z, total_shift]


def _form_q(z, taus, at, zt, n, element):
    """Q of the tridiagonalization's reflectors, in place of them (LAPACK's orgtr,
    uplo='L'): the vectors move one column to the right, the first row and column become
    the identity's, and org2r (ung2r: H = I - tau v v^H) accumulates the reflectors
    backwards."""
    zero, one = _zero(element), ks.constant(element, 1.0)

    def shift_right(s, z):
        j = _sub(_index(n - 1), s)  # n-1 down to 1
        z = _put(zero, z, zt(_index(0), j))
        return [_loop(_next(j), n, [z], lambda r, z: [
            _put(_get(z, zt(r, _sub(j, 1))), z, zt(r, j))])[0]]
    z = _loop(0, n - 1, [z], shift_right)[0]
    z = _put(one, z, zt(_index(0), _index(0)))
    z = _loop(1, n, [z], lambda r, z: [_put(zero, z, zt(r, _index(0)))])[0]

    def accumulate(s, z):
        g = _sub(_index(n - 1), s)  # n-1 down to 1: reflector g - 1 acts from row g
        tau = _get(taus, at(_sub(g, 1)))
        z = _put(one, z, zt(g, g))

        def column(c, z):
            total = _sum(g, n, zero, lambda r: ks.mul(
                ks.conj(_get(z, zt(r, g))), _get(z, zt(r, c))))
            scaled = ks.mul(tau, total)
            return [_loop(g, n, [z], lambda r, z: [_put(ks.sub(
                _get(z, zt(r, c)), ks.mul(scaled, _get(z, zt(r, g)))),
                z, zt(r, c))])[0]]
        z = _loop(_next(g), n, [z], column)[0]
        minus_tau = ks.neg(tau)
        z = _loop(_next(g), n, [z], lambda r, z: [_put(ks.mul(
            _get(z, zt(r, g)), minus_tau), z, zt(r, g))])[0]
        z = _put(ks.sub(one, tau), z, zt(g, g))
        return [_loop(1, g, [z], lambda r, z: [_put(zero, z, zt(r, g))])[0]]
    z = _loop(0, n - 1, [z], accumulate)[0]
    return z


@kernel("jacobi_svd", result_dims=((1,), (1, 0), (1, 1)))
def jacobi_svd(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """The singular value decomposition of an m x n matrix (m >= n) by one-sided Jacobi
    (Hestenes; the method of LAPACK's gesvj): pairs of columns are rotated until every
    pair is orthogonal to working precision (|g_p . g_q| <= m eps ||g_p|| ||g_q||), at
    most ``SWEEPS`` sweeps; then the singular values are the column norms, sorted
    descending with their columns. One-sided Jacobi computes small singular values to
    high relative accuracy, which bidiagonalization does not.

    Complex columns (zgesvj's method) are rotated by the real rotation of |g_p^H g_q|
    after g_q is turned by the phase that makes g_p^H g_q real.

    Results: the singular values (n,), the rotated columns as rows (n, m) (U's columns
    times the singular values) and V's columns as rows (n, n)."""
    (a,) = inputs
    t = ir.RankedTensorType(a.type)
    m, n = t.shape[-2:]
    element = t.element_type
    part = ks.real_type(element)
    eps = 2.0 ** (-52 if isinstance(part, ir.F64Type) else -23)

    def per_matrix(at, outs):
        sigma, g, v = outs  # g[j, i] = G[i, j], v[j, k] = V[k, j]: columns along memory
        zero, one = _zero(element), ks.constant(element, 1.0)
        real_zero, real_one = _zero(part), _float(part, 1.0)
        tolerance = _float(part, m * eps)
        g = _loop(0, m, [g], lambda i, g: [_loop(0, n, [g], lambda j, g: [
            _put(_get(a, at(i, j)), g, at(j, i))])[0]])[0]
        v = _loop(0, n, [v], lambda j, v: [_loop(0, n, [v], lambda k, v: [_put(
            arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.eq, j, k).result, one,
                           zero).result, v, at(j, k))])[0]])[0]

        def rotate_rows(x, p, q, c, s, phase, length):
            """Rows p, q of x by the rotation (c, s), row q first turned by ``phase``."""
            def step(k, x):
                xp, xq = _get(x, at(p, k)), _get(x, at(q, k))
                xq = xq if phase is None else ks.mul(phase, xq)
                x = _put(ks.sub(ks.scale(c, xp), ks.scale(s, xq)), x, at(p, k))
                return [_put(ks.add(ks.scale(s, xp), ks.scale(c, xq)), x, at(q, k))]
            return _loop(0, length, [x], step)[0]

        def pair(p, q, g, v, rotated):
            def terms(i):
                gp, gq = _get(g, at(p, i)), _get(g, at(q, i))
                return [ks.abs_squared(gp), ks.abs_squared(gq), ks.mul(ks.conj(gp), gq)], []
            (alpha, beta, gamma), _ = _sums(0, m, [real_zero, real_zero, zero], terms)
            bound = arith.MulFOp(tolerance, arith.MulFOp(math.SqrtOp(alpha).result,
                                                         math.SqrtOp(beta).result).result).result
            size = ks.magnitude(gamma)
            needed = arith.CmpFOp(arith.CmpFPredicate.OGT, size, bound).result

            def rotation(g, v, rotated):
                # a real gamma keeps its sign in the rotation; a complex one is made real
                # (|gamma|) by turning column q by conj(gamma) / |gamma|
                phase = ks.over(ks.conj(gamma), size) if ks.is_complex(element) else None
                signed = gamma if phase is None else size
                zeta = arith.DivFOp(arith.SubFOp(beta, alpha).result,
                                    arith.MulFOp(_float(part, 2.0), signed).result).result
                tan = arith.DivFOp(math.CopySignOp(real_one, zeta).result, arith.AddFOp(
                    math.AbsFOp(zeta).result, _hypot(real_one, zeta)).result).result
                cos = arith.DivFOp(real_one, _hypot(real_one, tan)).result
                sin = arith.MulFOp(cos, tan).result
                return [rotate_rows(g, p, q, cos, sin, phase, m),
                        rotate_rows(v, p, q, cos, sin, phase, n), _true()]
            return _when(needed, [g, v, rotated], rotation)

        def sweep(_, g, v, done):
            def all_pairs(g, v, done):
                def row(p, g, v, rotated):
                    return _loop(_next(p), n, [g, v, rotated],
                                 lambda q, g, v, rotated: pair(p, q, g, v, rotated))
                g, v, rotated = _loop(0, n, [g, v, _false()], row)
                return [g, v, arith.XOrIOp(rotated, _true()).result]
            return _when(arith.XOrIOp(done, _true()).result, [g, v, done], all_pairs)
        g, v, _ = _loop(0, SWEEPS, [g, v, _false()], sweep)

        def norm(j, sigma):
            total = _sum(0, m, real_zero, lambda i: ks.abs_squared(_get(g, at(j, i))))
            return [_put(math.SqrtOp(total).result, sigma, at(j))]
        sigma = _loop(0, n, [sigma], norm)[0]

        def select(i, sigma, g, v):
            sigma, k = _selection_step(sigma, at, i, n, arith.CmpFPredicate.OGT)

            def swap_rows(x, length):
                return _loop(0, length, [x], lambda r, x: [_put(
                    _get(x, at(k, r)), _put(_get(x, at(i, r)), x, at(k, r)), at(i, r))])[0]
            return [sigma, swap_rows(g, m), swap_rows(v, n)]
        return _loop(0, n, [sigma, g, v], select)
    return _batched_kernel("jacobi_svd", a, 2, [((n,), part), ((n, m), element),
                                                ((n, n), element)], per_matrix)
