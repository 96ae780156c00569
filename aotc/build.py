"""Tracing + cleanup + metadata: from a Python function and a call signature to an MLIR
module ready for IREE."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

from . import config
from . import numpy as _numpy  # noqa: F401  (installs the operators and methods of Tracer)
from ._mlir import ir
from .core import Trace, trace_function
from .errors import CompileError, UnsupportedOpError
from .passes import (
    DropCustomDerivatives,
    DropStopGradients,
    CLEANUP,
    REGISTRY,
    SHARE_KERNELS,
    CheckDtypes,
    CopySharedDestinations,
    DropCarryBarriers,
    LoopsInDispatch,
    UnrollLoops,
    MaterializeConstants,
    ShareDearValues,
    FoldEmptyLoops,
    FoldToArguments,
    FoldSplats,
    FuseSiblings,
    HoistScanMatmuls,
    HostScalars,
    IsolateMatmuls,
    PassError,
    KeepUnusedKernelResults,
    RootKernelsForGpu,
    ComplexPadsAsInserts,
    SeparateReturnedUpdates,
    ShieldReductions,
    ShieldStridedSlices,
    SplitBoolBroadcasts,
    TileConvolutions,
    TileMatmuls,
    TileReductions,
    run_pipeline,
)
from .passes.base import collect_ops, is_private, read_metadata, write_metadata
from .passes.matmul_tiles import panels_for_every_contraction, tiles_every_contraction
from .passes.donation import donate_and_record, mark_donated, mark_written
from .runtime.metadata import FunctionMetadata
from .signature import ArgumentBinder, CallSignature, build_metadata
from .cpu_paths import (compile_flags, inner_tiling, register_bytes, tiles_convolutions,
                        tiles_float32_matmuls, tiles_matmuls, tiles_reductions)
from .targets import DATA_TILING, LOOP_VECTORIZATION, Target, device_targets_attribute


@dataclass
class LoweredFunction:
    metadata: FunctionMetadata
    contractions: list  # targets.Contraction
    has_adjoints: bool = False  # reverse-mode derivatives (``ADJOINT_FLAGS``)


def new_module() -> ir.Module:
    context = ir.Context()
    with context, ir.Location.unknown():
        return ir.Module.create()


def trace_into(
    module: ir.Module,
    binder: ArgumentBinder,
    signature: CallSignature,
    name: str,
    target: Target,
) -> LoweredFunction:
    """Traces one function into ``module`` as ``func.func @name`` and attaches its metadata."""
    # aotc.vmap: batch dimensions may be dynamic (one name for all of them).
    dynamic_signature = getattr(binder.fn, "_aotc_dynamic_signature", None)
    batch_dim = None
    if dynamic_signature is not None:
        signature, batch_dim = dynamic_signature(binder.fn_name, signature)
    else:
        for leaf_name, aval in zip(signature.leaf_names, signature.avals):
            if any(not isinstance(d, int) for d in aval.shape):
                raise UnsupportedOpError(
                    f"{binder.fn_name}() argument {leaf_name}: expected static dimensions, got "
                    f"shape {aval.shape}. Dynamic dimensions (None or a name) are supported "
                    f"for the batch dimension of aotc.vmap; otherwise export one artifact per "
                    f"size."
                )
    trace = Trace(binder.fn_name, module)
    # A sequential kernel (ops/sequential.py) compiles for CPUs as it is and for GPUs with
    # aotc-root-kernels-for-gpu's root, which would break the CPU code of a module
    # serving both.
    trace.sequential_kernels = len({t.family.is_cpu for t in target.targets}) == 1
    traced = trace_function(
        binder.fn, name, signature.args_tree, [_unnamed_dims(a) for a in signature.avals],
        lambda leaves: binder.rebuild(signature, leaves), trace,
    )
    if batch_dim is not None:  # the results' dynamic dims are the batch dimension
        traced.out_avals = [_named_dims(a, batch_dim) for a in traced.out_avals]
    with module.context:
        source_hash = hashlib.sha256(str(traced.func_op).encode()).hexdigest()[:16]
    metadata = build_metadata(
        name, signature, traced.out_avals, traced.out_tree, target.name, source_hash,
        trace.work.total, trace.ops, traced.mutated, trace.weak_casts, trace.residual_bytes,
        trace.work.contraction, trace.work.matvec,
    )
    with module.context:
        write_metadata(traced.func_op, metadata)
        if signature.donated:
            mark_donated(traced.func_op, {i: signature.leaf_names[i] for i in signature.donated})
        if traced.mutated:  # their final values follow the results: written in place
            n = len(traced.out_avals)
            mark_written(traced.func_op, {i: n + j for j, i in enumerate(traced.mutated)})
    return LoweredFunction(metadata, trace.contractions, trace.has_adjoints)


def _unnamed_dims(aval):
    """A named dynamic dimension is dynamic (None) while tracing."""
    if all(d is None or isinstance(d, int) for d in aval.shape):
        return aval
    return replace(aval, shape=tuple(None if isinstance(d, str) else d for d in aval.shape))


def _named_dims(aval, dim: str):
    return type(aval)(tuple(dim if d is None else d for d in aval.shape), aval.dtype)


def inline_calls(module: ir.Module) -> None:
    """Inlines the private functions ``aotc.vmap``, the derivatives and the functions with
    a custom derivative call (their marks dropped: differentiation is over), and removes
    them, so that aotc's passes and IREE see one function body per exported function."""
    with module.context:
        private = any(op.operation.name == "func.func" and is_private(op.operation)
                      for op in module.body.operations)
    if private:
        # No canonicalize inside the inliner: it rebuilt its pattern set for every callable,
        # and finish_module's cleanup canonicalizes the whole module next, to the same ops
        # (the inline step of a QR/SVD/LU gradient program: 3.4-5.2 -> 1.5 s).
        run_pipeline(module, [DropCustomDerivatives(), "inline{default-pipeline=}", "symbol-dce"])


def finish_module(module: ir.Module, target: Target, contractions, *,
                  strict_donation: bool = False, has_adjoints: bool = False) -> tuple[str, ...]:
    """Runs the cleanup pipeline and the checks of every target; returns the IREE flags
    to compile with. Several targets, or one IREE cannot name by flag, are written into
    the module as its ``hal.device.targets`` attribute. Donated arguments are paired with
    results last (``donate_and_record``). ``has_adjoints``: the module holds reverse-mode
    derivatives (``ADJOINT_FLAGS``)."""
    checks = [CheckDtypes(t.unsupported_dtypes, t.unsupported_ops, t.name) for t in target.targets]
    # Rewrites some target needs (one module serves every target of an artifact).
    needed = dict.fromkeys(p for t in target.targets for p in t.passes)
    # A rewrite that introduces a type some target lacks (float64 for Vulkan) is skipped.
    lacking = frozenset().union(*(t.unsupported_dtypes for t in target.targets))
    rewrites = [REGISTRY[name]() if name in REGISTRY else name  # else an upstream pass
                for name in needed
                if not getattr(REGISTRY.get(name), "introduces", frozenset()) & lacking]
    try:
        inline_calls(module)
        # Reductions merge before donation (see fuse_siblings), on CPU targets only.
        merging = [FuseSiblings(reductions=True, returned=False)] if target.is_cpu else []
        # IREE workarounds first: loops of zero trips, reductions whose body reads no input,
        # scalar bools IREE would yield twice, results IREE's folds make arguments (before
        # the donation analysis), carry barriers over returned updates, strided slices of
        # bit extensions.
        folds = [FoldEmptyLoops(), FoldSplats(), ShieldReductions(), SplitBoolBroadcasts(),
                 FoldToArguments(), DropCarryBarriers(), ShieldStridedSlices()]
        # The stop_gradient marks have done their job once the module is final. A scan's
        # per-step matmuls of its sequence go before the loop once the cleanup has made
        # the slices' offsets constants.
        # Index arithmetic on host scalars (loop counters) stays on the host. Identical
        # factorizations (a derivative's rules recompute them) run once.
        run_pipeline(module, [DropStopGradients(), HostScalars(), *CLEANUP, *SHARE_KERNELS,
                              HoistScanMatmuls(),
                              *folds, *rewrites, SeparateReturnedUpdates(), *merging, *checks])
    except PassError as e:
        raise CompileError(str(e)) from e
    donate_and_record(module, strict_donation)
    # Last: IREE rejects a kernel's result barrier some of whose results are returned,
    # clones shared update destinations wrongly and cannot splat complex128 constants
    # (the barriers these add are scalars').
    # Loops of scalar steps become one dispatch each on CPU targets (their GPU code is
    # not measured); a compile that fails with them retries without (compiler.py).
    max_work = config.value("loop_dispatch_max_work")
    # The loops left at one dispatch per op run several steps per VM iteration, but not
    # beside reverse-mode derivatives: IREE packs an iteration's transients together, and
    # a tape's memory per step is what checkpoint policies choose.
    unroll = [] if has_adjoints else [UnrollLoops()]
    loops = [LoopsInDispatch(max_work), *unroll] if target.is_cpu and max_work > 0 else []
    # Transcendentals computed once where IREE would compute them in each reader (measured
    # on CPUs only); before the loops, whose dispatches drop such separations.
    sharing = [ShareDearValues()] if target.is_cpu else []
    # GPU code generation compiles a sequential kernel only with a structured root.
    roots = [] if target.is_cpu else [RootKernelsForGpu()]
    # Complex pads crash IREE; their fills go before the complex128 splats' copies.
    run_pipeline(module, [FuseSiblings(reductions=False, returned=True), KeepUnusedKernelResults(),
                          CopySharedDestinations(), ComplexPadsAsInserts(), MaterializeConstants(),
                          *sharing, *loops, *roots])
    attribute = device_targets_attribute(target)
    if attribute is not None:
        with module.context:
            module.operation.attributes["hal.device.targets"] = ir.Attribute.parse(attribute)
    # float64 matmuls: aotc-tile-matmuls' tiles where it gives every contraction one (on
    # AMD Zen 5 and Zen 3), else through inner_tiled, each alone in its dispatch
    # (targets.INNER_TILED); on AVX2 any module whose contractions all run on its packed
    # panels, float32 too, compiles without data tiling.
    tiled = tiles_matmuls(target) and bool(contractions) and (
        (all(c.dtype == "float64" for c in contractions)
         and tiles_every_contraction(module.operation))
        or panels_for_every_contraction(module.operation, register_bytes(target)))
    inner = not tiled and inner_tiling(target, contractions) and matrix_matmuls(module)
    if inner:
        run_pipeline(module, [IsolateMatmuls()])
    flags = compile_flags(target, contractions, inner, tiled)
    # float32 and float64 matmuls: the tiles measured fastest on AMD Zen 5 and Zen 3
    # (float32's on Zen 4), where no data tiling repacks them (passes/matmul_tiles.py).
    elements = (TileMatmuls.elements if tiles_matmuls(target)
                else ("f32",) if tiles_float32_matmuls(target) else ())
    if elements and DATA_TILING[0] not in flags:
        run_pipeline(module, [TileMatmuls(elements, register_bytes(target))])
    # channel-last convolutions: register tiles of whole AVX2 vectors (passes/conv_tiles.py)
    if tiles_convolutions(target):
        run_pipeline(module, [TileConvolutions(register_bytes(target))])
    # float32 row reductions: several accumulators in flight (passes/reduction_tiles.py)
    if tiles_reductions(target):
        run_pipeline(module, [TileReductions()])
    if any(t.family.is_cpu for t in target.targets):
        if has_adjoints:
            flags += ADJOINT_FLAGS
        if has_dynamic_arguments(module):
            flags += DYNAMIC_SHAPE_CPU_FLAGS
        if forms_dispatches(module):
            flags += LOOP_VECTORIZATION
    return flags


def forms_dispatches(module: ir.Module) -> bool:
    """Does the module hold dispatches aotc formed (sequential kernels, loops as one
    dispatch), whose scalar loops LLVM's loop vectorizer speeds up
    (``targets.LOOP_VECTORIZATION``)?"""
    from .passes.opset import DISPATCH_OPS

    with module.context:
        return bool(collect_ops(module.operation, lambda op: op.name in DISPATCH_OPS))


def matrix_matmuls(module: ir.Module) -> bool:
    """Every contraction of ``module`` is a ``linalg.matmul`` of two matrices (no unit
    dimension): the one form IREE 3.13's inner_tiled lowering compiles
    (``targets.INNER_TILED``), once aotc-isolate-matmuls keeps its consumers out of its
    dispatch. A batch matmul or a vector operand fails in its encoding materialization."""
    from .passes.opset import CONTRACTION_OPS

    with module.context:
        found = [op for op, _ in collect_ops(module.operation,
                                             lambda op: op.name in CONTRACTION_OPS)]
        return bool(found) and all(
            op.name == "linalg.matmul"
            and all(d > 1 for d in ir.ShapedType(op.results[0].type).shape)
            for op in found)


# IREE 3.13's aggressive fusion (at O3) fails on some reverse-mode derivatives: forming
# dispatch regions, a fused multi-use producer read a value before its definition ("does
# not dominate this use"), and a dispatch writing two cotangents into one destination
# copied it outside its workgroups ("workgroup distribution verification"). 7 of the 12
# programs of tests/test_gradient_coverage.py failed so and compiled twice (the retry at
# dispatch creation O1, compiler.FALLBACKS): 106 s of IREE time for the file, 91 s
# without it. Training steps run as fast either way (train_step.py, us: MLP batch 64 625
# / 645, 256 3002 / 2985, CNN 2115 / 2069; intermediates 3584 -> 3114 KiB at 256, 11147 ->
# 12541 KiB for the CNN), so CPU modules with adjoints compile without it
# (finish_module).
ADJOINT_FLAGS = ("--iree-dispatch-creation-enable-aggressive-fusion=false",)


# IREE 3.13's CPU code generator masks the vectors over a dynamic dimension: the MLP of
# benchmarks/vmap.py with a dynamic batch ran 2-5x slower than with a static one. Peeling
# the remainder iterations instead brings it within ~1.1x. (A process-wide LLVM option:
# such modules compile with the iree-compile tool, see compiler.PROCESS_WIDE_FLAGS.)
DYNAMIC_SHAPE_CPU_FLAGS = ("--iree-llvmcpu-vector-pproc-strategy=peel",)


def has_dynamic_arguments(module: ir.Module) -> bool:
    """Does some function of the module take a tensor with a dynamic dimension?"""
    with module.context:
        for op in module.body.operations:
            op = op.operation
            if op.name != "func.func":
                continue
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            if any(isinstance(t, ir.RankedTensorType) and not t.has_static_shape
                   for t in ftype.inputs):
                return True
    return False


def function_metadata(module: ir.Module, name: str) -> FunctionMetadata:
    """The metadata of ``@name`` as recorded in the module (after ``finish_module``)."""
    with module.context:
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
                return read_metadata(op)
    raise KeyError(name)




def clone_module(module: ir.Module):
    """A copy of the module (a ``builtin.module`` operation) that later passes on the
    original leave alone."""
    with module.context:
        return module.operation.clone()


# The metadata string inside ``iree.reflection = {aotc = "..."}`` (MLIR escapes quotes
# inside strings as \22, so the string has no raw quote).
_METADATA = re.compile(r'(iree\.reflection = \{(?:[^"}]|"[^"]*")*?\baotc = )"([^"]*)"')


def module_text(module, *, metadata: bool = True, debug_info: bool = False) -> str:
    """The module as MLIR text; ``metadata=False`` abbreviates each function's aotc
    metadata (a long JSON string) to its size, ``debug_info`` prints source locations."""
    operation = module.operation
    with operation.context:
        text = operation.get_asm(enable_debug_info=debug_info)
    if metadata:
        return text
    return _METADATA.sub(
        lambda m: f'{m.group(1)}"(aotc metadata, {len(m.group(2))} bytes; '
                  f'as_text(metadata=True) shows it)"', text)
