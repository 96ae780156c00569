"""The reverse-mode rule of ``linalg.generic``: one rule for every structured op.

Longer than 600 lines: the rule's parts (classifying outputs, building the adjoint
loops, pruning them, and the cheaper forms for reads through windows, gathers, products
and broadcasts) all work on one ``Structured`` view and one loop builder; split, each
part would import the others back.

A generic computes, at every point ``i`` of its loop nest,
``y_j = body(x_0[m_0(i)], ..., x_n[m_n(i)])`` for each output ``j`` (elementwise), or
accumulates ``r_j = combine(r_j, e_j(...))`` over the reduction loops (sum, max, min,
product). The adjoint of input ``k`` is one generic over the same loop nest whose output
is read and written at ``m_k(i)``: the loops ``m_k`` leaves out become reduction loops,
so a broadcast operand's adjoint is summed over the dimensions it was broadcast along and
a contraction operand's adjoint is the contraction with the other operand. Its body
recomputes the primal body's values (IREE fuses them; nothing is stored between the
sweeps), pushes a tangent seeded at input ``k``'s block argument through them
(``scalar.py``), and adds ``sum_j cotangent_j * d e_j / d x_k`` (for max and min, only at
the positions that hold the extremum, divided by how many do, as JAX's rule). An input
read through a map that is not a projection (a window's ``d1 * 2 + d4``) is a transposed
convolution, an elementwise pooling adjoint, or a scatter of its contributions; an
element read at computed indices (a gather) a scatter too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base import as_op, operand_segments, separated
from .builders import (collapse_all, dilated, filled, reversed_along, scatter_add,
                       stack_columns, summed, zero_padded)
from .core import (Adjoint, add_scalars, by_type, differentiable, float_constant, is_complex,
                   reads, real_tensor_type, remap, zeros)
from .scalar import FROM_BITS, propagate

COMBINERS = {
    "arith.addf": "sum", "complex.add": "sum",
    "arith.maximumf": "extremum", "arith.maxnumf": "extremum",
    "arith.minimumf": "extremum", "arith.minnumf": "extremum",
    "arith.mulf": "product", "complex.mul": "product",
}


@dataclass

class Structured:
    """A structured op as the generic rule reads it."""

    inputs: list  # ir.Value per input operand
    inits: list  # ir.Value per output operand
    maps: list  # ir.AffineMap per operand (inputs, then outputs)
    reduction_dims: set  # loop dimensions that are reductions
    n_dims: int
    body: object  # ir.Block: block arguments (inputs, then accumulators), yield last
    results: list  # the op's results


def _of_generic(op) -> Structured:
    from aotc._mlir import ir

    n_in, _ = operand_segments(op)
    operands = list(op.operands)
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iters = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    return Structured(operands[:n_in], operands[n_in:], maps,
                      {d for d, s in enumerate(iters) if "reduction" in s},
                      maps[0].n_dims, op.regions[0].blocks[0], list(op.results))


@dataclass
class _Output:
    index: int
    kind: str  # "parallel", "sum", "extremum" or "product"
    value: object  # the body value whose derivative is needed (the yield, or e of combine)
    cotangent: object
    count: object = None  # extremum: how many positions hold it; product: how many zeros
    others: object = None  # product: the product of the nonzero elements


def differentiate(ad: Adjoint, op, s: Structured, adjoints: list) -> None:
    body_ops = [as_op(o) for o in s.body.operations]
    yields = list(body_ops[-1].operands)
    n_in = len(s.inputs)
    args = list(s.body.arguments)
    outputs = [_classify(ad, op, s, j, yields[j], args[n_in + j], adjoints[j], body_ops)
               for j in range(len(s.results))
               if adjoints[j] is not None and differentiable(s.results[j].type)]
    for o in outputs:
        if o.kind == "unchanged":
            ad.add(s.inits[o.index], o.cotangent)
    outputs = [o for o in outputs if o.kind != "unchanged"]
    if not outputs:
        return
    roots = {o.value for o in outputs}
    needed = _slice(body_ops[:-1], list(roots))
    gathers = _gathers(ad, op, needed, s.body)
    accumulators = {args[n_in + o.index] for o in outputs if o.kind != "parallel"}
    for acc in accumulators:
        if _uses(acc, needed, roots):
            ad.refuse(op, "a reduction's accumulated value is read by another part of its "
                          "body; only sum, max and min reductions are differentiable")
    for o in outputs:
        if o.kind == "extremum":
            o.count = _count_extremum(s, o, needed, roots)
        if o.kind == "product":
            o.count, o.others = _product_parts(s, o, needed, roots)
    operands = s.inputs + s.inits
    for k, value in enumerate(operands):
        if value not in ad.active or not differentiable(value.type):
            continue
        if k >= n_in:
            j = k - n_in
            out = next((o for o in outputs if o.index == j), None)
            if out is not None and out.kind == "sum":
                ad.add(value, out.cotangent)  # the init of a sum passes through
                continue
            if out is not None and out.kind in ("extremum", "product"):
                ad.refuse(op, "the initial value of a max/min/product reduction depends on "
                              "a differentiated argument")
        if not _uses(args[k], needed, roots):
            continue
        if not _is_tensor(value.type):
            ad.refuse(op, f"its operand {k} is a scalar that depends on a differentiated "
                          f"argument; pass it as a 0-d array")
        amap = s.maps[k]
        if not amap.is_projected_permutation:
            adjoint = (_tiled_extremum_adjoint(s, k, outputs)
                       or _transposed_adjoint(ad, op, s, k, outputs, needed, roots))
            if adjoint is None:
                adjoint = _affine_read_adjoint(ad, op, s, k, outputs, needed, roots)
            ad.add(value, adjoint)
            continue
        if not s.reduction_dims and len(amap.results) < s.n_dims:
            ad.add(value, _broadcast_adjoint(ad, op, s, k, outputs, needed, roots))
            continue
        ad.add(value, _adjoint_loop(ad, op, s, args[k], outputs, needed, roots,
                                    zeros(value.type), amap))
    for gather in gathers:
        ad.add(gather.operands[0], _gather_adjoint(ad, op, s, gather, outputs, needed, roots))


def _classify(ad, op, s, j, y, acc, cotangent, body_ops) -> _Output:
    if y == acc:
        return _Output(j, "unchanged", None, cotangent)  # the result is its init
    if not s.reduction_dims:
        return _Output(j, "parallel", y, cotangent)
    combine = y.owner if _is_op_result(y) else None
    combine = as_op(combine) if combine is not None else None
    kind = COMBINERS.get(combine.name) if combine is not None else None
    if kind is not None:
        a, b = combine.operands
        uses = sum(1 for o in body_ops for v in o.operands if v == acc)
        if uses == 1 and (a == acc) != (b == acc):
            return _Output(j, kind, b if a == acc else a, cotangent)
    ad.refuse(op, f"its result {j} is a reduction that is not a sum, max or min of its "
                  f"elements")


def _is_op_result(v) -> bool:
    from aotc._mlir import ir

    return isinstance(v, ir.OpResult)


def _is_tensor(t) -> bool:
    from aotc._mlir import ir

    return isinstance(t, ir.RankedTensorType)


def _slice(ops: list, roots: list) -> list:
    """The ops of ``ops`` (a body, in order) that ``roots`` depend on."""
    wanted = set(roots)
    keep = []
    for o in reversed(ops):
        if any(r in wanted for r in o.results):
            keep.append(o)
            wanted.update(reads(o))
    return keep[::-1]


def _uses(value, ops: list, roots: set) -> bool:
    """Whether ``value`` is one of ``roots`` or read by an op of ``ops`` (the slice that
    computes them)."""
    return value in roots or any(value in reads(o) for o in ops)


def _gathers(ad, op, needed: list, body) -> list:
    """The ``tensor.extract`` ops of ``needed`` that read a differentiated tensor from
    outside the body (gathers); any other read of a differentiated outside value is
    refused."""
    inside = set(body.arguments)
    for o in needed:
        inside.update(o.results)
    found = []
    for o in needed:
        outside = [v for v in reads(o) if v not in inside and v in ad.active]
        if not outside:
            continue
        if o.name == "tensor.extract" and outside == [o.operands[0]]:
            found.append(o)
            continue
        ad.refuse(op, f"its body reads a differentiated value from outside through "
                      f"{o.name}; only element reads (tensor.extract) are differentiable")
    return found


def _loop_ranges(s: Structured) -> list[int]:
    """The static size of each loop dimension, read off the operands' shapes."""
    from aotc._mlir import ir

    sizes = [None] * s.n_dims
    for value, amap in zip(s.inputs + s.inits, s.maps):
        if not _is_tensor(value.type):
            continue
        shape = ir.RankedTensorType(value.type).shape
        for p, e in enumerate(amap.results):
            try:
                sizes[ir.AffineDimExpr(e).position] = shape[p]
            except ValueError:  # not a plain loop dimension (d0 + d3)
                continue
    return sizes


def _gather_adjoint(ad, op, s: Structured, gather, outputs: list, needed: list, roots: set):
    """The adjoint of the tensor a body element read (``gather``) takes from: the
    contribution of every loop position, scatter-added at the indices it was read at."""
    positions = list(gather.operands)[1:]
    return _scatter_adjoint(ad, op, s, gather.results[0], gather.operands[0].type,
                            len(positions), lambda mapping: [mapping.get(p, p) for p in positions],
                            outputs, needed, roots | set(positions))


def _tiled_extremum_adjoint(s: Structured, k: int, outputs: list):
    """Max/min pooling whose windows tile the input (stride = window, no dilation): each
    input element lies in at most one window, so its adjoint is elementwise: the
    window's cotangent where the element holds the window's extremum (divided by how
    many do), else zero. None where that does not apply (overlapping windows go through
    the scatter)."""
    from aotc._mlir import arith, ir, linalg, tensor
    from aotc.ops.scalar_builders import cmpf, cmpi, select

    from .core import element_type

    argument = s.body.arguments[k]
    if not outputs or any(o.kind != "extremum" or o.value != argument for o in outputs):
        return None
    sizes = _loop_ranges(s)
    n_in = len(s.inputs)
    out_maps = [s.maps[n_in + o.index] for o in outputs]
    out_dims = _plain_dims(out_maps)
    positions = []  # per input dimension: (loop dimension it gives, divisor)
    for e in s.maps[k].results:
        terms = _terms(e)
        if terms is None:
            return None
        if len(terms) == 1 and terms[0][1] == 1:
            positions.append((terms[0][0], 1))
            continue
        outer = [(d, c) for d, c in terms if d in out_dims]
        inner = [(d, c) for d, c in terms if d not in out_dims]
        if len(terms) != 2 or len(outer) != 1 or len(inner) != 1:
            return None
        (d_o, stride), (d_w, dilation) = outer[0], inner[0]
        if dilation != 1 or stride != sizes[d_w]:
            return None
        positions.append((d_o, stride))
    if not out_dims <= {d for d, _ in positions}:
        return None
    value = (s.inputs + s.inits)[k]
    index = ir.IndexType.get()
    elem = element_type(value.type)

    def body(x):
        loops, valid = {}, None
        for p, (d, divisor) in enumerate(positions):
            i = linalg.IndexOp(p).result
            if divisor == 1:
                loops[d] = i
                continue
            o = arith.divui(i, arith.ConstantOp(index, divisor).result)
            last = arith.ConstantOp(index, sizes[d] - 1).result
            inside = cmpi("ule", o, last)
            valid = inside if valid is None else arith.andi(valid, inside)
            loops[d] = arith.minui(o, last)
        total = float_constant(elem, 0.0)
        for o, amap in zip(outputs, out_maps):
            at = [loops[ir.AffineDimExpr(e).position] for e in amap.results]
            ct = tensor.extract(o.cotangent, at)
            r = tensor.extract(s.results[o.index], at)
            count = tensor.extract(o.count, at)
            hit = cmpf("oeq", x, r)
            if valid is not None:
                hit = arith.andi(hit, valid)
            total = arith.addf(total, select(hit, arith.divf(ct, count),
                                             float_constant(elem, 0.0)))
        return total

    from .core import elementwise

    return elementwise(value.type, [value], body)


def _broadcast_adjoint(ad, op, s: Structured, k: int, outputs: list, needed: list,
                       roots: set):
    """The adjoint of an operand an elementwise op broadcasts (a bias): the contributions
    at every loop position, computed by a dispatch of their own (``base.separated``), then
    summed over the broadcast dimensions. One generic doing both made IREE 3.13's CPU
    code keep a whole row of the reduction on the stack (over its 32 KiB limit: a CNN's
    bias gradient, a 32x6272 reduction)."""
    from aotc._mlir import dim_map, ir

    from .core import element_type

    value = (s.inputs + s.inits)[k]
    sizes = _loop_ranges(s)
    if any(n is None or n < 0 for n in sizes):
        return _adjoint_loop(ad, op, s, s.body.arguments[k], outputs, needed, roots,
                             zeros(value.type), s.maps[k])
    elem = element_type(value.type)
    identity = dim_map(s.n_dims, list(range(s.n_dims)))
    full = _adjoint_loop(ad, op, s, s.body.arguments[k], outputs, needed, roots,
                         zeros(ir.RankedTensorType.get(sizes, elem)), identity)
    if full is None:
        return None
    return summed(separated(full), zeros(value.type), s.maps[k], _plain_dims([s.maps[k]]))


def _terms(e) -> list[tuple[int, int]] | None:
    """``e`` as (dimension, coefficient) terms (``d1 * 2 + d4``), or None."""
    from aotc._mlir import ir

    try:
        return [(ir.AffineDimExpr(e).position, 1)]
    except ValueError:
        pass
    try:
        product = ir.AffineMulExpr(e)
        return [(ir.AffineDimExpr(product.lhs).position,
                 ir.AffineConstantExpr(product.rhs).value)]
    except ValueError:
        pass
    try:
        total = ir.AffineAddExpr(e)
    except ValueError:
        return None
    left, right = _terms(total.lhs), _terms(total.rhs)
    return None if left is None or right is None else left + right


def _transposed_adjoint(ad, op, s: Structured, k: int, outputs: list, needed: list,
                        roots: set):
    """The adjoint of a convolution's input (read at ``o * stride + w * dilation``) as
    the transposed convolution, or None where it does not apply: the cotangent is
    dilated by the stride and padded by the dilated window, then contracted with the
    window flipped (its loop index enters as ``o + dilation * (K - 1 - w)``), all in
    affine maps, so the adjoint is one contraction like the forward one. Applies when
    the derivative does not read the input itself (the op is linear in it: convolutions,
    sum pooling) and every output is a sum; a max pooling goes through the scatter."""
    from aotc._mlir import dim_map, ir

    n_in = len(s.inputs)
    if any(o.kind != "sum" for o in outputs):
        return None
    out_maps = [s.maps[n_in + o.index] for o in outputs]
    out_dims = _plain_dims(out_maps)
    sizes = _loop_ranges(s)
    value = (s.inputs + s.inits)[k]
    extents = list(ir.RankedTensorType(value.type).shape)
    windows, plain = [], []
    for p, e in enumerate(s.maps[k].results):
        terms = _terms(e)
        if terms is None or len(terms) > 2:
            return None
        if len(terms) == 1 and terms[0][1] == 1:
            plain.append(terms[0][0])
            continue
        outer = [(d, c) for d, c in terms if d in out_dims]
        inner = [(d, c) for d, c in terms if d in s.reduction_dims and d not in out_dims]
        if len(outer) != 1 or len(inner) != 1:
            return None
        (d_o, stride), (d_w, dilation) = outer[0], inner[0]
        windows.append((d_o, stride, d_w, dilation, extents[p]))
        plain.append(d_o)
    window_dims = {w[0] for w in windows}
    for j, amap in enumerate(s.maps):
        if j != k and j < n_in and window_dims & _plain_dims([amap]):
            return None  # another input reads the output position
    shifted = []
    for o, amap in zip(outputs, out_maps):
        ct = o.cotangent
        results = list(amap.results)
        for d_o, stride, d_w, dilation, extent in windows:
            q = next(i for i, e in enumerate(results) if _terms(e) == [(d_o, 1)])
            window = sizes[d_w]
            ct = dilated(ct, q, stride)
            length = ir.RankedTensorType(ct.type).shape[q]
            ct = zero_padded(ct, q, dilation * (window - 1), extent - length)
            # The window runs backward (w' = K - 1 - w): the padded cotangent is read at
            # o + dilation * w', the other operands along w flipped.
            results[q] = (ir.AffineDimExpr.get(d_o)
                          + ir.AffineDimExpr.get(d_w) * ir.AffineConstantExpr.get(dilation))
        shifted.append((_Output(o.index, o.kind, o.value, ct),
                        ir.AffineMap.get(s.n_dims, 0, results)))
    flipped = {w[2] for w in windows}
    inputs = list(s.inputs)
    for j, amap in enumerate(s.maps[:n_in]):
        axes = [p for p, e in enumerate(amap.results) if _terms(e) in
                ([(d, 1)] for d in flipped)]
        if j != k and axes:
            inputs[j] = reversed_along(inputs[j], axes)
    new_map = dim_map(s.n_dims, plain)
    maps = list(s.maps)
    maps[k] = new_map
    for o, amap in shifted:
        maps[n_in + o.index] = amap
    t = Structured(inputs, s.inits, maps, s.reduction_dims, s.n_dims, s.body, s.results)
    shifted = [o for o, _ in shifted]
    adjoint = _adjoint_loop(ad, op, t, s.body.arguments[k], shifted, needed, roots,
                            zeros(value.type), new_map)
    if adjoint is not None and value in list(as_op(adjoint.owner).operands):
        as_op(adjoint.owner).erase()  # the derivative reads the input: not linear in it
        return None
    return adjoint


def _affine_read_adjoint(ad, op, s: Structured, k: int, outputs: list, needed: list,
                         roots: set):
    """The adjoint of input ``k`` read through a map that is not a projection (a
    convolution's or a pooling window's ``d1 * 2 + d4``): the contribution of every loop
    position, scatter-added at the element the map reads there."""
    from aotc._mlir import ir, linalg

    amap = s.maps[k]

    def positions(mapping):
        loops = [linalg.IndexOp(d).result for d in range(s.n_dims)]
        return [ir.Operation.create(
            "affine.apply", results=[ir.IndexType.get()], operands=loops,
            attributes={"map": ir.AffineMapAttr.get(ir.AffineMap.get(s.n_dims, 0, [e]))}
        ).result for e in amap.results]

    value = (s.inputs + s.inits)[k]
    return _scatter_adjoint(ad, op, s, s.body.arguments[k], value.type, len(amap.results),
                            positions, outputs, needed, roots)


def _scatter_adjoint(ad, op, s: Structured, seed, target_type, depth: int, positions,
                     outputs: list, needed: list, roots: set):
    """A tensor of ``target_type`` holding, scatter-added at ``positions(mapping)`` (the
    ``depth`` indices of the element read at each loop position, built in a body), the
    cotangents times the derivative of the outputs with respect to the body value
    ``seed``."""
    from aotc._mlir import arith, dim_map, ir

    from .core import element_type

    sizes = _loop_ranges(s)
    if any(n is None or n < 0 for n in sizes):
        ad.refuse(op, "an element read at computed indices in a loop nest of dynamic size")
    count = 1
    for n in sizes:
        count *= n
    if count == 0:
        return None
    identity = dim_map(s.n_dims, list(range(s.n_dims)))
    updates = _adjoint_loop(ad, op, s, seed, outputs, needed, roots,
                            zeros(ir.RankedTensorType.get(sizes, element_type(target_type))),
                            identity)
    if updates is None:
        return None
    i64 = ir.IntegerType.get_signless(64)
    columns = []
    for column in range(depth):
        def body(mapping, extras, acc, column=column):
            return arith.index_cast(i64, positions(mapping)[column])
        empty = ir.Operation.create("tensor.empty",
                                    results=[ir.RankedTensorType.get(sizes, i64)]).result
        columns.append(_loop(s, needed, roots, [], empty, identity, body))
    flat_updates = collapse_all(updates, [count])
    indices = stack_columns(columns, sizes, count, depth)
    return scatter_add(flat_updates, indices, zeros(target_type), depth)


def _is_zero(e):
    """``e == 0`` of a float or complex scalar."""
    from aotc._mlir import complex_dialect
    from aotc.ops.scalar_builders import cmpf

    zero = float_constant(e.type, 0.0)
    return complex_dialect.EqualOp(e, zero).result if is_complex(e.type) else \
        cmpf("oeq", e, zero)


_multiply, _divide = by_type("mulf", "MulOp"), by_type("divf", "DivOp")


def _product_parts(s: Structured, o: _Output, needed: list, roots: set):
    """For a product reduction: how many factors are zero (a real count, also for
    complex factors), and the product of the others, per result element (the slope of a
    product in one factor is the product of the others, which ``r / e`` gives only where
    no factor is zero)."""
    from aotc._mlir import arith
    from aotc.ops.scalar_builders import select

    result = s.results[o.index]
    out_map = s.maps[len(s.inputs) + o.index]

    def count(mapping, extras, acc):
        return arith.addf(acc, select(_is_zero(mapping[o.value]), float_constant(acc.type, 1.0),
                                      float_constant(acc.type, 0.0)))

    def others(mapping, extras, acc):
        e = mapping[o.value]
        return _multiply(acc, select(_is_zero(e), float_constant(e.type, 1.0), e))

    ones = filled(result.type, 1.0)
    return (_loop(s, needed, roots, [], zeros(real_tensor_type(result.type)), out_map, count),
            _loop(s, needed, roots, [], ones, out_map, others))


def _product_slope(e, r, zero_count, others):
    """d r / d e for ``r`` the product of factors including ``e``: ``r / e`` without
    zeros; with one zero, the others' product at the zero and 0 elsewhere; else 0."""
    from aotc._mlir import arith
    from aotc.ops.scalar_builders import cmpf, select

    is_zero = _is_zero(e)
    safe = select(is_zero, float_constant(e.type, 1.0), e)
    none = cmpf("oeq", zero_count, float_constant(zero_count.type, 0.0))
    single = arith.andi(cmpf("oeq", zero_count, float_constant(zero_count.type, 1.0)), is_zero)
    return select(none, _divide(r, safe), select(single, others, float_constant(e.type, 0.0)))


def _count_extremum(s: Structured, o: _Output, needed: list, roots: set):
    """How many loop positions reduced into each element of result ``o.index`` hold its
    value (the max/min adjoint is shared among them, as JAX's)."""
    from aotc._mlir import arith
    from aotc.ops.scalar_builders import cmpf, select

    result = s.results[o.index]
    out_map = s.maps[len(s.inputs) + o.index]

    def body(mapping, extras, acc):
        e = mapping[o.value]
        hit = select(cmpf("oeq", e, extras[0]), float_constant(acc.type, 1.0),
                     float_constant(acc.type, 0.0))
        return arith.addf(acc, hit)

    return _loop(s, needed, roots, [(result, out_map)], zeros(result.type), out_map, body)


def _adjoint_loop(ad, op, s: Structured, seed, outputs: list, needed: list, roots: set,
                  init, out_map):
    """One generic over ``s``'s loops accumulating, at ``out_map``, the cotangents times
    the derivative of the outputs with respect to the body value ``seed`` (a block
    argument: an operand's adjoint; an element read: a gather's updates)."""
    from aotc._mlir import arith, complex_dialect, ir
    from aotc.ops.scalar_builders import cmpf, select

    n_in = len(s.inputs)
    extras = []
    for o in outputs:
        result_map = s.maps[n_in + o.index]
        extras.append((o.cotangent, result_map))
        if o.kind == "extremum":
            extras += [(s.results[o.index], result_map), (o.count, result_map)]
        if o.kind == "product":
            extras += [(s.results[o.index], result_map), (o.count, result_map),
                       (o.others, result_map)]

    def along(mapping, values, direction):
        """sum_j Re(cotangent_j * d e_j) for the seed's tangent ``direction``, or None."""
        try:
            tangents = propagate(mapping.cloned, {mapping[seed]: direction})
        except KeyError as e:
            what = ("a float rebuilt from the bits of a differentiated value"
                    if e.args[0] in FROM_BITS else "an op")
            ad.refuse(op, f"its body computes {e.args[0]} ({what}), which has no "
                          f"derivative rule (passes/autodiff/scalar.py)")
        total = None
        it = iter(values)
        for o in outputs:
            ct = next(it)
            d = tangents.get(mapping[o.value])
            if o.kind == "extremum":
                r, count = next(it), next(it)
                if d is not None:
                    e = mapping[o.value]
                    share = arith.divf(float_constant(ct.type, 1.0), count)
                    d = arith.mulf(d, select(cmpf("oeq", e, r), share,
                                             float_constant(ct.type, 0.0)))
            if o.kind == "product":
                r, zeros_, others = next(it), next(it), next(it)
                if d is not None:
                    d = _multiply(d, _product_slope(mapping[o.value], r, zeros_, others))
            if d is None:
                continue
            term = _real_product(ct, d)
            total = term if total is None else arith.addf(total, term)
        return total

    def body(mapping, values, acc):
        # A complex seed's adjoint is dL/dx - i dL/dy: its real and imaginary directions.
        parts = [along(mapping, values, float_constant(mapping[seed].type, *direction))
                 for direction in ((1.0,), (0.0, 1.0))[:2 if is_complex(acc.type) else 1]]
        if all(p is None for p in parts):
            return acc
        contributed.append(True)
        if is_complex(acc.type):
            zero = float_constant(ir.ComplexType(acc.type).element_type, 0.0)
            re = parts[0] if parts[0] is not None else zero
            im = arith.negf(parts[1]) if parts[1] is not None else zero
            return add_scalars(acc, complex_dialect.CreateOp(acc.type, re, im).result)
        total = parts[0]
        if total.type != acc.type:  # an input read in another precision than it computes
            cast = arith.truncf if total.type.width > acc.type.width else arith.extf
            total = cast(acc.type, total)
        return arith.addf(acc, total)

    contributed = []
    result = _loop(s, needed, roots, extras, init, out_map, body)
    if not contributed:  # every path from the seed has a zero derivative (floor, compare)
        as_op(result.owner).erase()
        return None
    return result


def _real_product(ct, d):
    """Re(ct * d) of a cotangent and a tangent of one (float or complex) type: what the
    tangent ``d`` of an output adds to the derivative of a real loss."""
    from aotc._mlir import arith, complex_dialect as cx

    if not is_complex(ct.type):
        return arith.mulf(ct, d)
    return arith.subf(arith.mulf(cx.ReOp(ct).result, cx.ReOp(d).result),
                      arith.mulf(cx.ImOp(ct).result, cx.ImOp(d).result))


class _Mapping(dict):
    """Primal body values -> values of the new body; ``cloned``: the clones in order."""

    cloned: list


def _loop(s: Structured, needed: list, roots: set, extras: list, init, out_map, body):
    """A generic over ``s``'s loop nest reading ``s``'s operands (and ``extras``, pairs of
    value and map), accumulating into ``init`` at ``out_map`` (loops it leaves out are
    reductions). Its body clones ``needed`` and yields ``body(mapping, extra scalars,
    accumulator)``."""
    from aotc._mlir import (PARALLEL, REDUCTION, affine_maps, ir, iterator_types, linalg)

    from .core import element_type

    operands = s.inputs + s.inits
    kept = [k for k in range(len(operands)) if _uses(s.body.arguments[k], needed, roots)]
    # A loop dimension only read through sums (a pooling window's d4 in d1 * 2 + d4)
    # takes its size from an operand that has it as a plain dimension (the window).
    covered = _plain_dims([s.maps[k] for k in kept] + [m for _, m in extras] + [out_map])
    shape_only = []
    for d in range(s.n_dims):
        if d not in covered:
            k = next(k for k in range(len(operands)) if d in _plain_dims([s.maps[k]]))
            if k not in kept and k not in shape_only:
                shape_only.append(k)
            covered |= _plain_dims([s.maps[k]])
    kept = sorted(kept + shape_only)
    ins = [operands[k] for k in kept] + [v for v, _ in extras]
    maps = [s.maps[k] for k in kept] + [m for _, m in extras] + [out_map]
    out_dims = {ir.AffineDimExpr(e).position for e in out_map.results}
    iters = [PARALLEL if d in out_dims else REDUCTION for d in range(s.n_dims)]
    g = linalg.GenericOp([init.type], ins, [init], affine_maps(maps), iterator_types(iters))
    block = g.regions[0].blocks.append(*[element_type(v.type) for v in ins],
                                       element_type(init.type))
    mapping = _Mapping()
    mapping.cloned = []
    for k, arg in zip(kept, block.arguments):
        mapping[s.body.arguments[k]] = arg
    with ir.InsertionPoint(block):
        for o in needed:
            clone = o.clone()
            remap(clone, mapping)
            for old, new in zip(o.results, clone.results):
                mapping[old] = new
            mapping.cloned.append(clone)
        extra_args = list(block.arguments[len(kept):len(ins)])
        linalg.YieldOp([body(mapping, extra_args, block.arguments[len(ins)])])
    return _pruned(g, ins, maps, init, iters, {kept.index(k) for k in shape_only})


def _used(value) -> bool:
    return any(True for _ in value.uses)


def _plain_dims(maps: list) -> set:
    """The loop dimensions some map of ``maps`` reads as a plain dimension."""
    from aotc._mlir import ir

    found = set()
    for amap in maps:
        for e in amap.results:
            try:
                found.add(ir.AffineDimExpr(e).position)
            except ValueError:
                continue
    return found


def _pruned(g, ins: list, maps: list, init, iters: list, shape_only: set):
    """``g`` without the recomputed body values its result does not need and without
    the inputs nothing reads any more: IREE recognizes a contraction only with two
    inputs, and a dispatch reads every input it is given."""
    from aotc._mlir import affine_maps, ir, iterator_types, linalg

    block = g.regions[0].blocks[0]
    ops = [as_op(o) for o in block.operations][:-1]
    for op in reversed(ops):  # dead clones (the derivative reads only some values)
        if not list(op.regions) and not any(_used(r) for r in op.results):
            op.erase()
    args = list(block.arguments)
    used = [i for i in range(len(ins)) if _used(args[i]) or i in shape_only]
    if len(used) == len(ins):
        return g.results[0]
    new = linalg.GenericOp([init.type], [ins[i] for i in used], [init],
                           affine_maps([maps[i] for i in used] + [maps[-1]]),
                           iterator_types(iters))
    new_block = new.regions[0].blocks.append(*[args[i].type for i in used], args[-1].type)
    mapping = {args[i]: new_block.arguments[k] for k, i in enumerate(used)}
    mapping[args[-1]] = new_block.arguments[-1]
    with ir.InsertionPoint(new_block):
        for op in [as_op(o) for o in block.operations]:
            clone = op.clone()
            remap(clone, mapping)
            for old, r in zip(op.results, clone.results):
                mapping[old] = r
    g.erase()
    return new.results[0]



