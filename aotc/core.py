"""Tracing: run a Python function on abstract arrays and record it as an MLIR function.

A ``Tracer`` stands for an array while a function is traced: it has a shape and a dtype
and holds the ``ir.Value`` that computes it. Operations on tracers (``aotc.numpy``, the
operator overloads) append MLIR ops to the function being built. There is no other IR:
the func.func built here is the program.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import dtypes, x64
from ._mlir import func, ir
from .constants import dense_constant
from .errors import (NotTracingError, TracedValueStoredError, TracingError,
                     stored_into_numpy_array, stores_into_numpy_array, value_while_tracing)
from .work import Work
from . import tree_util

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


@functools.lru_cache(maxsize=4096)
def _in_aotc(filename: str) -> bool:
    # Cached per file name: every op a trace emits asks, through frames 40 deep.
    return os.path.abspath(filename).startswith(_NOT_USER)


def user_frame():
    """The innermost stack frame outside aotc: where the user's code asked for this."""
    frame = sys._getframe(1)
    while frame is not None and _in_aotc(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def user_location() -> ir.Location:
    frame = user_frame()
    if frame is None:
        return ir.Location.unknown()
    return ir.Location.file(frame.f_code.co_filename, frame.f_lineno, 0)


def traced_at_user_line(fn: Callable, public: tuple[str, str] | None = None) -> Callable:
    """``fn`` building its MLIR ops at the location of the user's line that called it.

    Applied once per public function where names are exported (and to the operators and
    array methods), so every op a public call emits carries the user's file:line, and
    errors and IREE's diagnostics point there. Outside a trace a public function
    (``public``: its namespace and name) runs eagerly; anything else calls ``fn``.
    """
    if getattr(fn, "_aotc_located", False):
        return fn

    @functools.wraps(fn)
    def located(*args, **kwargs):
        # With the option x64 off, a call from the user's code takes JAX's dtypes: its
        # 64-bit arguments and requested dtypes narrowed, and its results (aotc/x64.py;
        # jax.random's warnings name no function).
        narrow = not x64.enabled() and x64.from_user(sys._getframe(1))
        if narrow:
            name = None if public is None else "" if public[0] == "random" else public[1]
            args, kwargs = x64.narrow_arguments(name, fn, args, kwargs)
        if not _state.stack:
            if public is not None:
                return _run_eagerly(fn, public, args, kwargs)
            return fn(*args, **kwargs)
        with user_location():
            out = fn(*args, **kwargs)
            return x64.narrow_results(out) if narrow else out

    located._aotc_located = True
    return located


def make_public(namespace: str, scope: dict, names) -> None:
    """Wraps the functions ``names`` of a module's ``scope`` as aotc/namespaces.py wraps
    the ops modules' exports (for namespaces defined in one module: aotc.random)."""
    for name in names:
        scope[name] = traced_at_user_line(scope[name], (namespace, name))


_eager = None


def _run_eagerly(fn: Callable, public: tuple[str, str], args: tuple, kwargs: dict):
    global _eager
    if _eager is None:
        # aotc.eager compiles with aotc.api, which builds on the namespaces this serves:
        # it is bound late, by name, the first time a public function runs eagerly.
        _eager = importlib.import_module("aotc.eager")
    return _eager.call_public(fn, public, args, kwargs)


class Trace:
    """One function being traced: its MLIR context, module, func.func and block."""

    def __init__(self, fn_name: str, module: ir.Module | None = None):
        self.fn_name = fn_name
        self.context = module.context if module is not None else ir.Context()
        self.module = module
        self.block: ir.Block | None = None
        # Whether factorizations may use one-dispatch sequential kernels (CPU targets only).
        self.sequential_kernels = True
        self.work = Work()  # estimated work of one call, summed by the ops as they are emitted
        self.ops = 0.0  # ops one call runs (loop bodies counted per trip): work per op
        self.custom_work, self.rule_work, self.rule_ops = Work(), Work(), 0.0  # work.py
        self.transposing_tangents = False  # a custom_jvp rule's tangent map (work.py)
        # The contractions emitted (targets.Contraction): they decide data tiling.
        self.contractions: list = []
        # (factorization, scope, matrix value, arguments) -> results (once_per_scope)
        self.factorizations: dict = {}
        self.residual_bytes = 0  # forward values derivatives keep for their backward pass
        self.has_adjoints = False  # holds reverse-mode derivatives (build.ADJOINT_FLAGS)
        self._constants: dict[int, tuple[Any, "Tracer"]] = {}
        # id(tracer) -> (tracer, value) of every constant (the tracer kept: ids stay unique)
        self._constant_values: dict[int, tuple["Tracer", np.ndarray]] = {}
        # Where new tracers are defined: the function body, or the innermost control-flow
        # region being traced. A region's values are usable only while its scope is open.
        self.scope = Scope(None)
        self._region_scopes: dict[ir.Block, Scope] = {}
        # Python scalar arguments (weakly typed): block argument -> leaf index, and the
        # narrower dtypes ops cast each to. numpy refuses a Python int out of such a
        # dtype's range (and warns for a float that overflows it); the runtime checks the
        # value at each call (metadata ``weak_casts``).
        self.weak_arguments: dict[ir.Value, int] = {}
        self.weak_casts: dict[int, set[np.dtype]] = {}
        # A transformation's function (vmap, grad) may read its caller's traced arrays
        # (``grad(lambda p: loss(p, x))``): extra arguments (``captures``, ``capture``).
        self.allows_captures = False
        self.parent: Trace | None = None
        self.entry: ir.Block | None = None
        self.captures: list[tuple["Tracer", "Tracer"]] = []
        self.differentiates = False  # a vjp's function: custom derivatives keep their rules
        self._function_scope = self.scope

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
        self._constant_values[id(tracer)] = (tracer, value)
        return tracer

    def capture(self, outer: "Tracer") -> "Tracer | None":
        """``outer``, a traced array of an enclosing function, as an argument of this one
        (through every function in between); None where a function in between cannot
        take captures (it is not a transformation's)."""
        if not self.allows_captures or self.parent is None:
            return None
        if outer._trace is not self.parent:
            outer = self.parent.capture(outer)
            if outer is None:
                return None
        for known, inner in self.captures:
            if known is outer:
                return inner
        argument = self.entry.add_argument(outer.value.type, ir.Location.unknown())
        inner = Tracer(argument, outer.shape, outer.dtype, self, weak=outer.weak)
        inner.scope = self._function_scope  # an argument: usable anywhere in the function
        self.captures.append((outer, inner))
        return inner

    def note_weak_cast(self, tracer: "Tracer", dtype: np.dtype) -> None:
        """An op computes the weak ``tracer`` in ``dtype``: if it is a Python scalar
        argument and ``dtype`` cannot hold every value of its own dtype, its values are
        checked against ``dtype`` at each call."""
        index = self.weak_arguments.get(tracer.value)
        if index is not None and dtypes.narrows(tracer.dtype, dtype):
            self.weak_casts.setdefault(index, set()).add(np.dtype(dtype))

    def constant_value(self, tracer: "Tracer") -> np.ndarray | None:
        """The value of a tracer ``constant`` made and nothing wrote into since (None for
        any other)."""
        hit = self._constant_values.get(id(tracer))
        if hit is None or hit[0] is not tracer or tracer.version or tracer.view_of is not None:
            return None
        return hit[1]

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


def check_usable(x: "Tracer", where: str) -> "Tracer":
    """``x`` as an operand here, or an error: it belongs to the function being traced and
    was not computed inside a control-flow region that has since been closed. A traced
    array of an enclosing function read by a transformation's function (a closure) is
    captured as an argument of that function (``Trace.capture``). The one check every
    operand path shares (trace time only: an identity test and a flag)."""
    trace = current_trace()
    if x._trace is trace and x.scope.open:
        return x
    if x._trace is not trace and x.scope.open and x._trace in _state.stack:
        inner = trace.capture(x)
        if inner is not None:
            return inner
    if x._trace is not trace:
        raise TracingError(
            f"{where}: this traced array belongs to another traced function "
            f"('{x._trace.fn_name}'): it leaked out (kept in a global or closure). Pass "
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


class _TraceState(threading.local):
    def __init__(self) -> None:
        self.stack: list[Trace] = []  # this thread's open traces, innermost last


_state = _TraceState()


def current_trace() -> Trace:
    stack = _state.stack
    if not stack:
        raise NotTracingError(
            "this operation builds compiled code and runs only inside a function traced by "
            "aotc.jit or aotc.export (aotc's public functions run eagerly outside one)"
        )
    return stack[-1]


def is_tracing() -> bool:
    return bool(_state.stack)


def differentiating() -> bool:
    """Whether a trace on the stack is a derivative's function (``Trace.differentiates``):
    custom derivatives keep their rules there, and ops without a derivative rule take a
    form that has one."""
    return any(t.differentiates for t in _state.stack)


@dataclass(eq=False)
class View:
    """How a view (numpy's basic indexing, transposes, reshapes) reads its base and writes
    a new value back into it: ``read(base)`` is the view's value, ``write(base, new)`` the
    base's value with the view replaced by ``new`` (None: read-only, as numpy's
    ``broadcast_to``). ``seen`` is the root's write count the view was last read at."""

    base: "Tracer"
    read: Callable[["Tracer"], "Tracer"]
    write: Callable[["Tracer", "Tracer"], "Tracer"] | None
    what: str
    seen: int = 0

    @property
    def root(self) -> "Tracer":
        return self.base.root


def _row_major_strides(shape) -> tuple:
    strides, step = [], 1
    for d in reversed(tuple(shape)):
        strides.append(step)
        step *= d if isinstance(d, int) and d > 0 else 1
    return tuple(reversed(strides))


class Tracer(_Shaped):
    """An array inside a traced function: shape and dtype known, value computed later.

    Its operators, indexing and ndarray methods are installed by the numpy layer
    (``aotc/array_methods.py``), which this module does not import.
    """

    # Internal attributes avoid ndarray's names (x.trace(), x.view(dtype), x.strides).
    __slots__ = ("_value", "shape", "dtype", "_trace", "weak", "scope", "view_of", "version",
                 "_strides")
    # numpy binary operators defer to ours (ndarray + Tracer -> Tracer.__radd__).
    __array_priority__ = 1000

    def __init__(self, value: ir.Value, shape: Sequence[int], dtype: np.dtype,
                 trace: Trace | None = None, weak: bool = False):
        self._value = value
        # A traced array is a reference whose value a write replaces (numpy's in-place
        # updates, functionalized): a root counts its writes in ``version``; a view
        # (``view_of``: how it is read from its base and written back) re-reads its base
        # when the root was written since.
        self.view_of: View | None = None
        self.version = 0
        self._strides: tuple | None = None
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._trace = trace if trace is not None else current_trace()
        self.scope = self._trace.scope
        # A Python scalar passed as an argument: like the scalar itself, it takes the dtype
        # of the arrays it meets (numpy's weak scalar rule) instead of forcing float64.
        self.weak = weak

    @property
    def root(self) -> "Tracer":
        """The array this one is a view of (itself when it is no view)."""
        return self if self.view_of is None else self.view_of.base.root

    @property
    def element_strides(self) -> tuple:
        """numpy's strides, in elements of the root's row-major layout: they decide, as in
        numpy, whether a reshape is a view. A root's are its row-major ones."""
        return self._strides if self._strides is not None else _row_major_strides(self.shape)

    @element_strides.setter
    def element_strides(self, strides: tuple) -> None:
        self._strides = strides

    @property
    def strides(self) -> tuple:
        """``ndarray.strides``: the element strides in bytes."""
        return tuple(s * self.dtype.itemsize for s in self.element_strides)

    @property
    def value(self) -> ir.Value:
        """The SSA value holding this array now (after the writes traced so far)."""
        view = self.view_of
        if view is not None and view.seen != view.root.version:
            self._value = view.read(view.base).value
            view.seen = view.root.version
        return self._value

    def assign(self, new: "Tracer") -> None:
        """Replaces this array's value by ``new`` (same shape and dtype), writing through
        to the base of a view, so the base and every other view of it see the write."""
        view = self.view_of
        if view is None:
            self._value = new.value
            self.version += 1
            return
        if view.write is None:
            raise TracingError(f"assignment destination is read-only: this traced array is "
                               f"a read-only view ({view.what}) of another array, as in "
                               f"numpy; write into the array itself, or into a copy")
        view.base.assign(view.write(view.base, new))
        self._value = new.value
        view.seen = view.root.version

    def __len__(self) -> int:
        if not self.shape:
            frame = user_frame()
            if stores_into_numpy_array(frame):  # numpy asks len() of a value it stores
                raise stored_into_numpy_array(self, f"{frame.f_code.co_filename}:"
                                                    f"{frame.f_lineno}")
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
        if stores_into_numpy_array(frame):
            raise stored_into_numpy_array(self, where)
        raise value_while_tracing(self, what, where)

    def _known_value(self, what: str) -> np.ndarray:
        """The value of a constant made while tracing and not written into since (as JAX's
        concrete arrays inside jit: ``int(jnp.array(3))``; 0-d: a numpy scalar); any other
        traced array raises."""
        known = self._trace.constant_value(self)
        if known is None:
            self._no_value(what)
        return known[()]

    def __bool__(self):
        return bool(self._known_value("bool() (a Python `if`, `while`, `and`, `or` or `not`)"))

    def __int__(self):
        return int(self._known_value("int()"))

    def __float__(self):
        return float(self._known_value("float()"))

    def __complex__(self):
        return complex(self._known_value("complex()"))

    def __index__(self):
        return self._known_value("an integer index (__index__)").__index__()

    def tolist(self):
        return self._known_value("tolist()").tolist()

    def item(self):
        return self._known_value("item()").item()

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
    out_tree: tree_util.PyTreeDef
    # Leaf indices of the arguments the function writes into; their final values are the
    # function's results after ``out_avals``.
    mutated: list[int]


def trace_function(
    fn: Callable,
    name: str,
    args_tree: tree_util.PyTreeDef,
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
        trace.block = trace.entry = func_op.add_entry_block()
        if trace.allows_captures and _state.stack:
            trace.parent = _state.stack[-1]
        _state.stack.append(trace)
        try:
            with ir.InsertionPoint(trace.block):
                tracers = [
                    Tracer(v, a.shape, a.dtype, trace, weak=getattr(a, "weak", False))
                    for v, a in zip(trace.block.arguments, in_avals)
                ]
                trace.weak_arguments.update(
                    (t.value, i) for i, t in enumerate(tracers) if t.weak)
                args, kwargs = rebuild_args(tracers)
                try:
                    out = fn(*args, **kwargs)
                except ValueError as e:
                    # numpy reports a failed store into its array as "setting an array
                    # element with a sequence"; the reason is what it was handed.
                    reason = e.__cause__ or e.__context__
                    if isinstance(reason, TracedValueStoredError):
                        raise TracedValueStoredError(str(reason)) from None
                    raise
                out_leaves, out_tree = tree_util.tree_flatten(out)
                out_tracers = [_as_output(leaf, i, trace) for i, leaf in enumerate(out_leaves)]
                # Arguments the function wrote into (numpy's in-place updates): their
                # final values are returned after the results, for the caller's arrays.
                mutated = [i for i, t in enumerate(tracers) if t.version]
                func.ReturnOp([t.value for t in out_tracers]
                              + [tracers[i].value for i in mutated])
                written = [tracers[i] for i in mutated]
        finally:
            _state.stack.pop()
        # The arguments, and those closures added (Trace.capture).
        func_op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in trace.entry.arguments], [t.value.type for t in out_tracers + written]))
    out_avals = [ShapeDtypeStruct(t.shape, t.dtype) for t in out_tracers]
    return TracedFunction(trace, trace.module, func_op, list(in_avals), out_avals, out_tree,
                          mutated)


def _definition_location(fn: Callable) -> ir.Location:
    """Where ``fn`` is defined: the location of its func.func and of what it emits
    outside aotc's public functions (its arguments, its return)."""
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    if code is None:
        return ir.Location.unknown()
    return ir.Location.file(code.co_filename, code.co_firstlineno, 0)


def _as_output(leaf: Any, index: int, trace: Trace) -> Tracer:
    if isinstance(leaf, Tracer):
        return check_usable(leaf, f"output {index} of '{trace.fn_name}'")
    if isinstance(leaf, (np.ndarray, np.generic, bool, int, float)):
        value = np.asarray(leaf)
        return trace.constant(value if x64.enabled() else value.astype(x64.narrow(value.dtype)))
    name = type(leaf).__name__
    raise TracingError(
        f"output {index} of '{trace.fn_name}': expected arrays or pytrees of them (tuples, "
        f"lists, dicts, None, NamedTuples, registered classes), got {name}. To return its "
        f"arrays, register {name} as a pytree node (aotc.tree_util.register_dataclass, "
        f"register_pytree_node or register_pytree_node_class)"
    )
