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

from .._mlir import ir
from ..core import user_location


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
