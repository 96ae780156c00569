"""Contractions: einsum, matmul, dot.

All of them are written with ``einsum``, which emits one ``linalg.generic`` whose letters
not in the output are reduction loops, except for the shapes in ``_NAMED``: plain 2-D and
batched float matmuls become ``linalg.matmul``/``linalg.batch_matmul``, which IREE's
fast kernels and data tiling key on.
"""

from __future__ import annotations

import builtins
import string

import numpy as np

from .. import dtypes
from .._mlir import PARALLEL, REDUCTION, dim_map, ir, linalg
from ..core import Tracer, current_trace
from ..errors import TracingError
from ..lowering import add_work, drop_broadcast_dims, fill, generic, wrap
from .elementwise import astype
from .reductions import sum as reduce_sum
from .scalar import UFUNC_RULES, convert
from .shape import as_tracer


def _parse(subscripts: str, operands: list[Tracer]) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        inputs, output = spec.split("->")
        explicit = True
    else:
        inputs, output, explicit = spec, "", False
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise TracingError(
            f"einsum: subscripts '{subscripts}' name {len(terms)} operands, got {len(operands)}"
        )
    used = set("".join(terms) + output) - {"."}
    free = iter(c for c in string.ascii_letters if c not in used)
    ellipsis_rank = 0
    for term, op in zip(terms, operands):
        if "..." in term:
            ellipsis_rank = builtins.max(ellipsis_rank, op.ndim - (len(term) - 3))
    ell = "".join(next(free) for _ in range(ellipsis_rank))
    expanded = []
    for i, (term, op) in enumerate(zip(terms, operands)):
        if "..." in term:
            k = op.ndim - (len(term) - 3)
            term = term.replace("...", ell[ellipsis_rank - k:] if k else "")
        if len(term) != op.ndim:
            raise TracingError(
                f"einsum: operand {i} has {op.ndim} dimensions but subscripts '{terms[i]}' "
                f"name {len(term)}"
            )
        expanded.append(term)
    if explicit:
        output = output.replace("...", ell)
    else:
        counts = {c: "".join(expanded).count(c) for c in set("".join(expanded))}
        output = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    for c in output:
        if not builtins.any(c in t for t in expanded):
            raise TracingError(f"einsum: output subscript '{c}' does not appear in the inputs")
    return expanded, output


def einsum(subscripts: str, *operands, dtype=None) -> Tracer:
    tracers = [as_tracer(o, f"einsum operand {i}") for i, o in enumerate(operands)]
    terms, output = _parse(subscripts, tracers)
    letters = list(dict.fromkeys(output + "".join(terms)))
    extent: dict[str, int] = {}
    for i, (term, t) in enumerate(zip(terms, tracers)):
        for c, n in zip(term, t.shape):
            if c in extent and n != extent[c] and 1 not in (n, extent[c]):
                raise TracingError(
                    f"einsum: operand {i} has size {n} for subscript '{c}', which does not "
                    f"match the size {extent[c]} seen before"
                )
            if c not in extent or extent[c] == 1:
                extent[c] = n  # a size-1 operand dim broadcasts against the others
    out_dtype = dtypes.canonicalize(
        dtype if dtype is not None else np.result_type(*[t.dtype for t in tracers]), "einsum"
    )
    if len(tracers) > 1:
        # Letters only one operand has (and the output lacks) are summed out first, as
        # numpy's einsum does: IREE's CPU vectorizer rejects a contraction with such a
        # reduction dim ("vector.contract op invalid accumulator/result vector shape").
        every = "".join(terms)
        for k, (term, t) in enumerate(zip(terms, tracers)):
            lone = tuple(i for i, c in enumerate(term) if every.count(c) == 1 and c not in output)
            if lone:
                tracers[k] = reduce_sum(astype(t, out_dtype), axis=lone, dtype=out_dtype)
                terms[k] = "".join(c for i, c in enumerate(term) if i not in lone)
        letters = list(dict.fromkeys(output + "".join(terms)))
    loop_shape = [extent[c] for c in letters]
    inputs = []
    for term, t in zip(terms, tracers):
        value, loop_dims = drop_broadcast_dims(t, [letters.index(c) for c in term], loop_shape)
        inputs.append((value, dim_map(len(letters), loop_dims)))
    out_shape = [extent[c] for c in output]
    out_dims = [letters.index(c) for c in output]
    iterators = [PARALLEL if c in output else REDUCTION for c in letters]
    multiply, add = UFUNC_RULES["multiply"], UFUNC_RULES["add"]

    def body(*args):
        *ins, acc = args
        values = [convert(v, t.dtype, out_dtype) for v, t in zip(ins, tracers)]
        product = values[0]
        for v in values[1:]:
            product = multiply(out_dtype, product, v)
        return [add(out_dtype, acc, product)]

    init = fill(out_shape, out_dtype, 0)
    flops = 2 * float(np.prod(loop_shape, dtype=np.float64))
    add_work(flops)
    current_trace().contractions.append(
        (flops, builtins.any(_is_constant(v) for v, _ in inputs)))
    named = _named_contraction(inputs, out_dims, letters, tracers, out_dtype)
    if named is not None:
        return wrap(named(*[v for v, _ in inputs], outs=[init]), tuple(out_shape), out_dtype)
    (result,) = generic(inputs, [(init, dim_map(len(letters), out_dims))], iterators, body)
    return wrap(result, tuple(out_shape), out_dtype)


def _is_constant(value) -> bool:
    owner = value.owner
    return hasattr(owner, "name") and owner.name == "arith.constant"


# Loop-dim patterns (lhs, rhs, out) of the named linalg contractions IREE has fast kernels
# for; a matching generic is emitted as the named op.
_NAMED = {
    ((0, 2), (2, 1), (0, 1)): linalg.matmul,
    ((0, 1, 3), (0, 3, 2), (0, 1, 2)): linalg.batch_matmul,
}


def _named_contraction(inputs, out_dims, letters, tracers, out_dtype):
    if len(inputs) != 2 or builtins.any(t.dtype != out_dtype for t in tracers) or not dtypes.is_float(out_dtype):
        return None
    maps = []
    for _, m in inputs:
        maps.append(tuple(ir.AffineDimExpr(e).position for e in m.results))
    return _NAMED.get((maps[0], maps[1], tuple(out_dims)))


def matmul(a, b) -> Tracer:
    x, y = as_tracer(a, "matmul operand 0"), as_tracer(b, "matmul operand 1")
    if x.ndim == 0 or y.ndim == 0:
        raise TracingError("matmul: operands must be at least 1-dimensional; use multiply for scalars")
    k_x = x.shape[-1]
    k_y = y.shape[-2] if y.ndim > 1 else y.shape[0]
    if k_x != k_y:
        raise TracingError(
            f"matmul: operand 1 has a mismatch in its core dimension 0: size {k_y} is "
            f"different from {k_x} (shapes {x.shape} and {y.shape})"
        )
    batch = builtins.max(x.ndim, y.ndim) - 2
    batch_letters = "abcdefgh"[: builtins.max(batch, 0)]
    tx = batch_letters[len(batch_letters) - builtins.max(x.ndim - 2, 0):] + ("ij" if x.ndim > 1 else "j")
    ty = batch_letters[len(batch_letters) - builtins.max(y.ndim - 2, 0):] + ("jk" if y.ndim > 1 else "j")
    out = batch_letters + ("i" if x.ndim > 1 else "") + ("k" if y.ndim > 1 else "")
    try:
        np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        raise TracingError(f"matmul: batch dimensions of shapes {x.shape} and {y.shape} do not broadcast") from None
    return einsum(f"{tx},{ty}->{out}", x, y)


def dot(a, b) -> Tracer:
    x, y = as_tracer(a, "dot operand 0"), as_tracer(b, "dot operand 1")
    if x.ndim == 0 or y.ndim == 0:
        from .elementwise import ufunc

        return ufunc("multiply", x, y)
    if y.ndim == 1:
        if x.shape[-1] != y.shape[0]:
            raise TracingError(f"dot: shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim {x.ndim - 1}) != {y.shape[0]} (dim 0)")
        return einsum("...i,i->...", x, y)
    if x.shape[-1] != y.shape[-2]:
        raise TracingError(f"dot: shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim {x.ndim - 1}) != {y.shape[-2]} (dim {y.ndim - 2})")
    xl = string.ascii_lowercase[: x.ndim - 1]
    yl = string.ascii_uppercase[: y.ndim - 2]
    return einsum(f"{xl}z,{yl}zY->{xl}{yl}Y", x, y)


def vdot(a, b) -> Tracer:
    from .shape import ravel

    return einsum("i,i->", ravel(a), ravel(b))


def inner(a, b) -> Tracer:
    x, y = as_tracer(a, "inner operand 0"), as_tracer(b, "inner operand 1")
    if x.ndim == 0 or y.ndim == 0:
        from .elementwise import ufunc

        return ufunc("multiply", x, y)
    xl, yl = string.ascii_lowercase[: x.ndim - 1], string.ascii_uppercase[: y.ndim - 1]
    return einsum(f"{xl}z,{yl}z->{xl}{yl}", x, y)


def outer(a, b) -> Tracer:
    from .shape import ravel

    return einsum("i,j->ij", ravel(a), ravel(b))
