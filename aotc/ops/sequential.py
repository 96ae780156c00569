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

A non-positive pivot gives NaN (sqrt of a negative) or inf, which spread through the
rest of the factor, as JAX's cholesky does.

IREE 3.13's SPIR-V and CUDA code generation cannot lower a dispatch without a structured
root ("failed to legalize hal.interface.binding.subspan"); inlined into the function,
the loops fail at run time (an out-of-range fill), and the same steps as loops of
whole-matrix ops gave wrong results on Vulkan (lavapipe): a trace for a GPU target
refuses the factorizations (``triangular._kernel``).
"""

from __future__ import annotations

from typing import Callable, Sequence

from .._mlir import arith, index_constant, ir, math, reassociation, scf, tensor
from ..lowering import barrier

KERNEL_ATTRIBUTE = "aotc.kernel"

Builder = Callable[[Sequence[ir.Value]], list[ir.Value]]
KERNELS: dict[str, Builder] = {}


def kernel(name: str):
    def register(builder: Builder) -> Builder:
        KERNELS[name] = builder
        return builder
    return register


def build(name: str, inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """The kernel ``name`` over ``inputs`` (B, ...), at the current insertion point. A
    batch of one runs on the matrices themselves: IREE 3.13's unit-dimension folding
    breaks a dispatch region whose loops carry a (1, n, n) tensor ("operand does not
    dominate this use"). Each input passes a barrier: IREE clones elementwise producers
    into a dispatch region, and a region with a structured op gets a tiling pipeline
    that refuses the kernel's stores ("restricted to workgroup distributed contexts")."""
    inputs = [barrier(v) for v in inputs]
    if all(ir.RankedTensorType(v.type).shape[0] == 1 for v in inputs):
        outs = KERNELS[name]([_drop_batch(v) for v in inputs])
        return [_add_batch(v) for v in outs]
    return KERNELS[name](list(inputs))


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


# ---- building blocks ---------------------------------------------------------------------

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


def _matrix_kernel(name: str, a: ir.Value,
                   per_matrix: Callable[[Callable, ir.Value, int, ir.Type], ir.Value]):
    """A (B, n, n) -> (B, n, n) or (n, n) -> (n, n) kernel: ``per_matrix(at, out, n,
    element)`` fills one matrix of ``out`` (reading ``a``) and returns the new ``out``;
    ``at(i, j)`` is the index list of element (i, j) of that matrix."""
    t = ir.RankedTensorType(a.type)
    n = t.shape[-1]
    if t.rank == 2:
        def body():
            out = tensor.EmptyOp(list(t.shape), t.element_type).result
            return [per_matrix(lambda i, j: [i, j], out, n, t.element_type)]
        return _region(name, [t], [], body)
    dynamic = [tensor.DimOp(a, index_constant(0)).result] if t.is_dynamic_dim(0) else []
    count = dynamic[0] if dynamic else t.shape[0]

    def batched_body():
        out = tensor.EmptyOp([count, *t.shape[1:]], t.element_type).result
        return _loop(0, count, [out],
                     lambda b, out: [per_matrix(lambda i, j: [b, i, j], out, n,
                                                t.element_type)])
    return _region(name, [t], dynamic, batched_body)


def _get(value, at) -> ir.Value:
    return tensor.ExtractOp(value, at).result


def _put(scalar, value, at) -> ir.Value:
    return tensor.InsertOp(scalar, value, at).result


def _zero(element: ir.Type) -> ir.Value:
    return arith.ConstantOp(element, 0.0).result


def _next(i: ir.Value) -> ir.Value:
    return arith.AddIOp(i, index_constant(1)).result


def _zero_above(out, at, j, element):
    """Zeros in column ``j`` above the diagonal."""
    return _loop(0, j, [out], lambda i, out: [_put(_zero(element), out, at(i, j))])[0]


# ---- kernels -----------------------------------------------------------------------------

@kernel("cholesky_block")
def cholesky_block(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """Left-looking Cholesky: column j from the columns before it; reads only the lower
    half of ``a`` (as LAPACK's potrf with uplo='L'), zeros above the diagonal."""
    (a,) = inputs

    def per_matrix(at, out, n, element):
        def column(j, out):
            def minus_products(out, i, start):
                """start - sum_k<j out[i, k] out[j, k], reading ``out`` as it is now."""
                return _loop(0, j, [start], lambda k, acc: [arith.SubFOp(
                    acc, arith.MulFOp(_get(out, at(i, k)), _get(out, at(j, k)))).result])[0]
            pivot = math.SqrtOp(minus_products(out, j, _get(a, at(j, j)))).result
            out = _put(pivot, out, at(j, j))
            out = _zero_above(out, at, j, element)
            return [_loop(_next(j), n, [out], lambda i, out: [_put(
                arith.DivFOp(minus_products(out, i, _get(a, at(i, j))), pivot).result,
                out, at(i, j))])[0]]
        return _loop(0, n, [out], column)[0]
    return _matrix_kernel("cholesky_block", a, per_matrix)


@kernel("lower_inverse")
def lower_inverse(inputs: Sequence[ir.Value]) -> list[ir.Value]:
    """The inverse of a lower triangular matrix, column by column by forward
    substitution on the identity's columns (reads only the lower half)."""
    (a,) = inputs

    def per_matrix(at, out, n, element):
        one = arith.ConstantOp(element, 1.0).result

        def column(j, out):
            out = _put(arith.DivFOp(one, _get(a, at(j, j))).result, out, at(j, j))
            out = _zero_above(out, at, j, element)

            def row(i, out):
                total = _loop(j, i, [_zero(element)], lambda k, acc: [arith.AddFOp(
                    acc, arith.MulFOp(_get(a, at(i, k)), _get(out, at(k, j)))).result])[0]
                value = arith.NegFOp(arith.DivFOp(total, _get(a, at(i, i))).result).result
                return [_put(value, out, at(i, j))]
            return [_loop(_next(j), n, [out], row)[0]]
        return _loop(0, n, [out], column)[0]
    return _matrix_kernel("lower_inverse", a, per_matrix)
