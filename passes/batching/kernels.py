"""The batching rule for aotc's sequential kernels (``flow.dispatch.region`` ops marked
``aotc.kernel``, built by ``aotc/ops/sequential.py``).

A kernel already loops over a leading batch of matrices, so the vmap batch merges into
that dimension and the kernel is built again for the merged shape: a vmapped Cholesky
stays one dispatch. The kernel's inputs are the tensors its region reads from outside,
in the order it first reads them.
"""

from __future__ import annotations

from ..base import PassError, where
from .core import Batched, Batcher, captured_values, is_tensor, rule
from .linalg import merge_batch, split_batch


def _captured_tensors(bt: Batcher, op) -> list:
    return list(dict.fromkeys(v for v in captured_values(bt, op) if is_tensor(v.type)))


@rule("flow.dispatch.region")
def _kernel(bt: Batcher, op, operands: list[Batched]) -> list[Batched]:
    from aotc._mlir import ir
    from aotc.ops import sequential

    if sequential.KERNEL_ATTRIBUTE not in op.attributes:
        raise PassError(f"{bt.pass_name}: a flow.dispatch.region at {where(op)} (in "
                        f"@{bt.func_name}) that is not an aotc kernel cannot be batched")
    name = ir.StringAttr(op.attributes[sequential.KERNEL_ATTRIBUTE]).value
    inputs = _captured_tensors(bt, op)
    # A kernel over single problems ((n, n) matrices) takes the vmap batch as its batch;
    # one over (B, n, n) takes it merged into B.
    flat = not sequential.has_batch(name, inputs[0])
    batched = [bt.to_batched(bt.lookup(v)) for v in inputs]
    outs = sequential.build(name, batched if flat else [merge_batch(bt, v) for v in batched])
    return [Batched(new if flat else split_batch(bt, new, bt.batched_type(old.type)), True)
            for new, old in zip(outs, op.results)]
