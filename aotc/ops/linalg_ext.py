"""A builder for IREE's LinalgExt ops (``iree_linalg_ext.scan``, used by cumsum/cumprod, and
``iree_linalg_ext.scatter``, used by ``x.at[...]`` updates).

The MLIR Python bindings in iree-base-compiler register the ``iree_linalg_ext`` dialect
but ship no Python op classes for it, so its ops are made with the generic
``ir.Operation.create`` (the form ``print_generic_op_form`` shows). ``scan`` compiles and
runs on the CPU and Vulkan targets of IREE 3.13. (``sort`` and ``topk`` build the same
way, but sorting does without them: see ``sort_network.py`` and ``sorting.py``.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import dtypes
from .._mlir import ir
from ..core import Tracer, user_location
from ..lowering import materialized, wrap
from .scalar import UFUNC_RULES


def linalg_ext(
    name: str,
    ins: Sequence[ir.Value],
    outs: Sequence[ir.Value],
    dimension: int | None,
    block_types: Sequence[ir.Type],
    body: Callable[..., Sequence[ir.Value]],
    **attributes: ir.Attribute,
) -> list[ir.Value]:
    """``iree_linalg_ext.<name>`` over ``dimension`` (None: an op without one, such as
    ``scatter``) with one result per ``outs`` value; ``body(*block_args)`` returns what its
    region yields."""
    attrs = dict(attributes)
    if dimension is not None:
        attrs["dimension"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension)
    with user_location():
        op = ir.Operation.create(
            f"iree_linalg_ext.{name}",
            results=[v.type for v in outs],
            operands=[*ins, *outs],
            attributes=attrs,
            regions=1,
        )
        block = op.regions[0].blocks.append(*block_types)
        with ir.InsertionPoint(block):
            ir.Operation.create("iree_linalg_ext.yield", operands=list(body(*block.arguments)))
    return list(op.results)


def scatter(target: Tracer, indices: Tracer, updates: Tracer, depth: int, combine: str | None,
            unique: bool) -> Tracer:
    """One ``iree_linalg_ext.scatter``: rows ``updates[i]`` combined into ``target`` at
    ``indices[i]`` (the first ``depth`` coordinates) with the ufunc ``combine`` (None:
    replaced); the region gets (update, original)."""
    element = dtypes.mlir_type(target.dtype)
    if isinstance(updates.value, ir.OpResult):
        # IREE 3.13's CPU backend fuses the updates' producer into the scatter's dispatch and
        # keeps every update row on the stack: rows of 4096 float32 exceed its 32 KiB limit
        # ("exceeded stack allocation limit"). Behind a barrier they are computed first.
        updates = materialized(updates)
    (result,) = linalg_ext(
        "scatter", [updates.value, indices.value], [target.value], None, [element, element],
        lambda new, old: [new if combine is None
                          else UFUNC_RULES[combine](target.dtype, old, new)],
        dimension_map=ir.DenseI64ArrayAttr.get(list(range(depth))),
        unique_indices=ir.BoolAttr.get(unique),
    )
    return wrap(result, target.shape, target.dtype)
