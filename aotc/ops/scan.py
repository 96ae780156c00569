"""``lax.scan`` with JAX's semantics: one ``scf.for`` whose iter_args are the carry and
the stacked ys (control.py has the rules every structured op shares: pytrees, regions,
weak-type promotion of the carry).
"""

from __future__ import annotations

from typing import Callable, Sequence

from .. import dtypes, tree_util
from .._mlir import arith, index_constant, ir, scf
from ..core import Tracer, current_trace
from ..errors import TracingError
from ..lowering import empty, extract_slice, insert_slice
from ..work import scale_since, tally
from ..signature import leaf_paths
from . import elementwise as ew
from .control import (_callable, _check_carry, _describe, _flatten, _like,
                      _promoting, _rebuild, _result_weak, _static_int, _types, _unroll_factor)
from .regions import Regions

EXPORTS: dict[str, list[str]] = {"numpy": [], "lax": ["scan"], "nn": []}

# ---- scan ----------------------------------------------------------------------------------

def _scan_length(xs: list[Tracer], xs_tree: tree_util.PyTreeDef, length, where: str) -> int:
    lengths = {}
    for path, x in zip(leaf_paths(xs_tree, ""), xs):
        if x.ndim == 0:
            raise TracingError(f"{where}: every xs leaf is scanned along its leading axis, but "
                               f"xs{path} is 0-d ({_describe(x)}). Fix: pass arrays with a "
                               f"leading axis")
        lengths.setdefault(x.shape[0], path)
    if length is not None:
        if not _static_int(length) or length < 0:
            raise TracingError(f"{where}: length must be a non-negative int, got {length!r}")
        lengths.setdefault(int(length), "length")
    if not lengths:
        raise TracingError(f"{where}: with xs=None (or no arrays in xs), pass length=... to "
                           f"say how many steps to run")
    if len(lengths) > 1:
        listed = ", ".join(f"{p if p == 'length' else 'xs' + p}: {n}" for n, p in lengths.items())
        raise TracingError(f"{where}: xs leaves and length must agree on the number of steps; "
                           f"got {listed}. Fix: give every xs leaf the same leading axis length")
    return next(iter(lengths))


def _slice_step(x: Tracer, t: ir.Value) -> Tracer:
    """``x[t]`` for an ``index`` value ``t``: a rank-reducing extract_slice."""
    rest = list(x.shape[1:])
    value = extract_slice(x.value, x.shape, [t] + [0] * len(rest), [1, *rest], None, x.dtype, rest)
    return Tracer(value, rest, x.dtype, weak=x.weak)


class _ScanStep:
    """Calls ``f`` for one step: slices xs at the step's index, checks the carry."""

    def __init__(self, f, init_tree, xs, xs_tree, length: int, reverse: bool, where: str):
        self.f, self.init_tree, self.xs, self.xs_tree = f, init_tree, xs, xs_tree
        self.length, self.reverse, self.where = length, reverse, where
        self.y_tree: tree_util.PyTreeDef | None = None
        self.weak: list[bool] = []  # per carry leaf, after the last step traced

    def index(self, step: ir.Value) -> ir.Value:
        """The position read and written at step ``step``: from the end when reversed."""
        return arith.SubIOp(index_constant(self.length - 1), step).result if self.reverse else step

    def __call__(self, carry: list[Tracer], t: ir.Value) -> tuple[list[Tracer], list[Tracer]]:
        x = _rebuild(self.xs_tree, [_slice_step(x, t) for x in self.xs])
        out = self.f(_rebuild(self.init_tree, carry), x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TracingError(f"{self.where}: f must return a pair (carry, y), got "
                               f"{type(out).__name__}. Fix: return (new_carry, y), with y=None "
                               f"when there are no per-step outputs")
        new, new_tree = _flatten(out[0], f"{self.where}: f carry output")
        _check_carry(self.where, "f", carry, self.init_tree, new, new_tree)
        ys, self.y_tree = _flatten(out[1], f"{self.where}: f y output")
        self.weak = _result_weak(carry, new)
        # The next step (unroll) sees exactly the carry's types again.
        return _like([ew.astype(v, c.dtype).value for v, c in zip(new, carry)], carry), ys


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False, unroll=1):
    """``jax.lax.scan``: ``carry, y = f(carry, x)`` for each ``x`` along the leading axis of
    ``xs`` (a pytree, or None with ``length``); returns the final carry and the ys stacked
    along a new leading axis.

    One ``scf.for`` over the steps carries the flattened carry and one stacked buffer per
    y type (``_Stacks``): ``x`` is read with ``tensor.extract_slice`` at the step's
    (dynamic) offset and ``y`` written with ``tensor.insert_slice`` into the buffer
    carried as an iter_arg, so IREE updates it in place. ``reverse`` runs from the end
    (ys keep xs's order); ``unroll=k`` traces ``f`` k times per loop iteration, the
    remaining steps after it.

    >>> cumsum = aotc.jit(lambda xs: aotc.lax.scan(lambda c, x: (c + x, c + x), 0.0, xs))
    >>> cumsum(np.arange(1.0, 5.0, dtype=np.float32))      # the final carry, and every carry
    (Array(10., dtype=float32), Array([ 1.,  3.,  6., 10.], dtype=float32))
    """
    where = "lax.scan"
    _callable(f, "f", where)
    xs_leaves, xs_tree = _flatten(xs, "xs")
    n = _scan_length(xs_leaves, xs_tree, length, where)
    init, init_tree = _flatten(init, "init")
    step = _ScanStep(f, init_tree, xs_leaves, xs_tree, n, bool(reverse), where)
    if n == 0:
        return _empty_scan(step, init)
    k = _unroll_factor(unroll, n, where)
    trace = current_trace()

    def build(carry):
        before_work = tally(trace)
        with Regions() as regions:
            body = regions.block([ir.IndexType.get(), *_types(carry)])
            with trace.region(body):
                iv, state = body.arguments[0], _like(list(body.arguments)[1:], carry)
                ys_per_step = []
                for j in range(k):
                    t = step.index(iv if j == 0 else arith.AddIOp(iv, index_constant(j)).result)
                    state, ys = step(state, t)
                    ys_per_step.append((t, ys))
                stacks = _Stacks(ys_per_step[0][1], n)
                bufs = [body.add_argument(t, ir.Location.unknown()) for t in stacks.types]
                for t, ys in ys_per_step:
                    bufs = stacks.insert(bufs, ys, t)
                scf.YieldOp([s.value for s in state] + bufs)
            main = n - n % k
            bounds = [index_constant(0), index_constant(main), index_constant(k)]
            op = regions.build("scf.for", [*_types(carry), *stacks.types],
                               [*bounds, *[c.value for c in carry], *stacks.inits()], [body])
        scale_since(trace, before_work, n // k)
        results = list(op.results)
        state = _like(results[: len(carry)], carry, step.weak)
        bufs = results[len(carry):]
        for s in range(main, n):  # the steps left over by unroll=k, traced in line
            t = step.index(index_constant(s))
            state, ys = step(state, t)
            bufs = stacks.insert(bufs, ys, t)
        return _rebuild(init_tree, state), _rebuild(step.y_tree, stacks.stacked(bufs))

    return _promoting(build, init)


class _Stacks:
    """Where scan stacks its ys: one loop-carried buffer per y type. A type's only y has a
    buffer ``[n, *shape]``; ``m`` ys of one type share one ``[m, n, *shape]`` (y ``j`` in
    row ``j``). Separate buffers would each start from a ``tensor.empty`` that CSE makes
    one value, and IREE 3.13 then gives them the same memory: every y came back with the
    last one's values."""

    def __init__(self, ys: Sequence[Tracer], n: int):
        self.ys, self.n = list(ys), n
        groups: dict = {}  # (shape, dtype) -> positions of its ys
        for i, y in enumerate(self.ys):
            groups.setdefault((tuple(y.shape), y.dtype), []).append(i)
        # y -> (its buffer, its row in it, or None when the buffer is its alone)
        self.where = [None] * len(self.ys)
        self.shapes, self.dtypes = [], []
        for g, ((shape, dtype), members) in enumerate(groups.items()):
            for row, i in enumerate(members):
                self.where[i] = (g, None if len(members) == 1 else row)
            self.shapes.append(((len(members),) if len(members) > 1 else ()) + (n, *shape))
            self.dtypes.append(dtype)
        self.types = [dtypes.tensor_type(s, d) for s, d in zip(self.shapes, self.dtypes)]

    def inits(self) -> list[ir.Value]:
        return [empty(s, d) for s, d in zip(self.shapes, self.dtypes)]

    def insert(self, bufs: list[ir.Value], ys: Sequence[Tracer], t: ir.Value) -> list[ir.Value]:
        """The buffers with step ``t``'s ys written."""
        bufs = list(bufs)
        for y, (g, row) in zip(ys, self.where):
            lead = [] if row is None else [row]
            bufs[g] = insert_slice(y.value, bufs[g], self.shapes[g],
                                   lead + [t] + [0] * len(y.shape), [1] * len(lead) + [1, *y.shape])
        return bufs

    def stacked(self, bufs: list[ir.Value]) -> list[Tracer]:
        """The ys stacked along a new first axis, read from the loop's final buffers."""
        out = []
        for y, (g, row) in zip(self.ys, self.where):
            shape = (self.n, *y.shape)
            value = bufs[g] if row is None else extract_slice(
                bufs[g], self.shapes[g], [row] + [0] * len(shape), [1, *shape], None, y.dtype,
                shape)
            out.append(Tracer(value, shape, y.dtype, weak=y.weak))
        return out


def _empty_like_stacked(y: Tracer, n: int) -> ir.Value:
    return empty((n, *y.shape), y.dtype)


def _empty_scan(step: _ScanStep, init: list[Tracer]):
    """A zero-step scan: ``f`` is traced (into a block that is then dropped) only to check the
    carry and learn the ys' shapes and dtypes; the result is ``init`` and empty ys, as in JAX."""

    def probe(carry):
        with Regions() as regions:
            block = regions.block([ir.IndexType.get()])
            with current_trace().region(block):
                _, ys = step(carry, block.arguments[0])
        return carry, ys

    carry, ys = _promoting(probe, init)
    stacked = [Tracer(_empty_like_stacked(y, 0), (0, *y.shape), y.dtype, weak=y.weak) for y in ys]
    return _rebuild(step.init_tree, carry), _rebuild(step.y_tree, stacked)
