"""What the donation passes read and edit on a ``func.func``.

The tracer marks each donated argument with ``aotc.donate = "<name>"`` (``MARKER``: the
leaf's name, for diagnostics), and each argument the function writes into (numpy's
in-place updates) with ``aotc.written = <result index> : index`` (``WRITTEN``: the result
holding its final value). ``aotc-donate`` removes both markers and, where a result can
use the argument's buffer, sets IREE's ``iree.abi.output = <result index> : index``
(``OUTPUT``) instead. Both passes insert ``util.optimization_barrier`` ops
(``insert_barrier``) where IREE must not fuse or reorder. The rest walks the single-block
functions aotc traces.
"""

from __future__ import annotations

from ..base import as_op

MARKER = "aotc.donate"
WRITTEN = "aotc.written"
OUTPUT = "iree.abi.output"
BARRIER = "util.optimization_barrier"


def functions(module) -> list:
    """The ``func.func`` ops of a ``builtin.module`` that have a body."""
    ops = [as_op(op) for op in module.regions[0].blocks[0].operations]
    return [op for op in ops if op.name == "func.func" and op.regions[0].blocks]


def defining_op(value):
    from aotc._mlir import ir

    if isinstance(value, ir.OpResult):
        return as_op(value.owner)
    return None  # a block argument


def insert_barrier(before, operands: list):
    """A ``util.optimization_barrier`` over ``operands``, inserted before the op ``before``
    (at its location): IREE neither fuses across it nor reorders it."""
    from aotc._mlir import ir

    with ir.InsertionPoint(before), before.location:
        return ir.Operation.create(BARRIER, results=[v.type for v in operands],
                                   operands=operands)


# ---- argument attributes ---------------------------------------------------------------

def arg_dicts(func_op) -> list[dict]:
    """The argument attribute dictionaries of a func.func as {name: Attribute} dicts."""
    from aotc._mlir import ir

    n = len(func_op.regions[0].blocks[0].arguments)
    if "arg_attrs" not in func_op.attributes:
        return [{} for _ in range(n)]
    out = []
    for attr in ir.ArrayAttr(func_op.attributes["arg_attrs"]):
        d = ir.DictAttr(attr)
        out.append({named.name: named.attr for named in d})
    return out + [{} for _ in range(n - len(out))]


def set_arg_dicts(func_op, dicts: list[dict]) -> None:
    from aotc._mlir import ir

    func_op.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])


def mark_donated(func_op, names: dict[int, str]) -> None:
    """Marks the arguments ``names`` (index -> the leaf's name, for diagnostics) as
    donated: the marker ``aotc-donate`` reads and removes."""
    from aotc._mlir import ir

    dicts = arg_dicts(func_op)
    for i, name in names.items():
        dicts[i][MARKER] = ir.StringAttr.get(name)
    set_arg_dicts(func_op, dicts)


def mark_written(func_op, results: dict[int, int]) -> None:
    """Marks the arguments ``results`` (index -> the result holding its final value) as
    written into by the function: ``aotc-donate`` writes that result into the argument's
    buffer where it safely can (the runtime then updates the caller's array in place)."""
    from aotc._mlir import ir

    dicts = arg_dicts(func_op)
    for i, k in results.items():
        dicts[i][WRITTEN] = ir.IntegerAttr.get(ir.IndexType.get(), k)
    set_arg_dicts(func_op, dicts)


def _string(attr) -> str | None:
    from aotc._mlir import ir

    if isinstance(attr, ir.StringAttr):
        return attr.value
    return None


def arg_label(func_op, index: int) -> str:
    """How diagnostics name an argument: its leaf name, else its IREE name, else its index."""
    attrs = arg_dicts(func_op)[index]
    name = _string(attrs[MARKER]) if MARKER in attrs else None
    if name is None and "iree.abi.name" in attrs:
        name = _string(attrs["iree.abi.name"])
    return f"'{name}'" if name else f"argument {index}"


def symbol(func_op) -> str:
    from aotc._mlir import ir

    return ir.StringAttr(func_op.attributes["sym_name"]).value


def donated_pairs(func_op) -> dict[int, int]:
    """Argument index -> result index for the arguments that carry ``iree.abi.output``."""
    from aotc._mlir import ir

    pairs = {}
    for i, attrs in enumerate(arg_dicts(func_op)):
        if OUTPUT in attrs:
            pairs[i] = ir.IntegerAttr(attrs[OUTPUT]).value
    return pairs
