"""numpy's scalar types as ``aotc.numpy`` names them (``anp.float32``, ``anp.int32``, ...):
JAX's scalar constructors, which are numpy's types everywhere a type is asked for.

Called on a traced array, or a list holding one, ``anp.float32(x)`` is
``anp.asarray(x, anp.float32, copy=True)`` (``jnp.float32(x)`` in JAX): a new traced array
of that dtype. On anything else it is numpy's constructor (``anp.float32(1)`` is
``np.float32(1)``). As a type it is numpy's: ``np.dtype(anp.float32)``,
``anp.zeros(3, anp.float32)``, ``x.astype(anp.int8)``, ``anp.issubdtype(anp.float32,
anp.floating)``, ``anp.float32 == np.float32`` (and the same hash), and
``isinstance(np.float32(1), anp.float32)`` is True while a traced array is no instance of
it (JAX's rules).

>>> import aotc.numpy as anp
>>> anp.float32(1.5), np.dtype(anp.int8), anp.float32 == np.float32
(np.float32(1.5), dtype('int8'), True)
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .core import Tracer


def _holds_tracer(x) -> bool:
    if isinstance(x, Tracer):
        return True
    return isinstance(x, (list, tuple)) and any(_holds_tracer(v) for v in x)


class ScalarType(type):
    """The type of ``anp.float32`` and its kin: one per numpy scalar type (``dtype``)."""

    dtype: np.dtype
    asarray: Callable

    @property
    def __numpy_dtype__(cls) -> np.dtype:  # numpy >= 2.4 asks this; older ones .dtype
        return cls.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __call__(cls, *args):
        if args and _holds_tracer(args[0]):
            if len(args) > 1:
                raise TypeError(f"{cls.__name__}() of a traced array takes one argument, got "
                                f"{len(args)}")
            return cls.asarray(args[0], cls.dtype, copy=True)  # a new array, as numpy's
        return cls.dtype.type(*args)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return isinstance(subclass, type) and issubclass(subclass, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'aotc.numpy.{cls.__name__}'>"


def scalar_types(asarray: Callable) -> dict[str, ScalarType]:
    """``{name: scalar type}`` for aotc.numpy, numpy's aliases included (``single`` is
    ``float32``); ``asarray`` converts traced values."""
    made: dict[type, ScalarType] = {}

    def scalar(np_type: type) -> ScalarType:
        if np_type not in made:
            name = np_type.__name__
            made[np_type] = ScalarType(name, (), {
                "dtype": np.dtype(np_type), "asarray": staticmethod(asarray),
                "__module__": "aotc.numpy", "__qualname__": name,
                "__doc__": f"numpy.{name}: a constructor of {name} arrays on traced values "
                           f"(as JAX's), numpy's scalar type otherwise."})
        return made[np_type]

    names = {
        "bool_": np.bool_, "bool": np.bool_,
        "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
        "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
        "float16": np.float16, "float32": np.float32, "float64": np.float64,
        "complex64": np.complex64, "complex128": np.complex128,
        "half": np.float16, "single": np.float32, "double": np.float64,
        "float_": np.float64, "int_": np.int64, "uint": np.uint64,
        "csingle": np.complex64, "cdouble": np.complex128, "complex_": np.complex128,
    }
    return {name: scalar(t) for name, t in names.items()}
