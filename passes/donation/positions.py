"""Positions: where the ops of a writer group read and write, as offsets into a tensor.

An offset is a tuple of coordinates, one per dimension: an int where it is known when
compiling, a ``RuntimeCoord`` where it is computed at run time (``x.at[i].set(v)``,
``lax.dynamic_update_slice``). A run-time coordinate is a constant plus a sum of
``index`` values; two are the same position when their constants and values are (after
CSE, one computation is one value), so ``x.at[i].add(v)`` reads ``x[i]`` where it writes
it, and a position not known to be the same is another position.

The slice ops give their offsets (``slice_offsets``), elementwise ops whether each input
is read at the position written (``generic_inputs``), and each placing op (concat,
insert_slice, scatter) its ``"placement"`` rule, attached to its row of the op vocabulary
(``passes/opset``) and looked up by the in-place analysis.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .. import opset
from ..base import constant_index
from ..opset import OFFSETS_AT

_DYNAMIC = -(2 ** 63)  # ShapedType.get_dynamic_size() / kDynamic in static_offsets


def _identity_map(attr) -> bool:
    from aotc._mlir import ir

    amap = ir.AffineMapAttr(attr).value
    return amap == ir.AffineMap.get_identity(amap.n_dims)


def _int_attr(op, name: str) -> int:
    from aotc._mlir import ir

    return ir.IntegerAttr(op.attributes[name]).value


def _static_ints(op, name: str) -> list[int] | None:
    from aotc._mlir import ir

    if name not in op.attributes:
        return None
    values = list(ir.DenseI64ArrayAttr(op.attributes[name]))
    return None if any(v == _DYNAMIC for v in values) else values


@dataclass(frozen=True)
class RuntimeCoord:
    """A coordinate known at run time: ``const`` plus the sum of the ``index`` values in
    ``terms`` (a frozenset of (value, multiplicity))."""

    const: int
    terms: frozenset


def plus(*parts):
    """The sum of coordinates (ints, ``RuntimeCoord``s, ``index`` values): an int when no
    run-time value is left."""
    const, terms = 0, Counter()
    for part in parts:
        if isinstance(part, int):
            const += part
        elif isinstance(part, RuntimeCoord):
            const += part.const
            terms.update(dict(part.terms))
        else:
            terms[part] += 1
    return RuntimeCoord(const, frozenset(terms.items())) if terms else const


def slice_offsets(op) -> list | None:
    """The offsets of a unit-stride ``tensor.extract_slice``/``insert_slice``: ints, and
    ``index`` values where they are computed at run time; None for other strides."""
    strides = _static_ints(op, "static_strides")
    if strides is None or any(s != 1 for s in strides):
        return None
    from aotc._mlir import ir

    dynamic = iter(list(op.operands)[OFFSETS_AT[op.name]:])
    offsets = []
    for v in ir.DenseI64ArrayAttr(op.attributes["static_offsets"]):
        if v != _DYNAMIC:
            offsets.append(v)
            continue
        value = next(dynamic)
        known = constant_index(value)
        offsets.append(value if known is None else known)
    return offsets


def runtime_offsets(op) -> list:
    """The ``index`` values among a slice op's offsets (what its position depends on)."""
    if op.name not in OFFSETS_AT:
        return []
    return [v for v in (slice_offsets(op) or []) if not isinstance(v, int)]


def captured_tensors(op) -> list:
    """Tensors defined outside ``op`` that ops nested in its regions read (the
    ``tensor.extract`` of a gather-like ``linalg.generic`` body)."""
    from aotc._mlir import ir

    nested: list = []
    op.walk(lambda o: nested.append(getattr(o, "operation", o)) or ir.WalkResult.ADVANCE)
    inside = set(nested)  # op itself included
    found: list = []
    for o in nested:
        if o == op:
            continue
        for v in o.operands:
            owner = (v.owner.owner if isinstance(v, ir.BlockArgument) else v.owner)
            owner = getattr(owner, "operation", owner)
            if owner not in inside and isinstance(v.type, ir.RankedTensorType) and v not in found:
                found.append(v)
    return found


def generic_inputs(op) -> list[tuple[object, bool]]:
    """(operand, read at the written position?) for each tensor an elementwise op reads.
    Outputs count only when the body reads them."""
    from aotc._mlir import ir

    name = op.name
    operands = list(op.operands)
    if name == "linalg.generic":
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        n_in = sizes[0]
        maps = list(op.attributes["indexing_maps"])
        out_map = maps[n_in]
        body_args = list(op.regions[0].blocks[0].arguments)
        reads = []
        for i, operand in enumerate(operands):
            if i >= n_in and not list(body_args[i].uses):
                continue  # an output whose old value is never read
            same = (_identity_map(maps[i]) and maps[i] == out_map
                    and _shape(operand) == _shape(op.results[0]))
            reads.append((operand, same))
        # tensors the body reads with tensor.extract (a flip, a gather): read anywhere
        return reads + [(v, False) for v in captured_tensors(op)]
    if name == "linalg.fill":
        return []
    if name == "linalg.transpose":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        return [(operands[0], perm == sorted(perm))]
    if name == "linalg.broadcast":
        return [(operands[0], False)]
    # Named elementwise ops (linalg.add, linalg.copy, ...): inputs of the output's type
    # are read at the written position; the output operand's value is not read.
    result_shape = _shape(op.results[0]) if len(op.results) else None
    inputs = operands[:-1] if len(operands) > 1 else operands
    return [(operand, _shape(operand) == result_shape) for operand in inputs]


def _shape(value) -> tuple | None:
    shape = getattr(value.type, "shape", None)
    return None if shape is None else tuple(shape)


# The placement rules: how a placing op writes its operands into its result, for the
# writer group. rule(op, offset of the result, views of the argument) gives
# ([(operand, its offset)] written in place, [operands read at any position]), or None
# when the op cannot be placed (a strided slice, a rank change, a scatter reading the
# argument's rows). They are attached to the ops' rows, where ``writer`` looks them up.

@opset.attach("placement", "tensor.concat")
def _concat_placement(op, offset, views):
    dim = _int_attr(op, "dim")
    aligned, start = [], 0
    for operand in op.operands:
        at = tuple(plus(o, start) if d == dim else o for d, o in enumerate(offset))
        aligned.append((operand, at))
        start += operand.type.shape[dim]
    return aligned, []


@opset.attach("placement", "tensor.insert_slice")
def _insert_placement(op, offset, views):
    source, dest = op.operands[0], op.operands[1]
    offsets = slice_offsets(op)
    if offsets is None or len(source.type.shape) != len(offset):
        return None
    at = tuple(plus(o, s) for o, s in zip(offset, offsets))
    return [(dest, offset), (source, at)], []


@opset.attach("placement", "iree_linalg_ext.scatter")
def _scatter_placement(op, offset, views):
    # Rows are combined where the original is read (the region gets (update, original));
    # the updates and indices are read whatever row is written.
    updates, indices, original = op.operands[:3]
    if updates in views or indices in views:
        return None
    return [(original, offset)], [updates, indices]
