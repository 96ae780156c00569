"""What one call of a compiled function costs, in JAX's shapes: ``cost_analysis``'s
estimates and ``memory_analysis``'s ``CompiledMemoryStats`` (``Compiled`` in aotc/api.py
answers with them)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .runtime.metadata import FunctionMetadata


def cost_analysis(metadata: FunctionMetadata) -> dict[str, float]:
    """JAX's cost-analysis keys from aotc's estimates (see ``Compiled.cost_analysis``)."""
    from .runtime.memory import function_memory

    out = {"flops": float(metadata.work_estimate)}
    if metadata.op_estimate:
        out["ops"] = float(metadata.op_estimate)
    sizes = [function_memory(replace(metadata, args=(spec,)))["argument_bytes"]
             for spec in metadata.args]
    results = function_memory(metadata)["result_bytes"]
    if results is not None and all(s is not None for s in sizes):
        out["bytes accessed"] = float(sum(sizes) + results)
        out.update({f"bytes accessed{i}{{}}": float(s) for i, s in enumerate(sizes)})
        out["bytes accessedout{}"] = float(results)
    return out


@dataclass(frozen=True)
class CompiledMemoryStats:
    """Memory of one call of a compiled function, with the fields of JAX's
    ``CompiledMemoryStats`` (None where it cannot be known here).

    Attributes:
      generated_code_size_in_bytes: the size of the compiled module (``.vmfb``: code,
        constants and metadata).
      argument_size_in_bytes, output_size_in_bytes: the arguments' and results' bytes,
        from the signature (None for dynamic dimensions).
      alias_size_in_bytes: result bytes written into donated argument buffers.
      temp_size_in_bytes: the most bytes IREE's intermediate (transient) buffers hold at
        once inside a call, measured: the function runs once on zero-filled arguments on
        a private local-sync device whose allocator sees every allocation
        (``runtime.memory.measure_transient``). None when its code cannot run on this
        machine's CPU (another target) or a dimension is dynamic.
      residual_size_in_bytes: the forward values the function's derivatives (``grad``,
        ``vjp``, ...) keep for their backward pass, as ``aotc-vjp`` counts them: the
        forward results the backward ops read and the tapes of differentiated loops (an
        upper bound: IREE may recompute a fused elementwise value instead of keeping
        it); 0 without derivatives. ``checkpoint`` lowers it.
    """

    generated_code_size_in_bytes: int
    argument_size_in_bytes: int | None
    output_size_in_bytes: int | None
    alias_size_in_bytes: int | None
    temp_size_in_bytes: int | None
    residual_size_in_bytes: int = 0


def memory_stats(vmfb: bytes, metadata: FunctionMetadata) -> CompiledMemoryStats:
    """The ``CompiledMemoryStats`` of the function ``metadata`` describes in ``vmfb``
    (its transient bytes measured by running it once, see ``temp_size_in_bytes``)."""
    from .runtime.memory import function_memory, measure_transient

    figures = function_memory(metadata)
    return CompiledMemoryStats(
        generated_code_size_in_bytes=len(vmfb),
        argument_size_in_bytes=figures["argument_bytes"],
        output_size_in_bytes=figures["result_bytes"],
        alias_size_in_bytes=figures["donated_bytes"],
        temp_size_in_bytes=measure_transient(vmfb, metadata.name),
        residual_size_in_bytes=metadata.residual_bytes,
    )
