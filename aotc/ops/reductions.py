"""Reductions with numpy's axis, keepdims and result-dtype semantics.

Each reduction is one ``linalg.generic`` whose reduced loop dimensions are
``reduction`` iterators; the accumulator starts from a ``linalg.fill``. A reduction over
axes of size 1 only is an elementwise op (its one element combined with the initial
values): IREE 3.13 failed to compile such a reduction fed by a concatenation (fuzzer
program 18385: an invalid ``tensor.extract_slice`` from its unit-dimension folds).
"""

from __future__ import annotations

import builtins
from typing import Callable, Sequence

import numpy as np

from .. import dtypes, x64
from .._mlir import PARALLEL, REDUCTION, arith, dim_map
from ..core import Tracer
from ..errors import TracingError, UnsupportedDtypeError
from ..constants import scalar_constant
from ..lowering import add_work, empty, fill, generic, loop_index, reshape_value, wrap
from ..passes.opset import RESHAPE_OPS
from . import elementwise as ew
from .arguments import as_tracer, normalize_axes, normalize_axis, ufunc_axes
from .scalar import UFUNC_RULES, cmpf, cmpi, convert, select

EXPORTS: dict[str, list[str]] = {
    "numpy": ["all", "amax", "amin", "any", "argmax", "argmin", "max", "mean", "min", "prod",
              "std", "sum", "var"],
    "methods": ["sum", "mean", "prod", "max", "min", "argmax", "argmin", "any", "all", "var",
                "std"],
}


def numpy_initial(name: str, x_dtype: np.dtype, initial, **kwargs):
    """``initial=`` as numpy converts it for reduction ``name`` over ``x_dtype``: numpy's own
    reduction of an empty array (its casts, its OverflowError for a value out of range)."""
    if isinstance(initial, Tracer):
        raise TracingError(f"{name}: initial must be a Python or numpy scalar, got a traced "
                           f"array; combine it after the reduction instead (e.g. "
                           f"anp.maximum({name}(x), initial))")
    try:
        return getattr(np, name)(np.zeros((0,), x_dtype), initial=initial, **kwargs)[()]
    except (TypeError, ValueError, OverflowError) as e:
        raise TracingError(f"{name}: initial={initial!r} does not convert to {x_dtype.name} as "
                           f"numpy requires ({e})") from None


def _numpy_result_dtype(name: str, dtype: np.dtype, **kwargs) -> np.dtype:
    """numpy's result dtype for reduction ``name`` over ``dtype`` (numpy as the oracle);
    with x64 off, a 64-bit one for a narrower ``dtype`` narrowed (JAX's: the sum of int8
    is int32, the mean of an integer float32)."""
    out = getattr(np, name)(np.ones((1,), dtype), **kwargs).dtype
    return out if x64.enabled() or dtype in x64.NARROW else x64.narrow(out)


def _accumulation_dtype(dtype: np.dtype) -> np.dtype:
    # float16 sums accumulate in float32 (numpy itself upcasts float16 means to float32).
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def reduce_generic(
    x: Tracer,
    axes: Sequence[int],
    keepdims: bool,
    acc_dtypes: Sequence[np.dtype],
    inits: Sequence,
    combine: Callable[..., list],
    where: str,
) -> list[Tracer]:
    """One linalg.generic reducing ``axes`` of ``x`` into accumulators of ``acc_dtypes``.

    ``combine(value, *accs)`` returns the new accumulators; ``value`` is x's element in
    its own dtype.
    """
    rank = x.ndim
    kept = [d for d in range(rank) if d not in axes]
    out_shape = [x.shape[d] for d in kept]
    unit_shape = [1 if d in axes else x.shape[d] for d in range(rank)]
    identity = dim_map(rank, list(range(rank)))
    if axes and builtins.all(x.shape[d] == 1 for d in axes):
        # One element per result: combine it with the initial values, elementwise.
        outputs = [(empty(unit_shape, dt), identity) for dt in acc_dtypes]
        results = generic([(x.value, identity)], outputs, [PARALLEL] * rank,
                          lambda v, *_: combine(v, *[scalar_constant(init, dt) for init, dt
                                                     in zip(inits, acc_dtypes)]))
        reduced_shape = unit_shape
    else:
        outputs = [(fill(out_shape, dt, init), dim_map(rank, kept))
                   for dt, init in zip(acc_dtypes, inits)]
        iterators = [REDUCTION if d in axes else PARALLEL for d in range(rank)]
        results = generic([(x.value, identity)], outputs, iterators,
                          lambda v, *accs: combine(v, *accs))
        reduced_shape = out_shape
    add_work(x.size)
    final_shape = unit_shape if keepdims else out_shape
    return [wrap(reshape_value(r, reduced_shape, final_shape, dt), final_shape, dt)
            for r, dt in zip(results, acc_dtypes)]


def _check_nonempty(x: Tracer, axes, name: str):
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise TracingError(
            f"{name}: zero-size array to reduction operation {name} which has no identity "
            f"(shape {x.shape}, axis {axes})"
        )


def _sum_like(name: str, ufunc: str, identity):
    def reduction(a, axis=None, dtype=None, keepdims=False, initial=None):
        x = as_tracer(a, name)
        axes = ufunc_axes(axis, x.ndim, name)
        out_dtype = dtypes.canonicalize(dtype, f"{name} dtype") if dtype is not None else \
            dtypes.canonicalize(_numpy_result_dtype(name, x.dtype), name)
        acc = _accumulation_dtype(out_dtype)
        rule = UFUNC_RULES[ufunc]
        init = (identity if initial is None
                else numpy_initial(name, x.dtype, initial, dtype=out_dtype))

        def combine_of(x: Tracer, plus_zero: bool = False) -> Callable:
            def combine(v, s):
                v = convert(v, x.dtype, acc)
                return [rule(acc, _plus_zero(v) if plus_zero else v, s)]
            return combine

        if ufunc == "add":
            x = _partial_sums(x, axes, acc, identity, name, combine_of)
        product = ufunc == "add" and np.dtype(acc).kind == "f" and _is_product(x.value)
        (r,) = reduce_generic(x, axes, keepdims, [acc], [init], combine_of(x, product), name)
        return ew.astype(r, out_dtype)
    reduction.__name__ = name
    return reduction


def _plus_zero(v):
    """``v + 0.0``: the same value (but -0.0, which a sum from +0.0 loses anyway), so that
    a sum of products fused by IREE is not a multiply-add body. IREE 3.13 takes such a
    body for a contraction and keeps its additions in order (``np.sum(x * x)`` of 2**20
    float32: 396 us, against 61 us for ``np.sum(x)``); after the add it is reduced in
    vector lanes like a plain sum (77 us; numpy 238 us). Only sums of products get it:
    other sums keep the form IREE recognizes (a softmax's sum of exponentials)."""
    from .._mlir import ir

    return arith.addf(v, arith.ConstantOp(v.type, ir.FloatAttr.get(v.type, 0.0)).result)


def _producer(value):
    """The op that computes ``value``, or None for a block argument."""
    from .._mlir import ir

    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _is_product(value) -> bool:
    """Whether ``value`` is the result of an elementwise generic that yields a product."""
    op = _producer(value)
    if op is None or op.name != "linalg.generic":
        return False
    yielded = list(op.regions[0].blocks[0].operations)[-1].operands
    return builtins.any(getattr(_producer(v), "name", None) == "arith.mulf" for v in yielded)


def _partial_sums(x: Tracer, axes, acc: np.dtype, identity, name: str,
                  combine_of: Callable) -> Tracer:
    """``x`` summed over all of ``axes`` but one, one axis per generic (the largest
    first), each kept as a size-1 axis, where ``x`` is computed from a broadcast operand;
    else ``x`` itself. IREE 3.13 fails to compile a sum over several loops of a product
    with a broadcast operand (``sum(x * y)`` for x: (3, 2), y: (2,)): fused into one
    dispatch it becomes a ``vector.contract`` whose reduction loops the broadcast operand
    lacks, which its verifier rejects; one reduction loop per dispatch compiles. Other
    sums stay one generic (splitting a plain ``sum`` of a (1000, 1000) array made it 7x
    slower)."""
    pending = sorted((a for a in axes if x.shape[a] > 1), key=lambda a: (x.shape[a], a))
    if len(pending) < 2 or not _computed_from_broadcast(x.value):
        return x
    while len(pending) > 1:
        axis = pending.pop()
        (x,) = reduce_generic(x, [axis], True, [acc], [identity], combine_of(x), name)
    return x


def _computed_from_broadcast(value, depth: int = 16) -> bool:
    """Whether ``value`` comes from a chain of elementwise generics (what IREE fuses into
    a reduction) one of which reads an operand broadcast along some of its loops."""
    from .._mlir import ir

    op = _producer(value)
    if depth == 0 or op is None:
        return False  # a function or loop argument
    if op.name == "linalg.broadcast" or op.name == "func.call":
        return True  # a call (vmap's batched function) is inlined later: assume it may
    if op.name == "linalg.transpose" or op.name in RESHAPE_OPS:  # IREE fuses through them
        return _computed_from_broadcast(op.operands[0], depth - 1)
    if op.name != "linalg.generic":
        return False
    n_inputs = len(op.opview.inputs)
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    return builtins.any(len(maps[k].results) < maps[k].n_dims
                        or _computed_from_broadcast(v, depth - 1)
                        for k, v in enumerate(list(op.operands)[:n_inputs]))


sum = _sum_like("sum", "add", 0)  # noqa: A001 - numpy's name
prod = _sum_like("prod", "multiply", 1)


def _extremum(name: str, ufunc: str, float_init: float):
    def reduction(a, axis=None, keepdims=False, initial=None):
        x = as_tracer(a, name)
        axes = ufunc_axes(axis, x.ndim, name)
        if initial is None:
            _check_nonempty(x, axes, name)
        dt = x.dtype
        kind = dtypes.kind(dt)
        if kind == "complex":
            raise UnsupportedDtypeError(
                f"{name}: complex arrays are not supported yet (numpy orders complex numbers "
                f"by real, then imaginary part); reduce a real key instead, e.g. "
                f"{name}(abs(x)) or x[argmax(x.real)]")
        if initial is not None:
            init = numpy_initial(name, dt, initial)
        elif kind == "float":
            init = float_init
        elif kind == "bool":
            init = float_init > 0  # max starts False (float_init -inf), min starts True
        else:
            lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
            init = lo if float_init < 0 else hi
        rule = UFUNC_RULES[ufunc]
        (r,) = reduce_generic(x, axes, keepdims, [dt], [init], lambda v, m: [rule(dt, v, m)], name)
        return r
    reduction.__name__ = name
    return reduction


max = _extremum("max", "maximum", -np.inf)  # noqa: A001
min = _extremum("min", "minimum", np.inf)  # noqa: A001
amax, amin = max, min


def _boolean(name: str, ufunc: str, init: bool):
    def reduction(a, axis=None, keepdims=False):
        x = as_tracer(a, name)
        axes = ufunc_axes(axis, x.ndim, name)
        rule = UFUNC_RULES[ufunc]
        (r,) = reduce_generic(x, axes, keepdims, [np.dtype(np.bool_)], [init],
                              lambda v, acc: [rule(np.dtype(np.bool_),
                                                   convert(v, x.dtype, np.bool_), acc)], name)
        return r
    reduction.__name__ = name
    return reduction


any = _boolean("any", "logical_or", False)  # noqa: A001
all = _boolean("all", "logical_and", True)  # noqa: A001


def _count(x: Tracer, axes) -> int:
    return int(np.prod([x.shape[a] for a in axes], dtype=np.int64))


def mean(a, axis=None, dtype=None, keepdims=False):
    x = as_tracer(a, "mean")
    axes = normalize_axes(axis, x.ndim, "mean")
    out_dtype = dtypes.canonicalize(
        dtype if dtype is not None else _numpy_result_dtype("mean", x.dtype), "mean")
    acc = _accumulation_dtype(out_dtype)
    total = sum(x, axis=axes, dtype=acc, keepdims=keepdims)
    return ew.astype(ew.ufunc("divide", total, acc.type(_count(x, axes))), out_dtype)


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    x = as_tracer(a, "var")
    axes = normalize_axes(axis, x.ndim, "var")
    out_dtype = dtypes.canonicalize(
        dtype if dtype is not None else _numpy_result_dtype("var", x.dtype), "var")
    acc = _accumulation_dtype(out_dtype)
    xa = ew.astype(x, acc)
    centered = ew.ufunc("subtract", xa, mean(xa, axis=axes, keepdims=True))
    squares = ew.ufunc("multiply", centered, centered)
    total = sum(squares, axis=axes, keepdims=keepdims)
    divisor = builtins.max(_count(x, axes) - ddof, 0)
    return ew.astype(ew.ufunc("divide", total, acc.type(divisor)), out_dtype)


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    v = var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return ew.astype(ew.ufunc("sqrt", v), v.dtype)


def _arg_extremum(name: str, better_float: str, better_int: str, better_uint: str):
    """argmax/argmin: a two-accumulator reduction (value, index), first index wins ties.

    The comparison is order-independent (ties and NaNs resolve to the lower index), so it
    stays right when IREE splits or reorders the reduction.
    """
    def reduction(a, axis=None, keepdims=False):
        x = as_tracer(a, name)
        flat = axis is None or not ufunc_axes(axis, x.ndim, name)  # all, or a 0-d array
        if flat:
            x = reshape_flat(x)
            axes = (0,)
        else:
            axes = (normalize_axis(axis, x.ndim, name),)
        _check_nonempty(x, axes, name)
        dt = x.dtype
        index_dt = dtypes.index_dtype()
        kind = dtypes.kind(dt)
        if kind == "float":
            init = np.inf if better_float == "olt" else -np.inf
        elif kind == "bool":
            init = better_uint == "ult"
        else:
            info = np.iinfo(dt)
            init = info.max if better_int == "slt" else info.min
        axis_dim = axes[0]

        def combine(v, best, best_index):
            i = arith.IndexCastOp(dtypes.mlir_type(index_dt), loop_index(axis_dim)).result
            earlier = cmpi("slt", i, best_index)
            if kind == "float":
                better = cmpf(better_float, v, best)
                equal = cmpf("oeq", v, best)
                v_nan, best_nan = cmpf("uno", v, v), cmpf("uno", best, best)
                # NaN beats everything; between NaNs the earlier index wins.
                take = select(best_nan, arith.AndIOp(v_nan, earlier).result,
                              arith.OrIOp(v_nan, arith.OrIOp(
                                  better, arith.AndIOp(equal, earlier).result).result).result)
            else:
                pred = better_int if kind == "int" else better_uint
                better = cmpi(pred, v, best)
                equal = cmpi("eq", v, best)
                take = arith.OrIOp(better, arith.AndIOp(equal, earlier).result).result
            return [select(take, v, best), select(take, i, best_index)]

        _, index = reduce_generic(x, axes, keepdims and not flat, [dt, index_dt],
                                  [init, np.iinfo(index_dt).max], combine, name)
        if keepdims and flat:
            from .shape import reshape
            index = reshape(index, (1,) * len(a.shape if isinstance(a, Tracer) else np.shape(a)))
        return index
    reduction.__name__ = name
    return reduction


def reshape_flat(x: Tracer) -> Tracer:
    return wrap(reshape_value(x.value, x.shape, (x.size,), x.dtype), (x.size,), x.dtype)


argmax = _arg_extremum("argmax", "ogt", "sgt", "ugt")
argmin = _arg_extremum("argmin", "olt", "slt", "ult")
