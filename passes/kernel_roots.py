"""aotc-root-kernels-for-gpu: each sequential kernel gets a structured root and one GPU
thread.

A sequential kernel (``aotc/ops/sequential.py``) is a ``flow.dispatch.region`` of scalar
``scf.for`` loops over ``tensor.extract``/``tensor.insert``. IREE 3.13's SPIR-V and CUDA
code generation picks a lowering from the region's structured root; a region without one
gets none, and fails ("failed to legalize hal.interface.binding.subspan"). An identity
copy as the root folds away; any other root after the loops is tiled over workgroups,
and every thread of every workgroup then runs the loops into its own private copy
(measured on lavapipe: 64 KiB per thread for a 128x128 Cholesky).

So on GPU targets the first result tensor a kernel starts from (a ``tensor.empty``, which
the kernel overwrites element by element) becomes a zero ``linalg.fill`` carrying a
``compilation_info``: IREE's GPU ``BaseLowering`` pipeline with a workgroup of one
thread. The kernel then runs once per dispatch, as on the CPU, and its loops write
straight into the result buffer. One thread is slow on a real GPU, but a factorization's
scalar steps are sequential anyway; the blocked algorithms around the kernels keep the
bulk of the flops in matmuls, which IREE distributes as usual.

Each kernel also records the most loop iterations it makes (``loop_trips.py``) as
``aotc.loop_trips`` (-1: not known at compile time), and the function's metadata the
largest (``kernel_loop_trips``): a software driver that cuts shaders short refuses the
function instead of returning what a cut-short kernel left (``runtime/device.py``).

Invariants: only regions marked ``aotc.kernel`` change; each gets exactly one root (a
region that already has a filled start keeps it); results are unchanged in value, since
every kernel writes every element it returns. Running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

import math
from dataclasses import replace

from .base import ModulePass, as_op, collect_ops, read_metadata, register, write_metadata
from .loop_trips import kernel_loop_trips

KERNEL = "aotc.kernel"
TRIPS = "aotc.loop_trips"
# One thread, no tiling: the kernel's loops are sequential. IREE reads a compilation_info
# on the dispatch's root and skips its own heuristics.
ONE_THREAD = ("#iree_codegen.compilation_info<lowering_config = "
              "#iree_codegen.lowering_config<tile_sizes = []>, translation_info = "
              "#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<BaseLowering> "
              "workgroup_size = [1, 1, 1]>>")


@register
@dataclass(frozen=True)
class RootKernelsForGpu(ModulePass):
    """Gives each sequential kernel a one-thread root (the module docstring)."""

    name = "aotc-root-kernels-for-gpu"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        from aotc._mlir import ir

        functions = collect_ops(module, lambda o: as_op(o).name == "func.func")
        for func, _ in functions:
            trips = [self._root(as_op(region), ir)
                     for region, _ in collect_ops(func, _is_kernel)]
            metadata = read_metadata(as_op(func)) if trips else None
            if metadata is not None:
                most = -1 if -1 in trips else max(trips)
                write_metadata(as_op(func), replace(metadata, kernel_loop_trips=most))

    def _root(self, region, ir) -> int:
        """Roots ``region`` (unless it has its root) and returns its loop trips (-1:
        unknown)."""
        body = region.regions[0].blocks[0]
        ops = [as_op(op) for op in body.operations]
        if not any("compilation_info" in op.attributes for op in ops):
            # the first op writing into a tensor.empty: a loop carrying it, or an insert
            # where single-trip loops were folded away
            start = next(((op, i) for op in ops for i, v in enumerate(op.operands)
                          if _made_by(v, "tensor.empty")), None)
            if start is None:
                raise ValueError(
                    f"kernel {ir.StringAttr(region.attributes[KERNEL]).value!r} writes "
                    f"into no tensor.empty; give its builder one (aotc/ops/sequential.py)")
            _start_from_zeros(*start, ir)
        trips = kernel_loop_trips(region)
        # IREE's code adds loops over elements: the root fill, and a copy into a result
        # buffer where one cannot be written in place.
        results = [ir.RankedTensorType(r.type) for r in region.results]
        if trips is None or not all(r.has_static_shape for r in results):
            trips = -1
        else:
            trips += sum(math.prod(r.shape) for r in results)
        region.attributes[TRIPS] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), trips)
        return trips


def _is_kernel(op) -> bool:
    return as_op(op).name == "flow.dispatch.region" and KERNEL in as_op(op).attributes


def _made_by(value, name: str) -> bool:
    from aotc._mlir import ir

    return isinstance(value, ir.OpResult) and as_op(value.owner).name == name


def _start_from_zeros(writer, position: int, ir) -> None:
    """Operand ``position`` of ``writer`` (a ``tensor.empty``, which canonicalization may
    have shared with other users, in or out of the region) becomes a zero fill of its own
    that carries ``ONE_THREAD``."""
    from aotc._mlir import arith, linalg
    from aotc.ops.kernel_scalars import zero

    empty = as_op(writer.operands[position].owner)
    element = ir.RankedTensorType(empty.results[0].type).element_type
    with ir.InsertionPoint(writer), writer.location:
        fresh = empty.clone()
        integer = isinstance(element.maybe_downcast(), ir.IntegerType)
        start = arith.ConstantOp(element, 0).result if integer else zero(element)
        filled = linalg.fill(start, outs=[fresh.results[0]])
        filled.owner.attributes["compilation_info"] = ir.Attribute.parse(ONE_THREAD)
    writer.operands[position] = filled
