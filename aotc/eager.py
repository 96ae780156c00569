"""Eager execution: aotc's functions called outside a trace, on concrete values.

``aotc.numpy.tanh(np.ones(3))``, ``aotc.random.split(key)`` or ``array.sum()`` outside a
traced function run now and return runtime ``Array``s, with the dtypes, shapes and
values the same call gives inside ``aotc.jit``. Each call takes the first of three
routes that applies (measured in benchmarks/eager.py, the reasons in
docs/architecture.md):

1. **On the host, by numpy's function of the same name** (``aotc.numpy`` and
   ``aotc.numpy.linalg`` follow numpy's semantics, so numpy's function is the op), the
   result copied to a device: a few microseconds, and no compile. IREE needs about 0.4 s
   to compile even a one-op module, so compiling every eager op would make a script of
   fifty distinct ones take twenty seconds. For the functions in ``HOST_EXACT`` (shape
   and indexing operations, creation, comparisons, integer arithmetic, the correctly
   rounded float operations ``+ - * /``, ``sqrt``, ``minimum``, ...) numpy's values are
   the compiled code's bit for bit. For the others (math functions, float reductions and
   contractions) they agree as closely as the compiled code agrees with numpy: within the
   ulps docs/accuracy.md lists, and the rounding of another summation order. With
   ``aotc.config.update("eager_exact", True)`` those are compiled instead (route 3), so
   eager results are jit's bit for bit. Anything numpy refuses (a JAX-only keyword such
   as ``size=``, an index out of range that aotc clips) is compiled too, so aotc's own
   semantics and errors apply.
2. **Directly**, for functions that need no trace at all (``shape``, ``result_type``,
   ``PRNGKey``, the set operations on concrete arrays): learnt per function the first
   time it asks for a trace.
3. **As a one-op compiled program**, cached per call signature as JAX dispatches its eager
   ops: arrays (numpy, ``Array``, numpy scalars) are its arguments, everything else
   (Python numbers, shapes, axes, dtypes, functions) is static and keys the cache. This
   is everything else: transcendental functions, float reductions and contractions
   (whose rounding depends on the order the compiled code sums in), ``lax``, ``nn``,
   ``random`` (the same bits as under ``jit``), control flow.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import random_eager, x64
from .core import is_tracing
from .eager_values import static_key, to_arrays, uncommitted
from .errors import NotTracingError, TracerConversionError, TracingError
from .runtime import tree
from .runtime.array import Array
from .runtime.errors import ArgumentError
from .runtime.subclasses import subclass_refusal

# ---- route 1: numpy computes exactly what the compiled code does -----------------------

# dtype kinds (numpy's ``dtype.kind``) of the array operands for which each numpy
# function's values equal the compiled op's, bit for bit: every element is one correctly
# rounded IEEE operation (or exact integer, boolean or data-movement work) in both.
# Not here, so compiled: transcendental functions (aotc's own libm differs from numpy's
# in the last ulp), float reductions and contractions (summation order), complex
# multiplication and division (numpy's formulas differ from the compiled ones), float to
# integer casts (undefined out of range), and everything whose numpy and aotc signatures
# differ.
_EXACT_ALL = "biufc"  # data movement, comparisons, addition
_EXACT_REAL = "biuf"
_EXACT_INT = "biu"

HOST_EXACT: dict[str, str] = {
    **dict.fromkeys((
        # creation: aotc builds these with numpy at trace time
        "array", "asarray", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
        "arange", "linspace", "logspace", "geomspace", "eye", "identity", "tri", "indices",
        "meshgrid", "diag", "diagflat", "tril", "triu", "copy",
        # shape and data movement
        "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
        "broadcast_to", "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d",
        "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "split",
        "array_split", "hsplit", "vsplit", "dsplit", "flip", "fliplr", "flipud", "rot90",
        "roll", "tile", "repeat", "pad", "take", "take_along_axis", "where", "select",
        "compress", "extract", "diagonal", "triu_indices", "tril_indices", "append",
        "insert", "delete", "resize", "trim_zeros", "nonzero", "flatnonzero", "argwhere",
        "lexsort", "unique", "searchsorted", "count_nonzero",
        # comparisons and predicates
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
        "isnan", "isinf", "isfinite", "signbit", "array_equal", "array_equiv",
        "logical_and", "logical_or", "logical_xor", "logical_not", "any", "all",
        # exact arithmetic
        "add", "subtract", "negative", "positive", "conjugate", "conj", "real", "imag",
        "absolute", "abs",
    ), _EXACT_ALL),
    **dict.fromkeys((
        "multiply", "divide", "true_divide", "square", "sqrt", "floor", "ceil", "trunc",
        "rint", "fix", "sign", "copysign", "nextafter", "argmax", "argmin", "nanargmax",
        "nanargmin", "heaviside", "fabs",
    ), _EXACT_REAL),
    **dict.fromkeys((
        "floor_divide", "remainder", "mod", "fmod", "bitwise_and", "bitwise_or",
        "bitwise_xor", "bitwise_not", "invert", "left_shift", "right_shift", "gcd", "lcm",
        "sum", "prod", "cumsum", "cumprod", "bincount", "matmul", "dot",
        # numpy picks between -0.0 and 0.0 by argument order, the compiled code by sign
        "minimum", "maximum", "fmin", "fmax", "clip", "max", "min", "amax", "amin", "ptp",
        "nanmax", "nanmin",
    ), _EXACT_INT),
}

# numpy's functions with another name, or whose defaults differ from aotc's: sorts are
# stable in aotc (ties and -0.0/0.0 keep their order), numpy's quicksort is not;
# ``empty`` is zeros in aotc.
_HOST_FUNCTIONS: dict[str, Callable] = {
    "sort": lambda a, axis=-1, kind=None, order=None, **k: np.sort(
        a, axis, kind=kind or "stable", order=order, **k),
    "argsort": lambda a, axis=-1, kind=None, order=None, **k: np.argsort(
        a, axis, kind=kind or "stable", order=order, **k),
    "empty": np.zeros, "empty_like": np.zeros_like,
}
HOST_EXACT.update(dict.fromkeys(("sort", "argsort", "empty", "empty_like"), _EXACT_ALL))

# numpy functions of aotc.numpy's names that are not aotc's op: their results differ
# for the same call (both valid: another arrangement of a partition), or they write
# into their arguments.
NOT_ON_HOST = frozenset(("partition", "argpartition", "copyto", "putmask", "place",
                         "fill_diagonal", "put", "put_along_axis"))

# Array operators and methods: numpy's ndarray method of the same name is exact for the
# same kinds as the function (``x.sum()`` as ``sum``), plus these (``astype``: see
# ``_astype_exact``).
_METHOD_EXACT: dict[str, str] = {
    "flatten": _EXACT_ALL, "__getitem__": _EXACT_ALL, "T": _EXACT_ALL, "mT": _EXACT_ALL,
    "astype": _EXACT_ALL,
}


# The kind a leaf that is not an array brings into the computation: Python numbers, and
# dtypes (``sum(x, dtype=float)`` sums in float: not exact).
_PYTHON_KINDS = {bool: "b", int: "i", float: "f", complex: "c"}


def _leaf_kind(leaf: Any) -> str:
    dtype = getattr(leaf, "dtype", None)
    if isinstance(dtype, np.dtype):
        return dtype.kind
    kind = _PYTHON_KINDS.get(type(leaf))
    if kind is not None:
        return kind
    if isinstance(leaf, np.dtype) or (isinstance(leaf, type) and issubclass(
            leaf, (np.generic, bool, int, float, complex))):
        return np.dtype(leaf).kind
    return ""


@dataclass
class EagerOp:
    """What eager calls of one function share: how it may run on the host, whether it
    needs a trace at all, and its compiled programs by call signature."""

    fn: Callable
    name: str  # "numpy_add": the compiled program's name
    host: Callable | None = None
    # The operand dtype kinds for which ``host`` gives the op's values bit for bit; for
    # other kinds its values are numpy's (see ``eager_exact``).
    host_kinds: str = ""
    # The numpy ufunc it is (None: not one), for JAX's dtypes with x64 off (host_call).
    ufunc: str | None = None
    # A namespace's own first route, ``route(fn, name, args, kwargs)``; it returns
    # NotImplemented to leave the call to the others (aotc/random_eager.py).
    route: Callable | None = None
    # True once a direct call asked for a trace (it has to be compiled).
    needs_trace: bool = False
    # (argument structure, static values) -> compiled program (a JittedFunction) and how
    # many kinds of leaves had to be made static for it to trace (see _STATIC_LEVELS).
    programs: dict = field(default_factory=dict)
    levels: dict = field(default_factory=dict)


_ops_lock = threading.Lock()


# Namespaces with a first route of their own.
ROUTES = {"random": random_eager.route}
_public_ops: dict[Callable, EagerOp] = {}


def call_public(fn: Callable, where: tuple[str, str], args: tuple, kwargs: dict) -> Any:
    """The public function ``fn`` (``where``: its namespace and name) called outside a
    trace (``core.traced_at_user_line`` sends it here)."""
    op = _public_ops.get(fn)
    if op is None:
        op = _public_ops.setdefault(fn, _public_op(fn, *where))
    return call(op, args, kwargs)


def _public_op(fn: Callable, namespace: str, name: str) -> EagerOp:
    op = EagerOp(fn, f"{namespace}_{name}", route=ROUTES.get(namespace))
    reference = {"numpy": np, "linalg": np.linalg, "fft": np.fft}.get(namespace)
    if reference is not None and name not in NOT_ON_HOST:
        host = _HOST_FUNCTIONS.get(name) or getattr(reference, name, None)
        if callable(host) and not isinstance(host, type):
            op.host = host
            op.host_kinds = HOST_EXACT.get(name, "") if namespace == "numpy" else ""
            op.ufunc = _ufunc_name(name) if namespace == "numpy" else None
    return op


def _ufunc_name(name: str) -> str | None:
    from .ops.elementwise import UFUNCS

    return UFUNCS.get(name)


# Set while a function is called directly (route 2): a public function it calls in turn
# must not run eagerly (a composite would run op by op, then fail half-way in a helper
# that needs a trace), so it asks for one and the whole call is compiled instead.
_direct = threading.local()


def call(op: EagerOp, args: tuple, kwargs: dict) -> Any:
    """Runs ``op`` on concrete ``args`` now (see the module docstring for the routes)."""
    if getattr(_direct, "active", False):
        raise NotTracingError(f"{op.name} called by a function run directly")
    if op.route is not None:
        out = op.route(op.fn, op.name.split("_", 1)[1], args, kwargs)
        if out is not NotImplemented:
            return out
    leaves, structure = _flatten(args, kwargs, op.name)
    if op.host is not None and _host_applies(op, leaves):
        # (a deleted Array raises here, naming the deletion)
        hosted = [x.to_host() if isinstance(x, Array) else x for x in leaves]
        if not x64.enabled():
            out = _host_call_x32(op, hosted, structure)
            if out is not NotImplemented:
                return out
        else:
            h_args, h_kwargs = _unflatten(structure, hosted)
            try:
                with np.errstate(all="ignore"):
                    out = op.host(*h_args, **h_kwargs)
                # numpy answers some with Python numbers (array_equal, count_nonzero):
                # Arrays, as under jit
                return to_arrays(np.asarray(out) if type(out) in _PYTHON_KINDS else out)
            except Exception:  # noqa: BLE001 - numpy refused: the compiled route says why
                pass
    if not op.needs_trace:
        _direct.active = True
        try:
            return to_arrays(op.fn(*args, **kwargs))
        except NotTracingError:
            op.needs_trace = True
        finally:
            _direct.active = False
    return _compiled(op, leaves, structure)


# Arguments that are leaves themselves: a call made only of them (``x + 1``, ``tanh(x)``)
# skips the pytree walk, its structure being the number of arguments.
_LEAF_TYPES = frozenset((Array, np.ndarray, bool, int, float, complex, type(None), str))


def _flatten(args: tuple, kwargs: dict, name: str = "") -> tuple[list, Any]:
    if not kwargs:
        for a in args:
            if type(a) not in _LEAF_TYPES and not isinstance(a, np.generic):
                break
        else:
            return list(args), len(args)
    leaves, structure = tree.flatten((args, kwargs))
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, np.ndarray) and type(leaf) is not np.ndarray:
            where = f"{name.replace('_', '.', 1)}() argument {i}"
            refusal = subclass_refusal(leaf, where)  # a masked array, np.matrix, ...
            if refusal is not None:
                raise ArgumentError(refusal)
            leaves[i] = np.asarray(leaf)  # its data is what numpy computes with
    return leaves, structure


def _unflatten(structure: Any, leaves: list) -> tuple[tuple, dict]:
    if type(structure) is int:
        return tuple(leaves), {}
    return tree.unflatten(structure, leaves)


def _host_call_x32(op: EagerOp, hosted: list, structure) -> Any:
    """The host route with x64 off: numpy computes in JAX's dtypes (a ufunc's operands
    cast to JAX's loop), or NotImplemented where its dtypes would not be JAX's: the call
    is compiled then (aotc/x64.py, host_operands and host_result)."""
    cast = x64.host_operands(op.ufunc, hosted)
    if cast is None:
        return NotImplemented
    h_args, h_kwargs = _unflatten(structure, cast[0])
    try:
        with np.errstate(all="ignore"):
            out = op.host(*h_args, **h_kwargs)
    except Exception:  # noqa: BLE001 - numpy refused: the compiled route says why
        return NotImplemented
    out = x64.host_result(op.name, np.asarray(out) if type(out) in _PYTHON_KINDS else out,
                          cast[0], cast[1])
    return out if out is NotImplemented else to_arrays(out)


def _host_applies(op: EagerOp, leaves: list) -> bool:
    """numpy computes this call as the op does: bit for bit (every operand of a kind in
    ``op.host_kinds``), or else to numpy's accuracy unless ``eager_exact`` is set."""
    kinds = op.host_kinds
    for leaf in leaves:
        kind = _leaf_kind(leaf)
        if kind and kind not in kinds:
            return not exact_only()
    return True


def exact_only() -> bool:
    """``aotc.config.eager_exact``: only bit-exact host evaluation."""
    from . import config

    return config.value("eager_exact")


# ---- route 3: one-op compiled programs ------------------------------------------------

# Which leaves are arguments of the compiled program, from the most to the fewest: a
# function that needs a concrete value (a size given as a numpy integer, an index array
# that shapes the result) is traced again with more of its leaves static.
_STATIC_LEVELS = (
    lambda x: isinstance(x, (Array, np.ndarray, np.generic)),
    lambda x: isinstance(x, Array) or (isinstance(x, np.ndarray) and x.ndim > 0),
    lambda x: False,
)


def _compiled(op: EagerOp, leaves: list, structure) -> Any:
    first = _signature(leaves, _STATIC_LEVELS[0])
    level = op.levels.get((structure, first[0]), 0)
    while True:
        is_dynamic = _STATIC_LEVELS[level]
        statics, dynamic = first if level == 0 else _signature(leaves, is_dynamic)
        key = (structure, statics, level)
        program = op.programs.get(key)
        if program is None:
            program = _program(op, structure, leaves, is_dynamic)
        try:
            out = uncommitted(program(*dynamic))
        except (TracerConversionError, TracingError):
            # A concrete value was needed (an axis, a size): more leaves static, if any.
            last = level + 1 == len(_STATIC_LEVELS)
            if last or not any(_STATIC_LEVELS[level](x) and not _STATIC_LEVELS[level + 1](x)
                               for x in leaves):
                raise
            level += 1
            continue
        with _ops_lock:
            op.programs[key] = program
            op.levels[(structure, first[0])] = level
        return out


def _signature(leaves: list, is_dynamic) -> tuple[tuple, list]:
    statics, dynamic = [], []
    for x in leaves:
        if is_dynamic(x):
            dynamic.append(x)
            statics.append(None)
        else:
            statics.append(static_key(x))
    return tuple(statics), dynamic


def _program(op: EagerOp, structure, leaves: list, is_dynamic) -> Callable:
    """A jitted function of the dynamic leaves that calls ``op.fn`` with the call's
    structure, its static leaves put back."""
    from .api import JittedFunction

    slots = [None if is_dynamic(x) else _static_value(x) for x in leaves]
    positions = [i for i, x in enumerate(leaves) if is_dynamic(x)]

    def program(*dynamic):
        filled = list(slots)
        for i, value in zip(positions, dynamic):
            filled[i] = value
        args, kwargs = _unflatten(structure, filled)
        out = op.fn(*args, **kwargs)
        return out if x64.enabled() else x64.narrow_results(out)

    program.__name__ = program.__qualname__ = op.name
    return JittedFunction(program)


def _static_value(x: Any) -> Any:
    return np.asarray(x) if isinstance(x, Array) else x


# ---- Array methods and operators -------------------------------------------------------

# Methods whose traced form is a function (a traced array's ``sort`` sorts in place, numpy's
# ndarray has no ``mT``), with numpy's function for the host route.
_METHOD_FUNCTIONS: dict[str, tuple[Callable, Callable]] = {
    "sort": (lambda x, *a, **k: _numpy().sort(x, *a, **k), _HOST_FUNCTIONS["sort"]),
    "argsort": (lambda x, *a, **k: _numpy().argsort(x, *a, **k), _HOST_FUNCTIONS["argsort"]),
    "trace": (lambda x, *a, **k: _numpy().trace(x, *a, **k), np.trace),
    "argpartition": (lambda x, *a, **k: _numpy().argpartition(x, *a, **k), None),
    "ptp": (lambda x, *a, **k: _numpy().ptp(x, *a, **k), np.ptp),
    "mT": (lambda x: _numpy().swapaxes(x, -1, -2), lambda x: np.swapaxes(x, -1, -2)),
}
_PROPERTIES = ("T", "mT", "real", "imag")


def _numpy():
    from . import numpy as anp  # installs the traced array's methods too

    return anp


_method_ops: dict[str, EagerOp] = {}


def _method_op(name: str) -> EagerOp:
    op = _method_ops.get(name)
    if op is None:
        _numpy()
        if name in _METHOD_FUNCTIONS:
            traced, host = _METHOD_FUNCTIONS[name]
        elif name == "astype (numeric)":
            traced = host = lambda x, *a, **k: x.astype(*a, **k)
        elif name in _PROPERTIES:
            traced = host = lambda x, _n=name: getattr(x, _n)
        else:
            traced = host = lambda x, *a, _n=name, **k: getattr(x, _n)(*a, **k)
        function = _OPERATOR_FUNCTIONS.get(name, name)
        kinds = (_METHOD_EXACT.get(name) or HOST_EXACT.get(function, "")
                 if name != "astype (numeric)" else "")
        op = EagerOp(traced, f"array_{name.strip('_').split()[0]}")
        if host is not None and function not in NOT_ON_HOST:
            op.host, op.host_kinds = host, kinds
            op.ufunc = _ufunc_name(function)
        _method_ops[name] = op
    return op


def array_method(name: str, x: Array, args: tuple, kwargs: dict) -> Any:
    """``x.<name>(*args, **kwargs)`` on a runtime Array (a method, an operator such as
    ``__add__`` or a property such as ``T``), as a traced array computes it."""
    if name == "at":
        return ArrayAt(x)
    if is_tracing():
        # An Array inside a traced function is a constant of it: compute with a tracer.
        from .core import current_trace

        return _method_op(name).fn(current_trace().constant(x.to_host()), *args, **kwargs)
    if not x64.enabled():  # JAX's dtypes: 64-bit operands and requested dtypes narrowed
        (x, *args), kwargs = x64.narrow_arguments(name.strip("_"), None, (x,) + tuple(args),
                                                  kwargs, _METHOD_DTYPE_POSITIONS.get(name, ()))
    if name == "astype" and not _astype_exact(x, *args, **kwargs):
        name = "astype (numeric)"
    return call(_method_op(name), (x,) + tuple(args), kwargs)


# Where methods take a dtype by position (counting x): x.astype(dtype), x.sum(axis, dtype).
_METHOD_DTYPE_POSITIONS = {"astype": (1,), "sum": (2,), "prod": (2,), "mean": (2,),
                           "cumsum": (2,), "cumprod": (2,), "var": (2,), "std": (2,)}


def _astype_exact(x: Array, dtype: Any = None, *args, **kwargs) -> bool:
    """Casts numpy makes exactly as the compiled code: all but float or complex to integer
    (undefined out of range) and complex to real (numpy warns and drops the imaginary
    part)."""
    try:
        to = np.dtype(dtype).kind
    except TypeError:
        return False
    return not (x.dtype.kind in "fc" and to in "biu") and not (x.dtype.kind == "c" and to == "f")


# Python operator methods -> the function whose host exactness they share.
_OPERATOR_FUNCTIONS = {
    "__add__": "add", "__radd__": "add", "__sub__": "subtract", "__rsub__": "subtract",
    "__mul__": "multiply", "__rmul__": "multiply", "__truediv__": "divide",
    "__rtruediv__": "divide", "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide",
    "__mod__": "remainder", "__rmod__": "remainder", "__and__": "bitwise_and",
    "__rand__": "bitwise_and", "__or__": "bitwise_or", "__ror__": "bitwise_or",
    "__xor__": "bitwise_xor", "__rxor__": "bitwise_xor", "__lshift__": "left_shift",
    "__rlshift__": "left_shift", "__rshift__": "right_shift", "__rrshift__": "right_shift",
    "__lt__": "less", "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal",
    "__eq__": "equal", "__ne__": "not_equal", "__neg__": "negative", "__pos__": "positive",
    "__abs__": "absolute", "__invert__": "invert", "__matmul__": "matmul",
    "__rmatmul__": "matmul",
}


class ArrayAt:
    """``array.at[index]`` on a runtime Array: JAX's functional updates, run eagerly."""

    __slots__ = ("array",)

    def __init__(self, array: Array):
        self.array = array

    def __getitem__(self, index) -> "ArrayAtRef":
        return ArrayAtRef(self.array, index)


class ArrayAtRef:
    __slots__ = ("array", "index")

    def __init__(self, array: Array, index):
        self.array, self.index = array, index

    def __getattr__(self, method: str):
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *args, **kwargs: call(_at_op(method), (self.array, self.index) + args,
                                            kwargs)


_at_ops: dict[str, EagerOp] = {}


def _at_op(method: str) -> EagerOp:
    op = _at_ops.get(method)
    if op is None:
        op = _at_ops[method] = EagerOp(
            lambda x, index, *a, _m=method, **k: getattr(x.at[index], _m)(*a, **k),
            f"array_at_{method}")
    return op


__all__ = ["HOST_EXACT", "call", "call_public", "array_method", "ArrayAt"]
