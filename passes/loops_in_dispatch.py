"""aotc-loops-in-dispatch: a loop of scalar steps runs as one dispatch.

IREE runs ``scf.for``/``scf.while`` in its VM and submits every iteration's ops as
dispatches of their own: a ``fori_loop`` updating one element of an array cost 10-60 us
per iteration (a dispatch and its submission per op, index values read back to the
host). As one dispatch (a ``flow.dispatch.region`` converted by IREE's own pass, its
results tied to the loop's initial values) the whole loop nest is one kernel and an
iteration costs nanoseconds (a 999-step scalar recurrence: 11.5 ms against 14 us).

Which loops: at a function's top level, with results of static shape, every carry
updated in place or rank-0 (``_in_place``), and every op of the nest at most
``max_work`` element-steps (``op_work``; default 1: scalar steps). IREE 3.13 picks a
structured op of more than one element in the dispatch as its root and distributes it
over workgroups, and the loop's other writes then fall outside the distributed loops
("write affecting operations on global resources are restricted to workgroup
distributed contexts": a row update ``x[i] = x[i] * 2``); forcing its untiled pipeline
with a ``compilation_info`` on each op crashed the compiler (SIGFPE in
``getDefaultDistributedLevelTileSizes``) for a while loop. Such loops keep their per-op
form, where each op gets IREE's tiled, threaded code.

Inside the region, the ``util.optimization_barrier``s (workarounds for IREE's dispatch
formation, which does not run there) become their operands, and a rank-0 tensor
expanded to unit dimensions becomes ``tensor.from_elements`` of its element (IREE
3.13's bufferization of the expand inside a dispatch fails). A computed initial value
that other ops read too is copied at run time first (``runtime_copy``), and the loop runs
in the copy: tied to the value itself, the loop overwrote it before a reader IREE had
scheduled after the dispatch (fuzz programs 95761+95771). The dispatch is marked
``aotc.loop_dispatch``: a compile that fails with it retries without (``unwrap``,
``without_loop_dispatches``).

Invariants: values are unchanged; running the pass twice changes nothing more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import ModulePass, as_op, element_bytes, loop_ranges, register, within
from .donation.function import donated_pairs, insert_barrier
from .drop_carry_barriers import CARRY_BARRIER
from .materialize_constants import runtime_copy
from .opset import BARRIER_OPS, CARRIES_AT, DESTINATION, SCALAR_DIALECTS, of_group
from .pointwise_tiles import (TILE_LOOP, WORKGROUP_OPS, count_as_one_op, counted_ops, distribute,
                              one_workgroup, tile_steps, workgroup_grid, workgroups,
                              workload_size)
from .row_loops import (keep_as_it_was, kept_numbers, pointwise_update, restore_originals,
                        row_ops, stores_bools, tiled_update, write_into)
from .scalarize import forget_bools, scalarizable, scalarize, scalarize_bools

LOOP_DISPATCH = "aotc.loop_dispatch"
LOOPS = frozenset(CARRIES_AT)  # scf.for, scf.while
_LOAD = "iree_tensor_ext.dispatch.tensor.load"
_STORE = "iree_tensor_ext.dispatch.tensor.store"
# IREE's own conversion of dispatch regions to dispatches (captured values become
# operands, tensors bindings).
_TO_DISPATCHES = "func.func(iree-dispatch-creation-convert-dispatch-regions-to-workgroups)"
# Named contractions: work is the result's size times the contracted length.
_CONTRACTIONS = ("matmul", "matvec", "vecmat", "dot")
_WINDOWED = ("conv", "pooling")
# Element reads and writes, empties, constants and reshapes: no loop of their own in the
# kernel (a splat is a fill).
_FREE = (of_group("read", "write", "source", "view", "terminator", "barrier")
         - {"tensor.splat"})
# Per op, in element-steps: IREE 3.13 generates code for a loop dispatch whose ops each
# compute one element (see the module docstring).
MAX_WORK = 1


def _elements(value) -> int:
    from aotc._mlir import ir

    t = value.type
    if isinstance(t, ir.ShapedType) and t.has_rank and t.has_static_shape:
        return math.prod(t.shape)
    return 1


def _static(value) -> bool:
    from aotc._mlir import ir

    t = value.type
    return not isinstance(t, ir.ShapedType) or (t.has_rank and t.has_static_shape)


def op_work(op) -> int | None:
    """The element-steps one run of ``op`` takes: a structured op's iteration space, a
    slice's size, nothing for element reads and writes and reshapes; None when a shape
    is dynamic."""
    from aotc._mlir import ir

    name = op.name
    if not all(_static(v) for v in [*op.operands, *op.results]):
        return None
    if name == "linalg.generic":
        ranges = loop_ranges(op)
        return math.prod(r for r in ranges if r is not None) if ranges else 1
    dialect, _, kind = name.partition(".")
    if dialect == "linalg" and op.results and len(op.operands) >= 2:
        out = _elements(op.results[0])
        if any(k in kind for k in _CONTRACTIONS):
            # the contracted length is one of the left operand's last two dimensions
            # (transposed forms): the larger bounds it
            lhs = op.operands[0].type
            shape = lhs.shape if isinstance(lhs, ir.ShapedType) else [1]
            return out * max(shape[-2:] or [1])
        if any(k in kind for k in _WINDOWED):
            return out * _elements(op.operands[1])
    if name == "tensor.insert_slice":
        return _elements(op.operands[0])
    if name == "tensor.extract_slice":
        return _elements(op.results[0])
    if name in _FREE or dialect in SCALAR_DIALECTS:
        return 0
    return max([_elements(v) for v in [*op.operands, *op.results]] or [1])


def _nest_work(loop) -> int | None:
    """The largest ``op_work`` of the ops nested in ``loop``; None when one is dynamic or
    is a dispatch of its own."""
    largest = 0
    for region in loop.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = as_op(inner)
                if inner.name.startswith("flow."):
                    return None  # a sequential kernel's dispatch: none nests in another
                # control flow counts by its ops; a structured op's body is its own
                work = _nest_work(inner) if inner.name.startswith("scf.") else op_work(inner)
                if work is None:
                    return None
                largest = max(largest, work)
    return largest


def _carry_pairs(loop) -> list | None:
    """``(yielded value, carry)`` pairs of ``loop``: what each iteration computes and
    the block argument it takes the place of; None for a ``scf.while`` whose condition
    does not pass its block's arguments on unchanged."""
    if loop.name == "scf.for":
        body = loop.regions[0].blocks[0]
        return list(zip(_terminator(body).operands, list(body.arguments)[1:]))
    before, after = (r.blocks[0] for r in loop.regions)
    forwarded = list(_terminator(before).operands)[1:]
    if forwarded != list(before.arguments):
        return None
    return list(zip(_terminator(after).operands, after.arguments))


def _terminator(block):
    return as_op(list(block.operations)[-1])


def _in_place(value, carry, copies: list, pointwise: bool = False) -> bool:
    """Can ``value`` take ``carry``'s buffer? IREE's bufferization inside a dispatch
    needs each value a loop yields in its carry's buffer (else "Yield operand is not
    equivalent to the corresponding iter bbArg"). An update of the carry (through
    updates and inner loops) is; so is a rank-0 value once written into the carry by a
    ``tensor.insert`` of its element (recorded in ``copies``). A tensor computed afresh
    (``x * 0.5``) is not: IREE gives the op a new buffer whatever its ``outs``; unless
    it is an elementwise generic that reads the carry only at the element it writes
    (``row_loops.pointwise_update``), which its scalar loops write into the carry
    (recorded in ``copies`` too), in a loop with no loop inside (``pointwise``: a scan
    whose carry an inner while loop updated so crashed IREE 3.13's compiler, SIGFPE on a
    fill of no elements, beside another while loop)."""
    from aotc._mlir import ir

    if value == carry:
        return True
    if isinstance(value, ir.OpResult) and as_op(value.owner).name in DESTINATION:
        op = as_op(value.owner)
        return _in_place(op.operands[DESTINATION[op.name]], carry, copies, pointwise)
    if isinstance(value, ir.OpResult) and as_op(value.owner).name in LOOPS:
        # an inner loop's result lives where its initial value does (``_loops_in_place``
        # checks the inner loop's own carries)
        init = _initial_values(as_op(value.owner))[value.result_number]
        return _in_place(init, carry, copies, pointwise)
    if isinstance(value.type, ir.RankedTensorType) and value.type.rank == 0:
        copies.append((value, carry))
        return True
    if pointwise and pointwise_update(value, carry):
        copies.append((value, carry))
        return True
    return False


def _copy_into(value, carry) -> None:
    """The terminator's use of the rank-0 ``value`` becomes ``carry`` with ``value``'s
    element inserted (the carry's buffer; see ``_in_place``)."""
    from aotc._mlir import ir, tensor

    terminator = _terminator(carry.owner)
    with ir.InsertionPoint(terminator), terminator.location:
        element = tensor.ExtractOp(value, []).result
        copied = tensor.InsertOp(element, carry, []).result
    for i, operand in enumerate(terminator.operands):
        if operand == value:
            terminator.operands[i] = copied


def _loops_in_place(loop, copies: list, outermost: bool = True) -> bool:
    """Whether every loop of the nest of ``loop`` computes its carries in place
    (``_in_place``)."""
    pairs = _carry_pairs(loop)
    inner_loops = [inner for region in loop.regions for block in region.blocks
                   for inner in _nested_loops(block)]
    pointwise = outermost and not inner_loops
    if pairs is None or not all(_in_place(v, c, copies, pointwise) for v, c in pairs):
        return False
    return all(_loops_in_place(as_op(inner), copies, False) for inner in inner_loops)


def _nested_loops(block) -> list:
    found = []
    for op in block.operations:
        op = as_op(op)
        if op.name in LOOPS:
            found.append(op)
        elif op.name.startswith("scf."):
            found.extend(inner for region in op.regions for b in region.blocks
                         for inner in _nested_loops(b))
    return found


def _inside_a_loop(op) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name in LOOPS or parent.name.startswith("flow.dispatch."):
            return True
        parent = parent.parent
    return False


# Loops carrying complex128 stay as they are: in a dispatch IREE 3.13 gave such a loop a
# binding too many ("expected 3 binding arguments ... but has 4"), and its scalarized
# body, put back for the retry, inserts 16-byte scalars IREE cannot splat (a scan's
# derivative over complex128).
WIDEST_ELEMENT_BYTES = 16


def _candidates(module, max_work: int) -> list:
    found = []

    def visit(op):
        from aotc._mlir import ir

        op = as_op(op)
        if op.name in LOOPS and not _inside_a_loop(op) and op.results \
                and all(isinstance(r.type, ir.RankedTensorType) and r.type.has_static_shape
                        and element_bytes(r.type.element_type) < WIDEST_ELEMENT_BYTES
                        for r in op.results):
            work = _nest_work(op)
            small = work is not None and work <= max_work
            tiled = tiled_update(op) if not small and max_work >= 1 else set()
            rows = [] if small else (
                row_ops(op, max_work, op_work, tiled) if max_work >= 1 else None)
            copies: list = []
            if rows is not None and _loops_in_place(op, copies):
                found.append((op, copies, rows, bool(tiled)))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def _wrap(loop, original=None) -> None:
    from aotc._mlir import index_constant, ir

    _skip_carry_barriers(loop)
    count = workgroups(loop)
    with ir.InsertionPoint(loop), loop.location:
        workload = [index_constant(count)] if count > 1 else []
        region = ir.Operation.create(
            "flow.dispatch.region", results=[r.type for r in loop.results],
            operands=workload,
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, len(workload)]),
                        LOOP_DISPATCH: ir.UnitAttr.get()},
            regions=2)
    if workload:
        workgroup_grid(region)
    for old, new in zip(loop.results, region.results):
        old.replace_all_uses_with(new)
    block = region.regions[0].blocks.append()
    with ir.InsertionPoint(block), loop.location:
        terminator = ir.Operation.create("flow.return", operands=list(loop.results))
    loop.move_before(terminator)
    if original is not None:
        original.move_after(region)
    _clone_captured_placeholders(loop, region)
    _prepare_body(loop)
    if workload:
        distribute(loop)


def _skip_carry_barriers(loop) -> None:
    """The loop takes its initial values without the tracer's carry barriers
    (``ops/control._loop_input``: a workaround for IREE's ordering of a loop in its VM).
    A barrier's result is a new value to IREE, so a dispatch tied to the barrier over a
    constant wrote into the constant's storage, which other uses of an equal constant
    share (a counter started at another loop's result)."""
    from aotc._mlir import ir

    offset = CARRIES_AT[loop.name]
    for k, value in enumerate(_initial_values(loop)):
        if isinstance(value, ir.OpResult) and CARRY_BARRIER in as_op(value.owner).attributes:
            barrier = as_op(value.owner)
            loop.operands[offset + k] = barrier.operands[value.result_number]
            if not any(list(r.uses) for r in barrier.results):
                barrier.erase()


def _clone_captured_placeholders(loop, region) -> None:
    """Each ``tensor.empty`` and scalar ``arith.constant`` from outside that the loop
    uses is cloned into the region: IREE's conversion would make it an operand of the
    dispatch, and an empty tensor there has no buffer at run time ("ref is null")."""
    from aotc._mlir import ir

    captured = {}

    def visit(op):
        for i, value in enumerate(as_op(op).operands):
            if not isinstance(value, ir.OpResult):
                continue
            owner = as_op(value.owner)
            placeholder = owner.name == "tensor.empty" or (
                owner.name == "arith.constant" and not isinstance(value.type, ir.ShapedType))
            if placeholder and not within(owner, region):
                if owner not in captured:
                    captured[owner] = owner.clone(ir.InsertionPoint(loop))
                    # (a constant the folder merged from many lines has no line: the
                    # loop's is the user's)
                    captured[owner].location = loop.location
                as_op(op).operands[i] = captured[owner].results[value.result_number]
        return ir.WalkResult.ADVANCE

    loop.walk(visit)


def _prepare_body(loop) -> None:
    """What IREE's dispatch formation would have done to the loop's ops, and what its
    bufferization inside a dispatch cannot take (see the module docstring)."""
    from aotc._mlir import ir, tensor

    barriers, expands = [], []

    def visit(op):
        op = as_op(op)
        if op.name in BARRIER_OPS:
            barriers.append(op)
        elif op.name == "tensor.expand_shape" and op.operands[0].type.rank == 0:
            expands.append(op)
        return ir.WalkResult.ADVANCE

    loop.walk(visit)
    for op in barriers:
        for old, new in zip(op.results, op.operands):
            old.replace_all_uses_with(new)
        op.erase()
    for op in expands:
        with ir.InsertionPoint(op), op.location:
            element = tensor.ExtractOp(op.operands[0], []).result
            filled = tensor.FromElementsOp(op.results[0].type, [element]).result
        op.results[0].replace_all_uses_with(filled)
        op.erase()


def _tie(dispatch) -> None:
    """Ties each result of the ``flow.dispatch.workgroups`` op ``dispatch`` that is a loop
    carry, whose initial value is a whole tensor the dispatch reads, to that tensor: the
    loop then runs in the result's buffer. Untied (IREE's conversion ties none), the
    initial value sits in a read-only binding and the loop's carry in a stack copy, over
    IREE's 32 KiB stack limit from a float32[8192] on."""
    from aotc._mlir import ir

    block = dispatch.regions[0].blocks[0]
    n_outputs = len(dispatch.results)
    n_inputs = len(block.arguments) - n_outputs
    tied, taken, outputs = [-1] * n_outputs, set(), []
    stores = [as_op(o) for o in block.operations if as_op(o).name == _STORE]
    first = workload_size(dispatch)
    for store in stores:
        output, value = store.operands[1], store.operands[0]
        if not (isinstance(output, ir.BlockArgument) and output.arg_number >= n_inputs
                and isinstance(value, ir.OpResult) and as_op(value.owner).name in LOOPS):
            continue
        loop = as_op(value.owner)
        init = _initial_values(loop)[value.result_number]
        if not (isinstance(init, ir.OpResult) and as_op(init.owner).name == _LOAD):
            continue
        source = as_op(init.owner).operands[0]
        if not isinstance(source, ir.BlockArgument) or source.arg_number in taken \
                or "readonly:" not in str(source.type):
            continue
        outside = dispatch.operands[first + source.arg_number]
        if _behind_a_barrier(outside) or (isinstance(outside, ir.BlockArgument)
                                          and not _argument_kept(dispatch, outside)):
            continue
        if isinstance(outside, ir.OpResult) and _read_elsewhere(outside, dispatch):
            # The loop would overwrite a value other ops read; IREE ordered them after
            # the dispatch beside other work (fuzz programs 95761+95771: x.mean() read
            # after a fori_loop from it had run in its buffer). The dispatch gets a
            # copy of its own to run in.
            dispatch.operands[first + source.arg_number] = runtime_copy(dispatch, outside)
        taken.add(source.arg_number)
        source.set_type(ir.Type.parse(str(source.type).replace("readonly:", "readwrite:")))
        store.operands[1] = source
        tied[output.arg_number - n_inputs] = source.arg_number
        outputs.append(output.arg_number)
    if any(_stores_untied_tiles(store, n_inputs) for store in stores):
        one_workgroup(dispatch)
    for number in sorted(outputs, reverse=True):
        block.erase_argument(number)
    dispatch.attributes["tied_operands"] = ir.ArrayAttr.get(
        [ir.IntegerAttr.get(ir.IndexType.get(), t) for t in tied])


def _stores_untied_tiles(store, n_inputs: int) -> bool:
    """Whether ``store`` writes a loop over tiles (pointwise_tiles) into an output binding
    of its own, not into the carry's binding ``_tie`` ties: then every workgroup would
    store the whole carry."""
    from aotc._mlir import ir

    value, output = store.operands[0], store.operands[1]
    return (isinstance(value, ir.OpResult) and TILE_LOOP in as_op(value.owner).attributes
            and output.arg_number >= n_inputs)


def _read_elsewhere(value, dispatch) -> bool:
    """Whether an op other than ``dispatch`` reads ``value``."""
    return any(as_op(use.owner).operation != dispatch.operation for use in value.uses)


def _argument_kept(dispatch, argument) -> bool:
    """Whether the dispatch may be tied to the function argument ``argument``: one that
    is not donated, once it is read again at the return. IREE writes a tied operand in
    place when nothing reads it afterwards, and the caller's array would change (as for
    updates: aotc-keep-undonated-arguments), so the argument is read again by a barrier
    over it and a returned value that is not written into a donated buffer (IREE takes
    a barrier over the caller's buffers only). False where there is no such value."""
    func = dispatch.parent
    while func.name != "func.func":
        func = func.parent
    pairs = donated_pairs(func)
    if argument.arg_number in pairs:
        # IREE writes the donated buffer's result there too: when that result is the
        # loop's (through ops it folds away), it copied the buffer onto itself ("source
        # and target ranges overlap within the same buffer": fuzz 66992+66995)
        return False
    ret = _terminator(func.regions[0].blocks[0])
    free = [k for k in range(len(ret.operands)) if k not in pairs.values()]
    if not free:
        return False
    barrier = insert_barrier(ret, [ret.operands[free[0]], argument])
    ret.operands[free[0]] = barrier.results[0]
    return True


def _behind_a_barrier(value) -> bool:
    """IREE gives a barrier's result its operand's storage but copies it on write only
    for the operand (see ``_skip_carry_barriers``): a dispatch is not tied to one."""
    from aotc._mlir import ir

    return isinstance(value, ir.OpResult) and \
        as_op(value.owner).name == "util.optimization_barrier"


def _initial_values(loop) -> list:
    return list(loop.operands)[CARRIES_AT[loop.name]:]


def _dispatches(module) -> list:
    from aotc._mlir import ir

    found = []

    def visit(op):
        if LOOP_DISPATCH in as_op(op).attributes:
            found.append(as_op(op))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def unwrap(module) -> int:
    """Puts the loops of the dispatches ``LoopsInDispatch`` made back into their
    functions; returns how many there were."""
    from aotc._mlir import index_constant, ir

    dispatches = _dispatches(module)
    for dispatch in dispatches:
        block = dispatch.regions[0].blocks[0]
        inputs = list(dispatch.operands)[workload_size(dispatch):]
        n_inputs = len(inputs)
        results = [None] * len(dispatch.results)
        tied = [ir.IntegerAttr(a).value for a in dispatch.attributes["tied_operands"]]
        outputs = [k for k, t in enumerate(tied) if t < 0]  # in block argument order
        for op in [as_op(o) for o in block.operations]:
            if op.name == _LOAD:
                op.results[0].replace_all_uses_with(inputs[op.operands[0].arg_number])
                op.erase()
            elif op.name == _STORE:
                number = op.operands[1].arg_number
                k = outputs[number - n_inputs] if number >= n_inputs else tied.index(number)
                results[k] = op.operands[0]
                op.erase()
            elif op.name == "flow.return":
                op.erase()
            elif op.name in WORKGROUP_OPS:  # (the loop they distribute is put back)
                with ir.InsertionPoint(dispatch), op.location:
                    op.results[0].replace_all_uses_with(index_constant(WORKGROUP_OPS[op.name]))
                op.erase()
            else:
                op.move_before(dispatch)
        for argument, value in zip(block.arguments, inputs):
            argument.replace_all_uses_with(value)
        for old, new in zip(dispatch.results, results):
            old.replace_all_uses_with(new)
        dispatch.erase()
    restore_originals(module)
    return len(dispatches)


def without_loop_dispatches(mlir: bytes) -> bytes | None:
    """``mlir`` (bytecode or text) with the dispatches of ``LoopsInDispatch`` put back
    into their functions, as bytecode; None when it has none."""
    from aotc._mlir import bytecode, parse_module

    if LOOP_DISPATCH.encode() not in mlir:
        return None
    module = parse_module(mlir)
    return bytecode(module) if unwrap(module.operation) else None


@register
@dataclass(frozen=True)
class LoopsInDispatch(ModulePass):
    """Makes loops of scalar steps one dispatch each (see the module docstring)."""

    name = "aotc-loops-in-dispatch"
    max_work: int = MAX_WORK

    @classmethod
    def from_options(cls, options):
        return cls(int(options.get("max-work", MAX_WORK)))

    def run(self, module) -> None:
        loops = _candidates(module, self.max_work)
        if not loops:
            return
        earlier = _dispatches(module)  # tied already (a new loop since an earlier run)
        numbers = kept_numbers(module)
        for loop, copies, rows, tiled in loops:
            original = keep_as_it_was(loop, next(numbers)) if rows else None
            counted = counted_ops(loop, op_work) if tiled else 0
            for value, carry in copies:
                if value.type.rank == 0:
                    _copy_into(value, carry)
                else:
                    write_into(value, carry)
            bools = [op for op in rows if stores_bools(op)]
            stored: dict = {}
            for op in bools:
                scalarize_bools(op, stored)
            for op in reversed(rows):  # readers first: producers they fuse are then dead
                if scalarizable(op) and op not in bools:  # (slice reads stay)
                    scalarize(op, stored)
            forget_bools(stored)
            if tiled:
                loop = tile_steps(loop)  # its steps run tile by tile
                if workgroups(loop) > 1:
                    count_as_one_op(loop, counted)
            _wrap(loop, original)
        from aotc._mlir import passmanager

        with module.context:
            passmanager.PassManager.parse(f"builtin.module({_TO_DISPATCHES})").run(module)
        for dispatch in _dispatches(module):
            if dispatch not in earlier:
                _tie(dispatch)
