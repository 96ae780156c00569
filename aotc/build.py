"""Tracing + cleanup + metadata: from a Python function and a call signature to an MLIR
module ready for IREE."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from typing import Callable

from ._mlir import ir
from .core import Trace, trace_function
from .passes import CLEANUP, REGISTRY, CheckDtypes, PassError, run_pipeline
from .errors import CompileError, UnsupportedOpError
from .runtime.metadata import REFLECTION_KEY, FunctionMetadata
from .signature import ArgumentBinder, CallSignature, build_metadata
from .targets import Target, compile_flags, device_targets_attribute


@dataclass
class LoweredFunction:
    metadata: FunctionMetadata
    contractions: list[tuple[float, bool]]


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
    for leaf_name, aval in zip(signature.leaf_names, signature.avals):
        if any(not isinstance(d, int) for d in aval.shape):
            raise UnsupportedOpError(
                f"{binder.fn_name}() argument {leaf_name}: expected static dimensions, got "
                f"shape {aval.shape}. Dynamic dimensions (None or a name) are not supported "
                f"yet; export one artifact per size for now."
            )
    trace = Trace(binder.fn_name, module)
    traced = trace_function(
        binder.fn, name, signature.args_tree, signature.avals,
        lambda leaves: binder.rebuild(signature, leaves), trace,
    )
    with module.context:
        source_hash = hashlib.sha256(str(traced.func_op).encode()).hexdigest()[:16]
    metadata = build_metadata(
        name, signature, traced.out_avals, traced.out_tree, target.name, source_hash, trace.work
    )
    with module.context:
        traced.func_op.attributes["iree.reflection"] = ir.DictAttr.get(
            {REFLECTION_KEY: ir.StringAttr.get(metadata.to_json())}
        )
    return LoweredFunction(metadata, trace.contractions)


def finish_module(module: ir.Module, target: Target, contractions) -> tuple[str, ...]:
    """Runs the cleanup pipeline and the checks of every target; returns the IREE flags
    to compile with. Several targets, or one IREE cannot name by flag, are written into
    the module as its ``hal.device.targets`` attribute."""
    checks = [CheckDtypes(t.unsupported_dtypes, t.unsupported_ops, t.name) for t in target.targets]
    # Rewrites some target needs (one module serves every target of an artifact).
    rewrites = [REGISTRY[name]() for name in dict.fromkeys(p for t in target.targets for p in t.passes)]
    try:
        run_pipeline(module, list(CLEANUP) + rewrites + checks)
    except PassError as e:
        raise CompileError(str(e)) from None
    attribute = device_targets_attribute(target)
    if attribute is not None:
        with module.context:
            module.operation.attributes["hal.device.targets"] = ir.Attribute.parse(attribute)
    return compile_flags(target, contractions)


def bytecode(module: ir.Module) -> bytes:
    buf = io.BytesIO()
    module.operation.write_bytecode(buf)
    return buf.getvalue()


def module_text(module: ir.Module) -> str:
    with module.context:
        return str(module)
