"""numpy's own functions on traced arrays: ``np.tanh(x)``, ``np.sum(x)``, ``np.linalg.norm(x)``.

numpy hands a call over to an argument's type when that type defines ``__array_ufunc__``
(ufuncs and their methods) or ``__array_function__`` (the other public functions; numpy 2
asks only the arguments a function declares as arrays, so ``np.asarray(x)`` still goes
through ``Tracer.__array__``). ``Tracer`` defines both and forwards here. A call is traced
by the aotc.numpy function with numpy's name and submodule path (``numpy.linalg.norm`` ->
``aotc.numpy.linalg.norm``), looked up when called: a function added to aotc.numpy is
dispatched without being listed anywhere. Ufunc reductions map to aotc.numpy's reductions
(``np.add.reduce`` -> ``sum``, table ``REDUCTIONS``). What has no counterpart raises
``UnsupportedOpError`` naming it.
"""

from __future__ import annotations

import inspect
import os
import types
from typing import Any, Callable

import numpy as np

from . import dtypes
from .core import Tracer, user_frame
from .errors import stored_into_numpy_array, stores_into_numpy_array
from .ops import views
from .errors import TracerConversionError, UnsupportedOpError

# The namespace calls are dispatched to (aotc.numpy), given by ``bind`` when that
# namespace installs the array methods: this module never imports it.
_namespace: types.ModuleType | None = None


def bind(namespace: types.ModuleType) -> None:
    global _namespace
    _namespace = namespace

SUPPORTED_LIST = (
    "aotc.numpy.supported_functions() and docs/supported.md list the supported functions"
)

# ufunc.reduce / ufunc.accumulate -> the aotc.numpy function computing the same thing
# (numpy's np.sum is np.add.reduce, np.cumsum is np.add.accumulate, ...).
REDUCTIONS = {
    "add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
    "logical_and": "all", "logical_or": "any", "fmax": "nanmax", "fmin": "nanmin",
}
ACCUMULATIONS = {"add": "cumsum", "multiply": "cumprod"}
# ufunc.at(x, i, v) -> the functional update method of x.at[i].
AT_UPDATES = {"add": "add", "multiply": "multiply", "minimum": "min", "maximum": "max"}

# ufunc keyword arguments and the value that changes nothing (numpy drops out=None).
UFUNC_NEUTRAL = {"casting": "same_kind", "order": "K", "subok": True, "signature": None}
REDUCE_NEUTRAL = {"dtype": None, "keepdims": False}

# ndarray methods that modify the array in place -> the functional form to write instead.
IN_PLACE_METHODS = {
    "resize": "x = aotc.numpy.reshape(x, new_shape) (or aotc.numpy.resize(x, new_shape))",
    "itemset": "x = x.at[index].set(value)",
}
# ndarray methods whose numpy function takes the array in another position, or differs:
# x.conj() of a real array is a copy of x (numpy.conj of bool computes in int8).
def _conjugate(x):
    return ("conjugate" if x.dtype.kind == "c" else "copy", (x,), {})


REORDERED_METHODS = {"compress": lambda x, condition, *a, **k: ("compress", (condition, x) + a, k),
                     "conj": _conjugate, "conjugate": _conjugate}


def numpy_name(func: Callable) -> str:
    """numpy's public name of a function: ``numpy.linalg.norm``."""
    return f"{func.__module__}.{func.__name__}"


_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


def _caller_frame():
    """The user's frame that made the call, past aotc's and numpy's frames."""
    frame = user_frame()
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_NUMPY_DIR):
        frame = frame.f_back
    return frame


def call_site() -> str:
    """``file:line`` of the user's code that made the call, past aotc's and numpy's frames."""
    frame = _caller_frame()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame else "<unknown>"


def unsupported(what: str, fix: str = "") -> UnsupportedOpError:
    fix = fix or ("write this step with supported functions, or compute it outside the "
                  "traced function and pass the result in as an argument")
    return UnsupportedOpError(
        f"{what} is not supported in traced code (at {call_site()}). {SUPPORTED_LIST}; {fix}"
    )


def resolve(path: str) -> Callable | None:
    """The aotc.numpy function for numpy's dotted ``path`` (``numpy.linalg.norm``), or None."""
    if _namespace is None:
        raise RuntimeError("aotc.numpy_dispatch: no namespace is bound; importing aotc.numpy "
                           "binds it")
    *modules, name = path.split(".")[1:]
    target: Any = _namespace
    for part in modules:
        target = getattr(target, part, None)
        if not isinstance(target, types.ModuleType):
            return None
    if name not in getattr(target, "__all__", (name,)):  # a helper the submodule imports
        return None
    fn = getattr(target, name, None)
    # Only aotc's own functions: a numpy object re-exported by aotc.numpy would hand the
    # call straight back to numpy.
    if (name.startswith("_") or not callable(fn) or isinstance(fn, type)
            or not getattr(fn, "__module__", "").startswith("aotc")):
        return None
    return fn


def _is_default(value, default) -> bool:
    # Type first: comparing a traced array with == would trace a comparison.
    plain = isinstance(default, (bool, int, float, str))
    return value is default or (plain and type(value) is type(default) and value == default)


def _drop_neutral(kwargs: dict, neutral: dict) -> None:
    """Removes keyword arguments given their no-op value (``casting="same_kind"``)."""
    for key, value in neutral.items():
        if key in kwargs and _is_default(kwargs[key], value):
            del kwargs[key]


def _check_out_where(what: str, out, where) -> None:
    if out is not None and not (isinstance(out, tuple) and all(o is None for o in out)):
        raise unsupported(
            f"{what} with out= (also `a += b` when `a` is a numpy array)",
            "traced arrays are values, not buffers: use the result (`a = a + b`), or "
            "x = x.at[index].set(result) to replace part of an array",
        )
    if where is not True and where is not np._NoValue:
        raise unsupported(
            f"{what} with where=",
            "compute every element and select with aotc.numpy.where(mask, result, other)",
        )


def _call(target: Callable, what: str, target_name: str, args: tuple, kwargs: dict):
    """Calls ``target``; arguments it does not take become an UnsupportedOpError naming them."""
    try:
        inspect.signature(target).bind(*args, **kwargs)
    except TypeError as e:
        passed = ", ".join([f"{len(args)} positional"] + [f"{k}=" for k in kwargs])
        raise unsupported(
            f"{what} with these arguments ({passed})",
            f"{target_name}{inspect.signature(target)} cannot take them ({e})",
        ) from None
    except ValueError:  # no signature to check: let the call say
        pass
    return target(*args, **kwargs)


def _others_first(types_seen) -> bool:
    """Another array library's type is in the call: numpy should ask it instead."""
    return any(not issubclass(t, (Tracer, np.ndarray, np.generic)) for t in types_seen)


# ---- __array_function__ -----------------------------------------------------------------


def array_function(func: Callable, types_seen, args: tuple, kwargs: dict):
    """``Tracer.__array_function__``: ``np.<path>(...)`` traced by ``aotc.numpy.<path>``."""
    if _others_first(types_seen):
        return NotImplemented
    name = numpy_name(func)
    target = resolve(name)
    if target is None:
        raise unsupported(name)
    kwargs = dict(kwargs)
    try:
        numpy_signature = inspect.signature(func)
        numpy_params = numpy_signature.parameters
        bound = numpy_signature.bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        numpy_params, bound = {}, kwargs
    _check_out_where(name, bound.get("out"), bound.get("where", True))
    try:
        accepted = inspect.signature(target).parameters
    except ValueError:
        accepted = None
    # Keywords left at numpy's default need no counterpart (out=None, keepdims=<no value>).
    for key in list(kwargs):
        param = numpy_params.get(key)
        if (accepted is not None and key not in accepted and param is not None
                and _is_default(kwargs[key], param.default)):
            del kwargs[key]
    kwargs.pop("out", None)
    kwargs.pop("where", None)
    return _call(target, name, "aotc.numpy." + name.split(".", 1)[1], args, kwargs)


# ---- __array_ufunc__ ----------------------------------------------------------------------


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict):
    """``Tracer.__array_ufunc__``: ``np.add(x, y)``, ``np.add.reduce(x)``, ``np.multiply.outer``."""
    if _others_first(type(x) for x in inputs if hasattr(x, "__array_ufunc__")):
        return NotImplemented
    handler = UFUNC_METHODS.get(method)
    if handler is None:
        raise unsupported(f"numpy.{ufunc.__name__}.{method}")
    return handler(ufunc, inputs, dict(kwargs))


def _ufunc_function(ufunc: np.ufunc) -> Callable:
    target = resolve(f"numpy.{ufunc.__name__}")
    if target is None:
        raise unsupported(f"numpy.{ufunc.__name__}")
    return target


def _traced_out(out):
    """The traced array of ``out=`` (numpy passes a tuple), or None when there is none; a
    numpy array there is left for ``_check_out_where`` to refuse."""
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    return out if isinstance(out, Tracer) else None


def _ufunc_call(ufunc: np.ufunc, inputs: tuple, kwargs: dict):
    what = f"numpy.{ufunc.__name__}"
    target = _ufunc_function(ufunc)
    out = kwargs.pop("out", None)
    into = _traced_out(out)
    _check_out_where(what, None if into is not None else out, kwargs.pop("where", True))
    dtype = kwargs.pop("dtype", None)
    _drop_neutral(kwargs, UFUNC_NEUTRAL)
    if dtype is not None:
        inputs = _cast_to_loop(ufunc, inputs, dtype, kwargs.pop("casting", "same_kind"))
    result = _call(target, what, f"aotc.numpy.{ufunc.__name__}", inputs, kwargs)
    if into is None:
        return result
    views.store(into, result, f"{what}(..., out=x)")  # numpy writes the output into x
    return into


def _loop_type(x):
    """What numpy's loop resolution sees: a dtype, or Python's type for a weak scalar."""
    if isinstance(x, Tracer):
        return dtypes.weak_kind(x.dtype) if x.weak else x.dtype
    if type(x) in (int, float):
        return type(x)
    return np.asarray(x).dtype


def _cast_to_loop(ufunc: np.ufunc, inputs: tuple, dtype, casting: str) -> tuple:
    """``dtype=`` of a ufunc: numpy computes in the loop chosen for that output dtype."""
    anp = _namespace
    loop = ufunc.resolve_dtypes(
        tuple(_loop_type(x) for x in inputs) + (None,) * ufunc.nout,
        signature=(None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout,
        casting=casting,
    )
    return tuple(x if type(x) in (int, float) else anp.astype(x, dt) for x, dt in zip(inputs, loop))


def _ufunc_reduce(ufunc: np.ufunc, inputs: tuple, kwargs: dict, table: dict, method: str):
    what = f"numpy.{ufunc.__name__}.{method}"
    counterpart = table.get(ufunc.__name__)
    target = resolve(f"numpy.{counterpart}") if counterpart else None
    if target is None:
        raise unsupported(what)
    _check_out_where(what, kwargs.pop("out", None), kwargs.pop("where", True))
    _drop_neutral(kwargs, REDUCE_NEUTRAL)
    if "axis" not in kwargs:  # numpy's default for ufunc methods is 0, not None (0-d: all)
        kwargs["axis"] = 0 if np.ndim(inputs[0]) else None
    return _call(target, what, f"aotc.numpy.{target.__name__}", inputs, kwargs)


def _ufunc_outer(ufunc: np.ufunc, inputs: tuple, kwargs: dict):
    """``ufunc.outer(a, b)[i..., j...] = ufunc(a[i...], b[j...])``: a broadcast call."""
    anp = _namespace
    a, b = inputs
    a = anp.reshape(a, anp.shape(a) + (1,) * anp.ndim(b))
    return _ufunc_call(ufunc, (a, b), kwargs)


def _ufunc_at(ufunc: np.ufunc, inputs: tuple, kwargs: dict):
    """``np.add.at(x, indices, values)``: unbuffered, so repeated indices accumulate; it
    is the scatter of ``x.at[indices].add(values)``, written into x."""
    update = AT_UPDATES.get(ufunc.__name__)
    if update is not None and len(inputs) == 3 and isinstance(inputs[0], Tracer) and not kwargs:
        x, indices, values = inputs
        views.assign_all(x, getattr(x.at[indices], update)(values),
                         f"numpy.{ufunc.__name__}.at")
        return None
    fix = (f"x = x.at[indices].{update}(values)" if update
           else f"x = x.at[indices].set(numpy.{ufunc.__name__}(x[indices], values))")
    raise unsupported(f"numpy.{ufunc.__name__}.at (an in-place update)", f"write {fix}")


UFUNC_METHODS = {
    "__call__": _ufunc_call,
    "reduce": lambda u, i, k: _ufunc_reduce(u, i, k, REDUCTIONS, "reduce"),
    "accumulate": lambda u, i, k: _ufunc_reduce(u, i, k, ACCUMULATIONS, "accumulate"),
    "outer": _ufunc_outer,
    "at": _ufunc_at,
}


# ---- ndarray methods and conversions ----------------------------------------------------------


def array_method(x, name: str, args: tuple, kwargs: dict):
    """``x.<name>(...)``: the aotc.numpy function of that name, with ``x`` as its array."""
    if name in REORDERED_METHODS:
        name, args, kwargs = REORDERED_METHODS[name](x, *args, **kwargs)
    else:
        args = (x,) + tuple(args)
    target = resolve(f"numpy.{name}")
    if target is None:
        raise unsupported(f"the array method .{name}()")
    return target(*args, **kwargs)


def in_place_method(x, name: str):
    """An ndarray method that writes into the array: refused, naming the functional form."""
    call = f"x.{name}(...)"
    raise unsupported(
        f"{call} on a traced array (it modifies the array in place)",
        f"this in-place method is not supported yet: write {IN_PLACE_METHODS[name]}",
    )


def conversion_error(x) -> Exception:
    """``np.asarray(x)`` / ``np.array(x)`` on a traced array: it has no value yet."""
    if stores_into_numpy_array(_caller_frame()):
        return stored_into_numpy_array(x, call_site())
    return TracerConversionError(
        f"conversion to a numpy array (np.asarray / np.array) was asked of a traced array "
        f"{x.dtype.name}{list(x.shape)} "
        f"in function '{x._trace.fn_name}' at {call_site()}: while tracing, arrays have a "
        f"shape and dtype but no value to convert. Fix: drop the conversion (numpy "
        f"functions and ufuncs called on traced arrays are traced), use "
        f"aotc.numpy.asarray / aotc.numpy.stack, or pass the value as a static argument "
        f"(aotc.jit(f, static_argnums=...)) if it is known before the call"
    )
