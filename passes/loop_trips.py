"""How many loop iterations a sequential kernel makes at most, counted at compile time.

Mesa's software Vulkan driver (lavapipe, llvmpipe's compute shaders) stops every shader
invocation after 65535 loop iterations in total, counted over all its loops, and the
shader then goes on with whatever it had written: a 128x128 Cholesky kernel stopped after
column 34. The runtime refuses a function whose kernels may go past such a limit
(``runtime/function.py``), so the count must be an upper bound, and close: a bound that
over-counts a triangle's loops six times would refuse kernels that run fine.

A kernel's loops are ``scf.for`` whose bounds are constants, enclosing induction
variables, index arithmetic on those, or values a loop carries (the QL step's end ``m``,
found by a search): the count walks the loop nest with each enclosing induction variable
at each of its values, and bounds every other index value by an interval (a carried
value by the hull of its start and of what the body yields). ``scf.if`` counts its dearer
branch, so a loop that may stop early counts every trip (the eigensolvers' 30 sweeps per
eigenvalue). A bound that depends on a run-time size (a dynamic batch) is None; past
``CAP`` the walk stops and says ``CAP + 1``.
"""

from __future__ import annotations

from .base import as_op, constant_index

Interval = tuple[int, int]

# Far beyond any driver's limit: the walk stops here.
CAP = 1 << 22
# Rounds of widening a loop-carried value's interval before calling it unbounded.
_ROUNDS = 4


def kernel_loop_trips(region) -> int | None:
    """The most loop iterations one run of ``region`` (a kernel's ``flow.dispatch.region``)
    makes, over all its loops: ``CAP + 1`` for anything beyond ``CAP``, None when a bound
    is not known at compile time."""
    try:
        return min(_block(as_op(region).regions[0].blocks[0], {}), CAP + 1)
    except _Unbounded:
        return None


class _Unbounded(Exception):
    pass


def _block(block, env: dict) -> int:
    total = 0
    for op in block.operations:
        total += _op(as_op(op), env)
        if total > CAP:
            break
    return total


def _op(op, env: dict) -> int:
    if op.name == "scf.for":
        return _loop(op, env)
    if op.name == "scf.if":
        return max((_block(r.blocks[0], env) for r in op.regions if len(r.blocks)), default=0)
    return sum(_block(b, env) for r in op.regions for b in r.blocks)


def _loop(op, env: dict) -> int:
    lower, upper, step = (_interval(v, env) for v in list(op.operands)[:3])
    if step[0] <= 0:
        raise _Unbounded
    body = op.regions[0].blocks[0]
    values = range(lower[0], upper[1], step[0])
    if not _has_loops(body):
        return len(values)
    total = 0
    induction = body.arguments[0]
    for value in values:
        env[induction] = (value, value)
        total += 1 + _block(body, env)
        if total > CAP:
            break
    env.pop(induction, None)
    return total


def _has_loops(block) -> bool:
    """Whether ``block`` holds an ``scf.for`` at any depth."""
    return any(as_op(op).name == "scf.for" or any(_has_loops(b) for r in as_op(op).regions
                                                  for b in r.blocks)
               for op in block.operations)


# index arithmetic: (lo, hi) of the result from the operands' intervals
_ARITHMETIC = {
    "arith.addi": lambda a, b: (a[0] + b[0], a[1] + b[1]),
    "arith.subi": lambda a, b: (a[0] - b[1], a[1] - b[0]),
    "arith.muli": lambda a, b: (min(x * y for x in a for y in b), max(x * y for x in a for y in b)),
    "arith.minsi": lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
    "arith.maxsi": lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
    "arith.remui": lambda a, b: _unsigned_remainder(a, b),
}


def _unsigned_remainder(a: Interval, b: Interval) -> Interval:
    """a % b, unsigned: below b, and at most a where a cannot be negative (a negative
    index read unsigned is huge); a divisor that may be 0 bounds nothing."""
    if b[0] <= 0:
        raise _Unbounded
    return (0, b[1] - 1 if a[0] < 0 else min(a[1], b[1] - 1))


def _interval(value, env: dict, carried: frozenset = frozenset()) -> Interval:
    """The values ``value`` can take (``_Unbounded`` where no bound is known)."""
    from aotc._mlir import ir

    if value in env:
        return env[value]
    known = constant_index(value)
    if known is not None:
        return (known, known)
    if isinstance(value, ir.BlockArgument):
        return _carried(value, env, carried)
    op = as_op(value.owner)
    if op.name == "arith.index_cast":
        return _interval(op.operands[0], env, carried)
    if op.name == "arith.select":
        return _hull(*(_interval(v, env, carried) for v in list(op.operands)[1:]))
    if op.name == "scf.for":  # a loop's result: what it starts from or its body yields
        return _carried(op.regions[0].blocks[0].arguments[1 + value.result_number], env,
                        carried)
    rule = _ARITHMETIC.get(op.name)
    if rule is None:
        raise _Unbounded
    return rule(*(_interval(v, env, carried) for v in op.operands))


def _carried(argument, env: dict, carried: frozenset) -> Interval:
    """A loop-carried value (an ``scf.for`` iteration argument other than the induction
    variable): the smallest interval holding its start and every value the body yields
    from a value in it (a few rounds; a value that keeps growing, a counter, is
    unbounded)."""
    loop = as_op(argument.owner.owner)
    position = argument.arg_number - 1
    if loop.name != "scf.for" or position < 0 or argument in carried:
        raise _Unbounded
    operands = list(loop.operands)
    start = _interval(operands[3 + position], env, carried)
    body = loop.regions[0].blocks[0]
    yielded = list(body.operations)[-1].operands[position]
    # inside the body, the induction variable takes any of its values
    lower, upper = (_interval(v, env, carried) for v in operands[:2])
    inside = {**env, body.arguments[0]: (lower[0], max(lower[0], upper[1] - 1))}
    current = start
    for _ in range(_ROUNDS):
        grown = _hull(start, _interval(yielded, {**inside, argument: current},
                                       carried | {argument}))
        if grown == current:
            return current
        current = grown
    raise _Unbounded


def _hull(*intervals: Interval) -> Interval:
    return (min(i[0] for i in intervals), max(i[1] for i in intervals))
