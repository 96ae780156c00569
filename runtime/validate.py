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
from .errors import ArgumentError, DeletedArrayError, ShapeError
from .metadata import FunctionMetadata, TensorSpec
from .tree import TreeDef


class ArgPlan:
    """What one flat argument must be, precomputed once per function."""

    __slots__ = ("dtype", "element_type", "ndim", "shape", "spec", "where")

    def __init__(self, spec: TensorSpec, where: str) -> None:
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
    return tuple(ArgPlan(spec, where) for spec in meta.args)


def spec_type(spec: TensorSpec) -> str:
    """``float32[64,?]``: a spec's type without its name."""
    return str(spec).split(": ", 1)[1]


def _kind_of(leaf: Any) -> str:
    if isinstance(leaf, (bool, int, float, complex)):
        return f"a Python {type(leaf).__name__} ({leaf!r})"
    return type(leaf).__name__


# Python scalars are weakly typed, as in JAX: they take the argument's dtype when the
# value's kind fits it. bool fits every dtype, int every numeric one, float only floats.
_SCALAR_FITS = {bool: "biuf", int: "iuf", float: "f"}


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
        try:
            array = np.asarray(leaf, dtype=plan.dtype)
        except OverflowError as e:
            raise ArgumentError(
                f"{plan.where}: argument {spec.name!r}: expected a value that fits "
                f"{plan.dtype.name}, got {leaf!r}. Pass a value in range"
            ) from e
    elif isinstance(leaf, np.ndarray):
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
