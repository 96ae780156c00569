"""The base of aotc's Python-defined passes and their registry."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import ClassVar

from aotc.errors import PassError  # noqa: F401  (the passes raise it; aotc/errors.py)




@dataclass(frozen=True)
class ModulePass:
    """A pass over a ``builtin.module``. Subclasses set ``name`` and implement ``run``.

    Options are dataclass fields; ``from_options`` builds the pass from the textual
    ``key=value`` options used by ``aotc-opt`` and lit tests. A pass raises ``PassError``
    to fail; it must leave verified IR and be safe to run twice.
    """

    name: ClassVar[str] = ""

    def run(self, module) -> None:  # module: ir.Operation of the builtin.module
        raise NotImplementedError

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "ModulePass":
        return cls(**options)


REGISTRY: dict[str, type[ModulePass]] = {}


def register(cls: type[ModulePass]) -> type[ModulePass]:
    REGISTRY[cls.name] = cls
    return cls


def as_op(x):
    """The ``ir.Operation`` of an op view or owner (what block iteration and ``owner``
    return: an OpView, an Operation or a Block)."""
    return getattr(x, "operation", x)


def operand_segments(op) -> tuple[int, int]:
    """The numbers of ``ins`` and ``outs`` operands of a destination-style op (linalg)."""
    from aotc._mlir import ir

    n_ins, n_outs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return n_ins, n_outs


def bool_option(options: dict, name: str, default: bool) -> bool:
    """A pass option written ``true``/``false`` (or ``1``/``0``), as aotc-opt gives it."""
    value = str(options.get(name, default)).lower()
    if value not in ("true", "false", "1", "0"):
        raise ValueError(f"{name}: expected true or false, got {value!r}")
    return value in ("true", "1")


def indexing_maps(op) -> list:
    """The affine maps of a structured op's operands, in operand order."""
    from aotc._mlir import ir

    return [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]


def loop_ranges(op) -> list:
    """The static range of each loop of a ``linalg.generic``, read off the operands its
    maps index with a plain loop variable; None for a loop not read that way or dynamic."""
    from aotc._mlir import ir

    maps = indexing_maps(op)
    ranges = [None] * maps[0].n_dims
    for value, m in zip(op.operands, maps):
        if not isinstance(value.type, ir.RankedTensorType):
            continue
        shape = value.type.shape
        for k, expr in enumerate(m.results):
            if isinstance(expr, ir.AffineDimExpr) and shape[k] >= 0:
                ranges[expr.position] = shape[k]
    return ranges


def nested_operands(op):
    """The operands of ``op`` and of every op nested in its regions."""
    yield from op.operands
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from nested_operands(as_op(inner))


def multiplies_inputs(block) -> bool:
    """A linalg body that is ``out + a * b`` of its two inputs ``a``, ``b`` and its
    accumulator (a contraction's)."""
    from .opset import MULTIPLY_ADD

    ops = [as_op(o) for o in block.operations]
    if len(ops) != 3 or (ops[0].name, ops[1].name) not in MULTIPLY_ADD:
        return False
    a, b, acc = block.arguments
    mul, add, _ = ops
    return set(mul.operands) == {a, b} and set(add.operands) == {acc, mul.results[0]}


def all_parallel(op) -> bool:
    """Whether every loop of the structured op ``op`` is parallel (elementwise)."""
    return all("parallel" in str(it) for it in op.attributes["iterator_types"])


def has_reduction(op) -> bool:
    """Whether some loop of the structured op ``op`` is a reduction."""
    return any("reduction" in str(it) for it in op.attributes["iterator_types"])


def bit_extending(op) -> bool:
    """Is ``op`` a generic IREE treats as a bit extension (its ``isBitExtendOrTruncateOp``):
    all parallel, one result wider than its widest input of the highest rank, no math op?
    IREE clones such an op into every consumer's dispatch instead of storing its result."""
    from aotc._mlir import ir

    if op.name != "linalg.generic" or len(op.results) != 1 or not all_parallel(op):
        return False
    n_ins, _ = operand_segments(op)
    shaped = [v.type for v in list(op.operands)[:n_ins]
              if isinstance(v.type, ir.RankedTensorType)]
    rank = max((t.rank for t in shaped), default=0)
    widths = [_bits(t.element_type) for t in shaped if t.rank == rank]
    result = _bits(op.results[0].type.element_type)
    if rank == 0 or None in widths or result is None:
        return False
    return max(widths) < result and not any(
        as_op(o).name.startswith("math.") for o in op.regions[0].blocks[0].operations)


def element_bytes(element) -> int:
    """The bytes one element of type ``element`` takes in memory (a bool one byte, an
    index eight, a complex number both its parts)."""
    from aotc._mlir import ir

    if isinstance(element, ir.ComplexType):
        return 2 * element_bytes(element.element_type)
    if isinstance(element, ir.IndexType):
        return 8
    return max(1, element.width // 8)


def _bits(element) -> int | None:
    from aotc._mlir import ir

    if isinstance(element, (ir.IntegerType, ir.FloatType)):
        return element.width
    return None


def computed_from_constants(value, memo: dict) -> bool:
    """Whether ``value`` is computed from constants only: no block argument reaches it
    (through any op or the ops nested in its regions), nor a
    ``util.optimization_barrier``, which IREE does not fold across. ``memo`` caches the
    answers of one analysis."""
    from aotc._mlir import ir

    if value in memo:
        return memo[value]
    memo[value] = False  # a cycle (cannot happen in SSA) or a pending answer: not constant
    if not isinstance(value, ir.OpResult) or as_op(value.owner).name == "util.optimization_barrier":
        return False
    stack, ops = [as_op(value.owner)], []
    while stack:
        op = stack.pop()
        ops.append(op)
        for region in op.regions:
            for block in region.blocks:
                stack.extend(as_op(o) for o in block.operations)
    inner = {r for op in ops for r in op.results}
    inner |= {a for op in ops for region in op.regions for b in region.blocks for a in b.arguments}
    answer = all(v in inner or computed_from_constants(v, memo) for op in ops for v in op.operands)
    memo[value] = answer
    return answer


def splat_constant(op) -> bool:
    """Whether ``op`` is an ``arith.constant`` tensor whose elements are all one value.
    A complex one is read off its text (the bindings cannot give a complex dense
    attribute to Python); printing an op costs about 0.5 ms in a large function (it
    numbers the function's values), 34 s for the 65,000 constants of one gradient test."""
    from aotc._mlir import ir

    if op.name != "arith.constant" or not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    if not isinstance(op.results[0].type.element_type, ir.ComplexType):
        attr = op.attributes["value"]
        return isinstance(attr, ir.DenseElementsAttr) and attr.is_splat
    text = op.get_asm(large_elements_limit=1)  # a splat is printed whole, others elided
    return "dense<" in text and "__elided__" not in text


def constant_index(value) -> int | None:
    """The integer an ``arith.constant`` gives ``value``, else None."""
    from aotc._mlir import ir

    if isinstance(value, ir.OpResult) and as_op(value.owner).name == "arith.constant":
        attr = as_op(value.owner).attributes["value"]
        if isinstance(attr, ir.IntegerAttr):
            return ir.IntegerAttr(attr).value
    return None


def static_bounds(loop) -> tuple[int, int, int] | None:
    """An ``scf.for``'s lower bound, upper bound and step where all three are constants
    (and the step positive), else None."""
    bounds = tuple(constant_index(v) for v in list(loop.operands)[:3])
    return bounds if None not in bounds and bounds[2] > 0 else None


def static_trips(loop) -> int | None:
    """How many iterations an ``scf.for`` of ``static_bounds`` runs, else None."""
    bounds = static_bounds(loop)
    return None if bounds is None else max(0, -(-(bounds[1] - bounds[0]) // bounds[2]))


def tensor_bytes(value) -> int | None:
    """The bytes of a statically shaped tensor ``value``: 0 for a scalar, None for a
    dynamic shape."""
    from aotc._mlir import ir

    t = value.type
    if not isinstance(t, ir.ShapedType):
        return 0
    return math.prod(t.shape) * element_bytes(t.element_type) if t.has_static_shape else None


def within(op, ancestor) -> bool:
    """``op`` is nested in ``ancestor``'s regions (at any depth)."""
    ancestor = as_op(ancestor)
    parent = op.parent
    while parent is not None:
        if as_op(parent) == ancestor:
            return True
        parent = parent.parent
    return False


def separated(value):
    """``value`` through a ``flow.tensor.clone``, at the current insertion point: IREE
    forms no dispatch across it (so the producer is not fused into the reader) and elides
    the copy itself afterwards. Unlike a ``util.optimization_barrier``, which makes the
    host wait for the work before it (in a program on local-task, a round trip through
    the worker threads: a training step with 6 such barriers took 800 us, with clones
    520 us), a clone is ordered on the device."""
    from aotc._mlir import ir

    return ir.Operation.create("flow.tensor.clone", results=[value.type],
                               operands=[value]).result


def read_downstream(op, found) -> bool:
    """Whether an op for which ``found(user)`` holds reads a result of ``op``, directly or
    through reshapes and elementwise generics (which IREE fuses and moves ops through)."""
    from .opset import RESHAPE_OPS

    stack, seen = list(op.results), set()
    while stack:
        for use in stack.pop().uses:
            user = as_op(use.owner)
            if found(user):
                return True
            if user.name in RESHAPE_OPS or (user.name == "linalg.generic"
                                            and all_parallel(user)):
                for r in user.results:
                    if r not in seen:
                        seen.add(r)
                        stack.append(r)
    return False


def separate_readers(result) -> None:
    """Every reader of ``result`` (an op's result) reads it through one ``separated``
    copy, placed right after the op."""
    from aotc._mlir import ir

    op = as_op(result.owner)
    readers = [(as_op(use.owner), use.operand_number) for use in result.uses]
    with ir.InsertionPoint.after(op), op.location:
        copy = separated(result)
    for reader, number in readers:
        reader.operands[number] = copy


def collect_ops(module, select) -> list:
    """``(op, info)`` for every op of ``module`` for which ``select(op)`` returns a truthy
    ``info``. Rewrite them after collecting: erasing ops during a walk is unsafe."""
    from aotc._mlir import ir

    found = []

    def visit(op):
        info = select(op)
        if info:
            found.append((op, info))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def find_function(module, name: str, pass_name: str):
    """The ``func.func @name`` of ``module`` (a ``builtin.module`` operation) and every
    function by name; a ``PassError`` listing the functions when there is none."""
    from aotc._mlir import ir

    funcs = {}
    for op in module.regions[0].blocks[0].operations:
        op = as_op(op)
        if op.name == "func.func":
            funcs[ir.StringAttr(op.attributes["sym_name"]).value] = op
    if name not in funcs:
        raise PassError(f"{pass_name}: no function @{name} in the module "
                        f"(functions: {', '.join('@' + f for f in funcs) or 'none'})")
    return funcs[name], funcs


def is_private(func) -> bool:
    """Whether a ``func.func`` is private (a helper aotc.vmap made, not an entry point)."""
    from aotc._mlir import ir

    return ("sym_visibility" in func.attributes
            and ir.StringAttr(func.attributes["sym_visibility"]).value == "private")


def where(op) -> str:
    """``file.py:12`` from an op's location (``loc("file.py":12:3)``), else the raw text:
    how pass errors point at the source line that produced an op."""
    text = str(op.location)
    match = re.search(r'"([^"]+)":(\d+)', text)
    if match:
        return f"{os.path.basename(match.group(1))}:{match.group(2)}"
    return text


REFLECTION = "iree.reflection"


def read_metadata(func):
    """aotc's metadata record of a ``func.func`` (``FunctionMetadata``, kept in its
    ``iree.reflection`` dictionary), or None for a function without one."""
    from aotc._mlir import ir
    from aotc.runtime.metadata import REFLECTION_KEY, FunctionMetadata

    if REFLECTION not in func.attributes:
        return None
    reflection = ir.DictAttr(func.attributes[REFLECTION])
    if REFLECTION_KEY not in reflection:
        return None
    return FunctionMetadata.from_reflection(
        {REFLECTION_KEY: ir.StringAttr(reflection[REFLECTION_KEY]).value})


def write_metadata(func, metadata) -> None:
    """Stores ``metadata`` (``FunctionMetadata``) as the function's ``iree.reflection``."""
    from aotc._mlir import ir

    func.attributes[REFLECTION] = ir.DictAttr.get(
        {key: ir.StringAttr.get(value) for key, value in metadata.to_reflection().items()})
