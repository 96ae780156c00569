"""The ``x64`` option: numpy's dtypes (on, the default) or JAX's with x64 disabled (off).

aotc follows numpy: float64 and int64 defaults, numpy 2's promotion. JAX, by default
(``jax_enable_x64`` off), computes in 32 bits. With ``aotc.config.update("x64", False)``
(or ``AOTC_X64=0``) aotc follows JAX instead, so that JAX programs give JAX's dtypes:

- **Defaults**: Python scalars are weak int32, float32 and complex64 (``x_f16 * 2.0`` stays
  float16); creation functions without a dtype make int32 and float32 arrays; reductions,
  means, true division and indices (``argmax``, ``argsort``, ``nonzero``, ...) give
  32-bit results (``sum`` of int8 is int32, as JAX's).
- **64-bit inputs** become their 32-bit counterparts (``narrow``): numpy arrays and scalars
  handed to a public function or to a jitted one, constants a function returns. An
  explicitly requested 64-bit dtype (``zeros(3, np.float64)``, ``astype(np.int64)``) is
  narrowed with JAX's UserWarning (``requested``); numpy's float64 arrays as arguments
  are converted silently, as JAX converts them.
- **Promotion** is JAX's lattice (``promote``; https://jax.readthedocs.io/en/latest/
  type_promotion.html): ``int32 + float16`` is float16, ``uint32 + int32`` int32, ``bool +
  1`` a weak int32, and results keep JAX's weak flag (``x_i8 * 2.0`` is a weak float32).
  numpy stays the oracle for each ufunc's own rule (comparisons give bool, ``floor`` of an
  integer stays an integer): it is asked for the loop of the operands' JAX-promoted dtype
  (``ufunc_loop``), and a float loop numpy picks for integers is JAX's default float.
- **No 64-bit result** leaves a public function: where an op decides by numpy's rules
  (its index dtypes, its float64 intermediates), the result is narrowed at the boundary
  between the user's code and aotc (``narrow_arguments``/``narrow_results``, called by
  ``core.traced_at_user_line``). aotc's own code between public functions is untouched.

A 64-bit value made inside aotc keeps its width in promotion (as JAX keeps an x64 value):
the lattice forms no 64-bit type from narrower inputs, and nothing else needs it.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
import warnings
from typing import Any, Callable

import numpy as np

from . import config

_DT = np.dtype
NARROW: dict[np.dtype, np.dtype] = {
    _DT("float64"): _DT("float32"), _DT("int64"): _DT("int32"),
    _DT("uint64"): _DT("uint32"), _DT("complex128"): _DT("complex64"),
}
# The dtypes of weak Python scalars (bool is never weak, in JAX as in numpy 2).
DEFAULTS: dict[type, np.dtype] = {bool: _DT("bool"), int: _DT("int32"), float: _DT("float32"),
                                  complex: _DT("complex64")}
_X64_DEFAULTS: dict[type, np.dtype] = {bool: _DT("bool"), int: _DT("int64"),
                                       float: _DT("float64"), complex: _DT("complex128")}


def enabled() -> bool:
    """``aotc.config.x64``: numpy's dtypes (True) or JAX's with x64 disabled (False)."""
    return config.cached("x64")


def narrow(dtype) -> np.dtype:
    """The 32-bit counterpart of a 64-bit dtype (float64 -> float32); others unchanged."""
    dtype = np.dtype(dtype)
    return NARROW.get(dtype, dtype)


def python_dtype(kind: type) -> np.dtype:
    """The dtype of a Python scalar of type ``kind`` (bool, int, float, complex)."""
    return (_X64_DEFAULTS if enabled() else DEFAULTS)[kind]


def default_float() -> np.dtype:
    return python_dtype(float)


# ---- JAX's promotion lattice, x64 disabled ---------------------------------------------

# Each type and the types immediately above it (jax/_src/dtypes.py, the standard lattice
# with x64 off: uint32 promotes with int32 to int32). "i*", "f*", "c*" are the weak types
# of Python ints, floats and complexes. (bfloat16 and the 8-bit floats are not aotc's.)
_LATTICE: dict[str, tuple[str, ...]] = {
    "bool": ("i*",), "i*": ("uint8", "int8"), "uint8": ("int16", "uint16"),
    "uint16": ("int32", "uint32"), "uint32": ("int32", "uint64"), "uint64": ("f*",),
    "int8": ("int16",), "int16": ("int32",), "int32": ("int64",), "int64": ("f*",),
    "f*": ("float16", "c*"), "float16": ("float32",), "float32": ("float64", "complex64"),
    "float64": ("complex128",), "c*": ("complex64",), "complex64": ("complex128",),
    "complex128": (),
}
_WEAK_KINDS = {"i*": int, "f*": float, "c*": complex}


_NODES = {np.dtype(n): n for n in _LATTICE if not n.endswith("*")}


def _node(t) -> str:
    """A lattice node: a dtype's name, or the weak type of a Python type (compared by
    identity: ``np.dtype("float64") == float`` is True)."""
    if t is int:
        return "i*"
    if t is float:
        return "f*"
    if t is complex:
        return "c*"
    node = _NODES.get(t) if isinstance(t, np.dtype) else None
    return node if node is not None else np.dtype(t).name


def _upper_bounds() -> dict[str, frozenset]:
    bounds = {node: {node} for node in _LATTICE}
    changed = True
    while changed:
        changed = False
        for node, above in bounds.items():
            grown = above.union(*(_LATTICE[b] for b in above))
            if grown != above:
                bounds[node], changed = grown, True
    return {node: frozenset(above) for node, above in bounds.items()}


_UPPER = _upper_bounds()


def _least_upper_bound(nodes: set) -> str:
    common = frozenset.intersection(*(_UPPER[n] for n in nodes))
    least = (common & nodes) or {c for c in common if common <= _UPPER[c]}
    if len(least) != 1:
        raise TypeError(f"no promotion between {', '.join(sorted(nodes))}")
    return next(iter(least))


def promote(*types) -> tuple[np.dtype, bool]:
    """JAX's result dtype of operands of ``types`` (numpy dtypes, or the Python types
    ``int``/``float``/``complex`` for weak values), and whether it is weak.

    >>> promote(np.dtype("int32"), np.dtype("float16"))
    (dtype('float16'), False)
    >>> promote(np.dtype("int8"), float), promote(np.dtype("bool"), int)
    ((dtype('float32'), True), (dtype('int32'), True))
    >>> promote(np.dtype("uint32"), np.dtype("int32"))
    (dtype('int32'), False)
    """
    return _promote(tuple(_node(t) for t in types))


@functools.lru_cache(maxsize=4096)
def _promote(nodes: tuple[str, ...]) -> tuple[np.dtype, bool]:
    if all(n in _WEAK_KINDS for n in nodes):
        # Only weak operands: the bound of their dtypes, weak (JAX's rule).
        strong = {DEFAULTS[_WEAK_KINDS[n]].name for n in nodes}
        return np.dtype(_least_upper_bound(strong)), True
    bound = _least_upper_bound(set(nodes))
    kind = _WEAK_KINDS.get(bound)
    if kind is not None:
        return DEFAULTS[kind], True
    return np.dtype(bound), False


def result_type(*types) -> np.dtype:
    return promote(*types)[0]


# ---- ufunc loops: numpy's rule for each ufunc, on JAX-promoted operands ------------------

# ufuncs whose operands have different roles (a float and its integer exponent): JAX does
# not promote them together; each keeps its own dtype, Python scalars their default one.
_OWN_DTYPES = frozenset(("ldexp",))
# ufuncs JAX computes in the promoted inexact dtype (integers in the default float) where
# numpy has an integer loop (reciprocal) or computes in float64 (float_power).
_INEXACT = frozenset(("reciprocal", "float_power"))
# ufuncs whose results are never weak in JAX.
_NEVER_WEAK = frozenset(("log2", "log10", "spacing"))


def ufunc_loop(name: str, operand_types: tuple) -> tuple[tuple[np.dtype, ...], bool]:
    """The loop dtypes ``(inputs..., outputs...)`` of numpy ufunc ``name`` with x64
    disabled, and whether its result is weak. ``operand_types`` as ``promote`` takes them.

    numpy is asked for its loop for the operands promoted to JAX's dtype; where it
    computes an integer or bool operation in a float loop (``sqrt``, ``true_divide``,
    ``arctan2``), the loop is JAX's default float's, and where it computes bools in an
    integer loop (``bool ** bool``, shifts), JAX's default int's. A 64-bit loop dtype
    numpy picks for narrower operands is narrowed.

    >>> ufunc_loop("true_divide", (np.dtype("int8"), np.dtype("int8")))
    ((dtype('float32'), dtype('float32'), dtype('float32')), False)
    >>> ufunc_loop("add", (np.dtype("int32"), np.dtype("float16")))
    ((dtype('float16'), dtype('float16'), dtype('float16')), False)
    """
    return _ufunc_loop(name, tuple(_node(t) for t in operand_types))


@functools.lru_cache(maxsize=None)
def _ufunc_loop(name: str, nodes: tuple[str, ...]) -> tuple[tuple[np.dtype, ...], bool]:
    ufunc = getattr(np, name)
    wide = any(n not in _WEAK_KINDS and np.dtype(n) in NARROW for n in nodes)
    if name in _OWN_DTYPES:
        inputs = tuple(DEFAULTS[_WEAK_KINDS[n]] if n in _WEAK_KINDS else np.dtype(n)
                       for n in nodes)
        weak = False
    else:
        promoted, weak = _promote(nodes)
        inputs = (promoted,) * len(nodes)
    if name in _INEXACT:
        inexact = inputs[0] if inputs[0].kind in "fc" else DEFAULTS[float]
        loop = (inexact,) * (len(nodes) + ufunc.nout)
    else:
        loop = _numpy_loop(ufunc, inputs)
    if not wide:
        if inputs[0].kind in "biu" and any(d.kind in "fc" for d in loop):
            loop = _numpy_loop(ufunc, (DEFAULTS[float],) * len(inputs))
        elif inputs[0].kind == "b" and loop[0].kind in "iu":
            loop = _numpy_loop(ufunc, (DEFAULTS[int],) * len(inputs))
        loop = tuple(narrow(d) for d in loop)
    if name == "power":  # JAX's: weak for weak operands alone, or a weak inexact exponent
        weak = all(n in _WEAK_KINDS for n in nodes) or (
            weak and (nodes[1] in _WEAK_KINDS or nodes[1] == "bool") and loop[2].kind in "fc")
    elif name in _NEVER_WEAK or (name == "rint" and nodes[0] == "i*"):
        weak = False
    return loop, weak and loop[len(nodes)].kind != "b"


def _numpy_loop(ufunc: np.ufunc, inputs: tuple) -> tuple[np.dtype, ...]:
    return tuple(np.dtype(d) for d in ufunc.resolve_dtypes(inputs + (None,) * ufunc.nout))


# ---- explicitly requested dtypes --------------------------------------------------------

_REQUEST_TEXT = (
    "Explicitly requested dtype {}{} is not available, and will be "
    "truncated to dtype {}. To enable more dtypes, set the jax_enable_x64 configuration "
    "option or the JAX_ENABLE_X64 shell environment variable. See "
    "https://github.com/jax-ml/jax#current-gotchas for more.")


def requested(dtype: Any, where: str) -> Any:
    """A dtype the user asked function ``where`` for, as JAX takes it with x64 disabled:
    Python's ``float``/``int``/``complex`` are the default dtypes, a 64-bit dtype is
    narrowed with JAX's UserWarning, word for word (its text names JAX's options, as
    JAX programs know them; ``where`` empty leaves out "requested in", as jax.random's
    do); anything else (None, a dtype that is no 64-bit one, a value that is no dtype) is
    returned as it is."""
    if dtype is int or dtype is float or dtype is complex:
        return DEFAULTS[dtype]
    if not isinstance(dtype, (str, type, np.dtype)):
        return dtype
    try:
        dt = np.dtype(dtype) if dtype is not None else None
    except TypeError:
        return dtype
    if dt is None or dt not in NARROW:
        return dtype
    warnings.warn(_REQUEST_TEXT.format(dt.name, f" requested in {where}" if where else "",
                                       NARROW[dt].name), UserWarning,
                  stacklevel=_user_stacklevel())
    return NARROW[dt]


_AOTC_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_stacklevel() -> int:
    """The ``stacklevel`` of a warning that points at the user's line."""
    frame, level = sys._getframe(1), 1
    while frame is not None and _in_aotc(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


_inside: dict[str, bool] = {}  # file name -> in aotc's directory
_forwarding: dict[str, bool] = {}  # file name -> one of _FORWARDERS


def _in_aotc(filename: str) -> bool:
    inside = _inside.get(filename)
    if inside is None:
        from . import runtime  # (its own folder: the runtime Arrays' methods)

        inside = _inside[filename] = os.path.abspath(filename).startswith(
            (_AOTC_DIR, os.path.dirname(os.path.abspath(runtime.__file__))))
    return inside


# Modules that run the user's call, not aotc's own: operators and methods of traced
# arrays, numpy's dispatch to aotc.numpy, the scalar types' constructors.
_FORWARDERS = frozenset(os.path.join(_AOTC_DIR, f) for f in (
    "array_methods.py", "numpy_dispatch.py", "scalar_types.py", "core.py"))


def _forwards(filename: str) -> bool:
    forwards = _forwarding.get(filename)
    if forwards is None:
        forwards = _forwarding[filename] = os.path.abspath(filename) in _FORWARDERS
    return forwards


def from_user(frame) -> bool:
    """Whether the frame calling a public function is the user's code (through the
    operators, methods and numpy's dispatch), not aotc's own."""
    while frame is not None and _forwards(frame.f_code.co_filename):
        frame = frame.f_back
    return frame is None or not _in_aotc(frame.f_code.co_filename)


# ---- the boundary: arguments in, results out ---------------------------------------------

# Parameters that take a dtype, by name.
DTYPE_PARAMETERS = frozenset(("dtype", "new_dtype", "preferred_element_type"))


@functools.lru_cache(maxsize=None)
def _dtype_positions(fn: Callable) -> tuple[int, ...]:
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    return tuple(i for i, p in enumerate(parameters) if p.name in DTYPE_PARAMETERS
                 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _is_dtype_object(x: Any) -> bool:
    return isinstance(x, np.dtype) or x is int or x is float or x is complex or (
        isinstance(x, type) and (issubclass(x, np.generic)  # or aotc.numpy's scalar types
                                 or isinstance(getattr(x, "dtype", None), np.dtype)))


_PLAIN = frozenset((int, float, bool, type(None), slice))  # never narrowed


def _narrow_value(x: Any, name: str | None, at_dtype: bool) -> Any:
    kind = type(x)
    if kind in _PLAIN and not at_dtype:
        return x
    if kind is _runtime_array():
        return x.to_host().astype(NARROW[x.dtype]) if x.dtype in NARROW else x
    if kind is np.ndarray or isinstance(x, np.generic):
        wide = NARROW.get(x.dtype)
        return x if wide is None else x.astype(wide)
    if kind is list or kind is tuple:
        items = [_narrow_value(v, name, False) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else kind(items)
    if name is not None and (at_dtype or _is_dtype_object(x)):
        return requested(x, name)
    return x


_array_type: list[type] = []


def _runtime_array() -> type:
    if not _array_type:
        from .runtime.array import Array

        _array_type.append(Array)
    return _array_type[0]


def narrow_arguments(name: str | None, fn: Callable | None, args: tuple, kwargs: dict,
                     dtype_positions: tuple[int, ...] | None = None) -> tuple[tuple, dict]:
    """A call's arguments with x64 disabled: 64-bit numpy arrays, scalars and runtime
    Arrays (in lists and tuples too) narrowed, and requested dtypes taken as
    ``requested`` does (the warning names the function ``name``; None leaves dtypes to
    the public function an operator or method calls). Returns the same objects when
    nothing changes."""
    positions = (dtype_positions if dtype_positions is not None
                 else _dtype_positions(fn) if fn is not None and name is not None else ())
    array_type = _runtime_array()
    new_args = None
    for i, a in enumerate(args):
        kind = type(a)
        if (kind in _PLAIN or kind is array_type and a.dtype not in NARROW) and (
                i not in positions):
            continue  # the common arguments, at a glance
        b = _narrow_value(a, name, i in positions)
        if b is not a:
            if new_args is None:
                new_args = list(args)
            new_args[i] = b
    if new_args is not None:
        args = tuple(new_args)
    if kwargs:
        new_kwargs = {k: _narrow_value(v, name, k in DTYPE_PARAMETERS)
                      for k, v in kwargs.items()}
        if any(new_kwargs[k] is not v for k, v in kwargs.items()):
            kwargs = new_kwargs
    return args, kwargs


def _late(module: str):
    """The tracer and its casts sit above this module (they ask it for dtypes): bound
    late, by name, as docs/architecture.md's "Layers without circles" says."""
    return importlib.import_module(module)


def narrow_results(out: Any) -> Any:
    """Traced arrays of 64-bit dtypes among a public function's results, narrowed
    (constants stay constants). Anything else is returned as it is."""
    Tracer = _late("aotc.core").Tracer

    if isinstance(out, Tracer):
        return _narrow_tracer(out) if out.dtype in NARROW else out
    if isinstance(out, (tuple, list)):
        items = [narrow_results(v) for v in out]
        if all(a is b for a, b in zip(items, out)):
            return out
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    return out


def _narrow_tracer(t):
    trace = _late("aotc.core").current_trace()
    to = NARROW[t.dtype]
    array = trace.constant_value(t)
    if array is not None:
        out = trace.constant(np.asarray(array).astype(to))
    else:
        out = _late("aotc.ops.elementwise").astype(t, to)
    out.weak = t.weak
    return out


# ---- eager calls on the host (aotc/eager.py's first route) -------------------------------

_PYTHON_TYPES = (int, float, complex)
# numpy accumulates integers in int64 where JAX keeps their dtype.
_KEEPS_INTEGERS = frozenset(("cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
                             "nancumsum", "nancumprod"))


_PYTHON_NODES = {bool: "bool", int: "i*", float: "f*", complex: "c*"}


def _host_node(leaf: Any) -> str | None:
    node = _PYTHON_NODES.get(type(leaf))
    if node is None and isinstance(leaf, (np.ndarray, np.generic)):
        node = _NODES.get(leaf.dtype)
    return node


def host_operands(ufunc: str | None, leaves: list) -> tuple[list, Any] | None:
    """With x64 off, the leaves numpy computes an eager call with on the host, and what
    ``host_result`` needs; None where numpy cannot compute it as JAX does.

    A ufunc's arrays are cast to the loop dtypes of ``ufunc_loop``, so numpy computes in
    JAX's dtype (``int32 + float16`` in float16). For other functions numpy's result is
    taken when its dtypes are ones JAX could give (``host_result``)."""
    if ufunc is None:
        return leaves, None
    nodes = tuple(map(_host_node, leaves))
    try:
        loop, _ = _ufunc_loop(ufunc, nodes)
    except (TypeError, ValueError, KeyError):  # no ufunc operands, or no loop for them
        return None
    if len(loop) != len(leaves) + getattr(np, ufunc).nout:
        return None
    cast = [x.astype(dt) if isinstance(x, (np.ndarray, np.generic)) and x.dtype != dt else x
            for x, dt in zip(leaves, loop)]
    return cast, loop[len(leaves):]


def host_result(name: str, out: Any, leaves: list, outputs) -> Any:
    """numpy's result of eager call ``name`` ("numpy_sum", "array_sum") narrowed to JAX's
    dtypes (``outputs``: the ufunc's loop output dtypes from ``host_operands``), or
    NotImplemented where its dtypes are not ones JAX gives for these operands (``int32``
    and ``float16`` concatenated: numpy's float64 is JAX's float16): the call is then
    compiled."""
    if outputs is not None:
        if len(outputs) == 1:
            if type(out) is np.ndarray and out.dtype == outputs[0]:
                return out
            return np.asarray(out).astype(outputs[0], copy=False)
        return tuple(np.asarray(o).astype(d, copy=False) for o, d in zip(out, outputs))
    results = _result_dtypes(out)
    if not results:
        return out  # no array (a shape, a Python number)
    arrays = {x.dtype for x in leaves if isinstance(x, (np.ndarray, np.generic))}
    if results <= arrays and not results & NARROW.keys():
        return out  # the operands' dtypes (shape and data movement, indexing, max)
    if (len(arrays) == 1 and name.split("_", 1)[1] in _KEEPS_INTEGERS
            and next(iter(arrays)).kind in "iu" and not any(map(_is_dtype_object, leaves))):
        return np.asarray(out).astype(next(iter(arrays)))
    weak = {type(x) for x in leaves if type(x) in _PYTHON_TYPES}
    accepted = set(arrays) | {np.dtype(np.bool_), DEFAULTS[int]}
    accepted |= {narrow(x) for x in leaves if _is_dtype_object(x)}
    if arrays or weak:
        accepted.add(promote(*arrays, *weak)[0])
    if not any(d.kind in "fc" for d in arrays):
        accepted.add(DEFAULTS[float])
    if arrays and all(d.kind in "bu" for d in arrays):
        accepted.add(np.dtype(np.uint32))
    return _narrowed_if(out, accepted)


def _result_dtypes(out: Any) -> set:
    """The dtypes of the arrays in a host result (a dtype object counts as one)."""
    if isinstance(out, (np.ndarray, np.generic)):
        return {out.dtype}
    if isinstance(out, np.dtype):
        return {out}
    if isinstance(out, (tuple, list)):
        return set().union(*map(_result_dtypes, out)) if out else set()
    return set()


def _narrowed_if(out: Any, accepted: set) -> Any:
    if isinstance(out, np.dtype):  # numpy's result_type: aotc's own answers
        return NotImplemented
    if isinstance(out, (np.ndarray, np.generic)):
        dtype = narrow(out.dtype)
        if out.dtype.kind not in "biufc":
            return out
        if dtype not in accepted:
            return NotImplemented
        return out if dtype == out.dtype else out.astype(dtype)
    if isinstance(out, (tuple, list)):
        items = [_narrowed_if(o, accepted) for o in out]
        if any(o is NotImplemented for o in items):
            return NotImplemented
        if all(a is b for a, b in zip(items, out)):
            return out
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    return out
