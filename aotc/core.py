"""Tracing: run a Python function on abstract arrays and record it as an MLIR function.

A ``Tracer`` stands for an array while a function is traced: it has a shape and a dtype
and holds the ``ir.Value`` that computes it. Operations on tracers (``aotc.numpy``, the
operator overloads) append MLIR ops to the function being built. There is no other IR:
the func.func built here is the program.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import dtypes
from ._mlir import func, ir
from .constants import dense_constant
from .errors import TracerConversionError, TracingError
from .runtime import tree

_AOTC_DIR = os.path.dirname(os.path.abspath(__file__))
# Frames that are not the user's: aotc's own, and contextlib's (aotc's `with` helpers).
_NOT_USER = (_AOTC_DIR, os.path.abspath(contextlib.__file__))


class _Shaped:
    """``ndim`` and ``size`` for anything with a ``shape``."""

    __slots__ = ()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass(frozen=True)
class ShapeDtypeStruct(_Shaped):
    """An abstract array: a shape and a dtype, no data. Pass it where arrays go to trace,
    lower or export a function without example data.

    >>> aotc.ShapeDtypeStruct((64, 784), "float32")
    ShapeDtypeStruct(shape=(64, 784), dtype=float32)
    """

    shape: tuple
    dtype: np.dtype

    def __init__(self, shape, dtype):
        if isinstance(shape, int):
            shape = (shape,)
        shape = tuple(shape)
        for d in shape:
            if not (d is None or isinstance(d, str)
                    or (isinstance(d, (int, np.integer)) and d >= 0)):
                raise TracingError(
                    f"ShapeDtypeStruct: expected dimensions that are non-negative ints, got "
                    f"shape {shape}"
                )
        object.__setattr__(self, "shape",
                           tuple(d if d is None or isinstance(d, str) else int(d) for d in shape))
        object.__setattr__(self, "dtype", dtypes.canonicalize(dtype, "ShapeDtypeStruct dtype"))


    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


def user_frame():
    """The innermost stack frame outside aotc: where the user's code asked for this."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_NOT_USER):
        frame = frame.f_back
    return frame


def user_location() -> ir.Location:
    frame = user_frame()
    if frame is None:
        return ir.Location.unknown()
    return ir.Location.file(frame.f_code.co_filename, frame.f_lineno, 0)


def traced_at_user_line(fn: Callable) -> Callable:
    """``fn`` building its MLIR ops at the location of the user's line that called it.

    Applied once per public function where names are exported (and to the operators and
    array methods), so every op a public call emits carries the user's file:line, and
    errors and IREE's diagnostics point there. Outside a trace it only calls ``fn``.
    """
    if getattr(fn, "_aotc_located", False):
        return fn

    @functools.wraps(fn)
    def located(*args, **kwargs):
        if not _stack():
            return fn(*args, **kwargs)
        with user_location():
            return fn(*args, **kwargs)

    located._aotc_located = True
    return located


class Trace:
    """One function being traced: its MLIR context, module, func.func and block."""

    def __init__(self, fn_name: str, module: ir.Module | None = None):
        self.fn_name = fn_name
        self.context = module.context if module is not None else ir.Context()
        self.module = module
        self.block: ir.Block | None = None
        self.work = 0.0  # estimated flops of one call, summed by the ops as they are emitted
        self.ops = 0.0  # ops one call runs (loop bodies counted per trip): work per op
        # (flops, has a constant operand) per contraction: decides data tiling.
        self.contractions: list[tuple[float, bool]] = []
        self._constants: dict[int, tuple[Any, "Tracer"]] = {}
        # Where new tracers are defined: the function body, or the innermost control-flow
        # region being traced. A region's values are usable only while its scope is open.
        self.scope = Scope(None)
        self._region_scopes: dict[ir.Block, Scope] = {}

    def constant(self, array: np.ndarray) -> "Tracer":
        """A numpy array as a constant of the traced function (deduplicated by identity)."""
        key = id(array)
        hit = self._constants.get(key)
        if hit is not None and hit[0] is array:
            return hit[1]
        value = np.asarray(array)
        tracer = Tracer(dense_constant(value), value.shape,
                        dtypes.canonicalize(value.dtype, "constant"))
        self._constants[key] = (array, tracer)  # keep the array alive so its id stays unique
        return tracer

    @contextlib.contextmanager
    def region(self, block: ir.Block):
        """Traces into ``block``, the body of a control-flow op (aotc.lax.cond, scan, ...).

        Constants made before the op dominate its regions and stay shared; constants made
        inside are defined only there, so they are forgotten when the region is left
        (code after the op, a sibling branch or a retrace after erasing the op must not
        use them). Values made inside belong to the block's scope (one per block: a block
        is visited again, e.g. to cast its outputs before the yield), open only while the
        block is traced: check_usable refuses them anywhere else.
        """
        outer, outer_scope = self._constants, self.scope
        self._constants = dict(outer)
        scope = self._region_scopes.get(block)
        if scope is None:
            frame = user_frame()
            where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame else None
            scope = self._region_scopes[block] = Scope(where)
        scope.open = True
        self.scope = scope
        try:
            with ir.InsertionPoint(block):
                yield
        finally:
            scope.open = False
            self.scope = outer_scope
            self._constants = outer


class Scope:
    """Where tracers are defined: a function body (``where`` None) or one control-flow
    region, ``where`` being the user's line that called the op (lax.cond, scan, ...)."""

    __slots__ = ("where", "open")

    def __init__(self, where: str | None):
        self.where = where
        self.open = True


def check_usable(x: "Tracer", where: str) -> None:
    """Raises unless ``x`` may be an operand here: it belongs to the function being traced
    and was not computed inside a control-flow region that has since been closed. The one
    check every operand path shares (trace time only: an identity test and a flag)."""
    trace = current_trace()
    if x.trace is trace and x.scope.open:
        return
    if x.trace is not trace:
        raise TracingError(
            f"{where}: this traced array belongs to another traced function "
            f"('{x.trace.fn_name}'): it leaked out (kept in a global or closure). Pass "
            f"it in as an argument instead"
        )
    at = f" (called at {x.scope.where})" if x.scope.where else ""
    raise TracingError(
        f"{where}: in function '{trace.fn_name}', the traced array {x.dtype.name}"
        f"{list(x.shape)} was computed inside a lax.cond/switch branch or a "
        f"while_loop/fori_loop/scan body{at} and cannot be used outside it (it was kept in a "
        f"Python variable, list or closure). Fix: return it from the body (a branch output, "
        f"part of the loop carry, or scan's ys) and use the op's result instead"
    )


_state = threading.local()


def _stack() -> list[Trace]:
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


def current_trace() -> Trace:
    stack = _stack()
    if not stack:
        raise TracingError(
            "aotc.numpy functions build compiled programs and run only inside a function "
            "traced by aotc.jit or aotc.export; call them from such a function, or use numpy "
            "for eager computation"
        )
    return stack[-1]


def is_tracing() -> bool:
    return bool(_stack())


class Tracer(_Shaped):
    """An array inside a traced function: shape and dtype known, value computed later.

    Its operators, indexing and ndarray methods are installed by the numpy layer
    (``aotc/array_methods.py``), which this module does not import.
    """

    __slots__ = ("value", "shape", "dtype", "trace", "weak", "scope")
    # numpy binary operators defer to ours (ndarray + Tracer -> Tracer.__radd__).
    __array_priority__ = 1000

    def __init__(self, value: ir.Value, shape: Sequence[int], dtype: np.dtype,
                 trace: Trace | None = None, weak: bool = False):
        self.value = value
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.trace = trace if trace is not None else current_trace()
        self.scope = self.trace.scope
        # A Python scalar passed as an argument: like the scalar itself, it takes the dtype
        # of the arrays it meets (numpy's weak scalar rule) instead of forcing float64.
        self.weak = weak

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        return f"Tracer({self.dtype.name}[{','.join(map(str, self.shape))}])"

    # ---- conversions that need a value: not available while tracing --------------------
    def _no_value(self, what: str):
        frame = user_frame()
        where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame else "<unknown>"
        raise TracerConversionError(
            f"{what} was asked of a traced array {self.dtype.name}{list(self.shape)} in "
            f"function '{self.trace.fn_name}' at {where}: while tracing, arrays have a shape "
            f"and dtype but no value. Fix: pass this value as a static argument "
            f"(aotc.jit(f, static_argnums=...) or static_argnames=...), or express the "
            f"choice with array operations such as aotc.numpy.where (structured control "
            f"flow, aotc.lax.cond/while_loop, covers loops and branches)."
        )

    def __bool__(self):
        self._no_value("bool() (a Python `if`, `while`, `and`, `or` or `not`)")

    def __int__(self):
        self._no_value("int()")

    def __float__(self):
        self._no_value("float()")

    def __complex__(self):
        self._no_value("complex()")

    def __index__(self):
        self._no_value("an integer index (__index__)")

    def tolist(self):
        self._no_value("tolist()")

    def item(self):
        self._no_value("item()")

    __hash__ = object.__hash__


# ---- tracing a whole function ------------------------------------------------------------

@dataclass
class TracedFunction:
    """The result of tracing: an MLIR module holding one public func.func."""

    trace: Trace
    module: ir.Module
    func_op: Any
    in_avals: list[ShapeDtypeStruct]
    out_avals: list[ShapeDtypeStruct]
    out_tree: tree.TreeDef


def trace_function(
    fn: Callable,
    name: str,
    args_tree: tree.TreeDef,
    in_avals: Sequence[ShapeDtypeStruct],
    rebuild_args: Callable[[list], tuple[tuple, dict]],
    trace: Trace | None = None,
) -> TracedFunction:
    """Traces ``fn`` into ``func.func @name``.

    ``in_avals`` are the flat abstract leaves; ``rebuild_args(leaf_tracers)`` returns the
    ``(args, kwargs)`` to call ``fn`` with (static arguments put back in place).
    """
    trace = trace or Trace(getattr(fn, "__name__", name))
    with trace.context, _definition_location(fn):
        if trace.module is None:
            trace.module = ir.Module.create()
        arg_types = [dtypes.tensor_type(a.shape, a.dtype) for a in in_avals]
        with ir.InsertionPoint(trace.module.body):
            func_op = func.FuncOp(name, (arg_types, []))
            func_op.attributes["sym_visibility"] = ir.StringAttr.get("public")
        trace.block = func_op.add_entry_block()
        _stack().append(trace)
        try:
            with ir.InsertionPoint(trace.block):
                tracers = [
                    Tracer(v, a.shape, a.dtype, trace, weak=getattr(a, "weak", False))
                    for v, a in zip(trace.block.arguments, in_avals)
                ]
                args, kwargs = rebuild_args(tracers)
                out = fn(*args, **kwargs)
                out_leaves, out_tree = tree.flatten(out)
                out_tracers = [_as_output(leaf, i, trace) for i, leaf in enumerate(out_leaves)]
                func.ReturnOp([t.value for t in out_tracers])
        finally:
            _stack().pop()
        func_op.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(arg_types, [t.value.type for t in out_tracers])
        )
    out_avals = [ShapeDtypeStruct(t.shape, t.dtype) for t in out_tracers]
    return TracedFunction(trace, trace.module, func_op, list(in_avals), out_avals, out_tree)


def _definition_location(fn: Callable) -> ir.Location:
    """Where ``fn`` is defined: the location of its func.func and of what it emits
    outside aotc's public functions (its arguments, its return)."""
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    if code is None:
        return ir.Location.unknown()
    return ir.Location.file(code.co_filename, code.co_firstlineno, 0)


def _as_output(leaf: Any, index: int, trace: Trace) -> Tracer:
    if isinstance(leaf, Tracer):
        check_usable(leaf, f"output {index} of '{trace.fn_name}'")
        return leaf
    if isinstance(leaf, (np.ndarray, np.generic, bool, int, float)):
        return trace.constant(np.asarray(leaf))
    raise TracingError(
        f"output {index} of '{trace.fn_name}': expected arrays (or tuples, lists, dicts and "
        f"None of arrays), got {type(leaf).__name__}"
    )
