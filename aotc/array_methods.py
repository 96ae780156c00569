"""Operators, indexing and ndarray methods of ``Tracer``, installed by the numpy layer.

The tracer core (``aotc/core.py``) defines what a traced array is and imports no op;
``aotc.numpy`` calls ``install`` with itself once its functions exist, and every operator
and method here forwards to the namespace function of numpy's name (``x + y`` is
``aotc.numpy.add(x, y)``, ``x.sum(axis=0)`` is ``aotc.numpy.sum(x, axis=0)``). The ops
modules list the names they provide as methods under ``"methods"`` in their ``EXPORTS``.
"""

from __future__ import annotations

import types

import numpy as np

from . import numpy_dispatch
from .core import Tracer, check_usable, traced_at_user_line
from .ops.elementwise import power_operator
from .ops import complex_parts, views
from .ops.updates import IndexUpdateHelper

# Python operator -> namespace function (binary ones also get the reflected __r*__ form).
BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
    "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
           "eq": "equal", "ne": "not_equal"}
UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "invert"}


def _shape_arguments(args: tuple):
    """``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` alike (also for ``transpose``)."""
    return args[0] if len(args) == 1 and not isinstance(args[0], int) else args


def install(namespace: types.ModuleType, method_names) -> None:
    """Installs the operators and the methods ``method_names`` on ``Tracer``, calling the
    functions of ``namespace`` (aotc.numpy) by name when they run."""
    numpy_dispatch.bind(namespace)

    def call(name):
        return getattr(namespace, name)

    for dunder, name in BINARY.items():
        # x ** y has numpy's ndarray.__pow__ fast paths, which numpy.power lacks.
        fn = power_operator if dunder == "pow" else None

        def forward(self, other, _n=name, _fn=fn):
            return (_fn or call(_n))(self, other)

        def reverse(self, other, _n=name, _fn=fn):
            return (_fn or call(_n))(other, self)

        setattr(Tracer, f"__{dunder}__", traced_at_user_line(forward))
        setattr(Tracer, f"__r{dunder}__", traced_at_user_line(reverse))
    for dunder, name in COMPARE.items():
        setattr(Tracer, f"__{dunder}__",
                traced_at_user_line(lambda self, other, _n=name: call(_n)(self, other)))
    for dunder, name in UNARY.items():
        setattr(Tracer, f"__{dunder}__", traced_at_user_line(lambda self, _n=name: call(_n)(self)))

    def index(self, key):
        return views.getitem(check_usable(self, "indexing"), key)

    Tracer.__getitem__ = traced_at_user_line(index)
    Tracer.__setitem__ = traced_at_user_line(views.setitem)
    for name in views.AUGMENTED:  # x += y writes into x, as numpy's in-place operators
        setattr(Tracer, f"__{name}__", traced_at_user_line(
            lambda self, other, _n=name: views.augmented(_n, self, other)))
    Tracer.T = property(traced_at_user_line(lambda self: views.transpose_view(self)))
    Tracer.real = property(traced_at_user_line(lambda self: call("real")(self)),
                           traced_at_user_line(complex_parts.set_real))
    Tracer.imag = property(traced_at_user_line(lambda self: call("imag")(self)),
                           traced_at_user_line(complex_parts.set_imag))
    Tracer.at = property(lambda self: IndexUpdateHelper(self), doc=(
        "JAX's functional updates: ``x.at[i].set(v)``, ``.add``, ``.min``, ... return a new "
        "array (aotc/ops/updates.py)."))
    Tracer.reshape = traced_at_user_line(
        lambda self, *shape, **k: call("reshape")(self, _shape_arguments(shape), **k))
    Tracer.transpose = traced_at_user_line(
        lambda self, *axes: call("transpose")(self, _shape_arguments(axes) if axes else None))
    Tracer.astype = traced_at_user_line(lambda self, dtype: call("astype")(self, dtype))
    Tracer.view = traced_at_user_line(lambda self, dtype=None, type=None: views.dtype_view(
        self, dtype, type))
    Tracer.mT = property(traced_at_user_line(lambda self: views.matrix_transpose_view(self)))
    Tracer.itemsize = property(lambda self: self.dtype.itemsize)
    Tracer.nbytes = property(lambda self: self.size * self.dtype.itemsize)
    for name in (*method_names, "ptp"):  # ptp: JAX's method (numpy 2 dropped it)
        setattr(Tracer, name, traced_at_user_line(
            lambda self, *a, _n=name, **k: numpy_dispatch.array_method(self, _n, a, k)))
    Tracer.__round__ = traced_at_user_line(
        lambda self, ndigits=None: call("round")(self, ndigits or 0))
    Tracer.__copy__ = traced_at_user_line(lambda self: call("copy")(self))
    Tracer.__deepcopy__ = traced_at_user_line(lambda self, memo: call("copy")(self))
    Tracer.__divmod__ = traced_at_user_line(lambda self, other: call("divmod")(self, other))
    Tracer.__rdivmod__ = traced_at_user_line(lambda self, other: call("divmod")(other, self))
    Tracer.__array_namespace__ = lambda self, *, api_version=None: namespace
    # In-place methods: the new value replaces the array's.
    Tracer.sort = traced_at_user_line(lambda self, axis=-1, kind=None, order=None: (
        views.assign_all(self, call("sort")(self, axis=axis, kind=kind, order=order),
                         "x.sort()")))
    Tracer.fill = traced_at_user_line(lambda self, value: views.assign_all(
        self, call("full_like")(self, value), "x.fill()"))
    Tracer.partition = traced_at_user_line(
        lambda self, kth, axis=-1, kind="introselect", order=None: views.assign_all(
            self, call("partition")(self, kth, axis, kind, order), "x.partition()"))
    Tracer.put = traced_at_user_line(lambda self, indices, values, mode="raise": (
        views.assign_all(self, call("put")(self, indices, values, None if mode == "raise"
                                           else mode, inplace=False), "x.put()")))
    for name in numpy_dispatch.IN_PLACE_METHODS:  # the others: refused, naming the fix
        setattr(Tracer, name,
                lambda self, *a, _n=name, **k: numpy_dispatch.in_place_method(self, _n))
    # Other ndarray methods exist on a traced array too: numpy's function of the name,
    # or an error saying it is not supported.
    for name in dir(np.ndarray):
        if (not name.startswith("_") and not hasattr(Tracer, name)
                and isinstance(getattr(np.ndarray, name), types.MethodDescriptorType)):
            setattr(Tracer, name, traced_at_user_line(
                lambda self, *a, _n=name, **k: numpy_dispatch.array_method(self, _n, a, k)))
    # numpy's functions and ufuncs called on tracers are traced by the namespace's.
    Tracer.__array__ = lambda self, dtype=None, copy=None: _raise(
        numpy_dispatch.conversion_error(self))
    Tracer.__array_ufunc__ = lambda self, ufunc, method, *inputs, **kwargs: (
        numpy_dispatch.array_ufunc(ufunc, method, inputs, kwargs))
    Tracer.__array_function__ = lambda self, func, types_seen, args, kwargs: (
        numpy_dispatch.array_function(func, types_seen, args, kwargs))


def _raise(error: Exception):
    raise error
