"""Contractions: einsum, tensordot, matmul, dot, inner, outer, vdot, kron.

All of them are written with ``einsum``, which works in steps:

1. a subscript repeated within one operand takes that operand's diagonal (one
   ``linalg.generic`` reading it through a map such as ``(d0, d1) -> (d0, d0, d1)``);
2. with several operands, subscripts only one operand has (and the output lacks) are
   summed out of it first, as numpy does (IREE's CPU vectorizer also rejects a
   contraction with such a reduction dim: "vector.contract op invalid accumulator");
3. more than two operands are contracted pairwise, the pair whose result is smallest
   first (numpy's and opt_einsum's "greedy" order);
4. each pairwise float contraction with batch, row, column and summed subscripts becomes
   ``linalg.matmul`` or ``linalg.batch_matmul`` (operands transposed and reshaped to
   ``[batch, rows, summed]`` x ``[batch, summed, columns]`` when they are not already),
   which IREE's fast kernels and data tiling key on; everything else is one
   ``linalg.generic`` whose subscripts missing from the output are reduction loops.
"""

from __future__ import annotations

import builtins
import itertools
import string

import numpy as np

from .. import dtypes
from .._mlir import PARALLEL, REDUCTION, dim_map, linalg
from ..core import Tracer, current_trace
from ..errors import TracingError, UnsupportedDtypeError
from ..lowering import add_work, drop_broadcast_dims, fill, generic, parallel, wrap
from ..targets import Contraction
from .arguments import as_tracer, normalize_axis
from .complex_parts import complex_from_parts, imag, real
from .elementwise import astype, ufunc
from .reductions import sum as reduce_sum
from .scalar import UFUNC_RULES, convert
from .shape import concatenate, ravel, reshape, transpose

EXPORTS: dict[str, list[str]] = {
    "numpy": ["dot", "einsum", "inner", "matmul", "outer", "vdot", "tensordot", "kron"],
    "methods": ["dot"],
}

_LETTERS = frozenset(string.ascii_letters)


# ---- parsing --------------------------------------------------------------------------

def _check_term(term: str, where: str) -> None:
    rest = term.replace("...", "", 1)
    if "." in rest:
        raise TracingError(
            f"einsum: {where} '{term}' has a '.' that is not part of one ellipsis ('...')")
    bad = [c for c in rest if c not in _LETTERS]
    if bad:
        raise TracingError(
            f"einsum: invalid subscript {bad[0]!r} in {where} '{term}'; subscripts must be "
            f"letters a-z, A-Z (and one '...')")


def _parse(subscripts: str, operands: list[Tracer]) -> tuple[list[str], str]:
    """The subscripts of each operand and of the output, with '...' replaced by letters
    of their own (right-aligned, as numpy broadcasts) and the implicit output filled in."""
    if not isinstance(subscripts, str):
        raise TracingError("einsum: expected a subscripts string such as 'ij,jk->ik', "
                           f"got {subscripts!r}")
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        raise TracingError(f"einsum: subscripts '{subscripts}' have more than one '->'")
    explicit = "->" in spec
    inputs, output = spec.split("->") if explicit else (spec, "")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise TracingError(
            f"einsum: subscripts '{subscripts}' name {len(terms)} operands, got {len(operands)}"
        )
    for i, term in enumerate(terms):
        _check_term(term, f"the subscripts of operand {i}")
    _check_term(output, "the output subscripts")
    used = set("".join(terms) + output) - {"."}
    free = iter(c for c in string.ascii_letters if c not in used)
    ranks = []
    for i, (term, op) in enumerate(zip(terms, operands)):
        named = len(term) - 3 if "..." in term else len(term)
        if named > op.ndim or ("..." not in term and named != op.ndim):
            raise TracingError(
                f"einsum: operand {i} has {op.ndim} dimensions but subscripts '{term}' "
                f"name {named}"
            )
        ranks.append(op.ndim - named)
    ellipsis_rank = builtins.max(ranks, default=0)
    ell = "".join(next(free) for _ in range(ellipsis_rank))
    expanded = [term.replace("...", ell[ellipsis_rank - k:]) for term, k in zip(terms, ranks)]
    if explicit:
        if "..." not in output and ellipsis_rank:
            raise TracingError(
                f"einsum: operands have dimensions under '...' but the output subscripts "
                f"'{output}' have no '...'; add it (e.g. '...{output}')")
        output = output.replace("...", ell)
        for c in output:
            if output.count(c) > 1:
                raise TracingError(f"einsum: output subscript '{c}' appears more than once in "
                                   f"'{output}'")
            if not builtins.any(c in t for t in expanded):
                raise TracingError(f"einsum: output subscript '{c}' does not appear in the inputs")
    else:
        every = "".join(expanded)
        output = ell + "".join(sorted(c for c in set(every)
                                      if every.count(c) == 1 and c not in ell))
    return expanded, output


def _extents(terms: list[str], tracers: list[Tracer]) -> dict[str, int]:
    """Each subscript's size; size-1 dimensions broadcast against the others."""
    extent: dict[str, int] = {}
    for i, (term, t) in enumerate(zip(terms, tracers)):
        for c, n in zip(term, t.shape):
            if c in extent and n != extent[c] and 1 not in (n, extent[c]):
                raise TracingError(
                    f"einsum: operand {i} has size {n} for subscript '{c}', which does not "
                    f"match the size {extent[c]} seen before (shapes: "
                    f"{', '.join(str(t.shape) for t in tracers)})"
                )
            if c not in extent or extent[c] == 1:
                extent[c] = n
    return extent


# ---- einsum ---------------------------------------------------------------------------

def einsum(subscripts: str, *operands, dtype=None, casting: str = "safe", optimize=None) -> Tracer:
    """numpy.einsum: any number of operands, diagonals ('ii->i'), '...' broadcasting,
    implicit output; the result has numpy's dtype (``dtype=`` casts the operands first,
    as numpy does, checked with ``casting``). ``optimize`` is accepted and ignored: the
    pairwise order is always the greedy one.

    >>> bmm = aotc.jit(lambda x, y: anp.einsum("bij,bjk->bik", x, y))
    >>> x, y = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    >>> "linalg.batch_matmul" in bmm.lower(x, y).as_text()
    True
    """
    tracers = [as_tracer(o, f"einsum operand {i}") for i, o in enumerate(operands)]
    terms, output = _parse(subscripts, tracers)
    extent = _extents(terms, tracers)
    out_dtype = _einsum_dtype(tracers, dtype, casting)
    for i, t in enumerate(tracers):
        tracers[i], terms[i] = _diagonal(t, terms[i], i)
    if len(tracers) > 1:
        for i, t in enumerate(tracers):
            others = "".join(terms[:i] + terms[i + 1:]) + output
            tracers[i], terms[i] = _sum_out(t, terms[i], others, out_dtype)
    while len(tracers) > 2:
        i, j, term = _cheapest_pair(terms, output, extent)
        pair = _contract([tracers[i], tracers[j]], [terms[i], terms[j]], term, extent, out_dtype)
        tracers = [t for k, t in enumerate(tracers) if k not in (i, j)] + [pair]
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [term]
    return _contract(tracers, terms, output, extent, out_dtype)


def _einsum_dtype(tracers: list[Tracer], dtype, casting: str) -> np.dtype:
    if dtype is None:
        return dtypes.canonicalize(dtypes.result_type(*[t.dtype for t in tracers]), "einsum")
    out = dtypes.canonicalize(dtype, "einsum dtype")
    for i, t in enumerate(tracers):
        if not np.can_cast(t.dtype, out, casting):
            raise UnsupportedDtypeError(
                f"einsum: cannot cast operand {i} from {t.dtype.name} to dtype={out.name} "
                f"with casting={casting!r}; pass casting='unsafe' to allow it")
    return out


def _diagonal(t: Tracer, term: str, index: int) -> tuple[Tracer, str]:
    """The diagonal over every subscript repeated in ``term`` ('iij' -> 'ij')."""
    unique = "".join(dict.fromkeys(term))
    if unique == term:
        return t, term
    sizes: dict[str, int] = {}
    for c, n in zip(term, t.shape):
        if sizes.setdefault(c, n) != n:
            raise TracingError(
                f"einsum: operand {index} repeats subscript '{c}' in '{term}' over dimensions "
                f"of sizes {sizes[c]} and {n} (shape {t.shape}); a diagonal needs equal sizes")
    shape = [sizes[c] for c in unique]
    read = dim_map(len(unique), [unique.index(c) for c in term])
    (result,) = generic([(t.value, read)],
                        [(fill(shape, t.dtype, 0), dim_map(len(unique), list(range(len(unique)))))],
                        parallel(len(unique)), lambda v, _out: [v])
    add_work(np.prod(shape, dtype=np.float64))
    return wrap(result, shape, t.dtype), unique


def _sum_out(t: Tracer, term: str, others: str, out_dtype) -> tuple[Tracer, str]:
    lone = tuple(i for i, c in enumerate(term) if c not in others)
    if not lone:
        return t, term
    summed = reduce_sum(astype(t, out_dtype), axis=lone, dtype=out_dtype)
    return summed, "".join(c for i, c in enumerate(term) if i not in lone)


def _cheapest_pair(terms: list[str], output: str, extent: dict[str, int]) -> tuple[int, int, str]:
    """The pair of operands to contract next and its result's subscripts: the smallest
    result among pairs sharing a subscript (an outer product only when none do)."""
    best = None
    for i, j in itertools.combinations(range(len(terms)), 2):
        rest = "".join(t for k, t in enumerate(terms) if k not in (i, j)) + output
        term = "".join(c for c in dict.fromkeys(terms[i] + terms[j]) if c in rest)
        size = float(np.prod([extent[c] for c in term], dtype=np.float64))
        key = (not set(terms[i]) & set(terms[j]), size)
        if best is None or key < best[0]:
            best = (key, i, j, term)
    return best[1], best[2], best[3]


def _contract(tracers: list[Tracer], terms: list[str], output: str, extent, out_dtype) -> Tracer:
    """One or two operands into ``output``: a named matmul when the shape allows, else
    one linalg.generic."""
    letters = list(dict.fromkeys(output + "".join(terms)))
    flops = 2 * float(np.prod([extent[c] for c in letters], dtype=np.float64))
    # An operand indexed by every loop letter (of more than one step) has each element
    # read once (a matrix-vector product's matrix): the contraction streams it, at memory
    # speed.
    loops = {c for c in letters if extent[c] != 1}
    streams = builtins.any(set(term) >= loops for term in terms)
    add_work(flops, contraction=not streams, matvec=streams)
    named = _as_matmul(tracers, terms, output, extent, out_dtype)
    # the compile flags key on the matmuls' element type: a complex one's are real
    complex_matmul = named is not None and dtypes.is_complex(out_dtype)
    compiled = dtypes.real_dtype(out_dtype) if complex_matmul else tracers[0].dtype
    current_trace().contractions.append(Contraction(
        flops, builtins.any(is_constant(t.value) for t in tracers), compiled.name))
    return (named if named is not None
            else _generic_contraction(tracers, terms, output, extent, out_dtype))


def _generic_contraction(tracers, terms, output, extent, out_dtype) -> Tracer:
    letters = list(dict.fromkeys(output + "".join(terms)))
    loop_shape = [extent[c] for c in letters]
    inputs = []
    for term, t in zip(terms, tracers):
        value, loop_dims = drop_broadcast_dims(t, [letters.index(c) for c in term], loop_shape)
        inputs.append((value, dim_map(len(letters), loop_dims)))
    out_shape = [extent[c] for c in output]
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
    out_map = dim_map(len(letters), [letters.index(c) for c in output])
    (result,) = generic(inputs, [(init, out_map)], iterators, body)
    return wrap(result, tuple(out_shape), out_dtype)


def is_constant(value) -> bool:
    owner = value.owner
    return hasattr(owner, "name") and owner.name == "arith.constant"


def _as_matmul(tracers, terms, output, extent, out_dtype) -> Tracer | None:
    """A float or complex contraction of two operands as linalg.matmul / batch_matmul,
    or None.

    Subscripts fall in four groups: batch (both operands and the output), rows (first
    operand and output), columns (second operand and output), summed (both operands, not
    the output). Each operand is transposed to [batch, rows|columns, summed] order as
    needed and each group collapsed to one dimension; the result is expanded back and
    transposed to the output's order. A complex one is real matmuls (``_complex_matmul``)."""
    if len(tracers) != 2 or not (dtypes.is_float(out_dtype) or dtypes.is_complex(out_dtype)):
        return None
    (a, b), (ta, tb) = tracers, terms
    batch = [c for c in output if c in ta and c in tb]
    rows = [c for c in output if c in ta and c not in tb]
    cols = [c for c in output if c in tb and c not in ta]
    summed = [c for c in ta if c in tb and c not in output]
    if not (rows and cols and summed):
        return None  # matrix-vector and outer products stay generic (no kernel to gain)
    if builtins.any(n != extent[c] for t, term in ((a, ta), (b, tb))
                    for c, n in zip(term, t.shape)):
        return None  # broadcast size-1 dimensions: the generic reads them in place
    def size(group):
        return int(np.prod([extent[c] for c in group], dtype=np.int64))

    lhs = _grouped(astype(a, out_dtype), ta, batch + rows + summed, [batch, rows, summed], size)
    rhs = _grouped(astype(b, out_dtype), tb, batch + summed + cols, [batch, summed, cols], size)
    product = (_complex_matmul if dtypes.is_complex(out_dtype) else _named_matmul)(lhs, rhs)
    order = batch + rows + cols
    product = reshape(product, [extent[c] for c in order])
    return transpose(product, [order.index(c) for c in output])


def _named_matmul(lhs: Tracer, rhs: Tracer) -> Tracer:
    """``linalg.matmul`` of (rows, summed) x (summed, cols), or ``linalg.batch_matmul``
    with a leading batch dimension."""
    shape = [*lhs.shape[:-1], rhs.shape[-1]]
    init = fill(shape, lhs.dtype, 0)
    named = linalg.batch_matmul if lhs.ndim == 3 else linalg.matmul
    return wrap(named(lhs.value, rhs.value, outs=[init]), tuple(shape), lhs.dtype)


def _complex_matmul(lhs: Tracer, rhs: Tracer) -> Tracer:
    """A complex matmul as one real matmul of the stacked parts: [Ar; Ai] @ [Br, Bi] holds
    ArBr, ArBi, AiBr and AiBi, and the product is (ArBr - AiBi) + i (ArBi + AiBr). IREE
    3.13 compiles a complex matmul as scalar complex arithmetic (512^3 complex128: 110 ms,
    12x numpy's zgemm, complex64 28x), and real matmuls near the machine's peak; the
    stacking costs a copy of each operand, and a real matmul of twice the rows and columns
    does the four real products' flops in one dispatch."""
    rows, cols = lhs.shape[-2], rhs.shape[-1]
    stacked = _named_matmul(concatenate([real(lhs), imag(lhs)], axis=-2),
                            concatenate([real(rhs), imag(rhs)], axis=-1))
    return complex_from_parts(stacked[..., :rows, :cols] - stacked[..., rows:, cols:],
                              stacked[..., :rows, cols:] + stacked[..., rows:, :cols])


def _grouped(t: Tracer, term: str, order: list[str], groups: list[list[str]], size) -> Tracer:
    """``t`` transposed to ``order`` and reshaped to one dimension per non-empty group
    (only the batch group may be empty)."""
    t = transpose(t, [term.index(c) for c in order])
    return reshape(t, [size(g) for g in groups if g])


# ---- the numpy functions built on einsum -------------------------------------------------

def matmul(a, b) -> Tracer:
    x, y = as_tracer(a, "matmul operand 0"), as_tracer(b, "matmul operand 1")
    if x.ndim == 0 or y.ndim == 0:
        raise TracingError("matmul: operands must be at least 1-dimensional; "
                           "use multiply for scalars")
    k_x = x.shape[-1]
    k_y = y.shape[-2] if y.ndim > 1 else y.shape[0]
    if k_x != k_y:
        raise TracingError(
            f"matmul: operand 1 has a mismatch in its core dimension 0: size {k_y} is "
            f"different from {k_x} (shapes {x.shape} and {y.shape})"
        )
    try:
        np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        raise TracingError(f"matmul: batch dimensions of shapes {x.shape} and {y.shape} "
                           "do not broadcast") from None
    # '...' broadcasts the batch dimensions; a 1-D operand has neither batch nor its row
    # (or column) subscript, as numpy's matmul drops the dimension it prepends.
    tx = "...ij" if x.ndim > 1 else "j"
    ty = "...jk" if y.ndim > 1 else "j"
    out = (("..." if builtins.max(x.ndim, y.ndim) > 1 else "") + ("i" if x.ndim > 1 else "")
           + ("k" if y.ndim > 1 else ""))
    return einsum(f"{tx},{ty}->{out}", x, y)


def dot(a, b) -> Tracer:
    x, y = as_tracer(a, "dot operand 0"), as_tracer(b, "dot operand 1")
    if x.ndim == 0 or y.ndim == 0:
        return ufunc("multiply", x, y)
    if y.ndim == 1:
        if x.shape[-1] != y.shape[0]:
            raise TracingError(f"dot: shapes {x.shape} and {y.shape} not aligned: "
                               f"{x.shape[-1]} (dim {x.ndim - 1}) != {y.shape[0]} (dim 0)")
        return einsum("...i,i->...", x, y)
    if x.shape[-1] != y.shape[-2]:
        raise TracingError(f"dot: shapes {x.shape} and {y.shape} not aligned: "
                           f"{x.shape[-1]} (dim {x.ndim - 1}) != {y.shape[-2]} (dim {y.ndim - 2})")
    xl = string.ascii_lowercase[: x.ndim - 1]
    yl = string.ascii_uppercase[: y.ndim - 2]
    return einsum(f"{xl}z,{yl}zY->{xl}{yl}Y", x, y)


def vdot(a, b) -> Tracer:
    x, y = ravel(as_tracer(a, "vdot operand 0")), ravel(as_tracer(b, "vdot operand 1"))
    if x.size != y.size:
        raise TracingError(f"vdot: operands have {x.size} and {y.size} elements; "
                           "vdot needs equal sizes")
    if dtypes.is_complex(x.dtype):  # numpy's vdot conjugates its first operand
        from .statistics import conjugate
        x = conjugate(x)
    return einsum("i,i->", x, y)


def inner(a, b) -> Tracer:
    x, y = as_tracer(a, "inner operand 0"), as_tracer(b, "inner operand 1")
    if x.ndim == 0 or y.ndim == 0:
        return ufunc("multiply", x, y)
    if x.shape[-1] != y.shape[-1]:
        raise TracingError(f"inner: last dimensions of shapes {x.shape} and {y.shape} differ "
                           f"({x.shape[-1]} != {y.shape[-1]})")
    xl, yl = string.ascii_lowercase[: x.ndim - 1], string.ascii_uppercase[: y.ndim - 1]
    return einsum(f"{xl}z,{yl}z->{xl}{yl}", x, y)


def outer(a, b) -> Tracer:
    return einsum("i,j->ij", ravel(a), ravel(b))


def tensordot(a, b, axes=2) -> Tracer:
    """numpy.tensordot: sums the products over ``axes`` of ``a`` and ``b``: an int N (a's
    last N with b's first N) or a pair of axis sequences (or of ints).

    >>> x, w = np.ones((2, 3, 4), np.float32), np.ones((3, 4, 5), np.float32)
    >>> f = aotc.jit(lambda x, w: anp.tensordot(x, w, axes=([1, 2], [0, 1])))
    >>> print(f.lower(x, w).metadata.signature)       # [n, h, w] . [h, w, k] -> [n, k]
    _lambda_(x: float32[2,3,4], w: float32[3,4,5]) -> (out: float32[2,5])
    """
    x, y = as_tracer(a, "tensordot operand a"), as_tracer(b, "tensordot operand b")
    axes_x, axes_y = _tensordot_axes(axes, x, y)
    for ax, ay in zip(axes_x, axes_y):
        if x.shape[ax] != y.shape[ay]:
            raise TracingError(
                f"tensordot: shape-mismatch for sum: axis {ax} of a (size {x.shape[ax]}) and "
                f"axis {ay} of b (size {y.shape[ay]}); shapes {x.shape} and {y.shape}")
    letters = iter(string.ascii_letters)
    tx = [next(letters) for _ in range(x.ndim)]
    ty = [next(letters) for _ in range(y.ndim)]
    for ax, ay in zip(axes_x, axes_y):
        ty[ay] = tx[ax]
    out = ([c for i, c in enumerate(tx) if i not in axes_x]
           + [c for i, c in enumerate(ty) if i not in axes_y])
    return einsum(f"{''.join(tx)},{''.join(ty)}->{''.join(out)}", x, y)


def _tensordot_axes(axes, x: Tracer, y: Tracer) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if not 0 <= n <= builtins.min(x.ndim, y.ndim):
            raise TracingError(
                f"tensordot: axes={n} must be between 0 and the smaller rank "
                f"({x.ndim} and {y.ndim} for shapes {x.shape} and {y.shape})")
        return list(range(x.ndim - n, x.ndim)), list(range(n))
    try:
        ax, ay = axes
    except (TypeError, ValueError):
        raise TracingError("tensordot: axes must be an int or a pair of axis sequences, "
                           f"got {axes!r}") from None
    ax = [ax] if isinstance(ax, (int, np.integer)) else list(ax)
    ay = [ay] if isinstance(ay, (int, np.integer)) else list(ay)
    if len(ax) != len(ay):
        raise TracingError(f"tensordot: shape-mismatch for sum: {len(ax)} axes of a {ax} "
                           f"but {len(ay)} of b {ay}")
    ax = [normalize_axis(i, x.ndim, "tensordot axes of a") for i in ax]
    ay = [normalize_axis(i, y.ndim, "tensordot axes of b") for i in ay]
    if len(set(ax)) != len(ax) or len(set(ay)) != len(ay):
        raise TracingError(f"tensordot: repeated axis in axes={axes!r}")
    return ax, ay


def kron(a, b) -> Tracer:
    """numpy.kron: the Kronecker product; the operand of lower rank gets leading 1s.

    Computed as one broadcast multiply of ``a`` reshaped to ``[n0, 1, n1, 1, ...]`` and
    ``b`` to ``[1, m0, 1, m1, ...]``, then reshaped to ``[n0*m0, n1*m1, ...]``."""
    # numpy.kron makes its operands arrays first: Python scalars are not weak here.
    x = as_tracer(np.asarray(a) if not isinstance(a, Tracer) else a, "kron operand a")
    y = as_tracer(np.asarray(b) if not isinstance(b, Tracer) else b, "kron operand b")
    rank = builtins.max(x.ndim, y.ndim)
    sx = (1,) * (rank - x.ndim) + x.shape
    sy = (1,) * (rank - y.ndim) + y.shape
    product = ufunc("multiply",
                    reshape(x, [d for n in sx for d in (n, 1)]),
                    reshape(y, [d for n in sy for d in (1, n)]))
    return reshape(product, [n * m for n, m in zip(sx, sy)])
