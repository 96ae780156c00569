"""Choosing and placing elements by conditions and indices: ``select``, ``piecewise``,
``choose``, ``extract``, ``put`` and ``put_along_axis``.

``select``, ``piecewise`` and ``choose`` are chains of elementwise ``where`` (every choice
and every function is computed on the whole array, then the right one kept, as in JAX);
``extract`` is a gather of the first ``size`` selected elements (JAX's ``size=``);
``put``/``put_along_axis`` are scatters returning the updated array (JAX's
``inplace=False``). Under tracing, modes follow JAX: ``choose(mode="raise")`` needs
concrete indices; ``put`` clips out-of-range indices unless ``mode`` says otherwise.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import Tracer
from ..errors import TracingError
from .arguments import PY_SCALARS, as_tracer, normalize_axis
from .creation import zeros
from .elementwise import astype, clip, elementwise_where, ufunc
from .index_tricks import is_integer
from .rearrange import resize
from .selection import _nonzero_rows, take
from .shape import broadcast_arrays, ravel, reshape
from .updates import update

EXPORTS: dict[str, list[str]] = {
    "numpy": ["select", "piecewise", "choose", "extract", "put", "put_along_axis"],
}


def _promoted(values) -> np.dtype:
    """numpy's result dtype of ``values``: Python scalars are weak (NEP 50)."""
    operands = [v if type(v) in PY_SCALARS else
                (v.dtype if isinstance(v, Tracer) else np.asarray(v).dtype) for v in values]
    return dtypes.canonicalize(dtypes.result_type(*operands), "result dtype")


def _bool_conditions(condlist, where: str) -> list[Tracer]:
    conditions = [as_tracer(c, f"{where} condlist[{i}]") for i, c in enumerate(condlist)]
    for i, c in enumerate(conditions):
        if c.dtype != np.bool_:
            raise TracingError(f"{where}: invalid entry {i} in condlist: should be a boolean "
                               f"array, got {c.dtype}")
    return conditions


def select(condlist, choicelist, default=0) -> Tracer:
    """numpy.select: per element, the choice of the first true condition, else ``default``."""
    if len(condlist) != len(choicelist):
        raise TracingError(f"select: list of cases must be same length as list of "
                           f"conditions, got {len(choicelist)} choices for {len(condlist)} "
                           f"conditions")
    if not condlist:
        raise TracingError("select: select with an empty condition list is not possible")
    dtype = _promoted([*choicelist, default])
    out = astype(default, dtype)
    # the first true condition wins: apply the last one first
    for cond, choice in reversed(list(zip(_bool_conditions(condlist, "select"), choicelist))):
        out = elementwise_where(cond, astype(choice, dtype), out)
    return broadcast_arrays(out, *condlist)[0] if out.ndim == 0 else out


def _condition_list(condlist, x: Tracer) -> list:
    """numpy's reading of piecewise's condlist: a scalar, or a sequence whose first entry
    is not itself an array (for non-0-d x), is one condition; anything else a list."""
    if isinstance(condlist, (Tracer, np.ndarray)):
        one = condlist.ndim == 0 or (condlist.ndim == 1 and x.ndim != 0)
    else:
        one = np.isscalar(condlist) or (x.ndim != 0 and len(condlist) > 0 and not isinstance(
            condlist[0], (list, np.ndarray, Tracer)))
    return [condlist] if one else list(condlist)


def piecewise(x, condlist, funclist, *args, **kw) -> Tracer:
    """numpy.piecewise: where each condition holds, ``funclist``'s function of ``x`` (or
    its value); one extra function is the "otherwise" case; elsewhere 0. Every function
    is traced on the whole of ``x`` (as JAX does) and the results kept where chosen."""
    x = as_tracer(x, "piecewise x")
    conditions = _bool_conditions(
        [astype(c, np.bool_) if type(c) in PY_SCALARS else c
         for c in _condition_list(condlist, x)], "piecewise")
    if len(funclist) == len(conditions) + 1:
        otherwise = ufunc("logical_not", conditions[0])
        for c in conditions[1:]:
            otherwise = ufunc("logical_and", otherwise, ufunc("logical_not", c))
        conditions.append(otherwise)
    elif len(funclist) != len(conditions):
        raise TracingError(f"piecewise: with {len(conditions)} condition(s), either "
                           f"{len(conditions)} or {len(conditions) + 1} functions are "
                           f"expected, got {len(funclist)}")
    out = zeros(x.shape, x.dtype)
    for cond, fn in zip(conditions, funclist):
        value = fn(x, *args, **kw) if callable(fn) else fn
        out = elementwise_where(cond, astype(value, x.dtype), out)
    return out


# How choose (and put) bring traced indices into range; "raise" needs their values.
_INTO_RANGE = {
    "wrap": lambda i, n: ufunc("remainder", i, n),
    "clip": lambda i, n: clip(i, 0, n - 1),
}


def _in_range(index: Tracer, n: int, mode, where: str) -> Tracer:
    if mode == "raise":
        raise TracingError(f"{where}: mode='raise' checks the indices' values, which traced "
                           f"arrays do not have; use mode='wrap' or mode='clip' (as JAX "
                           f"requires under jit)")
    if mode not in _INTO_RANGE:
        raise TracingError(f"{where}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return _INTO_RANGE[mode](index, n)


def choose(a, choices, out=None, mode="raise") -> Tracer:
    """numpy.choose: per element, ``choices[a]`` (all broadcast together). Traced indices
    need mode "wrap" or "clip"; concrete ones are checked as numpy does."""
    if out is not None:
        raise TracingError("choose: out= is not supported (traced arrays are values; use "
                           "the returned array)")
    choices = list(choices)
    n = len(choices)
    if not n:
        raise TracingError("choose: choices must not be empty")
    if isinstance(a, Tracer):
        if not is_integer(a.dtype):
            raise TracingError(f"choose: `a` must hold integers, got {a.dtype}")
        index = _in_range(a, n, mode, "choose")
    else:
        index = np.choose(a, np.arange(n), mode=mode)  # numpy checks concrete indices
    dtype = _promoted(choices)
    result = astype(choices[0], dtype)
    for k in range(1, n):
        result = elementwise_where(ufunc("equal", index, k), astype(choices[k], dtype), result)
    return broadcast_arrays(result, index, *choices)[0]


def extract(condition, arr, *, size=None, fill_value=0) -> Tracer:
    """numpy.extract: the elements of ``arr`` where ``condition`` holds, flattened. A
    traced condition needs JAX's ``size=`` (the result's static length; missing elements
    are ``fill_value``)."""
    x = ravel(as_tracer(arr, "extract arr"))
    cond = condition if isinstance(condition, Tracer) else np.asarray(condition)
    cond = ravel(cond) if isinstance(cond, Tracer) else cond.ravel()
    if cond.shape != x.shape:
        raise TracingError(f"extract: condition has {cond.shape[0]} elements, arr has "
                           f"{x.shape[0]}")
    picked = _nonzero_rows(cond, size, x.shape[0], "extract")[:, 0]
    return take(x, picked, mode="fill", fill_value=fill_value)


def _require_not_inplace(inplace, where: str) -> None:
    if inplace:
        raise TracingError(f"{where}: aotc returns the updated array instead of writing into "
                           f"the argument; pass inplace=False (as JAX requires)")


def put(a, ind, v, mode=None, *, inplace=True) -> Tracer:
    """numpy.put as JAX has it (``inplace=False``): ``a`` with its flattened elements at
    ``ind`` set to ``v`` (repeated as needed). mode None clips out-of-range indices
    (negative ones count from the end), "clip" clips to [0, size), "wrap" wraps."""
    _require_not_inplace(inplace, "put")
    x = as_tracer(a, "put a")
    flat = ravel(x)
    index = ravel(as_tracer(ind, "put ind"))
    values = ravel(astype(v, x.dtype))
    if not (x.size and index.size and values.size):
        return x
    if not is_integer(index.dtype):
        raise TracingError(f"put: ind must hold integers, got {index.dtype}")
    if mode is None:
        index = clip(elementwise_where(ufunc("less", index, 0), ufunc("add", index, x.size),
                                       index), 0, x.size - 1)
    else:
        if mode == "raise":
            raise TracingError("put: mode='raise' is not supported (as in JAX); use None, "
                               "'wrap' or 'clip'")
        index = _in_range(index, x.size, mode, "put")
    values = resize(values, index.shape)
    return reshape(update(flat, index, values, "set"), x.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None) -> Tracer:
    """numpy.put_along_axis as JAX has it (``inplace=False``): ``arr`` with
    ``arr[..., indices[..., j, ...], ...] = values`` along ``axis`` (None: the flattened
    array), ``values`` broadcast to the indexed shape."""
    _require_not_inplace(inplace, "put_along_axis")
    x = as_tracer(arr, "put_along_axis arr")
    target = ravel(x) if axis is None else x
    idx = as_tracer(indices, "put_along_axis indices")
    if idx.ndim != target.ndim:
        raise TracingError(f"put_along_axis: 'arr' and 'indices' must have the same number "
                           f"of dimensions, got {target.ndim} and {idx.ndim}")
    if not is_integer(idx.dtype):
        raise TracingError(f"put_along_axis: indices must hold integers, got {idx.dtype}")
    ax = 0 if axis is None else normalize_axis(axis, x.ndim, "put_along_axis")
    index = tuple(idx if d == ax else reshape(np.arange(n), tuple(
        -1 if e == d else 1 for e in range(target.ndim))) for d, n in enumerate(target.shape))
    out = update(target, index, values, "set", mode in (None, "drop", "fill"))
    return reshape(out, x.shape)

