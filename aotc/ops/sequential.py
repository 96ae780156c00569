"""Sequential kernels: the scalar inner loops of a factorization as one dispatch each.

A Cholesky or triangular inverse of a small block is a chain of dependent scalar steps:
as ``linalg`` ops every step would be its own dispatch (about 12 us each on the CPU).
Written as ``scf.for`` loops over ``tensor.extract``/``tensor.insert`` inside one
``flow.dispatch.region``, IREE compiles the whole chain into one function, so a 32x32
block costs one call. The blocked algorithms in ``triangular.py`` call these kernels on
diagonal blocks and do the bulk of the work as matmuls.

Every kernel takes and returns tensors with a leading batch dimension (static or
dynamic; a batch of one is dropped, see ``build``): the batching pass merges a vmap
batch into it and builds the kernel again (``build``), so a batch of factorizations
stays one dispatch. The region carries its kernel's name in ``aotc.kernel``.

    cholesky_block   (B, n, n) -> (B, n, n)  lower Cholesky factor (reads the lower half)
    lower_inverse    (B, n, n) -> (B, n, n)  inverse of a lower triangular matrix
    lu_panel         (B, m, w) -> (B, m, w), (B, m) int32
                     LU with partial pivoting of a tall panel (m >= w): L below the
                     diagonal (unit diagonal implied), U on and above, and the row order
                     (row i of the result is row order[i] of the panel)
    swaps_from_order (B, m) -> (B, m) int32 (and two bookkeeping results)
                     LAPACK's pivots (row i swapped with row pivots[i]) of a row order
    order_from_swaps (B, n) -> (B, n) int32
                     the row order LAPACK's pivots of a square matrix make
    symmetric_eigen  (B, n, n) -> (B, n), (B, n, n)      (sequential_eigen.py)
                     eigenvalues (ascending) and eigenvectors (as rows) of a symmetric
                     matrix read from its lower triangle; symmetric_eigenvalues without
                     the eigenvectors
    qr_panel         (B, m, w) -> (B, m, w), (B, w, w)
                     Householder QR of a tall panel (LAPACK's geqr2 and larft): R on and
                     above the diagonal, the reflectors' vectors below it (unit first
                     element implied), and the upper triangular T of their compact WY
                     product H_0 ... H_{w-1} = I - V T V^T (T's diagonal is LAPACK's tau)

A non-positive pivot gives NaN (sqrt of a negative) or inf, which spread through the
rest of the factor, as JAX's cholesky does.

IREE 3.13's SPIR-V and CUDA code generation cannot lower a dispatch without a structured
root ("failed to legalize hal.interface.binding.subspan"): on GPU targets
``aotc-root-kernels-for-gpu`` (``passes/kernel_roots.py``) gives each kernel one that runs
it in one thread. A module for CPUs and GPUs together cannot have both forms, and
refuses the factorizations (``triangular.kernel_results``).
"""

from __future__ import annotations

from typing import Callable, Sequence

from .._mlir import (arith, complex_dialect as cx, index_constant, ir, linalg, math,
                     reassociation, scf, tensor)
from . import kernel_scalars as ks
from ..lowering import barrier
# Partial sums a kernel's sum loop keeps in flight, as the loops aotc puts in one
# dispatch do: one accumulator waits for each add.
from ..passes.scalarize import SUM_CHAINS
# Marks the barrier over each input, for aotc-expose-kernels.
from ..passes.share_kernels import INPUT_MARK as KERNEL_INPUT

KERNEL_ATTRIBUTE = "aotc.kernel"
KERNEL_RESULTS = "aotc.kernel_results"  # marks the barrier over a kernel's results

Builder = Callable[[Sequence[ir.Value]], list[ir.Value]]
KERNELS: dict[str, Builder] = {}
# The rank of one problem of each kernel's first input (a matrix 2, a vector 1): an input
# of higher rank has a leading batch dimension.
PROBLEM_RANK: dict[str, int] = {}
# For the kernels whose input may be padded with zeros (``build``): each result's
# dimensions, as the input problem's dimensions they have the size of.
RESULT_DIMS: dict[str, tuple[tuple[int, ...], ...]] = {}


def kernel(name: str, problem_rank: int = 2, result_dims=None):
    def register(builder: Builder) -> Builder:
        KERNELS[name] = builder
        PROBLEM_RANK[name] = problem_rank
        if result_dims is not None:
            RESULT_DIMS[name] = result_dims
        return builder
    return register


def has_batch(name: str, first_input: ir.Value) -> bool:
    """Whether ``first_input`` of kernel ``name`` carries a leading batch dimension."""
    return ir.RankedTensorType(first_input.type).rank > PROBLEM_RANK[name]


def build(name: str, inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """The kernel ``name`` over ``inputs`` (B, ...), at the current insertion point. A
    batch of one runs on the matrices themselves: IREE 3.13's unit-dimension folding
    breaks a dispatch region whose loops carry a (1, n, n) tensor ("operand does not
    dominate this use"). Each input passes a barrier: IREE clones elementwise producers
    into a dispatch region, and a region with a structured op gets a tiling pipeline
    that refuses the kernel's stores ("restricted to workgroup distributed contexts").
    aotc-expose-kernels lifts the barriers for a ``cse`` that merges identical kernels."""
    inputs = [barrier(v, KERNEL_INPUT) for v in inputs]
    if all(ir.RankedTensorType(v.type).shape[0] == 1 for v in inputs):
        outs = KERNELS[name]([_drop_batch(v) for v in inputs])
        return _all_used([_add_batch(v) for v in outs])
    problem = ir.RankedTensorType(inputs[0].type).shape[1:]
    if name in RESULT_DIMS and 1 in problem and any(n > 1 for n in problem):
        # IREE 3.13 breaks the batch loop when a problem has a unit dimension among
        # larger ones (a (B, m, 1) panel: "operand does not dominate this use"): such
        # problems are padded to 2 with zeros, which these kernels leave apart.
        outs = _all_used(KERNELS[name]([_padded(v) for v in inputs]))
        return [_unpadded(v, [problem[d] for d in dims])
                for v, dims in zip(outs, RESULT_DIMS[name])]
    return _all_used(KERNELS[name](list(inputs)))


def _batch_sizes(value: ir.Value) -> list[ir.Value]:
    t = ir.RankedTensorType(value.type)
    return [tensor.DimOp(value, index_constant(0)).result] if t.is_dynamic_dim(0) else []


def _padded(value: ir.Value) -> ir.Value:
    """``value`` (B, ...) with its unit problem dimensions padded to 2 with zeros."""
    t = ir.RankedTensorType(value.type)
    shape = [t.shape[0]] + [2 if n == 1 else n for n in t.shape[1:]]
    zero = _zero(t.element_type)  # the padded kernels all take float matrices
    empty = tensor.EmptyOp(_batch_sizes(value) + shape[1:] if t.is_dynamic_dim(0) else shape,
                           t.element_type).result
    filled = linalg.fill(zero, outs=[empty])
    return tensor.InsertSliceOp(value, filled, _batch_sizes(value), [], [],
                                [0] * t.rank, list(t.shape), [1] * t.rank).result


def _unpadded(value: ir.Value, problem: list[int]) -> ir.Value:
    """The leading ``problem`` part of each problem of ``value`` (B, ...)."""
    t = ir.RankedTensorType(value.type)
    shape = [t.shape[0], *problem]
    return tensor.ExtractSliceOp(ir.RankedTensorType.get(shape, t.element_type), value,
                                 [], _batch_sizes(value), [], [0] * t.rank, shape,
                                 [1] * t.rank).result


def _all_used(outs: list[ir.Value]) -> list[ir.Value]:
    """The results of a kernel of several through one barrier: canonicalization rebuilds
    a dispatch region whose result is unused without it, and the rebuilt region has lost
    its ``aotc.kernel`` name (which vmap needs), and IREE would turn an unused result
    into a stack allocation (too small for scratch). Before IREE compiles the module,
    aotc-keep-unused-kernel-results narrows it to the results nothing reads."""
    if len(outs) == 1:
        return outs
    return list(ir.Operation.create(
        "util.optimization_barrier", results=[v.type for v in outs], operands=outs,
        attributes={KERNEL_RESULTS: ir.UnitAttr.get()}).results)


def _drop_batch(value: ir.Value) -> ir.Value:
    t = ir.RankedTensorType(value.type)
    groups = [[0, 1]] + [[d] for d in range(2, t.rank)]
    return tensor.CollapseShapeOp(ir.RankedTensorType.get(t.shape[1:], t.element_type),
                                  value, reassociation(groups)).result


def _add_batch(value: ir.Value) -> ir.Value:
    t = ir.RankedTensorType(value.type)
    groups = [[0, 1]] + [[d] for d in range(2, t.rank + 1)]
    return tensor.ExpandShapeOp(ir.RankedTensorType.get([1, *t.shape], t.element_type),
                                value, reassociation(groups), [], [1, *t.shape]).result


# ---- building blocks (sequential_eigen.py builds with them too) -------------------------

def _region(name: str, result_types: Sequence[ir.Type], result_dims: Sequence[ir.Value],
            body: Callable[[], list[ir.Value]]) -> list[ir.Value]:
    op = ir.Operation.create(
        "flow.dispatch.region", results=list(result_types), operands=list(result_dims),
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(result_dims), 0]),
                    KERNEL_ATTRIBUTE: ir.StringAttr.get(name)},
        regions=2)  # the body, and an empty workgroup count region (IREE picks one)
    block = op.regions[0].blocks.append()
    with ir.InsertionPoint(block):
        ir.Operation.create("flow.return", operands=body())
    return list(op.results)


def _loop(lower, upper, carried: Sequence[ir.Value],
          body: Callable[..., Sequence[ir.Value]]) -> list[ir.Value]:
    """``scf.for i in [lower, upper)`` carrying ``carried``; ``body(i, *carried)``."""
    lower, upper = (index_constant(v) if isinstance(v, int) else v for v in (lower, upper))
    loop = scf.ForOp(lower, upper, index_constant(1), list(carried))
    with ir.InsertionPoint(loop.body):
        scf.YieldOp(list(body(loop.induction_variable, *loop.inner_iter_args)))
    return list(loop.results)


def _sum(lower, upper, start: ir.Value, term: Callable[[ir.Value], ir.Value],
         combine: Callable[[ir.Value, ir.Value], ir.Value] = ks.add) -> ir.Value:
    """``start`` combined with ``term(i)`` for i in [lower, upper) (``ks.add``, or
    ``ks.sub``: start minus the terms), in ``SUM_CHAINS`` partial sums (``_sums``)."""
    return _sums(lower, upper, [start], lambda i: ([term(i)], []), combine)[0][0]


def _sums(lower, upper, starts: Sequence[ir.Value], terms: Callable[..., tuple[list, list]],
          combine: Callable[[ir.Value, ir.Value], ir.Value] = ks.add,
          state: Sequence[ir.Value] = ()) -> tuple[list[ir.Value], list[ir.Value]]:
    """Each of ``starts`` combined with its term for i in [lower, upper) in one loop, and
    ``state`` updated at each i in order: ``terms(i, *state)`` gives (the terms, the new
    state); returns (the sums, the final state). Each sum runs as ``SUM_CHAINS`` partial
    sums over steps of as many, the first from its start and the others from -0.0 (a - b
    is a + -b exactly, so subtracted chains add up to the same); the rest of the range
    goes to the first, then the partial sums are added pairwise. The terms are summed in
    another order than one by one, as BLAS sums them."""
    lower, upper = (index_constant(v) if isinstance(v, int) else v for v in (lower, upper))
    chains = index_constant(SUM_CHAINS)
    count = arith.MaxSIOp(arith.SubIOp(upper, lower).result, index_constant(0)).result
    end = arith.MaxSIOp(arith.SubIOp(upper, arith.RemUIOp(count, chains).result).result,
                        lower).result
    width, kept = len(starts), len(state)

    def steps(indices, accs, state):
        """The partial sums ``accs`` (``width`` per chain) and ``state`` after one step at
        each of ``indices``, the k-th index adding to the k-th chain."""
        accs, state = list(accs), list(state)
        for k, i in enumerate(indices):
            values, state = terms(i, *state)
            accs[k * width:(k + 1) * width] = [
                combine(acc, value) for acc, value in zip(accs[k * width:(k + 1) * width],
                                                          values)]
        return [*accs, *state]

    loop = scf.ForOp(lower, end, chains, [
        start if k == 0 else ks.minus_zero(start.type)
        for k in range(SUM_CHAINS) for start in starts] + list(state))
    with ir.InsertionPoint(loop.body):
        i, carried = loop.induction_variable, list(loop.inner_iter_args)
        scf.YieldOp(steps([arith.AddIOp(i, index_constant(k)).result
                           for k in range(SUM_CHAINS)],
                          carried[:len(carried) - kept], carried[len(carried) - kept:]))
    results = list(loop.results)
    partials, state = results[:len(results) - kept], results[len(results) - kept:]
    rest = _loop(end, upper, [*partials[:width], *state],
                 lambda i, *carried: steps([i], carried[:width], carried[width:]))
    partials[:width], state = rest[:width], rest[width:]
    while len(partials) > width:
        half = len(partials) // 2
        partials = [ks.add(a, b) for a, b in zip(partials[:half], partials[half:])]
    return partials, state


def _matrix_kernel(name: str, a: ir.Value,
                   per_matrix: Callable[[Callable, ir.Value, int, ir.Type], ir.Value]):
    """A (B, n, n) -> (B, n, n) or (n, n) -> (n, n) kernel: ``per_matrix(at, out, n,
    element)`` fills one matrix of ``out`` (reading ``a``) and returns the new ``out``;
    ``at(i, j)`` is the index list of element (i, j) of that matrix."""
    t = ir.RankedTensorType(a.type)
    return _batched_kernel(name, a, 2, [(t.shape[-2:], t.element_type)],
                           lambda at, outs: [per_matrix(at, outs[0], t.shape[-1],
                                                        t.element_type)])


def _batched_kernel(name: str, a: ir.Value, problem_rank: int,
                    results: Sequence[tuple[Sequence[int], ir.Type]],
                    per_matrix: Callable[[Callable, list[ir.Value]], list[ir.Value]]):
    """A kernel over the problems of ``a`` (B, ...) or of a batch of one dropped (...;
    ``problem_rank`` dimensions):
    ``results`` gives each result's shape per matrix and element type; ``per_matrix(at,
    outs)`` fills one matrix's part of every result and returns them; ``at(*indices)`` is
    the index list of an element of that matrix's part."""
    t = ir.RankedTensorType(a.type)
    if t.rank == problem_rank:
        def body():
            outs = [tensor.EmptyOp(list(shape), element).result for shape, element in results]
            return per_matrix(lambda *ij: list(ij), outs)
        return _region(name, [ir.RankedTensorType.get(list(shape), element)
                              for shape, element in results], [], body)
    dynamic = [tensor.DimOp(a, index_constant(0)).result] if t.is_dynamic_dim(0) else []
    count = dynamic[0] if dynamic else t.shape[0]
    types = [ir.RankedTensorType.get([t.shape[0], *shape], element)
             for shape, element in results]

    def batched_body():
        outs = [tensor.EmptyOp([count, *shape], element).result for shape, element in results]
        return _loop(0, count, outs,
                     lambda b, *outs: per_matrix(lambda *ij: [b, *ij], list(outs)))
    return _region(name, types, dynamic * len(results), batched_body)


def _when(condition: ir.Value, carried: Sequence[ir.Value],
          body: Callable[..., Sequence[ir.Value]]) -> list[ir.Value]:
    """``body(*carried)`` where ``condition`` holds, else ``carried`` unchanged."""
    op = scf.IfOp(condition, [v.type for v in carried], has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.YieldOp(list(body(*carried)))
    with ir.InsertionPoint(op.else_block):
        scf.YieldOp(list(carried))
    return list(op.results)


def _hypot(a: ir.Value, b: ir.Value) -> ir.Value:
    """sqrt(a^2 + b^2) without overflow or underflow: the larger magnitude times
    sqrt(1 + (smaller / larger)^2), 0 where both are 0."""
    x, y = math.AbsFOp(a).result, math.AbsFOp(b).result
    larger = arith.MaximumFOp(x, y).result
    smaller = arith.MinimumFOp(x, y).result
    zero = _zero(a.type)
    safe = arith.SelectOp(arith.CmpFOp(arith.CmpFPredicate.OEQ, larger, zero).result,
                          arith.ConstantOp(a.type, 1.0).result, larger).result
    ratio = arith.DivFOp(smaller, safe).result
    one = arith.ConstantOp(a.type, 1.0).result
    return arith.MulFOp(larger, math.SqrtOp(arith.AddFOp(
        one, arith.MulFOp(ratio, ratio).result).result).result).result


def _householder(entry: Callable[[ir.Value], ir.Value], first: ir.Value, stop: int,
                 element: ir.Type) -> tuple[ir.Value, ...]:
    """LAPACK's dlarfg (zlarfg for complex entries) for the vector entry(first), ...,
    entry(stop - 1): (reflects, beta, tau, factor), the reflector I - tau v v^H with v =
    (1, x * factor) whose conjugate transpose maps (alpha, x) to (beta, 0); beta =
    -sign(re alpha) ||(alpha, x)|| is real, tau = (beta - re alpha) / beta - i (im alpha) /
    beta, factor = 1 / (alpha - beta); where x is zero and alpha real nothing reflects
    (tau 0, factor 1, beta is alpha). The norm is taken of the vector divided by its
    largest magnitude, so that squares of huge or tiny entries neither overflow nor
    vanish."""
    part = ks.real_type(element)
    zero, one = ks.zero(part), arith.ConstantOp(part, 1.0).result
    alpha = entry(first)

    def larger(i, best):
        magnitude = ks.magnitude(entry(i))
        take = arith.CmpFOp(arith.CmpFPredicate.OGT, magnitude, best).result
        return [arith.SelectOp(take, magnitude, best).result]
    scale = _loop(first, stop, [zero], larger)[0]
    scale = arith.SelectOp(arith.CmpFOp(arith.CmpFPredicate.OEQ, scale, zero).result,
                           one, scale).result

    below = _sum(_next(first), stop, zero, lambda i: ks.abs_squared(ks.over(entry(i), scale)))
    reflects = arith.CmpFOp(arith.CmpFPredicate.OGT, below, zero).result
    alpha_re = ks.real(alpha)
    total = arith.AddFOp(ks.abs_squared(ks.over(alpha, scale)), below).result
    norm = arith.MulFOp(scale, math.SqrtOp(total).result).result
    beta = arith.NegFOp(math.CopySignOp(norm, alpha_re).result).result
    tau = arith.DivFOp(arith.SubFOp(beta, alpha_re).result, beta).result
    if ks.is_complex(element):
        reflects = arith.OrIOp(reflects, ks.nonzero(ks.imag(alpha))).result
        tau = cx.CreateOp(element, tau, arith.NegFOp(arith.DivFOp(
            ks.imag(alpha), beta).result).result).result
    tau = arith.SelectOp(reflects, tau, ks.zero(element)).result
    unit = ks.constant(element, 1.0)
    beta = ks.from_real(beta, element)
    factor = arith.SelectOp(reflects, ks.div(unit, ks.sub(alpha, beta)), unit).result
    return reflects, arith.SelectOp(reflects, beta, alpha).result, tau, factor


def _get(value, at) -> ir.Value:
    return tensor.ExtractOp(value, at).result


def _put(scalar, value, at) -> ir.Value:
    return tensor.InsertOp(scalar, value, at).result


def _zero(element: ir.Type) -> ir.Value:
    return ks.zero(element)


def _next(i: ir.Value) -> ir.Value:
    return arith.AddIOp(i, index_constant(1)).result


def _zero_above(out, at, j, element):
    """Zeros in column ``j`` above the diagonal."""
    return _loop(0, j, [out], lambda i, out: [_put(_zero(element), out, at(i, j))])[0]


# ---- kernels -----------------------------------------------------------------------------

@kernel("cholesky_block", result_dims=((0, 1),))
def cholesky_block(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """Left-looking Cholesky: column j from the columns before it; reads only the lower
    half of ``a`` (as LAPACK's potrf with uplo='L'), zeros above the diagonal. Complex
    matrices as zpotrf: L L^H = a, the diagonal real (a's imaginary parts there are
    ignored)."""
    (a,) = inputs

    def per_matrix(at, out, n, element):
        def column(j, out):
            def minus_products(out, i, start):
                """start - sum_k<j out[i, k] conj(out[j, k]), reading ``out`` as it is."""
                return _sum(0, j, start, lambda k: ks.mul(
                    _get(out, at(i, k)), ks.conj(_get(out, at(j, k)))), ks.sub)
            pivot = math.SqrtOp(ks.real(minus_products(out, j, _get(a, at(j, j))))).result
            out = _put(ks.from_real(pivot, element), out, at(j, j))
            out = _zero_above(out, at, j, element)
            return [_loop(_next(j), n, [out], lambda i, out: [_put(
                ks.over(minus_products(out, i, _get(a, at(i, j))), pivot),
                out, at(i, j))])[0]]
        return _loop(0, n, [out], column)[0]
    return _matrix_kernel("cholesky_block", a, per_matrix)


@kernel("lower_inverse", result_dims=((0, 1),))
def lower_inverse(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """The inverse of a lower triangular matrix, column by column by forward
    substitution on the identity's columns (reads only the lower half)."""
    (a,) = inputs

    def per_matrix(at, out, n, element):
        one = ks.constant(element, 1.0)

        def column(j, out):
            out = _put(ks.div(one, _get(a, at(j, j))), out, at(j, j))
            out = _zero_above(out, at, j, element)

            def row(i, out):
                total = _sum(j, i, _zero(element), lambda k: ks.mul(
                    _get(a, at(i, k)), _get(out, at(k, j))))
                value = ks.neg(ks.div(total, _get(a, at(i, i))))
                return [_put(value, out, at(i, j))]
            return [_loop(_next(j), n, [out], row)[0]]
        return _loop(0, n, [out], column)[0]
    return _matrix_kernel("lower_inverse", a, per_matrix)


@kernel("lu_panel", result_dims=((0, 1), (0,)))
def lu_panel(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """Right-looking LU with partial pivoting (LAPACK's getf2) of a tall m x w panel:
    for each column, the first row of largest magnitude at or below the diagonal is
    swapped up, the column below the pivot divided by it (left as it is where the pivot
    is zero, as getf2 does, so a singular matrix keeps finite factors and a zero in U),
    and the rest of the panel updated by the rank-one product."""
    (a,) = inputs
    t = ir.RankedTensorType(a.type)
    m, w = t.shape[-2:]
    element, i32 = t.element_type, ir.IntegerType.get_signless(32)

    def per_matrix(at, outs):
        out, perm = outs
        out = _loop(0, m, [out], lambda i, out: [_loop(0, w, [out], lambda k, out: [
            _put(_get(a, at(i, k)), out, at(i, k))])[0]])[0]
        perm = _loop(0, m, [perm], lambda i, perm: [
            _put(arith.IndexCastOp(i32, i).result, perm, at(i))])[0]

        def column(j, out, perm):
            def larger(i, best, best_row):
                magnitude = ks.pivot_magnitude(_get(out, at(i, j)))
                take = arith.CmpFOp(arith.CmpFPredicate.OGT, magnitude, best).result
                return [arith.SelectOp(take, magnitude, best).result,
                        arith.SelectOp(take, i, best_row).result]
            start = ks.pivot_magnitude(_get(out, at(j, j)))
            _, p = _loop(_next(j), m, [start, j], larger)
            out = _loop(0, w, [out], lambda k, out: [
                _put(_get(out, at(p, k)), _put(_get(out, at(j, k)), out, at(p, k)), at(j, k))])[0]
            perm = _put(_get(perm, at(p)), _put(_get(perm, at(j)), perm, at(p)), at(j))
            pivot = _get(out, at(j, j))
            nonzero = ks.nonzero(pivot)

            def eliminate(i, out):
                below = _get(out, at(i, j))
                factor = arith.SelectOp(nonzero, ks.div(below, pivot), below).result
                out = _put(factor, out, at(i, j))
                return [_loop(_next(j), w, [out], lambda k, out: [_put(ks.sub(
                    _get(out, at(i, k)), ks.mul(factor, _get(out, at(j, k)))),
                    out, at(i, k))])[0]]
            return [_loop(_next(j), m, [out], eliminate)[0], perm]
        return _loop(0, w, [out, perm], column)
    return _batched_kernel("lu_panel", a, 2, [((m, w), element), ((m,), i32)], per_matrix)


@kernel("swaps_from_order", problem_rank=1)
def swaps_from_order(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """LAPACK's pivots from a row order: swapping row i with row pivots[i], for i in
    order, puts row order[i] at position i. Follows each row's position as it goes; the
    second and third results are that bookkeeping (each row's position, each position's
    row), left for the caller to drop."""
    (order,) = inputs
    m = ir.RankedTensorType(order.type).shape[-1]
    i32 = ir.IntegerType.get_signless(32)

    def per_matrix(at, outs):
        pivots, position, row_at = outs
        def start(i, position, row_at):
            own = arith.IndexCastOp(i32, i).result
            return [_put(own, position, at(i)), _put(own, row_at, at(i))]
        position, row_at = _loop(0, m, [position, row_at], start)

        def step(i, pivots, position, row_at):
            wanted = _get(order, at(i))
            there = _get(position, at(arith.IndexCastOp(ir.IndexType.get(), wanted).result))
            there_index = arith.IndexCastOp(ir.IndexType.get(), there).result
            here = _get(row_at, at(i))
            own = arith.IndexCastOp(i32, i).result
            row_at = _put(wanted, _put(here, row_at, at(there_index)), at(i))
            position = _put(own, _put(there, position, at(
                arith.IndexCastOp(ir.IndexType.get(), here).result)), at(
                arith.IndexCastOp(ir.IndexType.get(), wanted).result))
            return [_put(there, pivots, at(i)), position, row_at]
        return _loop(0, m, [pivots, position, row_at], step)
    return _batched_kernel("swaps_from_order", order, 1, [((m,), i32)] * 3, per_matrix)


@kernel("order_from_swaps", problem_rank=1)
def order_from_swaps(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """The order of n rows after swapping row i with row pivots[i], for each i in turn
    (LAPACK's laswp on the identity's row numbers)."""
    (pivots,) = inputs
    k = rows = ir.RankedTensorType(pivots.type).shape[-1]
    i32 = ir.IntegerType.get_signless(32)

    def per_problem(at, outs):
        (order,) = outs
        order = _loop(0, rows, [order], lambda i, order: [
            _put(arith.IndexCastOp(i32, i).result, order, at(i))])[0]

        def swap(i, order):
            other = arith.IndexCastOp(ir.IndexType.get(), _get(pivots, at(i))).result
            return [_put(_get(order, at(other)), _put(_get(order, at(i)), order, at(other)),
                         at(i))]
        return [_loop(0, k, [order], swap)[0]]
    return _batched_kernel("order_from_swaps", pivots, 1, [((rows,), i32)], per_problem)


@kernel("qr_panel", result_dims=((0, 1), (1, 1)))
def qr_panel(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """Householder QR of a tall m x w panel, column by column as LAPACK's geqr2: the
    reflector of column j (dlarfg: beta = -sign(alpha) * ||(alpha, x)||, tau = (beta -
    alpha) / beta, v = x / (alpha - beta); tau = 0 where x is zero) applied to the columns
    after it, then column j of T (dlarft: T[:j, j] = -tau T[:j, :j] V[:, :j]^T v_j). The
    norm is taken of the column divided by its largest magnitude, so that squares of
    huge or tiny entries neither overflow nor vanish."""
    (a,) = inputs
    t = ir.RankedTensorType(a.type)
    m, w = t.shape[-2:]
    element = t.element_type

    def per_matrix(at, outs):
        out, tee = outs
        out = _loop(0, m, [out], lambda i, out: [_loop(0, w, [out], lambda k, out: [
            _put(_get(a, at(i, k)), out, at(i, k))])[0]])[0]
        tee = _loop(0, w, [tee], lambda i, tee: [_loop(0, w, [tee], lambda k, tee: [
            _put(_zero(element), tee, at(i, k))])[0]])[0]

        def dot_below(out, j, conjugated, column, start):
            """start + sum over rows i > j of conj(out[i, conjugated]) * out[i, column]."""
            return _sum(_next(j), m, start, lambda i: ks.mul(
                ks.conj(_get(out, at(i, conjugated))), _get(out, at(i, column))))

        def column(j, out, tee):
            zero = _zero(element)
            _, beta, tau, factor = _householder(lambda i: _get(out, at(i, j)), j, m, element)
            out = _loop(_next(j), m, [out], lambda i, out: [_put(ks.mul(
                _get(out, at(i, j)), factor), out, at(i, j))])[0]
            out = _put(beta, out, at(j, j))

            def reflect(k, out):
                """Column k times H^H = I - conj(tau) v v^H (zgeqr2's zlarf)."""
                s = ks.mul(ks.conj(tau), dot_below(out, j, j, k, _get(out, at(j, k))))
                out = _put(ks.sub(_get(out, at(j, k)), s), out, at(j, k))
                return [_loop(_next(j), m, [out], lambda i, out: [_put(ks.sub(
                    _get(out, at(i, k)), ks.mul(s, _get(out, at(i, j)))),
                    out, at(i, k))])[0]]
            out = _loop(_next(j), w, [out], reflect)[0]

            minus_tau = ks.neg(tau)
            tee = _loop(0, j, [tee], lambda c, tee: [_put(ks.mul(minus_tau, dot_below(
                out, j, c, j, ks.conj(_get(out, at(j, c))))), tee, at(c, j))])[0]

            def times_t(r, tee):
                """Row r of T[:j, :j] @ T[:j, j], in place (rows above r are done, the
                entries it reads are at r and below)."""
                total = _sum(r, j, zero, lambda c: ks.mul(
                    _get(tee, at(r, c)), _get(tee, at(c, j))))
                return [_put(total, tee, at(r, j))]
            tee = _loop(0, j, [tee], times_t)[0]
            return [out, _put(tau, tee, at(j, j))]
        return _loop(0, w, [out, tee], column)
    return _batched_kernel("qr_panel", a, 2, [((m, w), element), ((w, w), element)],
                           per_matrix)

