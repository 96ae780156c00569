"""What IREE's elementwise fusion makes of a module's ``linalg.generic`` ops, seen on a
copy of the module.

IREE fuses elementwise producers into their consumers and folds the fused bodies, so a
body that reads its inputs in aotc's IR can read none once IREE is done with it
(``sum(x * 0 + 1)``, ``x == broadcast(x)``), and IREE 3.13 mishandles some of those
(aotc-shield-reductions, aotc-fold-splats). ``probe`` runs IREE's own fusion
passes on a copy and names each original generic's fused counterpart by a location
(fusion keeps the consumer's location); the original module is not changed.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

from .base import as_op, collect_ops, nested_operands, operand_segments

# What IREE does to a generic's producers before its code generator sees the body. No
# CSE after the fusion: it would merge generics that became identical, and keep the
# location (the probe's name) of one of them only.
PROBE_PIPELINE = ("canonicalize", "cse",
                  # Unit dimensions go first: x[0] of a (1, n) array and x are then one
                  # value (``x >= x`` folds only then).
                  "iree-dispatch-creation-fold-unit-extent-dims", "canonicalize", "cse",
                  "func.func(iree-dispatch-creation-fusion-preprocessing)",
                  "func.func(iree-dispatch-creation-elementwise-op-fusion)",
                  "func.func(iree-dispatch-creation-fuse-multi-use-elementwise-producer)",
                  "canonicalize")
_TAG = "aotc.probe."
_KEEP = "aotc.probe.keep"  # a generic's own mark in the copy (CSE merges no two)


def generics(module, select: Callable) -> list:
    """The ``linalg.generic`` ops of ``module`` (walk order) for which ``select`` holds."""
    return _ops(module, GENERIC, select)


GENERIC = frozenset({"linalg.generic"})


def _ops(module, names: frozenset, select: Callable) -> list:
    return [as_op(op) for op, _ in collect_ops(
        module, lambda o: as_op(o).name in names and select(as_op(o)))]


@contextmanager
def folded_copy(module, prepare: Callable | None = None):
    """A copy of ``module`` after ``PROBE_PIPELINE`` (``prepare(copy)`` first, when
    given), erased on exit."""
    from aotc._mlir import ir

    copy = module.clone()
    try:
        if prepare is not None:
            prepare(copy)
        with module.context:
            _run(copy, PROBE_PIPELINE)
            # The fused bodies repeat their producers' ops: IREE merges them later (so
            # ``x != 0`` twice, xored, is false: fuzzer program 31831). Each generic is
            # marked first, so that CSE merges ops inside bodies but no two generics.
            for i, (op, _) in enumerate(collect_ops(copy, lambda o: as_op(o).name in GENERIC)):
                as_op(op).attributes[_KEEP] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                                 i)
            _run(copy, ("cse", "canonicalize"))
        yield copy
    finally:
        copy.erase()


def _run(module, pipeline) -> None:
    from aotc._mlir import passmanager

    pm = passmanager.PassManager("builtin.module")
    for item in pipeline:
        pm.add(item)
    pm.run(module)


def probe(module, select: Callable, inspect: Callable, same_results: bool = False,
          names: frozenset = GENERIC) -> list:
    """``[(op, inspect(fused))]`` for each op of ``module`` named in ``names`` (generics
    by default, or the scalar ops of their bodies) that ``select`` picks, and each of its
    counterparts ``fused`` in the copy once IREE's fusion and folds have run: a generic
    with its producers' bodies inside and folded, or a body op cloned into its
    consumers' bodies (fusion keeps the ops' locations). With ``same_results``, only
    counterparts whose results have ``op``'s types but for unit dimensions (which the
    probe drops; the fusion may also add its producers' results). ``inspect`` runs
    while the copy exists. ``select`` must depend on the op alone (it picks the same
    ops in the copy)."""
    from aotc._mlir import ir

    originals = _ops(module, names, select)
    if not originals:
        return []

    def tag(copy):
        copies = _ops(copy, names, select)
        assert len(copies) == len(originals)
        with module.context:
            for i, op in enumerate(copies):
                op.location = ir.Location.name(f"{_TAG}{i}")
                # and an attribute: two identical ops would otherwise be merged by the
                # first CSE, and one of them never probed (v != 0 and v & v of a byte v)
                op.attributes[_KEEP] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                          -1 - i)

    found = []
    with folded_copy(module, tag) as copy:
        for fused in _ops(copy, names, lambda op: _TAG in str(op.location)):
            i = int(str(fused.location).split(_TAG)[1].split('"')[0])
            same = _unit_dims_apart(fused.results, originals[i].results)
            if same or not same_results:
                found.append((originals[i], inspect(fused)))
    return found


def _unit_dims_apart(results, others) -> bool:
    """The two lists of results have the same types but for dimensions of size 1."""
    from aotc._mlir import ir

    def key(t):
        if isinstance(t, ir.RankedTensorType) and t.has_static_shape:
            return (str(t.element_type), [d for d in t.shape if d != 1])
        return str(t)

    return [key(r.type) for r in results] == [key(r.type) for r in others]


def yielded_without_inputs(op) -> list:
    """For each result of the generic ``op``: the value its body yields when that value
    depends on no input and no loop index (the same at every point), else None. A
    result that is its init (the body yields its ``outs`` argument) counts as None."""
    n_ins, _ = operand_segments(op)
    block = op.regions[0].blocks[0]
    varying = set(list(block.arguments)[:n_ins])
    outs = set(list(block.arguments)[n_ins:])
    terminator = None
    for o in block.operations:
        o = as_op(o)
        if o.name == "linalg.yield":
            terminator = o
        elif o.name == "linalg.index" or any(v in varying for v in nested_operands(o)):
            varying.update(o.results)
    return [None if v in varying or v in outs else v for v in terminator.operands]


def constant_attribute(value):
    """The attribute of ``value`` when an ``arith.constant`` defines it, else None."""
    from aotc._mlir import ir

    if value is None or not isinstance(value, ir.OpResult):
        return None
    owner = as_op(value.owner)
    return owner.attributes["value"] if owner.name == "arith.constant" else None


def constant_results(fused) -> list:
    """Per result of the fused generic: the attribute of the constant it yields at every
    point, else None."""
    return [constant_attribute(v) for v in yielded_without_inputs(fused)]
