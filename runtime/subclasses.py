"""numpy ndarray subclasses as arguments: which are taken as their data, which refused.

A subclass is taken as its data (``np.asarray(x)``) when that is what numpy computes
with: it overrides none of ndarray's operators, indexing, ``__array_ufunc__``,
``__array_function__`` or ``__array_wrap__`` (a subclass that adds attributes or
methods), or it is ``np.memmap`` (a file's bytes). The others mean something their data
alone does not, which aotc would silently drop: a masked array's mask, ``np.matrix``'s
operators (``*`` is a matrix product); they are refused with the conversion to use.
"""

from __future__ import annotations

import weakref

import numpy as np

# What a subclass may not override and still be its data (see the module docstring).
_SEMANTIC = tuple(f"__{n}__" for n in (
    "array_ufunc", "array_function", "array_wrap", "getitem", "setitem", "neg", "pos",
    "abs", "invert", "eq", "ne", "lt", "le", "gt", "ge", *(
        f"{r}{op}" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod",
                              "divmod", "pow", "and", "or", "xor", "lshift", "rshift")
        for r in ("", "r", "i"))))
_SUBCLASSES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # class -> reason


def subclass_refusal(x: np.ndarray, where: str) -> str | None:
    """Why ``x``, an instance of an ndarray subclass, cannot be passed as its data
    (None: it can, as ``np.asarray(x)``): the message for an ``ArgumentError``."""
    cls = type(x)
    reason = _SUBCLASSES.get(cls, False)
    if reason is False:
        reason = _SUBCLASSES[cls] = _subclass_reason(cls)
    return None if reason is None else f"{where}: {reason}"


def _subclass_reason(cls: type) -> str | None:
    if issubclass(cls, np.ma.MaskedArray):
        return ("expected an array, got a numpy masked array, whose mask would be dropped "
                "(aotc computes on arrays without masks). Pass x.filled(value) to compute "
                "with the masked elements replaced by value, or np.ma.getdata(x) to ignore "
                "the mask")
    if issubclass(cls, np.matrix):
        return ("expected an array, got a np.matrix, whose operators are not an array's "
                "(* is a matrix product, indexing keeps two dimensions). Pass np.asarray(x) "
                "and write matrix products with @")
    if issubclass(cls, np.memmap):
        return None
    changed = [n for n in _SEMANTIC if getattr(cls, n, None) is not getattr(np.ndarray, n, None)]
    if not changed:
        return None
    return (f"expected an array, got {cls.__module__}.{cls.__qualname__}, an ndarray "
            f"subclass that changes what numpy computes on it ({changed[0]}), which its "
            f"data alone would not keep. Pass np.asarray(x) to compute on its data as a "
            f"plain array")
