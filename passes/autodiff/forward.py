"""Forward mode: the tangent sweep of ``aotc-jvp`` and its rules.

``Forward.sweep`` walks a block's ops first to last; each op that reads a value with a
tangent gets its rule, which builds the tangents of the op's results right after it (a
rule may replace the op by one that computes primal and tangent values together). A
rule has the contract ``rule(fw, op) -> None``, calling ``fw.set(result, tangent)``.

- ``linalg.generic``: the body's tangents come from the per-scalar-op rules
  (``scalar.propagate``), in the first of three forms that applies: an elementwise op
  with a dear body also yields its coefficients dy/dx and a linear generic applies them
  to the tangents (``_linear_form``); else the op stays and a generic of the tangents
  alone recomputes what they need (``_tangent_only``); else (max, min, product
  reductions) one generic computes the primal results and their tangents, the running
  value carrying a running tangent. The first two keep the primal values out of any
  ``vmap`` over the tangents (``jacfwd``). Named ops are differentiated
  as the generic they stand for, but plain (batch) matmuls: ``dC = dA B + A dB`` as
  named matmuls.
- Tensor views and placements, barriers, scatters that set or add and cumulative sums
  are linear in their data operands: the same op applied to the tangents (zeros where
  none).
- ``scf.for``, ``scf.while``, ``scf.if``: the same op with the active carries' tangents
  as extra carries (a fixpoint over the body decides which carries are active), so a
  ``while_loop`` has a forward-mode derivative, as in JAX.
- A call with a custom derivative (``calls.py``): its backward function is linear in
  the cotangents, so its transpose (``aotc-vjp`` of it, with respect to them) maps the
  arguments' tangents to the outputs': the user's jvp rule for ``custom_jvp``.
"""

from __future__ import annotations

from .. import opset
from ..base import PassError, as_op, operand_segments, where
from .core import COMPLEX_REFUSAL, SCATTER_REFUSAL, activity, activity_of, clone_block, \
    differentiable, element_type, float_constant, reads, region_reads, registrar, \
    through_complex, zeros
from .scalar import TANGENTS, propagate, tangent_of
from .stop_gradient import stops_gradient

FORWARD: dict = {}
forward_rule = registrar("jvp", FORWARD)


class Forward:
    """The tangents of one sweep: value -> tangent (absent: zero)."""

    def __init__(self, pass_name: str, func_name: str, tangents: dict | None = None):
        self.pass_name = pass_name
        self.func_name = func_name
        self.tangents: dict = dict(tangents or {})

    def of(self, value):
        return self.tangents.get(value)

    def set(self, value, tangent) -> None:
        if tangent is not None and differentiable(value.type):
            self.tangents[value] = tangent

    def or_zero(self, value):
        t = self.of(value)
        if t is not None:
            return t
        from aotc._mlir import ir

        return zeros(value.type) if isinstance(value.type, ir.RankedTensorType) \
            else float_constant(value.type, 0.0)

    def sweep(self, ops: list, end) -> None:
        """Builds the tangents of ``ops`` (a block's ops in order); ``end`` is the op
        after the last (the block's terminator)."""
        from aotc._mlir import ir

        for i, op in enumerate(ops):
            after = ops[i + 1] if i + 1 < len(ops) else end
            if stops_gradient(op) or not any(v in self.tangents for v in reads(op)):
                continue
            if through_complex(op, self.tangents):
                self.refuse(op, COMPLEX_REFUSAL)
            if not len(op.regions) and not any(differentiable(r.type) for r in op.results):
                continue  # a comparison, an integer cast: nothing has a tangent
            rule = FORWARD.get(op.name) or (_scalar if op.name in TANGENTS else None)
            if rule is None:
                raise PassError(
                    f"{self.pass_name}: cannot differentiate {op.name} at {where(op)} (in "
                    f"@{self.func_name}) in forward mode: it has no rule. Keep it out of "
                    f"the differentiated path (lax.stop_gradient), or add one in "
                    f"passes/autodiff/forward.py: `@forward_rule(\"{op.name}\") def "
                    f"rule(fw, op)` calling fw.set(result, tangent)")
            with op.location, ir.InsertionPoint(after):
                rule(self, op)

    def refuse(self, op, what: str):
        raise PassError(f"{self.pass_name}: cannot differentiate {op.name} at {where(op)} "
                        f"(in @{self.func_name}) in forward mode: {what}")


def _scalar(fw: Forward, op) -> None:
    """A scalar op outside a body: its tangent rule (``scalar.py``)."""
    try:
        fw.set(op.results[0], tangent_of(op, [fw.of(v) for v in op.operands]))
    except KeyError:
        fw.refuse(op, "a float computed from the bits of a differentiated value")


def _replace(op, new_results: list) -> None:
    for old, new in zip(op.results, new_results):
        old.replace_all_uses_with(new)
    op.erase()


# ---- linalg ------------------------------------------------------------------------------

@forward_rule("linalg.generic")
def _generic(fw: Forward, op) -> None:
    from aotc._mlir import ir, linalg

    n_in, n_out = operand_segments(op)
    operands = list(op.operands)
    ins, outs = operands[:n_in], operands[n_in:]
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    moving = [k for k, v in enumerate(ins) if fw.of(v) is not None]
    floats = [j for j, v in enumerate(outs) if differentiable(v.type)]
    if (_dear(op) and _linear_form(fw, op, n_in, maps, moving, floats)) \
            or _tangent_only(fw, op, n_in, maps, moving, floats):
        return
    g = linalg.GenericOp(
        [r.type for r in op.results] + [outs[j].type for j in floats],
        ins + [fw.of(ins[k]) for k in moving], outs + [fw.or_zero(outs[j]) for j in floats],
        ir.ArrayAttr.get(maps[:n_in] + [maps[k] for k in moving] + maps[n_in:]
                         + [maps[n_in + j] for j in floats]),
        op.attributes["iterator_types"])
    old = op.regions[0].blocks[0]
    types = [element_type(v.type) for v in ins]
    block = g.regions[0].blocks.append(
        *types, *[types[k] for k in moving], *[element_type(v.type) for v in outs],
        *[element_type(outs[j].type) for j in floats])
    args = list(block.arguments)
    old_args = list(old.arguments)
    mapping = {old_args[k]: args[k] for k in range(n_in)}
    mapping.update({old_args[n_in + j]: args[n_in + len(moving) + j] for j in range(n_out)})
    # Tangents the body sees: its inputs', its outputs' (a reduction's running value).
    seeds = {args[k]: args[n_in + i] for i, k in enumerate(moving)}
    first_t_out = n_in + len(moving) + n_out
    seeds.update({args[n_in + len(moving) + j]: args[first_t_out + i]
                  for i, j in enumerate(floats)})
    with ir.InsertionPoint(block):
        try:
            yielded, t_yields = _body_tangents(fw, op, mapping, seeds, floats)
        except KeyError as e:
            fw.refuse(op, f"its body's {e.args[0]} has no tangent rule (or rebuilds a float "
                          f"from a differentiated value's bits)")
        linalg.YieldOp(yielded + t_yields)
    results = list(g.results)
    _replace(op, results[:n_out])
    for i, j in enumerate(floats):
        fw.set(results[j], results[n_out + i])


def _body_tangents(fw: Forward, op, mapping: dict, seeds: dict, floats: list):
    """Clones ``op``'s body at the current insertion point (block arguments as
    ``mapping`` says) and pushes ``seeds``, and the tangents of the outside values the
    body reads (a gathered tensor, a captured scalar), through it. Returns the clone's
    yielded values and the tangent of each float output in ``floats`` (zero where none);
    ``KeyError`` where a body op has no tangent rule."""
    outs = list(op.results)
    seeds = {**{v: fw.of(v) for v in region_reads(op) if fw.of(v) is not None}, **seeds}
    clones, yielded = clone_block(op.regions[0].blocks[0], mapping)
    tangents = propagate(clones, seeds)
    t_yields = [tangents.get(yielded[j]) for j in floats]
    return yielded, [t if t is not None else float_constant(element_type(outs[j].type), 0.0)
                     for t, j in zip(t_yields, floats)]


def _dear(op) -> bool:
    """Whether ``op``'s body computes something dearer than a few adds and multiplies
    (a transcendental, a division), which a tangent generic should not compute again."""
    return any(o.name in opset.DEAR_OPS for o in op.regions[0].blocks[0].operations)


def _tangent_only(fw: Forward, op, n_in: int, maps: list, moving: list, floats: list) -> bool:
    """The tangents in a generic of their own beside the untouched op, recomputing the
    body values they need: under ``vmap`` with the tangents batched (``jacfwd``) the op
    keeps its unbatched form, so its results, and every op they feed, are computed once
    rather than once per tangent. A contraction's tangent generic recomputes only the
    products. False where a tangent needs the op's running value (a max, min or product
    reduction: the joint rule carries it)."""
    from aotc._mlir import ir, linalg

    if not floats:
        return False
    operands = list(op.operands)
    ins, outs = operands[:n_in], operands[n_in:]
    old = op.regions[0].blocks[0]
    old_args = list(old.arguments)
    g = linalg.GenericOp(
        [outs[j].type for j in floats], ins + [fw.of(ins[k]) for k in moving],
        [fw.or_zero(outs[j]) for j in floats],
        ir.ArrayAttr.get(maps[:n_in] + [maps[k] for k in moving]
                         + [maps[n_in + j] for j in floats]),
        op.attributes["iterator_types"])
    block = g.regions[0].blocks.append(
        *[a.type for a in old_args[:n_in]], *[old_args[k].type for k in moving],
        *[old_args[n_in + j].type for j in floats])
    args = list(block.arguments)
    with ir.InsertionPoint(block):
        # The op's running values are not available here: stand-ins, and a tangent that
        # depends on one means this form does not apply.
        stand_ins = [_zero_scalar(a.type) for a in old_args[n_in:]]
        mapping = dict(zip(old_args[:n_in], args[:n_in]))
        mapping.update(zip(old_args[n_in:], stand_ins))
        seeds = {args[k]: args[n_in + i] for i, k in enumerate(moving)}
        seeds.update({stand_ins[j]: args[n_in + len(moving) + i] for i, j in enumerate(floats)})
        try:
            _, t_yields = _body_tangents(fw, op, mapping, seeds, floats)
        except KeyError:
            t_yields = None  # the joint rule says which op has no rule
        if t_yields is not None:
            linalg.YieldOp(t_yields)
    if t_yields is None or _depends_on(block, stand_ins, t_yields):
        g.operation.erase()
        return False
    for i, j in enumerate(floats):
        fw.set(op.results[j], g.results[i])
    return True


def _zero_scalar(t):
    from aotc._mlir import arith, ir

    if differentiable(t):
        return float_constant(t, 0.0)
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, 0)).result


def _depends_on(block, sources: list, values: list) -> bool:
    """Whether any of ``values`` is computed (in ``block``, in order) from ``sources``."""
    reached = set(sources)
    for o in block.operations:
        if any(v in reached for v in reads(as_op(o))):
            reached.update(o.results)
    return any(v in reached for v in values)


def _iteration_shape(op, n_in: int, maps: list, floats: list):
    """The loop nest's static sizes, read off the first float output, where the op is
    elementwise in the sense the linear form needs: no reduction loops, every float
    output written through a permutation of the loops, static shapes; else None."""
    from aotc._mlir import ir

    if any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    outs = list(op.operands)[n_in:]
    out_maps = [ir.AffineMapAttr(maps[n_in + j]).value for j in floats]
    if not all(m.is_permutation for m in out_maps):
        return None
    first = ir.RankedTensorType(outs[floats[0]].type)
    if not first.has_static_shape:
        return None
    shape = [0] * first.rank
    for place, expr in enumerate(out_maps[0].results):
        shape[ir.AffineDimExpr(expr).position] = first.shape[place]
    return shape


def _linear_form(fw: Forward, op, n_in: int, maps: list, moving: list, floats: list) -> bool:
    """An elementwise generic's tangents as JAX's linearized jvp computes them: the op
    itself also yields the coefficients ``c_jk = d y_j / d x_k`` (one tensor over the
    loop nest per output and moving input), and a second generic, linear in the
    tangents, sums ``c_jk * dx_k``. The tangent generic alone reads the tangents, so
    under ``vmap`` (``jacfwd``: the tangents batched, the primal not) only it is batched
    and the primal body (a tanh, an exp) runs once, not once per tangent. False (the
    joint rule applies) for reductions, bodies that read their outputs or tangents of
    outside values, mixed float types and dynamic shapes."""
    from aotc._mlir import PARALLEL, affine_maps, arith, dim_map, ir, iterator_types, linalg

    if not moving or not floats:
        return False
    operands = list(op.operands)
    ins, outs = operands[:n_in], operands[n_in:]
    old = op.regions[0].blocks[0]
    old_args = list(old.arguments)
    float_type = element_type(outs[floats[0]].type)
    if (any(len(list(a.uses)) for a in old_args[n_in:])
            or any(fw.of(v) is not None for v in region_reads(op))
            or any(element_type(v.type) != float_type
                   for v in [ins[k] for k in moving] + [outs[j] for j in floats])):
        return False
    shape = _iteration_shape(op, n_in, maps, floats)
    if shape is None:
        return False
    # The pairs whose coefficient can be nonzero (y_j depends on x_k).
    body_ops = [as_op(o) for o in old.operations]
    yielded = list(body_ops[-1].operands)
    reached = {k: activity_of(body_ops[:-1], {old_args[k]}) for k in moving}
    pairs = [(j, k) for j in floats for k in moving if yielded[j] in reached[k]]
    if not pairs:
        return False
    n_dims = len(shape)
    loops = dim_map(n_dims, list(range(n_dims)))
    coefficient_type = ir.RankedTensorType.get(shape, float_type)
    empty = lambda t: ir.Operation.create("tensor.empty", results=[t]).result  # noqa: E731
    primal = linalg.GenericOp(
        [r.type for r in op.results] + [coefficient_type] * len(pairs),
        ins, outs + [empty(coefficient_type) for _ in pairs],
        ir.ArrayAttr.get(maps + [ir.AffineMapAttr.get(loops)] * len(pairs)),
        op.attributes["iterator_types"])
    block = primal.regions[0].blocks.append(
        *[a.type for a in old_args], *[float_type] * len(pairs))
    mapping = dict(zip(old_args, block.arguments))
    with ir.InsertionPoint(block):
        clones, new_yielded = clone_block(old, mapping)
        coefficients = {}
        for k in moving:
            try:
                seed = {mapping[old_args[k]]: float_constant(float_type, 1.0)}
                tangents = propagate(clones, seed)
            except KeyError as e:
                fw.refuse(op, f"its body's {e.args[0]} has no tangent rule (or rebuilds a "
                              f"float from a differentiated value's bits)")
            for j in floats:
                coefficients[j, k] = tangents.get(new_yielded[j])
        linalg.YieldOp(new_yielded + [coefficients[p] if coefficients[p] is not None
                                      else float_constant(float_type, 0.0) for p in pairs])
    results = list(primal.results)
    n_out = len(outs)
    _replace(op, results[:n_out])
    in_maps = [ir.AffineMapAttr(m).value for m in maps]
    for j in floats:
        terms = [(results[n_out + i], k) for i, (jj, k) in enumerate(pairs) if jj == j]
        if not terms:
            continue
        tangent = linalg.GenericOp(
            [outs[j].type], [c for c, _ in terms] + [fw.of(ins[k]) for _, k in terms],
            [empty(outs[j].type)],
            affine_maps([loops] * len(terms) + [in_maps[k] for _, k in terms]
                        + [in_maps[n_in + j]]),
            iterator_types([PARALLEL] * n_dims))
        tblock = tangent.regions[0].blocks.append(*[float_type] * (2 * len(terms) + 1))
        with ir.InsertionPoint(tblock):
            args = list(tblock.arguments)
            total = None
            for i in range(len(terms)):
                product = arith.mulf(args[i], args[len(terms) + i])
                total = product if total is None else arith.addf(total, product)
            linalg.YieldOp([total])
        fw.set(results[j], tangent.results[0])
    return True


def _plain_products(fw: Forward, op, builder) -> bool:
    """``dC = dA B + A dB (+ dInit)`` as named (batch) matmuls; False where the op has
    explicit maps or mixed element types (the generic rule handles those)."""
    from aotc._mlir import ir

    from .named import _default_maps, _explicit_maps

    a, b, init = op.operands[0], op.operands[1], op.operands[2]
    types = {ir.RankedTensorType(v.type).element_type for v in (a, b, init)}
    rank = ir.RankedTensorType(a.type).rank
    if len(types) != 1 or _explicit_maps(op) not in (None, _default_maps(rank)):
        return False
    tangent = fw.or_zero(init)
    if fw.of(a) is not None:
        tangent = builder(fw.of(a), b, outs=[tangent])
    if fw.of(b) is not None:
        tangent = builder(a, fw.of(b), outs=[tangent])
    fw.set(op.results[0], tangent)
    return True


@forward_rule("linalg.matmul", "linalg.batch_matmul")
def _matmul(fw: Forward, op) -> None:
    from aotc._mlir import linalg

    builder = linalg.matmul if op.name == "linalg.matmul" else linalg.batch_matmul
    if not _plain_products(fw, op, builder):
        _named(fw, op)


def _named(fw: Forward, op) -> None:
    """A named op as the generic it stands for (``named._generalized``)."""
    from .named import _generalized

    g = _generalized(op)
    _replace(op, list(g.results))
    _generic(fw, g)


# The named linalg ops without a rule of their own: as the generic they stand for.
forward_rule(*sorted(n for n, o in opset.OPS.items() if n.startswith("linalg.")
                     and o.group in ("elementwise", "contraction")
                     and opset.rule_of("jvp", n) is None))(_named)


# ---- linear ops: the same op on the tangents -----------------------------------------

# Op -> the indices of its data operands (None: all of them); the others are indices.
LINEAR = {
    "tensor.extract_slice": (0,), "tensor.insert_slice": (0, 1),
    "tensor.collapse_shape": (0,), "tensor.expand_shape": (0,), "tensor.cast": (0,),
    "tensor.concat": None, "tensor.pad": (0,), "tensor.extract": (0,),
    "tensor.from_elements": None, "tensor.splat": (0,), "util.optimization_barrier": None,
    "flow.tensor.clone": None,
    "iree_linalg_ext.scatter": (0, 2), "iree_linalg_ext.scan": (0, 2),
}


@forward_rule(*LINEAR)
def _linear(fw: Forward, op) -> None:
    from aotc._mlir import ir

    if op.name == "iree_linalg_ext.scatter" and not _adds_or_sets(op):
        fw.refuse(op, SCATTER_REFUSAL)
    if op.name == "iree_linalg_ext.scan" and not _adds(op):
        fw.refuse(op, "only cumulative sums are differentiable (not cumprod, cummax, ...)")
    data = LINEAR[op.name]
    indices = range(len(op.operands)) if data is None else data
    tangents = {i: fw.or_zero(op.operands[i]) for i in indices}  # made before the clone
    clone = op.clone()
    for i, t in tangents.items():
        clone.operands[i] = t
    if op.name == "tensor.pad":  # the padding value's tangent is zero
        yield_op = as_op(list(clone.regions[0].blocks[0].operations)[-1])
        with ir.InsertionPoint(yield_op):
            yield_op.operands[0] = float_constant(yield_op.operands[0].type, 0.0)
    for r, t in zip(op.results, clone.results):
        fw.set(r, t)


def _adds_or_sets(op) -> bool:
    """Whether a scatter's combiner writes the update or adds it (both linear)."""
    block = op.regions[0].blocks[0]
    return _terminator(block).operands[0] == list(block.arguments)[0] or _adds(op)


def _adds(op) -> bool:
    """Whether the op's combiner region is ``a + b`` of its two arguments."""
    block = op.regions[0].blocks[0]
    body = [as_op(o) for o in block.operations]
    return (len(body) == 2 and body[0].name in opset.FLOAT_ADDS
            and set(body[0].operands) == set(block.arguments))


# ---- control flow ----------------------------------------------------------------------

def _terminator(block):
    return as_op(list(block.operations)[-1])


def _active(block, fw: Forward, args: list) -> set:
    return activity(block, set(fw.tangents) | set(args))


@forward_rule("scf.for")
def _for(fw: Forward, op) -> None:
    body = op.regions[0].blocks[0]
    inits = list(op.operands)[3:]
    carries = list(body.arguments)[1:]
    yields = list(_terminator(body).operands)
    on = {k for k, v in enumerate(inits) if fw.of(v) is not None}
    while True:
        act = _active(body, fw, [carries[k] for k in on])
        grown = on | {k for k, y in enumerate(yields) if y in act}
        if grown == on:
            break
        on = grown
    on = sorted(on)
    _rebuild(fw, op, list(op.operands) + [fw.or_zero(inits[k]) for k in on],
             [r.type for r in op.results] + [inits[k].type for k in on], on,
             [(1, on, 0, on)])


@forward_rule("scf.while")
def _while(fw: Forward, op) -> None:
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    inits = list(op.operands)
    forwarded = list(_terminator(before).operands)[1:]
    yields = list(_terminator(after).operands)
    on = {k for k, v in enumerate(inits) if fw.of(v) is not None}
    while True:
        act = _active(before, fw, [list(before.arguments)[k] for k in on])
        passed = {j for j, v in enumerate(forwarded) if v in act}
        act = _active(after, fw, [list(after.arguments)[j] for j in passed])
        grown = on | {k for k, y in enumerate(yields) if y in act}
        if grown == on:
            break
        on = grown
    on, passed = sorted(on), sorted(passed)
    _rebuild(fw, op, inits + [fw.or_zero(inits[k]) for k in on],
             [r.type for r in op.results] + [forwarded[j].type for j in passed], passed,
             [(0, on, 1, passed), (0, passed, 0, on)])


@forward_rule("scf.if")
def _if(fw: Forward, op) -> None:
    branches = [r.blocks[0] for r in op.regions if len(r.blocks)]
    on = set()
    for block in branches:
        act = _active(block, fw, [])
        on |= {j for j, y in enumerate(_terminator(block).operands) if y in act}
    on = sorted(on)
    _rebuild(fw, op, list(op.operands),
             [r.type for r in op.results] + [op.results[j].type for j in on], on,
             [(0, [], 0, on)] * len(op.regions))


def _rebuild(fw: Forward, op, operands: list, result_types: list, result_tangents: list,
             regions: list) -> None:
    """``op`` again with tangent carries: ``regions`` gives per region (first carried
    argument, carried arguments with a tangent, first carried terminator operand,
    terminator operands with a tangent); the tangents follow the arguments and the
    terminator's operands. ``result_tangents`` are the results whose tangents follow
    the results."""
    from aotc._mlir import ir

    new = ir.Operation.create(op.name, results=result_types, operands=operands,
                              attributes={k: op.attributes[k] for k in op.attributes},
                              regions=len(op.regions))
    for region, old_region, (arg0, args_on, term0, terms_on) in zip(
            new.regions, op.regions, regions):
        if not len(old_region.blocks):
            continue
        old = old_region.blocks[0]
        old_args = list(old.arguments)
        carried = old_args[arg0:]
        block = region.blocks.append(*[a.type for a in old_args],
                                     *[carried[k].type for k in args_on])
        args = list(block.arguments)
        mapping = dict(zip(old_args, args))
        child = Forward(fw.pass_name, fw.func_name, fw.tangents)
        for i, k in enumerate(args_on):
            child.tangents[args[arg0 + k]] = args[len(old_args) + i]
        with ir.InsertionPoint(block):
            clones, values = clone_block(old, mapping)
            end = ir.Operation.create(_terminator(old).name, operands=values)
        child.sweep(clones, end)
        values = list(end.operands)  # rules replaced ops: read what ``end`` reads now
        with ir.InsertionPoint(end):
            tangents = [child.or_zero(values[term0 + k]) for k in terms_on]
            ir.Operation.create(end.name, operands=values + tangents)  # replaces ``end``
        end.erase()
    results = list(new.results)
    n = len(op.results)
    _replace(op, results[:n])
    for i, j in enumerate(result_tangents):
        fw.set(results[j], results[n + i])


# ---- calls with a custom derivative ------------------------------------------------------

@forward_rule("func.call")
def _call(fw: Forward, op) -> None:
    """The transpose of the backward function (linear in its cotangents): its own
    reverse-mode derivative with respect to them, built once per backward function."""
    from aotc._mlir import func, ir

    from ..base import find_function
    from .calls import custom_rule, module_of
    from .vjp import Vjp

    spec = custom_rule(op)
    if spec is None:
        fw.refuse(op, "calls are inlined before differentiation and this one was not")
    operands = list(op.operands)
    if any(fw.of(v) is not None for v in operands[spec.arguments:spec.arguments + spec.captures]):
        fw.refuse(op, f"{spec.name} closes over a value being differentiated; its custom "
                      f"rule covers its explicit arguments only (pass the value as one)")
    results = list(op.results)
    outputs = [r for r in results[:spec.outputs] if differentiable(r.type)]
    residuals = results[spec.outputs:]
    module = module_of(op)
    backward, funcs = find_function(module, spec.backward, fw.pass_name)
    n_cts = len(outputs)
    bwd_types = list(ir.FunctionType(ir.TypeAttr(backward.attributes["function_type"]).value)
                     .results)
    transposed = f"{spec.backward}_transposed"
    if transposed not in funcs:
        first = len(residuals)
        Vjp(func=spec.backward, vjp=transposed, wrt=tuple(range(first, first + n_cts)),
            seeded=tuple(range(len(bwd_types)))).run(module)
    explicit = [v for v in operands[:spec.arguments] if differentiable(v.type)]
    call = func.CallOp(bwd_types + [r.type for r in outputs], transposed,
                       residuals + [zeros(r.type) for r in outputs]
                       + operands[spec.arguments + spec.captures:]
                       + [fw.or_zero(v) for v in explicit])
    for r, t in zip(outputs, list(call.results)[len(bwd_types):]):
        fw.set(r, t)
