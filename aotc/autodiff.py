"""``aotc.grad``, ``value_and_grad``, ``vjp``, ``jvp`` and ``linearize``: JAX's
differentiation API on the ``aotc-vjp`` (reverse mode) and ``aotc-jvp`` (forward mode)
passes (the Jacobians are in ``jacobians.py``).

Applied inside a traced function (under ``aotc.jit``/``aotc.export``, ``aotc.vmap``,
another derivative, or any traced code), ``vjp(fun, *primals)``

1. traces ``fun`` into a scratch module of the same MLIR context (as ``aotc.vmap`` does),
   with every array leaf of ``primals`` as an argument;
2. inlines the calls nested transformations left there and builds the reverse-mode
   function with ``aotc-vjp``: ``fun``'s arguments and one cotangent per result in,
   ``fun``'s results and the arguments' adjoints out;
3. moves it into the caller's module and calls it (``build.finish_module`` inlines the
   call, so forward and backward ops are one program for IREE).

``jvp(fun, primals, tangents)`` does the same with ``aotc-jvp``: ``fun``'s arguments and
one tangent per differentiated leaf in, ``fun``'s results and their tangents out. Called
outside a trace, each function jits itself, as ``aotc.vmap`` does.

Only floating-point leaves have derivatives. ``grad`` refuses integer arguments (JAX's
message); ``vjp`` gives them ``float0`` zeros, as JAX does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from . import tree_util
from .errors import CompileError, TracingError
from .work import count_derivative

# JAX's dtype of the cotangent of an integer or boolean value: no data.
float0 = np.dtype([("float0", np.void, 0)])


class DifferentiationError(TracingError, TypeError):
    """A function or its arguments cannot be differentiated as asked: a non-scalar
    output for ``grad``, integer inputs, a cotangent of the wrong shape."""


# ---------------------------------------------------------------------------------------
# The traced vector-Jacobian product
# ---------------------------------------------------------------------------------------

@dataclass
class _Leaf:
    path: str
    value: object
    tracer: object = None  # the traced array of an array leaf
    differentiated: bool = False


@dataclass
class _Pullback:
    """``fun`` traced and its reverse-mode function built into the caller's module."""

    name: str  # the user's function, for messages
    derivative_symbol: str  # the reverse-mode function (the forward-mode one with forward=True)
    result_types: list
    leaves: list  # _Leaf per primal leaf
    primal_tree: object
    out_avals: list  # every traced result (outputs, aux, written arguments)
    out_tree: object  # of (out, aux) with has_aux, else of out
    n_seeded: int  # the leading results that take a cotangent (out's leaves)
    trace: object  # the caller's trace
    written: list  # array-leaf indices the function writes into (numpy's in-place updates)
    closures: list  # the caller's traced arrays the function reads (extra arguments)
    primal_symbol: str  # fun's traced function (in the caller only with through_closures)

    @property
    def arrays(self) -> list:
        return [lf for lf in self.leaves if lf.tracer is not None]

    @property
    def wrt(self) -> list[int]:
        """Indices, among the array leaves, of the differentiated ones."""
        return [i for i, lf in enumerate(self.arrays) if lf.differentiated]

    def call(self, cotangents: list) -> tuple[list, list]:
        """Calls the reverse-mode function: (every result, adjoint per differentiated
        leaf), as tracers of the caller."""
        from .core import Tracer

        outs, rest = self._invoke(cotangents)
        grads = [Tracer(v, self.arrays[i].tracer.shape, self.arrays[i].tracer.dtype, self.trace)
                 for v, i in zip(rest, self.wrt)]
        return outs, grads

    def call_forward(self, tangents: list) -> tuple[list, dict]:
        """Calls the forward-mode function (``trace_vjp(..., forward=True)``) with one
        tangent per differentiated leaf: (every result, {result index: its tangent} for
        the floating-point results), as tracers of the caller."""
        from .core import Tracer

        outs, rest = self._invoke(tangents)
        floats = [k for k, a in enumerate(self.out_avals) if np.dtype(a.dtype).kind in "fc"]
        return outs, {k: Tracer(v, self.out_avals[k].shape, self.out_avals[k].dtype, self.trace)
                      for k, v in zip(floats, rest)}

    def _invoke(self, extra: list) -> tuple[list, list]:
        """Calls the derivative function on the arrays, the closures and ``extra``; the
        arguments the function wrote into take their final values, as after a call of
        the function itself. Returns the results as tracers and the other values."""
        from ._mlir import func
        from .core import Tracer, current_trace, user_location

        if current_trace() is not self.trace:
            raise DifferentiationError(
                f"{self.name}: the derivative was called outside the traced function that "
                f"made it; call it in the same function (or jit the whole computation)")
        operands = ([lf.tracer.value for lf in self.arrays] + [c.value for c in self.closures]
                    + [c.value for c in extra])
        with user_location():
            results = list(func.CallOp(self.result_types, self.derivative_symbol, operands).results)
        outs = [Tracer(v, a.shape, a.dtype, self.trace)
                for v, a in zip(results[:len(self.out_avals)], self.out_avals)]
        for k, new in zip(self.written, outs[len(outs) - len(self.written):]):
            self.arrays[k].tracer.assign(new)
        return outs, results[len(self.out_avals):]


def _classify(name: str, flat: list, paths: list[str], positions: list[int],
              argnums: Sequence[int], integer_inputs: str) -> list[_Leaf]:
    """Array leaves become traced arrays of the caller; the leaves under ``argnums`` are
    differentiated (floating point only: ``integer_inputs`` says what to do with others:
    "refuse" as ``grad`` or "skip" as ``vjp``)."""
    from .core import Tracer
    from .vmapping import argument_tracer

    leaves = []
    for value, path, pos in zip(flat, paths, positions):
        is_array = isinstance(value, (Tracer, np.ndarray, np.generic, float, int, complex))
        if not is_array or isinstance(value, (str, bytes)):
            if pos in argnums:
                raise DifferentiationError(
                    f"{name}: argument {path} is a {type(value).__name__} ({value!r}), not an "
                    f"array; only arrays and Python numbers can be differentiated")
            leaves.append(_Leaf(path, value))
            continue
        tracer = argument_tracer(value, f"{name}: argument {path}")
        leaf = _Leaf(path, value, tracer)
        if pos in argnums:
            kind = np.dtype(tracer.dtype).kind
            if kind in "fc":
                leaf.differentiated = True
            elif integer_inputs == "refuse":
                raise DifferentiationError(
                    f"{name} requires real-valued inputs (input dtype that is a sub-dtype "
                    f"of np.floating), but got {tracer.dtype} for argument {path}. If you "
                    f"want to differentiate with respect to it, convert it with "
                    f".astype(float); to pass integers through, use vjp or leave it out of "
                    f"argnums")
        leaves.append(leaf)
    return leaves


def trace_vjp(fun: Callable, primals: tuple, argnums: Sequence[int], has_aux: bool,
              name: str, integer_inputs: str, *, through_closures: bool = False,
              forward: bool = False, complex_outputs: bool = False) -> _Pullback:
    """Traces ``fun(*primals)`` and builds its reverse-mode function in the caller (with
    ``forward``, its forward-mode function: ``aotc-jvp``; see ``_Pullback.call``).
    Outputs are real unless ``complex_outputs`` (``vjp``; ``grad`` needs real ones, as
    JAX's without ``holomorphic``).
    With ``through_closures`` (``checkpoint``), the floating-point arrays ``fun`` closes
    over are differentiated too (their adjoints follow the arguments'), and ``fun``'s
    traced function moves into the caller as well (``_Pullback.primal_symbol``)."""
    from ._mlir import ir
    from .api import _symbol_name
    from .core import Trace, _state, current_trace, trace_function
    from .signature import Aval, leaf_paths
    from .vmapping import _move_functions, _positional_names, _unique_base
    from .passes.autodiff.vjp import recorded_residual_bytes

    outer = current_trace()
    flat, tree = tree_util.tree_flatten(tuple(primals))
    names = _positional_names(fun, len(primals))
    paths, positions = [], []
    for pos, (child, arg) in enumerate(zip(tree.children(), names)):
        paths.extend(leaf_paths(child, arg))
        positions.extend([pos] * child.num_leaves)
    leaves = _classify(name, flat, paths, positions, argnums, integer_inputs)
    arrays = [lf for lf in leaves if lf.tracer is not None]
    avals = [Aval(tuple(lf.tracer.shape), lf.tracer.dtype, lf.tracer.weak) for lf in arrays]

    def rebuild(tracers):
        it = iter(tracers)
        values = [next(it) if lf.tracer is not None else lf.value for lf in leaves]
        return tree.unflatten(values), {}

    def call(*args):
        out = fun(*args)
        if has_aux and not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise DifferentiationError(
                f"{name}: has_aux=True requires the function to return a pair (out, aux), "
                f"but it returned a {type(out).__name__}")
        return tuple(out) if has_aux else out

    fn_name = getattr(fun, "__name__", "function")
    base = _unique_base(outer.module, f"{_symbol_name(fn_name)}__{'jvp' if forward else 'vjp'}")
    primal, backward = f"{base}_primal", f"{base}_{'forward' if forward else 'backward'}"
    with outer.context, ir.Location.unknown():
        scratch = ir.Module.create()
    inner = Trace(fn_name, scratch)
    inner.allows_captures = True
    inner.differentiates = True  # custom derivatives called here keep their rules
    args_tree = tree_util.tree_structure((tuple(range(len(arrays))), {}))
    call.__name__ = fn_name
    traced = trace_function(call, primal, args_tree, avals,
                            lambda tracers: (rebuild(tracers)[0], {}), inner)
    for k, narrower in inner.weak_casts.items():
        for dtype in narrower:
            outer.note_weak_cast(arrays[k].tracer, dtype)
    out_tree = traced.out_tree
    n_out = out_tree.children()[0].num_leaves if has_aux else out_tree.num_leaves
    for k, aval in enumerate(traced.out_avals[:n_out]):
        if np.dtype(aval.dtype).kind not in ("fc" if complex_outputs else "f") and not forward:
            raise DifferentiationError(
                f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
                f"np.floating), but output {k} of {fn_name} is {np.dtype(aval.dtype)}; "
                f"return a float array (integer outputs have no derivative)")
    wrt = [i for i, lf in enumerate(arrays) if lf.differentiated]
    if through_closures:
        wrt += [len(arrays) + k for k, (c, _) in enumerate(inner.captures)
                if np.dtype(c.dtype).kind in "fc"]
    _build(name, scratch, primal, backward, wrt, n_out, forward)
    if not forward:  # every enclosing trace (vmap's, jit's) now holds adjoints
        for trace in _state.stack:
            trace.has_adjoints = True
    outer.residual_bytes += inner.residual_bytes + (
        0 if forward else recorded_residual_bytes(scratch, backward))
    result_types = _move_functions(scratch, outer,
                                   [backward, primal] if through_closures else [backward])[backward]
    count_derivative(outer, inner, forward)
    out_avals = traced.out_avals + [avals[i] for i in traced.mutated]
    # Traced arrays of the caller the function closes over are extra arguments; they
    # are constants to this derivative (an enclosing derivative differentiates through
    # them once the call is inlined).
    closures = [outer_tracer for outer_tracer, _ in inner.captures]
    return _Pullback(name, backward, result_types, leaves, tree, out_avals, out_tree, n_out,
                     outer, list(traced.mutated), closures, primal)


def _build(name: str, scratch, primal: str, derivative: str, wrt: list, n_out: int,
           forward: bool) -> None:
    from .passes import Jvp, PassError, Vjp, run_pipeline

    build = (Jvp(func=primal, jvp=derivative, wrt=tuple(wrt)) if forward else
             Vjp(func=primal, vjp=derivative, wrt=tuple(wrt), seeded=tuple(range(n_out))))
    try:
        run_pipeline(scratch, ["inline", build])
    except PassError as e:
        raise CompileError(f"{name}: {e}") from e


def _cotangents(pb: _Pullback, cotangent, seeded_tree) -> list:
    """The cotangent pytree as caller tracers, checked against the outputs."""
    from . import numpy as anp

    flat, tree = tree_util.tree_flatten(cotangent)
    if tree != seeded_tree:
        raise DifferentiationError(
            f"vjp({pb.name}): the cotangent has structure {tree_util.describe(tree)} but "
            f"the function's output has {tree_util.describe(seeded_tree)}; give one "
            f"cotangent per output, in the output's structure")
    out = []
    for k, (c, aval) in enumerate(zip(flat, pb.out_avals[:pb.n_seeded])):
        c = anp.asarray(c)
        if tuple(c.shape) != tuple(aval.shape):
            raise DifferentiationError(
                f"vjp({pb.name}): the cotangent of output {k} has shape {tuple(c.shape)} "
                f"but the output has shape {tuple(aval.shape)}; give it the output's shape")
        out.append(c.astype(aval.dtype) if np.dtype(c.dtype) != np.dtype(aval.dtype) else c)
    return out


def _grads_tree(pb: _Pullback, grads: list, positions: Sequence[int]):
    """The adjoints in the structure of the primals at ``positions`` (a float0 array
    for each integer leaf, the value itself for a non-array leaf)."""
    it = iter(grads)
    values = []
    for lf in pb.leaves:
        if lf.differentiated:
            values.append(next(it))
        elif lf.tracer is not None:
            values.append(np.zeros(tuple(lf.tracer.shape), float0))
        else:
            values.append(lf.value)
    per_position = pb.primal_tree.unflatten(values)
    return tuple(per_position[p] for p in positions)


def _seeded_tree(pb: _Pullback, has_aux: bool):
    return pb.out_tree.children()[0] if has_aux else pb.out_tree


# ---------------------------------------------------------------------------------------
# The public functions
# ---------------------------------------------------------------------------------------

def _tracing() -> bool:
    from .core import is_tracing

    return is_tracing()


def _jit(fn):
    from .api import jit

    return jit(fn)


def vjp(fun: Callable, *primals, has_aux: bool = False):
    """``(out, pullback)`` or ``(out, pullback, aux)``: ``pullback(cotangent)`` returns
    one cotangent per primal (``jax.vjp``'s semantics; integer primals get ``float0``
    zeros)."""
    name = f"vjp({getattr(fun, '__name__', 'function')})"
    if not _tracing():
        return _eager_vjp(fun, primals, has_aux)
    pb = trace_vjp(fun, primals, range(len(primals)), has_aux, name, "skip",
                   complex_outputs=True)
    outs = _primal_outputs(pb)
    out_tree = pb.out_tree
    result = out_tree.unflatten(outs[:out_tree.num_leaves])
    seeded_tree = _seeded_tree(pb, has_aux)

    def pullback(cotangent):
        cts = _cotangents(pb, cotangent, seeded_tree)
        _, grads = pb.call(cts)
        return _grads_tree(pb, grads, range(len(primals)))

    if has_aux:
        return result[0], pullback, result[1]
    return result, pullback


def _primal_outputs(pb: _Pullback) -> list:
    """The function's results, computed by the reverse-mode function with zero
    cotangents (IREE drops the backward ops nobody reads)."""
    from . import numpy as anp

    zeros = [anp.zeros(a.shape, a.dtype) for a in pb.out_avals[:pb.n_seeded]]
    outs, _ = pb.call(zeros)
    return outs


def _eager_vjp(fun, primals, has_aux):
    def forward(*p):
        out, _, *aux = vjp(fun, *p, has_aux=has_aux)
        return (out, aux[0]) if has_aux else out

    result = _jit(forward)(*primals)

    def float_leaves(p, c):
        grads = vjp(fun, *p, has_aux=has_aux)[1](c)
        return [g for g in tree_util.tree_leaves(grads) if not _is_float0(g)]

    compiled = _jit(float_leaves)

    def pullback(cotangent):
        # float0 cotangents have no data: made here, around the compiled pullback.
        floats = iter(compiled(primals, cotangent))
        leaves, tree = tree_util.tree_flatten(tuple(primals))
        return tree.unflatten([next(floats) if _is_float(v)
                               else np.zeros(np.shape(v), float0) if _is_number(v) else v
                               for v in leaves])

    if has_aux:
        return result[0], pullback, result[1]
    return result, pullback


def _is_number(v) -> bool:
    return isinstance(v, (np.ndarray, np.generic, int, float)) or hasattr(v, "dtype")


def _is_float(v) -> bool:
    """A floating-point array or number (what has a derivative)."""
    return _is_number(v) and np.dtype(getattr(v, "dtype", None) or np.result_type(v)).kind == "f"


def _argnums(argnums, count: int, name: str) -> tuple[int, ...]:
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, int) or not -count <= a < count:
            raise DifferentiationError(
                f"{name}: argnums={argnums!r} does not name a positional argument of the "
                f"call, which has {count}; give indices in [{-count}, {count})")
    return tuple(a % count for a in nums)


class GradFunction:
    """``fun``'s gradient (``aotc.grad``) or value and gradient (``value_and_grad``)."""

    def __init__(self, fun: Callable, argnums, has_aux: bool, with_value: bool,
                 holomorphic: bool = False):
        functools.update_wrapper(self, fun)
        self.fun, self.argnums, self.has_aux, self.with_value = fun, argnums, has_aux, with_value
        self.holomorphic = holomorphic
        self._jitted = None

    @property
    def _name(self) -> str:
        kind = "value_and_grad" if self.with_value else "grad"
        return f"{kind}({getattr(self.fun, '__name__', 'function')})"

    def __call__(self, *args, **kwargs):
        if not _tracing():
            if self._jitted is None:
                self._jitted = _jit(self)
            return self._jitted(*args, **kwargs)
        if kwargs:
            fun, args = _bind_keywords(self.fun, args, kwargs)
        else:
            fun = self.fun
        nums = _argnums(self.argnums, len(args), self._name)
        if self.holomorphic:
            check_complex(self._name, "inputs", [args[n] for n in nums])
        pb = trace_vjp(fun, args, nums, self.has_aux, self._name, "refuse",
                       complex_outputs=self.holomorphic)
        if self.holomorphic:
            check_complex(self._name, "outputs", pb.out_avals[:pb.n_seeded])
        shapes = [tuple(a.shape) for a in pb.out_avals[:pb.n_seeded]]
        if shapes != [()]:
            raise DifferentiationError(
                f"{self._name}: gradient only defined for scalar-output functions. "
                f"Output had shape: {shapes[0] if len(shapes) == 1 else shapes}. Reduce "
                f"it to one number (a sum or mean), or use vjp/jacrev for a Jacobian")
        from . import numpy as anp

        seed = anp.ones((), pb.out_avals[0].dtype)
        outs, grads = pb.call([seed])
        tree = self._grads(pb, grads, nums)
        if self.has_aux:
            value, aux = pb.out_tree.unflatten(outs[:pb.out_tree.num_leaves])
            return ((value, aux), tree) if self.with_value else (tree, aux)
        value = outs[0]
        return (value, tree) if self.with_value else tree

    def _grads(self, pb, grads, nums):
        tree = _grads_tree(pb, grads, nums)
        return tree[0] if isinstance(self.argnums, int) else tree


def check_complex(name: str, what: str, values) -> None:
    """``holomorphic=True`` differentiates complex functions of complex arguments (JAX's
    rule and message)."""
    for v in tree_util.tree_leaves(values):
        dtype = np.dtype(getattr(v, "dtype", None) or np.result_type(v))
        if dtype.kind != "c":
            raise DifferentiationError(
                f"{name} with holomorphic=True requires {what} with complex dtype, but got "
                f"{dtype.name}")


def _bind_keywords(fun, args: tuple, kwargs: dict):
    """Keyword arguments are not differentiated (JAX's rule): they are closed over."""
    return functools.partial(fun, **kwargs), args


def grad(fun: Callable, argnums=0, has_aux: bool = False,
         holomorphic: bool = False) -> GradFunction:
    """The gradient of a scalar-valued ``fun`` with respect to its positional argument(s)
    ``argnums`` (``jax.grad``'s semantics: a pytree of gradients per argument; with
    ``has_aux`` the function returns ``(value, aux)`` and ``grad`` gives ``(grads, aux)``).
    A real ``fun`` of complex arguments gets dfun/dx - i dfun/dy (JAX's convention); with
    ``holomorphic``, a complex ``fun`` of complex arguments gets its derivative f'(z).

    >>> df = aotc.grad(lambda x: anp.sum(anp.sin(x) ** 2))
    >>> print(np.round(np.asarray(df(np.array([0.5, 1.0], np.float32))), 4))
    [0.8415 0.9093]
    """
    return GradFunction(fun, argnums, has_aux, with_value=False, holomorphic=holomorphic)


def value_and_grad(fun: Callable, argnums=0, has_aux: bool = False,
                   holomorphic: bool = False) -> GradFunction:
    """``(value, grad)``; with ``has_aux``, ``((value, aux), grad)`` (``jax.value_and_grad``)."""
    return GradFunction(fun, argnums, has_aux, with_value=True, holomorphic=holomorphic)


def jvp(fun: Callable, primals, tangents, has_aux: bool = False):
    """``(primals_out, tangents_out)`` (``jax.jvp``): the Jacobian of ``fun`` at
    ``primals`` times ``tangents``, by the forward-mode pass ``aotc-jvp`` (integer
    outputs get ``float0`` tangents)."""
    from . import numpy as anp

    name = f"jvp({getattr(fun, '__name__', 'function')})"
    primals, tangents = _check_tangents(name, primals, tangents)
    if not _tracing():
        return _jit(lambda p, t: jvp(fun, p, t, has_aux=has_aux))(primals, tangents)
    d = trace_vjp(fun, primals, range(len(primals)), has_aux, name, "skip", forward=True)
    flat = tree_util.tree_leaves(tangents)
    ts = [anp.asarray(t).astype(lf.tracer.dtype) for lf, t in zip(d.leaves, flat)
          if lf.differentiated]
    outs, touts = d.call_forward(ts)
    result = d.out_tree.unflatten(outs[:d.out_tree.num_leaves])
    seeded = _seeded_tree(d, has_aux)
    tangent_out = seeded.unflatten([
        touts[k] if k in touts else np.zeros(tuple(d.out_avals[k].shape), float0)
        for k in range(seeded.num_leaves)])
    if has_aux:
        return result[0], tangent_out, result[1]
    return result, tangent_out


def _zeros_like(x):
    from . import numpy as anp

    return anp.zeros(np.shape(x), x.dtype)


def _check_tangents(name: str, primals, tangents):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise DifferentiationError(
            f"{name}: primal and tangent arguments must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}")
    primals, tangents = tuple(primals), tuple(tangents)
    p_flat, p_tree = tree_util.tree_flatten(primals)
    t_flat, t_tree = tree_util.tree_flatten(tangents)
    if p_tree != t_tree:
        raise DifferentiationError(
            f"{name}: primal and tangent arguments must have the same tree structure; "
            f"got {tree_util.describe(p_tree)} and {tree_util.describe(t_tree)}")
    for k, (p, t) in enumerate(zip(p_flat, t_flat)):
        if np.shape(p) != np.shape(t):
            raise DifferentiationError(
                f"{name}: primal and tangent leaf {k} must have equal shapes; got "
                f"{np.shape(p)} and {np.shape(t)}")
    return primals, tangents


def _is_float0(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == float0


def linearize(fun: Callable, *primals):
    """``(out, f_jvp)`` with ``f_jvp(*tangents) == jvp(fun, primals, tangents)[1]``."""
    out = jvp(fun, primals, tuple(tree_util.tree_map(_zeros_like, primals)))[0]

    def f_jvp(*tangents):
        return jvp(fun, primals, tangents)[1]

    return out, f_jvp


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "float0",
           "DifferentiationError"]
