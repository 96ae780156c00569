"""Checking call arguments against a function's metadata, with errors that say how to fix.

The call path (``function.py``) compares ``arr.shape``/``arr.dtype`` against the
precomputed ``ArgPlan.shape``/``ArgPlan.dtype`` itself and only comes here when that quick
test fails or cannot decide (dynamic dimensions, scalars, other array types): everything
in this module may be slow, because it runs only off the fast path or to raise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes
from .array import Array, c_contiguous
from .errors import ArgumentError, ArgumentOverflowError, DeletedArrayError, ShapeError
from .metadata import FunctionMetadata, TensorSpec
from .subclasses import subclass_refusal
from .tree import TreeDef


class ArgPlan:
    """What one flat argument must be, precomputed once per function."""

    __slots__ = ("dtype", "element_type", "ndim", "shape", "spec", "weak", "where")

    def __init__(self, spec: TensorSpec, where: str, weak_casts: Any = ()) -> None:
        # weak_casts: the narrower dtypes the function computes this Python scalar
        # argument in (metadata ``weak_casts``); its values are checked against them.
        # weak: None, or (lowest int, highest int, largest float magnitude) they all hold.
        self.weak = _ranges(tuple(map(np.dtype, weak_casts))) if weak_casts else None
        entry = dtypes.lookup(spec.dtype)
        self.spec = spec
        self.dtype = entry.numpy
        self.element_type = entry.element_type
        static = all(isinstance(d, int) for d in spec.shape)
        # The exact shape when every dimension is static (one tuple compare on the fast
        # path); None sends every call through check_shape.
        self.shape = tuple(spec.shape) if static else None
        self.ndim = len(spec.shape)
        self.where = where


def plan_args(meta: FunctionMetadata) -> tuple[ArgPlan, ...]:
    where = f"{meta.name}()"
    weak = meta.weak_casts
    return tuple(ArgPlan(spec, where, weak.get(spec.name, ())) for spec in meta.args)


def _ranges(casts: tuple[np.dtype, ...]) -> tuple:
    ints = [np.iinfo(d) for d in casts if d.kind in "iu"]
    floats = [float(np.finfo(d).max) for d in casts if d.kind in "fc"]
    return (max((int(i.min) for i in ints), default=-np.inf),
            min((int(i.max) for i in ints), default=np.inf),
            min(floats, default=np.inf), casts)


def spec_type(spec: TensorSpec) -> str:
    """``float32[64,?]``: a spec's type without its name."""
    return str(spec).split(": ", 1)[1]


def _kind_of(leaf: Any) -> str:
    if isinstance(leaf, (bool, int, float, complex)):
        return f"a Python {type(leaf).__name__} ({leaf!r})"
    return type(leaf).__name__


# Python scalars are weakly typed, as in JAX: they take the argument's dtype when the
# value's kind fits it. bool fits every dtype, int every numeric one, float only floats
# (and complexes), complex only complexes.
_SCALAR_FITS = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}


def prepare(leaf: Any, plan: ArgPlan, bindings: dict[str, tuple[int, str]]) -> np.ndarray | Array:
    """Converts one argument to a C-contiguous ndarray of the right dtype (or returns the
    ``Array`` as is) after checking dtype and shape; raises an ``ArgumentError`` subclass.

    ``bindings`` records the size of each named dynamic dimension seen so far in this call.
    """
    spec = plan.spec
    if isinstance(leaf, Array):
        if leaf.is_deleted():
            raise DeletedArrayError(
                f"{plan.where}: argument {spec.name!r}: expected a live Array, got a deleted "
                f"one. Array was deleted ({leaf._deleted}); pass the array the call that "
                f"used it returned instead"
            )
        _check_dtype(leaf.dtype, plan, "the Array")
        check_shape(leaf.shape, plan, bindings)
        return leaf
    fits = _SCALAR_FITS.get(type(leaf))
    if fits is not None:
        if plan.dtype.kind not in fits:
            raise ArgumentError(
                f"{plan.where}: argument {spec.name!r}: expected {spec_type(spec)}, got "
                f"{_kind_of(leaf)}. Pass a value of that dtype, e.g. "
                f"np.{plan.dtype.name}({leaf!r})" + (
                    " (check the rounding)" if isinstance(leaf, float) else "")
            )
        weak = plan.weak
        if weak is not None:
            if fits == "iufc":  # an int: numpy raises where it does not fit
                if not weak[0] <= leaf <= weak[1]:
                    raise _weak_overflow(leaf, plan)
            if fits != "biufc" and abs(leaf) > weak[2]:
                _overflow_warning(leaf, weak[3])
        try:
            array = np.asarray(leaf, dtype=plan.dtype)
        except OverflowError:
            raise ArgumentOverflowError(
                f"{plan.where}: argument {spec.name!r}: expected a value that fits "
                f"{plan.dtype.name}, got {leaf!r} (numpy: Python integer {leaf} out of "
                f"bounds for {plan.dtype.name}). Pass a value in range, or compile the "
                f"function for a wider argument (a numpy array of a wider dtype)"
            ) from None
    elif isinstance(leaf, np.ndarray):
        if type(leaf) is not np.ndarray:
            refusal = subclass_refusal(leaf, f"{plan.where}: argument {spec.name!r}")
            if refusal is not None:
                raise ArgumentError(refusal)
        array = leaf
    elif isinstance(leaf, (np.generic, memoryview)) or hasattr(leaf, "__array__") or hasattr(
        leaf, "__array_interface__"
    ):
        array = np.asarray(leaf)
    else:
        raise ArgumentError(
            f"{plan.where}: argument {spec.name!r}: expected an array ({spec_type(spec)}), "
            f"got {_kind_of(leaf)}. Pass a numpy array, a Python scalar or an aotc Array"
        )
    _check_dtype(array.dtype, plan, "an array")
    check_shape(array.shape, plan, bindings)
    return c_contiguous(array)


def _weak_overflow(leaf: int, plan: ArgPlan) -> ArgumentOverflowError:
    """numpy 2's rule for a Python int meeting an array of a narrower integer dtype
    (NEP 50): ``OverflowError``, naming the dtype it does not fit."""
    dtype = next(d for d in plan.weak[3]
                 if d.kind in "iu" and not np.iinfo(d).min <= leaf <= np.iinfo(d).max)
    article = "an" if dtype.name[0] == "i" else "a"
    return ArgumentOverflowError(
        f"{plan.where}: argument {plan.spec.name!r}: expected a Python int that fits "
        f"{dtype.name} (the function computes it with {article} {dtype.name} array), got "
        f"{leaf}: Python integer {leaf} out of bounds for {dtype.name}, as numpy 2 "
        f"raises. Pass a value in range, or make that array wider (x.astype(np.int64))")


def _overflow_warning(leaf: int | float | complex, casts: tuple[np.dtype, ...]) -> None:
    """A number beyond a float dtype's range becomes inf there, with numpy's "overflow
    encountered in cast" warning: numpy warns itself, so ``np.errstate`` applies (a
    complex's magnitude only suggests it: numpy decides by its parts)."""
    for dtype in casts:
        if dtype.kind in "fc":
            np.asarray(leaf, dtype=dtype)


def _check_dtype(dtype: np.dtype, plan: ArgPlan, what: str) -> None:
    if dtype == plan.dtype:
        return
    spec = plan.spec
    raise ArgumentError(
        f"{plan.where}: argument {spec.name!r}: expected dtype {plan.dtype.name} "
        f"({spec_type(spec)}), got {what} of dtype {dtype}. Convert it with "
        f"{spec.name}.astype(np.{plan.dtype.name})"
    )


def check_shape(shape: tuple[int, ...], plan: ArgPlan,
                bindings: dict[str, tuple[int, str]]) -> None:
    """Checks static dims exactly; None dims accept any size; a named dim must have the
    same size in every argument of the call that uses it."""
    spec = plan.spec
    if len(shape) == plan.ndim:
        for axis, (want, got) in enumerate(zip(spec.shape, shape)):
            if want is None:
                continue
            if isinstance(want, str):
                bound = bindings.get(want)
                if bound is None:
                    bindings[want] = (got, spec.name)
                elif bound[0] != got:
                    raise ShapeError(
                        f"{plan.where}: argument {spec.name!r} dimension {axis} ({want!r}): "
                        f"expected {bound[0]}, the size of {want!r} in argument {bound[1]!r}, "
                        f"got {got}. Every argument using dimension {want!r} must have the "
                        f"same size there"
                    )
            elif want != got:
                break
        else:
            return
    want_shape = "(" + ", ".join("?" if d is None else str(d) for d in spec.shape) + (
        ",)" if len(spec.shape) == 1 else ")")
    raise ShapeError(
        f"{plan.where}: argument {spec.name!r}: expected shape {want_shape} "
        f"({spec_type(spec)}), got {tuple(shape)}. Pass an array of that shape (reshape or "
        f"slice it), or re-export the function with that dimension dynamic (None) to "
        f"accept other sizes"
    )


def count_error(meta: FunctionMetadata, given: int) -> ArgumentError:
    n = len(meta.args)
    specs = ", ".join(str(a) for a in meta.args)
    return ArgumentError(
        f"{meta.name}() takes {n} array argument{'' if n == 1 else 's'} ({specs}), "
        f"got {given}. Pass exactly those, in that order"
    )


def structure_error(meta: FunctionMetadata, given: TreeDef) -> ArgumentError:
    expected = meta.in_tree
    if _all_leaves(expected) and _all_leaves(given):
        return count_error(meta, given.num_leaves)
    if str(given) == str(expected):
        return ArgumentError(
            f"{meta.name}(): the arguments have the structure {expected}, but the static "
            f"data of a node (a registered dataclass's meta fields or a custom node's aux "
            f"data) differs from the exported function's, which is compiled in. Pass "
            f"objects with the exported static data, or export again for these: "
            f"{meta.signature}")
    return ArgumentError(
        f"{meta.name}(): expected arguments with structure {expected}, got {given} "
        f"(* is an array). Nest the arguments as the function was exported: "
        f"{meta.signature}. Tuples, lists and dicts are structure, not arrays: pass "
        f"np.asarray(...) where an array is expected"
    )


def _all_leaves(tree: TreeDef) -> bool:
    return tree.kind == "tuple" and all(child.kind == "leaf" for child in tree.children)
