"""Drawing random programs (``generate(seed)``), evaluated and bounded with numpy as drawn.

A ``Program`` is source text plus its arguments: two examples of every array argument
(the second for ``vmap``, whose reference is a loop over the examples), Python scalar
arguments (weakly typed on both sides) and static ints. Each step draws an op from
``ops.OPS`` and operands among the values so far, runs it with numpy on both examples
with bounds (``bounds.propagate``) and keeps it only if numpy accepts it, its result is
defined (no float-to-int cast of a NaN, an infinity or a value out of range; no
subnormal; not too large) and settled by the bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import bounds
from .helpers import NUMPY_LAX, NumpyHelpers
from .ops import DTYPES, MAX_ELEMENTS, OPS, Op

EXAMPLES = 2
SIZES = [0, 1, 1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 64, 100, 128, 256]
MAX_INPUT_ELEMENTS = 4096


def edge_values(dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, info.max,
                         -info.max, info.tiny, -info.tiny, info.max / 4, info.tiny * 8,
                         info.eps, 1 + info.eps], dtype)
    info = np.iinfo(dtype)
    values = [0, 1, 2, info.max, info.max - 1, 7, 100]
    if info.min < 0:
        values += [-1, -2, info.min, info.min + 1, -100]
    return np.array(values, dtype=dtype)


def random_array(rng, dtype: np.dtype, shape) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "b":
        data = rng.integers(0, 2, n).astype(bool)
    elif dtype.kind == "f":
        scale = rng.choice([1.0, 4.0, 100.0, 0.01])
        data = (rng.standard_normal(n) * scale).astype(dtype)
    else:
        info = np.iinfo(dtype)
        wide = rng.integers(2) == 0
        low, high = (info.min, info.max) if wide else (max(info.min, -20), min(info.max, 20))
        data = rng.integers(low, high, n, endpoint=True, dtype=np.int64 if dtype != np.uint64
                            else np.uint64).astype(dtype)
    if n and rng.integers(3):
        edges = edge_values(dtype)
        where = rng.random(n) < rng.choice([0.05, 0.2, 0.5])
        data[where] = edges[rng.integers(0, len(edges), int(where.sum()))]
    return data.reshape(shape)


def random_shape(rng, max_elements=MAX_INPUT_ELEMENTS) -> tuple:
    while True:
        shape = tuple(int(rng.choice(SIZES)) for _ in range(int(rng.choice([0, 1, 1, 2, 2, 3, 4]))))
        if np.prod(shape, dtype=np.int64) <= max_elements:
            return shape


@dataclass
class Argument:
    name: str
    role: str  # "array", "scalar" (a Python number, traced) or "static" (a static int)
    examples: list  # one value per example (scalars and statics: the same each time)


@dataclass
class Program:
    seed: int
    arguments: list[Argument] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    constants: dict = field(default_factory=dict)  # name -> numpy array (indices, masks)
    # numpy's results with their bounds, per example
    wants: list[list[bounds.Value]] = field(default_factory=list)

    @property
    def source(self) -> str:
        params = ", ".join(["m", "lax", "h"] + [a.name for a in self.arguments])
        consts = [f"    {k} = np.array({v.tolist()!r}, dtype={str(v.dtype)!r})"
                  for k, v in self.constants.items()]
        body = consts + [f"    {line}" for line in self.lines]
        return "\n".join([f"def program({params}):", *body,
                          f"    return ({', '.join(self.results)},)"])

    def function(self):
        namespace = {"np": np}
        exec(compile(self.source, f"<fuzz program {self.seed}>", "exec"), namespace)
        return namespace["program"]

    def args(self, example: int = 0) -> list:
        return [a.examples[example] for a in self.arguments]

    def roles(self) -> list[str]:
        return [a.role for a in self.arguments]


class _Draw:
    """What an op's parameter drawing may do: draw numbers, add arguments and constants.
    Additions are undone if the step is redrawn (``rollback``)."""

    def __init__(self, program: Program, rng) -> None:
        self.program, self.rng = program, rng
        self.mark()

    def mark(self) -> None:
        self._n_args = len(self.program.arguments)
        self._consts = dict(self.program.constants)

    def rollback(self) -> None:
        del self.program.arguments[self._n_args:]
        self.program.constants = self._consts
        self.mark()

    def _name(self, prefix: str) -> str:
        return f"{prefix}{len(self.program.arguments) + len(self.program.constants)}"

    def new_array(self, dtype, shape) -> str:
        name = self._name("x")
        examples = [random_array(self.rng, np.dtype(dtype), shape) for _ in range(EXAMPLES)]
        self.program.arguments.append(Argument(name, "array", examples))
        return name

    def scalar(self, dtype) -> str:
        kind = np.dtype(dtype).kind
        choices = [0.5, -1.5, 3.0, 2.5, 1e3] if kind == "f" else [0, 1, -1, 2, 3, 7, -5, 100, 300]
        if kind in "iu":
            # a traced Python int out of the array dtype's range is refused at the call
            # (ArgumentOverflowError, tests/test_value_checks.py), also where numpy's
            # comparison with it is exact: not a disagreement to look for here
            info = np.iinfo(dtype)
            choices = [c for c in choices if info.min <= c <= info.max]
        value = choices[self.rng.integers(len(choices))]
        if kind == "b":
            value = bool(self.rng.integers(2))
        name = self._name("s")
        self.program.arguments.append(Argument(name, "scalar", [value] * EXAMPLES))
        return name

    def static(self) -> str:
        name = self._name("k")
        value = int(self.rng.integers(-5, 6))
        self.program.arguments.append(Argument(name, "static", [value] * EXAMPLES))
        return name

    def constant(self, array) -> str:
        name = f"c{len(self.program.constants)}"
        self.program.constants[name] = np.asarray(array)
        return name


def _cast_undefined(op: Op, fragments: dict, operands: list[bounds.Value]) -> bool:
    """numpy leaves a float-to-int cast of NaN, infinities and out-of-range values
    undefined (platform-specific): such casts are redrawn."""
    if op.name != "astype":
        return False
    src = np.asarray(operands[0].data)
    target = np.dtype(eval(fragments["dtype"]))
    if src.dtype.kind != "f" or target.kind not in "iu":
        return False
    info = np.iinfo(target)
    with np.errstate(invalid="ignore"):
        t = np.trunc(src.astype(np.float64))
        out_of_range = np.any(t < info.min) or np.any(t > float(info.max))
        return bool(not np.all(np.isfinite(src)) or out_of_range)


def _step(draw: _Draw, values: dict, op: Op) -> tuple[str, list] | None:
    """One attempt at a step: the op's line and its results per example, or None."""
    rng = draw.rng
    names = list(values)
    # recent values are likelier operands, so programs grow deep as well as wide
    weights = np.arange(1, len(names) + 1, dtype=float) ** 2
    picks = [names[i] for i in rng.choice(len(names), op.arity, p=weights / weights.sum())]
    operands0 = [values[n][0] for n in picks]
    if not all(op.accepts(*[values[n][e].data for n in picks]) for e in range(EXAMPLES)):
        return None
    if op.needs_exact and not all(v.exact for n in picks for v in values[n]):
        return None
    n_args = len(draw.program.arguments)
    fragments = op.params(draw, *[v.data for v in operands0]) if op.params else {}
    if fragments is None:
        return None
    expr = op.expr.format(**dict(zip("abc", picks)), **fragments)
    if any(_cast_undefined(op, fragments, [values[n][e] for n in picks])
           for e in range(EXAMPLES)):
        return None
    code = compile(expr, f"<{op.name}>", "eval")
    scope = {"np": np, "m": np, "lax": NUMPY_LAX, "h": NumpyHelpers}
    used = list(dict.fromkeys(picks))  # an operand used twice is perturbed once
    # inputs the op drew (a matmul's weights, a scatter's updates) are operands too: the
    # summation error of a linear op scales with their magnitude
    drawn = [a for a in draw.program.arguments[n_args:] if a.role != "static"]
    terms = op.terms(operands0[0].data, fragments) if op.terms else 1
    results = []
    for e in range(EXAMPLES):
        env = {n: values[n][e].data for n in names}
        env.update({a.name: a.examples[e] for a in draw.program.arguments})
        env.update(draw.program.constants)

        names_in = used + [a.name for a in drawn]

        def run(*datas, env=env, names_in=names_in):
            return eval(code, scope, {**env, **dict(zip(names_in, datas))})

        operands = [values[n][e] for n in used] + [bounds.Value(a.examples[e]) for a in drawn]
        try:
            out = np.asarray(bounds.quiet(run, *[v.data for v in operands]))
        except (TypeError, ValueError, OverflowError, IndexError, ZeroDivisionError):
            return None  # numpy refuses these operands (AxisError is a ValueError)
        if out.dtype == object or out.size > MAX_ELEMENTS or bounds.subnormal(out):
            return None
        try:
            result = bounds.propagate(op.kind, run, operands, out, rng, terms)
        except bounds.Unsettled:
            return None
        if op.loose_zeros and out.dtype.kind == "f":
            result.loose = np.asarray(result.loose) | (out == 0)
        results.append(result)
    return expr, results


def generate(seed: int, max_steps: int = 6) -> Program:
    rng = np.random.default_rng(seed)
    program = Program(seed)
    draw = _Draw(program, rng)
    values: dict[str, list[bounds.Value]] = {}
    for _ in range(int(rng.integers(1, 3))):
        dtype = np.dtype(DTYPES[rng.integers(len(DTYPES))])
        name = draw.new_array(dtype, random_shape(rng))
        values[name] = [bounds.Value(x) for x in program.arguments[-1].examples]
    draw.mark()
    steps = int(rng.integers(2, max_steps + 1))
    attempts = 0
    while len(program.lines) < steps and attempts < 40 * steps:
        attempts += 1
        op = OPS[rng.integers(len(OPS))]
        step = _step(draw, values, op)
        if step is None:
            draw.rollback()
            continue
        expr, results = step
        name = f"v{len(program.lines)}"
        program.lines.append(f"{name} = {expr}  # {op.name}")
        values[name] = results
        draw.mark()
    computed = [n for n in values if n.startswith("v")] or list(values)[:1]
    chosen = {computed[-1]}
    for n in computed[:-1]:
        if rng.integers(4) == 0:
            chosen.add(n)
    program.results = [n for n in values if n in chosen]
    program.wants = [[values[n][e] for n in program.results] for e in range(EXAMPLES)]
    return program
