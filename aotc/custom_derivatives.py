"""``aotc.custom_vjp``, ``aotc.custom_jvp`` and ``aotc.checkpoint``: functions that bring
their own derivative, with JAX's API and semantics.

Called where nothing differentiates them (plain ``jit``, ``vmap``, eagerly), each is just
its function. Called inside a function being differentiated (``grad``, ``vjp``, ``jvp``
at any depth), each becomes a call ``aotc-vjp`` differentiates by its rule
(``passes/autodiff/calls.py``):

- ``custom_vjp``: the call runs ``fwd`` (outputs and residuals); the rule calls ``bwd``
  on the residuals and the outputs' cotangents.
- ``custom_jvp``: the call runs the function and keeps its arguments as residuals; the
  rule is the transpose of the user's tangent map: the reverse-mode derivative, with
  respect to the tangents, of the jvp rule's tangent output (linear in the tangents, so
  its adjoint is exact at zero tangents). Forward mode (``aotc-jvp``) transposes it
  again: the user's tangents.
- ``checkpoint``: the call runs the function; the rule recomputes it from its inputs
  (behind a ``util.optimization_barrier``, so the compiler cannot reuse the forward
  values) and differentiates the recomputation: the forward pass keeps only the inputs
  for the backward pass.

Inside the functions of a rule (``fwd``, ``bwd``, the jvp rule, a recomputation) the
function itself is its plain body, as in JAX's ``f_fwd(x): return f(x), x``.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Sequence

import numpy as np

from . import tree_util
from .autodiff import DifferentiationError, float0, trace_vjp, vjp
from .work import count_custom_call


def _differentiating() -> bool:
    from .core import differentiating

    return differentiating()


def _resolve_kwargs(fun: Callable, args: tuple, kwargs: dict, name: str) -> tuple:
    """Keyword arguments as positional ones (a custom derivative's rules take the
    arguments by position, as JAX's)."""
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{name}: keyword-only arguments ({', '.join(bound.kwargs)}) are not "
                        f"supported by functions with a custom derivative; make them "
                        f"positional")
    return tuple(bound.args)


def _split(args: tuple, nondiff_argnums: tuple, name: str):
    for i in nondiff_argnums:
        if not isinstance(i, int) or not 0 <= i < len(args):
            raise DifferentiationError(
                f"{name}: nondiff_argnums={nondiff_argnums} names argument {i}, but the call "
                f"has {len(args)} positional arguments")
    nondiff = [args[i] for i in nondiff_argnums]
    diff = [a for i, a in enumerate(args) if i not in nondiff_argnums]

    def merge(diff_args):
        it = iter(diff_args)
        return tuple(args[i] if i in nondiff_argnums else next(it) for i in range(len(args)))

    return nondiff, diff, merge


class _Rules:
    """Reentrancy: while a function's rules are traced, calls of the function are its
    plain body."""

    def __init__(self):
        self.depth = 0

    def __enter__(self):
        self.depth += 1

    def __exit__(self, *exc):
        self.depth -= 1


class _CustomDerivative:
    """What ``custom_vjp`` and ``custom_jvp`` share: the call (``_rule`` gives the forward
    and backward functions of the marked call)."""

    kind = ""
    # The attribute holding the rule, and JAX's words for it in the missing-rule error.
    rule_attribute, rule_name, definer = "", "", ""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self._rules = _Rules()

    @property
    def _name(self) -> str:
        return getattr(self.fun, "__name__", "function")

    def _refuse_symbolic_zeros(self, symbolic_zeros: bool, what: str) -> None:
        if symbolic_zeros:
            raise NotImplementedError(
                f"{self.kind} {self._name}: symbolic_zeros=True is not supported; aotc "
                f"passes zero {what} as arrays of zeros")

    def __call__(self, *args, **kwargs):
        args = _resolve_kwargs(self.fun, args, kwargs, self._name)
        if getattr(self, self.rule_attribute) is None:
            raise AttributeError(f"No {self.rule_name} defined for {self.kind} function "
                                 f"{self._name} using {self.definer}.")
        if not _differentiating() or self._rules.depth:
            return self.fun(*args)
        nondiff, diff, merge = _split(args, self.nondiff_argnums, self._name)
        with self._rules:
            forward, backward = self._rule(nondiff, merge)
            return _custom_call(f"{self.kind} {self._name}", self._name, diff, forward,
                                backward)


class custom_vjp(_CustomDerivative):
    """A function with a user-defined reverse-mode derivative (``jax.custom_vjp``).

    >>> @aotc.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def fwd(x):
    ...     return x, None
    >>> def bwd(_, g):
    ...     return (anp.clip(g, -1.0, 1.0),)
    >>> clip_gradient.defvjp(fwd, bwd)
    >>> print(float(aotc.grad(lambda x: 3.0 * clip_gradient(x))(2.0)))
    1.0
    """

    kind = "custom_vjp"
    rule_attribute, rule_name, definer = "fwd", "VJP", "defvjp"
    fwd = bwd = None

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals,
        cotangent) -> one cotangent per differentiated argument`` (a tuple; ``None`` for
        zeros)."""
        self._refuse_symbolic_zeros(symbolic_zeros, "cotangents")
        self.fwd, self.bwd = fwd, bwd

    def _rule(self, nondiff: list, merge: Callable):
        def forward(*diff_args):
            out = self.fwd(*merge(diff_args))
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise DifferentiationError(
                    f"custom_vjp {self._name}: fwd must return a pair (output, residuals), "
                    f"got {type(out).__name__}")
            return tuple(out)

        def backward(residuals, cotangents):
            return self.bwd(*nondiff, residuals, cotangents)

        return forward, backward


class custom_jvp(_CustomDerivative):
    """A function with a user-defined forward-mode derivative (``jax.custom_jvp``); reverse
    mode transposes it.

    >>> @aotc.custom_jvp
    ... def log1pexp(x):
    ...     return anp.log(1.0 + anp.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + anp.exp(x)))
    >>> print(float(aotc.grad(log1pexp)(np.float32(100.0))))
    1.0
    """

    kind = "custom_jvp"
    rule_attribute, rule_name, definer = "jvp", "JVP", "defjvp"
    jvp = None

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``;
        returns ``jvp`` (usable as a decorator)."""
        self._refuse_symbolic_zeros(symbolic_zeros, "tangents")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per differentiated argument, ``jvp_i(tangent_i, primal_out,
        *primals) -> its contribution to the output tangent`` (``None``: no dependence);
        the contributions are summed."""

        def jvp(*args):
            *nondiff, primals, tangents = args
            out = self.fun(*_split_back(self.nondiff_argnums, nondiff, primals))
            terms = [rule(t, out, *primals) for rule, t in zip(jvps, tangents) if rule is not None]
            if not terms:
                return out, tree_util.tree_map(lambda o: o * 0, out)
            return out, tree_util.tree_map(lambda *xs: functools.reduce(lambda a, b: a + b, xs),
                                           *terms)

        self.defjvp(jvp)

    def _rule(self, nondiff: list, merge: Callable):
        def forward(*diff_args):
            return self.fun(*merge(diff_args)), diff_args

        def backward(primals, cotangents):
            from . import numpy as anp
            from .core import current_trace

            # Integer outputs have no tangents (their cotangents are float0): the map
            # transposed is the one onto the floating-point outputs' tangents.
            is_leaf = lambda x: x is None  # noqa: E731
            ct_leaves, ct_tree = tree_util.tree_flatten(cotangents, is_leaf=is_leaf)
            floats = [i for i, c in enumerate(ct_leaves)
                      if getattr(c, "dtype", None) != float0]

            def tangent_out(*tangents):
                out = self.jvp(*nondiff, tuple(primals), tuple(tangents))
                if not (isinstance(out, (tuple, list)) and len(out) == 2):
                    raise DifferentiationError(
                        f"custom_jvp {self._name}: the jvp rule must return a pair "
                        f"(primal_out, tangent_out), got {type(out).__name__}")
                leaves, tree = tree_util.tree_flatten(out[1], is_leaf=is_leaf)
                if len(leaves) != len(ct_leaves):
                    raise DifferentiationError(
                        f"custom_jvp {self._name}: the jvp rule's tangent output has "
                        f"structure {tree_util.describe(tree)}, but the function's output "
                        f"has {tree_util.describe(ct_tree)}; give it the output's structure")
                return tuple(leaves[i] for i in floats)

            zeros = tree_util.tree_map(lambda p: anp.zeros_like(p), tuple(primals))
            trace = current_trace()
            transposing, trace.transposing_tangents = trace.transposing_tangents, True
            try:
                _, pullback = vjp(tangent_out, *zeros)
            finally:
                trace.transposing_tangents = transposing
            grads = pullback(tuple(ct_leaves[i] for i in floats))
            # Integer arguments have no tangents (float0): no cotangent either.
            return tuple(tree_util.tree_map(
                lambda g: None if getattr(g, "dtype", None) == float0 else g, g_i)
                for g_i in grads)

        return forward, backward


def _split_back(nondiff_argnums: tuple, nondiff: list, primals) -> tuple:
    n = len(nondiff_argnums) + len(primals)
    nd, pr = iter(nondiff), iter(primals)
    return tuple(next(nd) if i in nondiff_argnums else next(pr) for i in range(n))


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """``fun`` whose intermediate values are recomputed for the backward pass instead of
    kept (``jax.checkpoint``, alias ``remat``): differentiated, the forward pass keeps only
    ``fun``'s inputs, and the backward pass runs ``fun`` again before its derivative.

    ``prevent_cse=False`` lets the compiler share the recomputation with the forward pass
    (it usually then keeps the values after all). ``policy`` (``aotc.checkpoint_policies``,
    JAX's names) is ``everything_saveable`` (keep every value: the function itself) or
    recomputes everything (any other, see there). ``static_argnums`` are passed as they
    are (not traced).
    """
    from .checkpoint_policies import keeps_everything

    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be one of aotc.checkpoint_policies (a "
                        f"callable), got {type(policy).__name__}")
    if keeps_everything(policy):
        return fun
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    name = getattr(fun, "__name__", "function")
    rules = _Rules()

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        if not _differentiating() or rules.depth:
            return fun(*args, **kwargs)
        args = _resolve_kwargs(fun, args, kwargs, f"checkpoint({name})")
        _, dynamic, merge = _split(args, statics, f"checkpoint({name})")
        with rules:
            return _recomputed_call(f"checkpoint({name})", lambda *d: fun(*merge(d)), dynamic,
                                    prevent_cse)

    return checkpointed


remat = checkpoint


# ---------------------------------------------------------------------------------------
# The marked call
# ---------------------------------------------------------------------------------------

def _array_leaves(name: str, diff_args: list):
    """The leaves of the differentiated arguments (tracers of the caller for arrays and
    numbers, the value itself for anything else) and their structure."""
    from .core import Tracer
    from .vmapping import argument_tracer

    flat, tree = tree_util.tree_flatten(tuple(diff_args))
    leaves = []
    for k, v in enumerate(flat):
        if isinstance(v, (Tracer, np.ndarray, np.generic, bool, int, float)):
            leaves.append(argument_tracer(v, f"{name}: argument leaf {k}"))
        else:
            leaves.append(v)
    return tree, leaves


def _trace_private(outer, fn: Callable, symbol: str, avals: list):
    """Traces ``fn(*tracers)`` into ``func.func private @symbol`` of the caller's module;
    arrays of the caller it reads become extra arguments (``trace.captures``)."""
    from ._mlir import ir
    from .core import Trace, trace_function

    inner = Trace(symbol, outer.module)
    inner.allows_captures = True
    args_tree = tree_util.tree_structure((tuple(range(len(avals))), {}))
    traced = trace_function(fn, symbol, args_tree, avals, lambda ts: (tuple(ts), {}), inner)
    with outer.context:
        traced.func_op.attributes["sym_visibility"] = ir.StringAttr.get("private")
    if traced.mutated:
        raise DifferentiationError(
            f"{symbol}: a function with a custom derivative may not write into its "
            f"arguments (numpy's in-place updates); compute new arrays instead")
    outer.residual_bytes += inner.residual_bytes
    return traced, inner


def _avals(tracers) -> list:
    from .signature import Aval

    return [Aval(tuple(t.shape), t.dtype, t.weak) for t in tracers]


def _custom_call(name: str, fn_name: str, diff_args: list, forward: Callable,
                 backward: Callable):
    """Emits the marked call of ``forward`` (returning ``(out, residuals)``) whose rule
    is ``backward(residuals, cotangents) -> cotangent per differentiated argument``."""
    from ._mlir import func, ir
    from .api import _symbol_name
    from .core import Tracer, current_trace, user_location
    from .passes.autodiff.calls import CustomRule, mark
    from .vmapping import _unique_base

    outer = current_trace()
    tree, leaves = _array_leaves(name, diff_args)
    arrays = [t for t in leaves if isinstance(t, Tracer)]
    base = _unique_base(outer.module, f"{_symbol_name(fn_name)}__custom")

    def traced_forward(*tracers):
        it = iter(tracers)
        return forward(*tree.unflatten([next(it) if isinstance(v, Tracer) else v
                                         for v in leaves]))

    fwd, fwd_trace = _trace_private(outer, traced_forward, f"{base}_fwd", _avals(arrays))
    out_tree, res_tree = fwd.out_tree.children()
    n_out = out_tree.num_leaves
    out_avals, res_avals = fwd.out_avals[:n_out], fwd.out_avals[n_out:]
    floats = [i for i, a in enumerate(out_avals) if np.dtype(a.dtype).kind in "fc"]

    def traced_backward(*tracers):
        res = res_tree.unflatten(tracers[:len(res_avals)])
        ct_it = iter(tracers[len(res_avals):])
        cts = [next(ct_it) if i in floats else np.zeros(tuple(a.shape), float0)
               for i, a in enumerate(out_avals)]
        grads = backward(res, out_tree.unflatten(cts))
        return _flat_cotangents(name, grads, tree, leaves)

    bwd, bwd_trace = _trace_private(
        outer, traced_backward, f"{base}_bwd", list(res_avals) + [out_avals[i] for i in floats])
    count_custom_call(outer, fwd_trace, bwd_trace)
    # The forward function takes the backward function's closures too (unused there):
    # the rule hands them over from the call's operands.
    bwd_closures = [c for c, _ in bwd_trace.captures]
    with outer.context, ir.Location.unknown():
        for c in bwd_closures:
            fwd_trace.entry.add_argument(c.value.type, ir.Location.unknown())
        fwd.func_op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in fwd_trace.entry.arguments],
            ir.FunctionType(ir.TypeAttr(fwd.func_op.attributes["function_type"]).value).results))
    fwd_closures = [c for c, _ in fwd_trace.captures]
    result_types = ir.FunctionType(
        ir.TypeAttr(fwd.func_op.attributes["function_type"]).value).results
    operands = [t.value for t in arrays + fwd_closures + bwd_closures]
    with user_location():
        call = func.CallOp(list(result_types), f"{base}_fwd", operands)
        mark(call.operation, CustomRule(f"{base}_bwd", len(arrays), len(fwd_closures), n_out,
                                        fn_name))
    outs = [Tracer(v, a.shape, a.dtype, outer)
            for v, a in zip(list(call.results)[:n_out], out_avals)]
    return out_tree.unflatten(outs)


def _flat_cotangents(name: str, grads, tree, leaves: list) -> list:
    """The backward function's result as one cotangent per floating-point array leaf (in
    order), checked against the arguments' structure and shapes."""
    from . import numpy as anp
    from .core import Tracer

    n_args = tree.num_children
    if not isinstance(grads, (tuple, list)) or len(grads) != n_args:
        got = f"a {type(grads).__name__}" if not isinstance(grads, (tuple, list)) else \
            f"a sequence of {len(grads)}"
        raise DifferentiationError(
            f"{name}: the backward rule must return a tuple with one cotangent per "
            f"differentiated argument ({n_args}), got {got}")
    out = []
    k = 0
    for i, (child, g) in enumerate(zip(tree.children(), grads)):
        primals = leaves[k:k + child.num_leaves]
        k += child.num_leaves
        if g is None:
            g_leaves = [None] * len(primals)
        else:
            g_leaves, g_tree = tree_util.tree_flatten(g, is_leaf=lambda x: x is None)
            if len(g_leaves) != len(primals):
                raise DifferentiationError(
                    f"{name}: the cotangent of argument {i} has structure "
                    f"{tree_util.describe(g_tree)}, but the argument has "
                    f"{tree_util.describe(child)}; give it the argument's structure")
        for primal, g_leaf in zip(primals, g_leaves):
            if not isinstance(primal, Tracer) or np.dtype(primal.dtype).kind not in "fc":
                continue
            if g_leaf is None or getattr(g_leaf, "dtype", None) == float0:
                out.append(anp.zeros(primal.shape, primal.dtype))
                continue
            g_leaf = anp.asarray(g_leaf)
            if tuple(g_leaf.shape) != tuple(primal.shape):
                raise DifferentiationError(
                    f"{name}: the cotangent of argument {i} has shape {tuple(g_leaf.shape)}, "
                    f"but the argument has shape {tuple(primal.shape)}")
            out.append(g_leaf.astype(primal.dtype) if isinstance(g_leaf, Tracer)
                       and g_leaf.dtype != primal.dtype else g_leaf)
    return out


def _recomputed_call(name: str, fn: Callable, dynamic_args: list, prevent_cse: bool):
    """Emits the marked call of ``fn``'s traced function whose rule recomputes ``fn``
    from its inputs (the arrays it takes and those it closes over) and differentiates
    the recomputation."""
    from ._mlir import func, ir
    from .core import Tracer, current_trace, user_location
    from .lowering import barrier
    from .passes.autodiff.calls import CustomRule, mark

    outer = current_trace()
    kept = outer.residual_bytes
    pb = trace_vjp(fn, tuple(dynamic_args), range(len(dynamic_args)), False, name, "skip",
                   through_closures=True)
    # What the recomputation keeps lives only while its block's backward pass runs.
    outer.residual_bytes = kept
    if pb.written:
        raise DifferentiationError(
            f"{name}: a checkpointed function may not write into its arguments (numpy's "
            f"in-place updates); compute new arrays instead")
    inputs = [lf.tracer for lf in pb.arrays] + list(pb.closures)
    input_types = [t.value.type for t in inputs]
    out_types = list(pb.result_types[:len(pb.out_avals)])
    n_grads = len(pb.result_types) - len(pb.out_avals)
    grad_types = list(pb.result_types[len(pb.out_avals):])
    anchor = outer.entry.owner
    backward = f"{pb.primal_symbol}_recompute"
    with outer.context, ir.Location.unknown():
        functions = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
                     for op in outer.module.body.operations}
        # The forward function takes the inputs a second time (for the rule, unused).
        primal = functions[pb.primal_symbol]
        entry = primal.regions[0].blocks[0]
        for t in input_types:
            entry.add_argument(t, ir.Location.unknown())
        primal.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in entry.arguments], out_types))
        # @<primal>_recompute(cotangents, inputs) -> one adjoint per float input.
        with ir.InsertionPoint(anchor):
            rec = func.FuncOp(backward, (out_types + input_types, grad_types))
            rec.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = rec.add_entry_block()
        with ir.InsertionPoint(block):
            cts = list(block.arguments)[:len(out_types)]
            args = list(block.arguments)[len(out_types):]
            if prevent_cse and args:
                # The recomputation reads values the compiler cannot prove equal to the
                # forward pass's: it cannot reuse (and so keep) the forward values. One
                # barrier per value: IREE 3.13's stream conversion rejects a barrier over
                # values of different lifetimes (an argument and a temporary).
                args = [barrier(a) for a in args]
            results = func.CallOp(list(pb.result_types), pb.derivative_symbol, args + cts).results
            func.ReturnOp(list(results)[len(out_types):len(out_types) + n_grads])
    operands = [t.value for t in inputs] * 2
    with user_location():
        call = func.CallOp(out_types, pb.primal_symbol, operands)
        mark(call.operation, CustomRule(backward, len(inputs), 0, len(out_types), name))
    outs = [Tracer(v, a.shape, a.dtype, outer) for v, a in zip(call.results, pb.out_avals)]
    return pb.out_tree.unflatten(outs)
