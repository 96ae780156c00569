"""The op vocabulary: one row per MLIR op aotc emits or its passes reason about.

Every set of op names the compiler uses (the views donation and gathers look through,
the elementwise, placing and source ops of the writer groups, the scalar dialects the
batching pass lifts to lanes, the ops widened for narrow integers, the float64 functions
IREE's CPU code lacks) is derived here from the rows' group and properties, so the passes
cannot disagree about what an op is. Rules keyed by op name (batching, donation
placement, later differentiation) are attached to their row with ``attach``; attaching a
rule to an op that has no row fails at import time, naming the row to add.

Adding an op: add its row to ``_ROWS`` (name, group, properties), then its rules where
they live (``@rule("dialect.op")`` in ``passes/batching``). ``tests/test_opset.py`` traces
the op tests' programs and the lowering snapshots and fails, naming the row, when an
emitted op has no row or no batching rule.

This module imports nothing from MLIR or aotc: it is data, read by every layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

# What an op does to tensors, as the passes need to know it.
GROUPS = {
    "elementwise": "one loop iteration per output element (linalg.generic also has "
                   "reduction forms, told apart by its iterators); IREE fuses it freely",
    "view": "the result is its first operand's data, reshaped, cast or sliced: nothing "
            "is computed",
    "placing": "places its operands into regions of a new tensor (IREE writes each "
               "operand's producer straight into its region)",
    "padding": "copies its operand into the middle of a larger tensor its region fills",
    "scatter": "combines rows of its updates into its original at rows its indices name",
    "source": "creates a value without reading tensors",
    "contraction": "reduces over loop dimensions (matmul, convolution, pooling)",
    "linalg_ext": "IREE's LinalgExt ops (sort, scan, top-k) over one dimension",
    "region": "structured control flow: regions run zero or more times",
    "write": "writes one element of a tensor (the stores of a sequential kernel)",
    "kernel": "a sequential kernel: scalar loops over small matrices that IREE compiles "
              "as one dispatch (aotc/ops/sequential.py)",
    "scalar": "computes on scalars (inside linalg bodies, or on 0-d values outside them)",
    "read": "reads one element of a tensor at computed indices, or builds a tensor from "
            "scalars",
    "barrier": "an identity IREE neither fuses across nor reorders",
    "function": "functions, calls and returns",
    "terminator": "ends a region, yielding its values",
}


@dataclass
class Op:
    """One op of the vocabulary.

    ``aliases_operand``: IREE may return the result in its first operand's buffer.
    ``keeps_storage``: IREE keeps the result in its operand's storage even after the
    program materializes it (reshapes and casts; a slice is a copy once materialized).
    ``fuses_into_gather``: a strided slice read through this op still fuses into the
    dispatch that gathers from it (IREE 3.13 then fails to compile the gather).
    ``pointwise``: each result element reads each tensor operand at its own position only
    (elementwise maps; a view keeps the positions of the window it reads); a
    linalg.generic is, unless its maps or a reduction say otherwise (see
    ``lowering._reads_pointwise``).
    ``offsets_at``: index of the first dynamic offset among the operands (slice ops).
    ``destination``: the operand IREE performs the op in (tied to the result).
    ``carries_at``: index of a loop's first initial carry among its operands; result k is
    the final value of carry k (IREE carries it in the result's storage).
    ``widen``: how the op is computed on 32 bits for narrow integers on Vulkan.
    ``cpu_f64``: IREE's CPU code has float64 code for it (it links no libm).
    ``cpu_expansion``: what aotc-expand-math does with it on CPU targets, space-separated:
    "f64" (replaced by aotc's float64 version), "f32" (float32 computed in float64),
    "f32-own" (replaced by aotc's float32 version), "f32-guard" (IREE's float32 version,
    fed 0 where its operand is a NaN the compiler can know, and NaN returned there:
    aotc-guard-known-nans).
    ``bits``: how a conversion treats a float's value: "to" (a float taken apart into
    integers or bits), "from" (a float made from integers), "both" (a bitcast); the
    differentiation pass refuses floats rebuilt from a differentiated value's bits.
    ``flat``: piecewise constant (floor, ceil, ...): its derivative is zero almost
    everywhere.
    ``dear``: many cycles per element (a division, a transcendental): forward mode
    computes it once rather than again in every tangent's generic.
    ``rules``: rules by kind (``"batch"``, ``"placement"``, ...), attached by ``attach``.
    """

    name: str
    group: str
    aliases_operand: bool = False
    keeps_storage: bool = False
    fuses_into_gather: bool = False
    constant_like: bool = False
    pointwise: bool = False
    offsets_at: int | None = None
    destination: int | None = None
    carries_at: int | None = None
    widen: str | None = None
    cpu_f64: bool = True
    cpu_expansion: str = ""
    bits: str = ""
    flat: bool = False
    dear: bool = False
    rules: dict[str, Callable] = field(default_factory=dict, repr=False, compare=False)

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def __post_init__(self):
        if self.group not in GROUPS:
            raise ValueError(f"op {self.name}: unknown group {self.group!r}; "
                             f"one of {sorted(GROUPS)}")


def _rows(group: str, names: str, **props) -> list[Op]:
    return [Op(name, group, **props) for name in names.split()]


_VIEW = dict(aliases_operand=True, fuses_into_gather=True, pointwise=True)

_ROWS: list[Op] = [
    # ---- views -------------------------------------------------------------------------
    Op("tensor.extract_slice", "view", offsets_at=1, **_VIEW),
    *_rows("view", "tensor.collapse_shape tensor.expand_shape tensor.cast tensor.reshape "
                   "tensor.bitcast", keeps_storage=True, **_VIEW),
    # ---- elementwise ---------------------------------------------------------------------
    Op("linalg.generic", "elementwise", pointwise=True),
    Op("linalg.transpose", "elementwise", fuses_into_gather=True),
    Op("linalg.broadcast", "elementwise"),
    Op("linalg.fill", "elementwise", constant_like=True, pointwise=True),
    *_rows("elementwise", "linalg.map linalg.copy linalg.elementwise "
                          "linalg.add linalg.sub linalg.mul linalg.div linalg.max linalg.min "
                          "linalg.exp linalg.log linalg.abs linalg.negf linalg.sqrt "
                          "linalg.rsqrt linalg.tanh linalg.floor linalg.ceil linalg.square "
                          "linalg.reciprocal linalg.powf linalg.erf", pointwise=True),
    # ---- placing, scatter, sources ---------------------------------------------------------
    Op("tensor.concat", "placing"),
    Op("tensor.insert_slice", "placing", offsets_at=2, destination=1),
    Op("tensor.pad", "padding"),
    Op("iree_linalg_ext.scatter", "scatter", destination=2),
    *_rows("source", "tensor.empty tensor.splat", constant_like=True),
    Op("arith.constant", "source", constant_like=True),
    Op("complex.constant", "source", constant_like=True),
    # ---- contractions ------------------------------------------------------------------
    *_rows("contraction", "linalg.matmul linalg.batch_matmul"),
    *_rows("contraction", " ".join(
        f"linalg.{n}" for n in (
            "conv_1d_nwc_wcf conv_2d_nhwc_hwcf conv_3d_ndhwc_dhwcf conv_2d_nchw_fchw "
            "conv_1d_ncw_fcw conv_3d_ncdhw_fcdhw conv_2d_nhwc_fhwc conv_2d_ngchw_fgchw "
            "conv_2d_nhwgc_gfhwc".split()
            + [f"depthwise_conv_{s}" for s in (
                "1d_nwc_wc 2d_nhwc_hwc 3d_ndhwc_dhwc 1d_nwc_wcm 2d_nhwc_hwcm 3d_ndhwc_dhwcm "
                "1d_ncw_cw 2d_nchw_chw 3d_ncdhw_cdhw".split())]
            + [f"pooling_{layout}_{kind}"
               for layout in ("nwc", "nhwc", "ndhwc", "ncw", "nchw", "ncdhw")
               for kind in ("max", "min", "sum")]))),
    *_rows("linalg_ext", "iree_linalg_ext.sort iree_linalg_ext.scan iree_linalg_ext.topk"),
    # ---- control flow, functions, barriers -----------------------------------------------
    Op("scf.for", "region", carries_at=3),
    Op("scf.while", "region", carries_at=0),
    *_rows("region", "scf.if scf.index_switch scf.execute_region"),
    *_rows("function", "func.func func.call"),
    *_rows("terminator", "func.return scf.yield scf.condition linalg.yield tensor.yield "
                         "iree_linalg_ext.yield flow.return"),
    Op("flow.dispatch.region", "kernel"),
    Op("flow.dispatch.workgroups", "kernel"),  # a loop as one dispatch (loops_in_dispatch)
    # a workgroup's number and the count in a loop's dispatch (pointwise_tiles.distribute)
    *_rows("source", "flow.dispatch.workgroup.id flow.dispatch.workgroup.count"),
    Op("iree_tensor_ext.dispatch.tensor.load", "read"),
    Op("iree_tensor_ext.dispatch.tensor.store", "write"),
    Op("util.optimization_barrier", "barrier"),
    Op("flow.tensor.clone", "barrier"),
    # ---- reads of single elements -----------------------------------------------------------
    *_rows("read", "tensor.extract tensor.from_elements tensor.dim linalg.index"),
    Op("tensor.insert", "write"),
    # ---- scalars -----------------------------------------------------------------------
    *_rows("scalar", "arith.divf arith.remf", dear=True),
    *_rows("scalar", "arith.addf arith.subf arith.mulf arith.negf "
                     "arith.addi arith.subi arith.muli arith.divsi arith.remsi arith.floordivsi "
                     "arith.ceildivsi arith.andi arith.ori arith.xori arith.shrsi arith.maxsi "
                     "arith.minsi arith.cmpf arith.cmpi arith.select arith.extf "
                     "arith.truncf arith.extsi arith.extui arith.trunci "
                     "arith.index_cast arith.index_castui arith.maximumf "
                     "arith.minimumf arith.maxnumf arith.minnumf"),
    Op("arith.bitcast", "scalar", bits="both"),
    *_rows("scalar", "arith.sitofp arith.uitofp", bits="from"),
    *_rows("scalar", "arith.fptosi arith.fptoui", bits="to"),
    # Unsigned arithmetic Vulkan gets wrong on 8/16 bits: done on 32 (aotc-widen-narrow-ints).
    *_rows("scalar", "arith.divui arith.remui arith.ceildivui arith.shrui arith.maxui "
                     "arith.minui arith.shli", widen="unsigned"),
    *_rows("scalar", "math.absf math.absi math.copysign math.fma"),
    *_rows("scalar", "math.erf math.log math.sqrt math.rsqrt math.fpowi math.ipowi",
           dear=True),
    *_rows("scalar", "math.cosh math.exp", cpu_expansion="f32-guard", dear=True),
    *_rows("scalar", "math.ceil math.floor math.roundeven math.trunc", flat=True),
    # complex<f32>/complex<f64> scalars (ops/scalar_complex.py): IREE lowers them to
    # arith/math on their parts
    *_rows("scalar", "complex.add complex.sub complex.mul complex.div complex.neg "
                     "complex.conj complex.re complex.im complex.create complex.abs "
                     "complex.sign complex.sqrt complex.exp complex.expm1 complex.log "
                     "complex.log1p complex.pow complex.sin complex.cos complex.tan "
                     "complex.tanh complex.eq complex.neq"),
    # IREE's CPU code computes these poorly in float64 (aotc-expand-math replaces them).
    *_rows("scalar", "math.atanh math.log10 math.log1p math.log2 math.tanh",
           cpu_expansion="f64", dear=True),
    *_rows("scalar", "math.sinh", cpu_expansion="f64 f32-guard", dear=True),
    *_rows("scalar", "math.cbrt math.expm1 math.powf", cpu_expansion="f64 f32", dear=True),
    *_rows("scalar", "math.exp2", cpu_expansion="f64 f32-own", dear=True),
    # IREE's CPU code links no libm and has no inline float64 version of these.
    *_rows("scalar", "math.asin math.acos", cpu_f64=False, cpu_expansion="f64 f32",
           dear=True),
    *_rows("scalar", "math.sin math.cos math.tan math.atan math.atan2", cpu_f64=False,
           cpu_expansion="f64 f32", dear=True),
]

OPS: dict[str, Op] = {}
for _row in _ROWS:
    if _row.name in OPS:
        raise ValueError(f"op {_row.name} has two rows in the vocabulary")
    OPS[_row.name] = _row


def of_group(*groups: str) -> frozenset[str]:
    for g in groups:
        if g not in GROUPS:
            raise ValueError(f"unknown group {g!r}; one of {sorted(GROUPS)}")
    return frozenset(o.name for o in OPS.values() if o.group in groups)


def having(prop: str) -> frozenset[str]:
    """The ops whose property ``prop`` is set (truthy)."""
    return frozenset(o.name for o in OPS.values() if getattr(o, prop))


# ---- the derived sets ------------------------------------------------------------------

VIEW_OPS = of_group("view")
BARRIER_OPS = of_group("barrier")
ELEMENTWISE_OPS = of_group("elementwise")
PLACING_OPS = of_group("placing")
SOURCE_OPS = of_group("source")
CONTRACTION_OPS = of_group("contraction")
# Dispatches aotc forms itself: sequential kernels and loops as one dispatch.
DISPATCH_OPS = of_group("kernel")
# The named matmuls, by their rank: (batch,) rows, depth x depth, columns.
MATMUL_RANKS = {"linalg.matmul": 2, "linalg.batch_matmul": 3}
# Convolutions whose register tiles aotc-tile-convolutions sets (channel-last, 2-D).
TILED_CONVOLUTIONS = frozenset({"linalg.conv_2d_nhwc_hwcf"})
CONSTANT_LIKE_OPS = having("constant_like")
RESHAPE_OPS = having("keeps_storage")
GATHER_FUSING_OPS = having("fuses_into_gather")
# What IREE fuses into the dispatch that writes an insert_slice into its destination.
INSERT_FUSED_PRODUCERS = of_group("elementwise", "view", "read", "source") - {"linalg.index"}
POINTWISE_OPS = having("pointwise")
OFFSETS_AT = {o.name: o.offsets_at for o in OPS.values() if o.offsets_at is not None}
DESTINATION = {o.name: o.destination for o in OPS.values() if o.destination is not None}
CARRIES_AT = {o.name: o.carries_at for o in OPS.values() if o.carries_at is not None}
WIDENED = {o.name: o.widen for o in OPS.values() if o.widen}
SCALAR_DIALECTS = frozenset(o.dialect for o in OPS.values() if o.group == "scalar")
# What aotc-expand-math rewrites on CPU targets, by how (see Op.cpu_expansion).
CPU_EXPANSION = {how: frozenset(o.name for o in OPS.values() if how in o.cpu_expansion.split())
                 for how in ("f64", "f32", "f32-own", "f32-guard")}
CPU_MISSING_F64 = frozenset(o.name for o in OPS.values() if not o.cpu_f64)
# Conversions between floats and integers or bits (see Op.bits), and flat ops.
# The ops whose reverse-mode rules take complex values (the generic's, with the tangent
# rules of autodiff/complex_scalar.py; views and placements; the named matmuls): JAX's
# convention makes a linear map's transpose the unconjugated one, so they keep their
# real forms. A derivative through complex values of any other op is refused.
COMPLEX_DERIVATIVES = frozenset({
    "linalg.generic", "linalg.matmul", "linalg.batch_matmul", "linalg.transpose",
    "linalg.broadcast", "linalg.copy", "linalg.fill", "tensor.extract_slice",
    "tensor.insert_slice", "tensor.collapse_shape", "tensor.expand_shape", "tensor.cast",
    "tensor.concat", "tensor.pad", "tensor.extract", "tensor.from_elements",
    "util.optimization_barrier", "flow.tensor.clone", "scf.for", "scf.if", "scf.yield",
    "func.call", "iree_linalg_ext.scan", "iree_linalg_ext.scatter"})
# The combiners of the cumulative sums and scatter-adds that have derivatives.
FLOAT_ADDS = frozenset({"arith.addf", "complex.add"})
# Float max and min: combiners of long latency, whose row reductions aotc-tile-reductions
# gives several accumulators.
FLOAT_EXTREMA = frozenset({"arith.maximumf", "arith.minimumf", "arith.maxnumf",
                           "arith.minnumf"})
FLOAT_FROM_BITS = frozenset(o.name for o in OPS.values() if o.bits in ("from", "both"))
FLOAT_TO_BITS = frozenset(o.name for o in OPS.values() if o.bits in ("to", "both"))
FLAT_OPS = having("flat")
DEAR_OPS = having("dear")
# The multiply and the accumulation of a product's body, per kind of element: a generic
# whose body is ``out + a * b`` with them is a contraction (batching's named matmuls).
MULTIPLY_ADD = frozenset({("arith.mulf", "arith.addf"), ("arith.muli", "arith.addi")})


def row(name: str, needed_for: str = "") -> Op:
    """The row of ``name``; a clear error naming the row to add when there is none."""
    try:
        return OPS[name]
    except KeyError:
        why = f" ({needed_for})" if needed_for else ""
        raise KeyError(
            f"op {name} is not in aotc's op vocabulary{why}: add a row "
            f"Op({name!r}, <group>) to _ROWS in passes/opset.py (groups: "
            f"{', '.join(GROUPS)})"
        ) from None


def attach(kind: str, *names: str):
    """Decorator: attaches ``fn`` as the ``kind`` rule of each op in ``names``."""

    def add(fn):
        for name in names:
            op = row(name, f"a {kind} rule, {fn.__module__}.{fn.__qualname__}, is attached to it")
            if kind in op.rules and op.rules[kind] is not fn:
                raise ValueError(f"op {name} has two {kind} rules: "
                                 f"{op.rules[kind].__qualname__} and {fn.__qualname__}")
            op.rules[kind] = fn
        return fn

    return add


def rule_of(kind: str, name: str) -> Callable | None:
    op = OPS.get(name)
    return None if op is None else op.rules.get(kind)
