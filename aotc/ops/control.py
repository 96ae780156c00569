"""Structured control flow with ``jax.lax``'s semantics: cond, switch, while_loop,
fori_loop (this module) and scan (scan.py), each lowered to one ``scf`` op on tensors.

    lax.cond          scf.if            (then / else region, tensor results)
    lax.switch        scf.if chain      (index == 0, else index == 1, ...; see switch)
    lax.while_loop    scf.while         (before region: scf.condition; after region: body)
    lax.fori_loop     scf.for           (static bounds; traced bounds: scf.while)
    lax.scan          scf.for           (iter_args: carry..., stacked ys...)

Branch and body functions are traced with the same Trace into the op's regions, so they
may close over traced values from outside (scf regions are not isolated from above).
A region is traced into a block held by a placeholder op (its types are only known once
the function has run); the scf op is built afterwards and the blocks moved into it.

Pytree rules are JAX's: every branch returns the same structure, shapes and dtypes; a
loop body returns its carry with the init's structure, shapes and dtypes. A Python scalar
(weakly typed) adapts: in a branch output or loop output it takes the other side's dtype;
in a loop's init it is promoted to what the body returns and the loop is traced again.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import dtypes, tree_util
from .._mlir import arith, index_constant, ir, scf, tensor
from ..core import Tracer, current_trace
from ..errors import TracingError
from ..lowering import barrier
from ..work import scale_since, tally
from ..passes.drop_carry_barriers import CARRY_BARRIER
from ..signature import leaf_paths
from . import elementwise as ew
from .arguments import as_operand
from .regions import Regions

EXPORTS: dict[str, list[str]] = {
    "numpy": [],
    "lax": ["cond", "switch", "while_loop", "fori_loop"],
    "nn": [],
}

# ---- pytrees of arrays -----------------------------------------------------------------

def _as_array(leaf: Any, where: str) -> Tracer:
    """A pytree leaf as a traced array; Python scalars stay weakly typed."""
    o = as_operand(leaf, where)
    if isinstance(o, Tracer):
        return o
    constant = current_trace().constant(np.asarray(o.value, o.dtype))
    # A new Tracer: the cached constant must not become weak for its other users.
    return Tracer(constant.value, constant.shape, constant.dtype, weak=o.weak)


def _flatten(value: Any, where: str) -> tuple[list[Tracer], tree_util.PyTreeDef]:
    leaves, treedef = tree_util.tree_flatten(value)
    paths = leaf_paths(treedef, "")
    return [_as_array(leaf, f"{where}{p}") for leaf, p in zip(leaves, paths)], treedef


def _rebuild(treedef: tree_util.PyTreeDef, leaves: Sequence) -> Any:
    return treedef.unflatten(leaves)


def _like(values: Sequence[ir.Value], avals: Sequence[Tracer],
          weak: Sequence[bool] | None = None) -> list[Tracer]:
    """Tracers for ``values`` with the shapes and dtypes of ``avals`` (and their weak
    types, unless ``weak`` says otherwise)."""
    weak = [a.weak for a in avals] if weak is None else weak
    return [Tracer(v, a.shape, a.dtype, weak=w) for v, a, w in zip(values, avals, weak)]


def _describe(t: Tracer) -> str:
    return f"{t.dtype.name}{list(t.shape)}" + (" (weakly typed Python scalar)" if t.weak else "")


def _types(avals: Sequence[Tracer]) -> list[ir.Type]:
    return [dtypes.tensor_type(a.shape, a.dtype) for a in avals]


def _adapts_to(weak: Tracer, dtype: np.dtype) -> bool:
    """Whether a weakly typed value takes ``dtype`` when combined with it (numpy's rule)."""
    return np.result_type(ew._promotion_operand(weak), dtype) == dtype


def _callable(fn, name: str, where: str) -> None:
    if not callable(fn):
        raise TypeError(f"{where}: {name} must be callable, got {type(fn).__name__} {fn!r}")


# ---- regions ---------------------------------------------------------------------------

def _trace(block: ir.Block, fn: Callable, args: Sequence,
           where: str) -> tuple[list[Tracer], tree_util.PyTreeDef]:
    with current_trace().region(block):
        scope = current_trace().scope
        for a in args:  # the block's own arguments belong to its region (writable there)
            if (isinstance(a, Tracer) and isinstance(a.value, ir.BlockArgument)
                    and a.value.owner == block):
                a.scope = scope
        return _flatten(fn(*args), where)


def _yield(block: ir.Block, values: Sequence[Tracer], dtypes_: Sequence[np.dtype]) -> None:
    """Ends a region with ``scf.yield``, casting weak values to the op's result dtypes."""
    with current_trace().region(block):
        scf.YieldOp([ew.astype(v, dt).value for v, dt in zip(values, dtypes_)])


def _scalar(t: Tracer) -> ir.Value:
    return tensor.ExtractOp(t.value, []).result


def _index_tensor(iv: ir.Value, dtype: np.dtype, weak: bool) -> Tracer:
    """An ``index`` value as a 0-d tensor of an integer dtype."""
    scalar = arith.IndexCastOp(dtypes.mlir_type(dtype), iv).result
    value = tensor.FromElementsOp(dtypes.tensor_type((), dtype), [scalar]).result
    return Tracer(value, (), dtype, weak=weak)


# ---- checking what functions return ------------------------------------------------------

def _same_structure(where: str, what: str, expected: tree_util.PyTreeDef, got: tree_util.PyTreeDef,
                    fix: str) -> None:
    if expected != got:
        raise TracingError(f"{where}: {what}: expected the structure "
                           f"{tree_util.describe(expected)}, got {tree_util.describe(got)}. {fix}")


def _join_branches(where: str, names: Sequence[str], outs: Sequence[list[Tracer]],
                   paths: Sequence[str]) -> list[Tracer]:
    """The result of every leaf: the branches' common shape and dtype (weak values adapt
    to a strongly typed branch); raises naming the first leaf that differs."""
    joined = []
    for leaf, path in enumerate(paths):
        leaves = [o[leaf] for o in outs]
        strong = {t.dtype for t in leaves if not t.weak}
        target = (strong.pop() if len(strong) == 1
                  else np.result_type(*[ew._promotion_operand(t) for t in leaves]))
        first = (leaves[0].shape, leaves[0].dtype)
        if any(t.shape != first[0] or not (t.dtype == target or (t.weak and _adapts_to(t, target)))
               for t in leaves):
            k = next(k for k, t in enumerate(leaves) if (t.shape, t.dtype) != first)
            raise TracingError(
                f"{where}: every branch must return the same shapes and dtypes; at output"
                f"{path} {names[0]} returns {_describe(leaves[0])} but {names[k]} returns "
                f"{_describe(leaves[k])}. Fix: make the branches agree, e.g. with .astype(...) or "
                f"anp.broadcast_to(...) in one of them"
            )
        joined.append(Tracer(leaves[0].value, first[0], target, weak=all(t.weak for t in leaves)))
    return joined


class _Promote(Exception):
    """The init carry holds weakly typed values that the body promotes: trace again with
    ``types``, one ``(dtype, weak)`` per leaf."""

    def __init__(self, types: list[tuple[np.dtype, bool]]):
        super().__init__("retrace with a promoted carry")
        self.types = types


def _check_carry(where: str, fn_name: str, init: list[Tracer], init_tree: tree_util.PyTreeDef,
                 out: list[Tracer], out_tree: tree_util.PyTreeDef) -> None:
    """JAX's carry rule: same structure, shapes and dtypes as the init. A weakly typed
    init value is promoted to the body's dtype (``_Promote``: trace again); a weakly typed
    output takes the carry's dtype when numpy's rule allows (cast before the yield)."""
    _same_structure(where, f"{fn_name} must return the carry with init's structure", init_tree,
                    out_tree, f"Fix: return the same pytree of arrays that {fn_name} receives")
    kept = [(a.dtype, a.weak) for a in init]
    promoted = list(kept)
    for i, (path, a, b) in enumerate(zip(leaf_paths(init_tree, ""), init, out)):
        if a.shape == b.shape and (a.dtype == b.dtype or (b.weak and _adapts_to(b, a.dtype))):
            continue
        if a.shape == b.shape and a.weak:
            wider = np.result_type(ew._promotion_operand(a), ew._promotion_operand(b))
            promoted[i] = (wider, b.weak)
            if promoted[i][0] != a.dtype:
                continue
        raise TracingError(
            f"{where}: {fn_name} must return a carry of the same shapes and dtypes as its "
            f"input; at carry{path} the input is {_describe(a)} but {fn_name} returns "
            f"{_describe(b)}. Fix: cast or reshape in {fn_name} (e.g. .astype({a.dtype.name!r})), "
            f"or start from an init value of the type the loop computes (e.g. "
            f"anp.zeros({b.shape}, {b.dtype.name!r}))"
        )
    if promoted != kept:
        raise _Promote(promoted)


def _promoting(build: Callable[[list[Tracer]], Any], carry: list[Tracer]):
    """Runs ``build(carry)``, again with the promoted carry while it asks for one (the
    casts are made here, before the op, once the failed trace's regions are gone)."""
    for _ in range(len(carry) + 1):
        try:
            return build(carry)
        except _Promote as p:
            carry = [c if c.dtype == dt else _with_weak(ew.astype(c, dt), weak)
                     for c, (dt, weak) in zip(carry, p.types)]
    raise AssertionError("carry promotion did not settle")  # each round strictly widens a dtype


def _with_weak(t: Tracer, weak: bool) -> Tracer:
    return Tracer(t.value, t.shape, t.dtype, weak=weak)


def _result_weak(carry: Sequence[Tracer], out: Sequence[Tracer]) -> list[bool]:
    """A loop result stays weakly typed only where both the init and the body's value are."""
    return [c.weak and o.weak for c, o in zip(carry, out)]


# ---- cond and switch ----------------------------------------------------------------------

def _predicate(pred, where: str) -> ir.Value:
    p = _as_array(pred, f"{where}: pred")
    if p.shape != ():
        raise TracingError(
            f"{where}: expected a scalar predicate (shape ()), got {_describe(p)}. Fix: reduce "
            f"it first, e.g. anp.any(pred) or anp.all(pred), or index one element"
        )
    if dtypes.kind(p.dtype) != "bool":
        p = ew.ufunc("not_equal", p, 0)  # a number is true where it is nonzero, as in JAX
    return _scalar(p)


def _if(where: str, condition: ir.Value, names: Sequence[str], fns: Sequence[Callable],
        operands: tuple):
    """An ``scf.if``: traces each branch into its own block, joins their outputs."""
    for name, fn in zip(names, fns):
        _callable(fn, name, where)
    leaves, operand_tree = _flatten(operands, "operands")
    with Regions() as regions:
        blocks, outs = [], []
        for name, fn in zip(names, fns):
            block = regions.block()
            outs.append(_trace(block, lambda *a, fn=fn: fn(*_rebuild(operand_tree, a)),
                               leaves, f"{where}: {name} output"))
            blocks.append(block)
        for name, (_, t) in zip(names, outs):
            _same_structure(where, f"{name} must return what {names[0]} returns", outs[0][1], t,
                            "Fix: return the same pytree (tuples, lists, dicts of arrays) "
                            "from every branch")
        joined = _join_branches(where, names, [o for o, _ in outs], leaf_paths(outs[0][1], ""))
        for block, (values, _) in zip(blocks, outs):
            _yield(block, values, [j.dtype for j in joined])
        op = regions.build("scf.if", _types(joined), [condition], blocks)
    return _rebuild(outs[0][1], _like(op.results, joined))


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """``jax.lax.cond``: ``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    Both branches are traced (into an ``scf.if``); only the chosen one runs. ``pred`` is
    a scalar bool or number (nonzero is true). Both must return the same pytree with the
    same shapes and dtypes; a Python scalar output takes the other branch's dtype.

    >>> f = aotc.jit(lambda x: aotc.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x))
    >>> f(np.array([1.0, 2.0], np.float32)), f(np.array([-1.0, -2.0], np.float32))
    (Array([2., 4.], dtype=float32), Array([1., 2.], dtype=float32))
    """
    where = "lax.cond"
    return _if(where, _predicate(pred, where), ("true_fun", "false_fun"), (true_fun, false_fun),
               operands)


def switch(index, branches: Sequence[Callable], *operands):
    """``jax.lax.switch``: ``branches[index](*operands)``, ``index`` clamped to
    ``[0, len(branches) - 1]`` as in JAX.

    Lowered to a chain of ``scf.if`` (``index == 0``, else ``index == 1``, ..., the last
    branch innermost): IREE 3.13 cannot compile ``scf.index_switch`` with tensor results
    (its stream conversion leaves the default region's yield unconverted).

    >>> f = aotc.jit(lambda k, x: aotc.lax.switch(k, [lambda v: v, lambda v: v * 2, anp.sin], x))
    >>> f.lower(np.int32(0), np.zeros(3, np.float32)).as_text().count("scf.if")  # k == 0, k == 1
    2
    """
    where = "lax.switch"
    branches = list(branches) if isinstance(branches, (list, tuple)) else None
    if not branches:
        raise TracingError(f"{where}: expected a non-empty list or tuple of branch functions, got "
                           f"{'an empty one' if branches == [] else 'something else'}")
    for k, fn in enumerate(branches):
        _callable(fn, f"branches[{k}]", where)
    i = _as_array(index, f"{where}: index")
    if i.shape != () or dtypes.kind(i.dtype) not in ("int", "uint"):
        raise TracingError(f"{where}: expected a scalar integer index, got {_describe(i)}. Fix: "
                           f"convert it, e.g. index.astype(anp.int32)")
    n = len(branches)
    clamped = ew.ufunc("minimum", ew.ufunc("maximum", i, 0), n - 1)

    def from_branch(k: int):
        if k == n - 1:
            return branches[k]
        names = (f"branches[{k}]", f"branches[{k + 1}:]" if k + 2 < n else f"branches[{k + 1}]")
        chosen = _scalar(ew.ufunc("equal", clamped, k))
        return lambda *ops: _if(where, chosen, names, (branches[k], from_branch(k + 1)), ops)

    return from_branch(0)(*operands)


def _unroll_factor(unroll, length: int, where: str) -> int:
    """Steps per loop iteration, as JAX: True or 0 unroll the whole loop, False is 1."""
    if isinstance(unroll, (bool, np.bool_)):
        return max(length, 1) if unroll else 1
    if not _static_int(unroll) or unroll < 0:
        raise TracingError(f"{where}: unroll must be a non-negative int or a bool, got "
                           f"{unroll!r}")
    return max(1, min(int(unroll) or length, length))


# ---- while_loop and fori_loop ------------------------------------------------------------

def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """``jax.lax.while_loop``: ``while cond_fun(val): val = body_fun(val)``, as one
    ``scf.while`` carrying the flattened ``val``.

    ``cond_fun`` returns a scalar bool; ``body_fun`` returns ``val``'s pytree with the
    same shapes and dtypes (a Python scalar in ``init_val`` is promoted to the dtype the
    body computes, as in JAX).

    >>> f = aotc.jit(lambda x: aotc.lax.while_loop(lambda v: v.sum() < 100, lambda v: v * 2, x))
    >>> "scf.while" in f.lower(np.ones(3, np.float32)).as_text()
    True
    """
    where = "lax.while_loop"
    _callable(cond_fun, "cond_fun", where)
    _callable(body_fun, "body_fun", where)
    init, init_tree = _flatten(init_val, "init_val")
    trace = current_trace()

    def build(carry):
        types = _types(carry)
        with Regions() as regions:
            before, after = regions.block(types), regions.block(types)
            oks, ok_tree = _trace(before, lambda *c: cond_fun(_rebuild(init_tree, c)),
                                  _like(before.arguments, carry), f"{where}: cond_fun output")
            ok = oks[0] if tree_util.treedef_is_leaf(ok_tree) and oks else None
            if ok is None or ok.shape != () or ok.dtype != np.bool_:
                got = _describe(ok) if ok is not None else f"a pytree {tree_util.describe(ok_tree)}"
                raise TracingError(f"{where}: cond_fun must return a scalar bool, got {got}. "
                                   f"Fix: return a comparison such as `i < n`, or anp.any(...) "
                                   f"of an array")
            with trace.region(before):
                scf.ConditionOp(_scalar(ok), list(before.arguments))
            out, out_tree = _trace(after, lambda *c: body_fun(_rebuild(init_tree, c)),
                                   _like(after.arguments, carry), f"{where}: body_fun output")
            _check_carry(where, "body_fun", carry, init_tree, out, out_tree)
            _yield(after, out, [c.dtype for c in carry])
            op = regions.build("scf.while", types, [_loop_input(c.value) for c in carry],
                               [before, after])
        return _rebuild(init_tree, _like(op.results, carry, _result_weak(carry, out)))

    return _promoting(build, init)


def _static_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll: int | bool | None = None):
    """``jax.lax.fori_loop``: ``for i in range(lower, upper): val = body_fun(i, val)``.

    Python or numpy integer bounds give an ``scf.for`` (``i`` is a 0-d integer array of
    the bounds' dtype, weakly typed for Python ints); traced bounds give a
    ``while_loop`` counting ``i`` up to ``upper``. ``unroll=k`` (static bounds only, as
    in JAX) traces ``body_fun`` k times per loop iteration and the remaining steps after
    the loop; ``unroll=True`` (or 0) unrolls the whole loop.

    >>> f = aotc.jit(lambda x: aotc.lax.fori_loop(0, 10, lambda i, acc: acc + i * x, 0 * x))
    >>> "scf.for" in f.lower(np.ones(3, np.float32)).as_text()
    True
    """
    where = "lax.fori_loop"
    _callable(body_fun, "body_fun", where)
    if not (_static_int(lower) and _static_int(upper)):
        if unroll is not None and unroll is not False and unroll != 1:
            raise TracingError(f"{where}: unroll={unroll!r} needs static loop bounds, got "
                               f"traced ones. Fix: pass int bounds, or drop unroll")
        bounds = [_as_array(b, f"{where}: {n}") for b, n in ((lower, "lower"), (upper, "upper"))]
        for b, name in zip(bounds, ("lower", "upper")):
            if b.shape != () or dtypes.kind(b.dtype) not in ("int", "uint"):
                raise TracingError(f"{where}: expected a scalar integer {name} bound, got "
                                   f"{_describe(b)}. Fix: pass an int, or convert it with "
                                   f".astype(anp.int32)")
        dtype = np.result_type(*[ew._promotion_operand(b) for b in bounds])
        start, stop = (ew.astype(b, dtype) for b in bounds)
        counted = while_loop(lambda c: c[0] < stop,
                             lambda c: (c[0] + 1, body_fun(c[0], c[1])), (start, init_val))
        return counted[1]
    # i has the bounds' dtype: weakly typed int64 for Python ints, as a Python int would be.
    weak = isinstance(lower, int) and isinstance(upper, int)
    dtype = np.result_type(*[0 if isinstance(b, int) else b.dtype for b in (lower, upper)])
    init, init_tree = _flatten(init_val, "init_val")
    trace = current_trace()
    n = max(int(upper) - int(lower), 0)
    k = _unroll_factor(False if unroll is None else unroll, n, where)
    main = n - n % k
    bounds_ir = [index_constant(int(lower)), index_constant(int(lower) + main), index_constant(k)]

    def step(carry: list[Tracer], iv: ir.Value) -> tuple[list[Tracer], list[Tracer]]:
        """One ``body_fun`` call at index ``iv``: its outputs, and the next carry (the
        outputs cast to the carry's dtypes)."""
        i = _index_tensor(iv, dtype, weak)
        out, out_tree = _flatten(body_fun(i, _rebuild(init_tree, carry)),
                                 f"{where}: body_fun output")
        _check_carry(where, "body_fun", carry, init_tree, out, out_tree)
        return out, _like([ew.astype(v, c.dtype).value for v, c in zip(out, carry)], carry)

    def build(carry):
        before_work = tally(trace)
        with Regions() as regions:
            body = regions.block([ir.IndexType.get(), *_types(carry)])
            iv = body.arguments[0]

            def unrolled(*state):
                for j in range(k):
                    t = iv if j == 0 else arith.AddIOp(iv, index_constant(j)).result
                    out, state = step(list(state), t)
                return _rebuild(init_tree, out)

            out, _ = _trace(body, unrolled, _like(list(body.arguments)[1:], carry),
                            f"{where}: body_fun output")
            _yield(body, out, [c.dtype for c in carry])
            op = regions.build("scf.for", _types(carry),
                               [*bounds_ir, *[_loop_input(c.value) for c in carry]], [body])
        scale_since(trace, before_work, main // k)
        state = _like(op.results, carry)
        for s in range(main, n):  # the steps left over by unroll=k, traced in line
            out, state = step(state, index_constant(int(lower) + s))
        return _rebuild(init_tree, _like([v.value for v in state], carry,
                                               _result_weak(carry, out)))

    return _promoting(build, init)


def _loop_input(value: ir.Value) -> ir.Value:
    """A loop's initial carry, computed in a dispatch of its own. IREE 3.13 fuses the
    producer of a carry with the producers of values read after the loop into one
    multi-result dispatch, and then fails to order it around the loop ("circular
    dependency: input operation uses partition output"): for ``b = exp2(x)``,
    ``cosh(b) / fori_loop(..., log1p(b))``, and the same around a ``while_loop`` or with
    an update as the carry (``x.at[i].min(y)`` read again after the loop: fuzzer
    program 57645). The barrier is marked (``CARRY_BARRIER``): behind it, a returned
    update in a donated buffer was copied into itself, and aotc-drop-carry-barriers
    takes it away there."""
    computed = isinstance(value, ir.OpResult) and value.owner.name != "arith.constant"
    if not computed:
        return value
    result = barrier(value)
    result.owner.attributes[CARRY_BARRIER] = ir.UnitAttr.get()
    return result
