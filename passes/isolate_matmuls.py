"""aotc-isolate-matmuls: a matmul's consumers read its result through a barrier.

IREE 3.13 lowers a data-tiled float64 matmul 2.6-4.9x faster through
``iree_codegen.inner_tiled`` (``--iree-llvmcpu-enable-inner-tiled``) than through
``linalg.mmt4d``, but only a matmul alone in its dispatch: an elementwise consumer fused
into it (a bias, a relu, ``alpha * a @ b + beta * c``) fails in the encoding's
materialization. This pass puts the result of each ``linalg.matmul`` that something other
than ``func.return`` reads through one ``util.optimization_barrier``, which IREE does not
fuse across: the consumers run in a dispatch of their own (one more pass over the result,
cheap next to the matmul it unlocks: a float64 MLP layer [64, 784] @ [784, 512] + bias,
relu went from 4.1 to 2.5 ms, a 512 gemm from 20.8 to 9.2 ms). The compiler runs it only
where it adds inner_tiled (``build.finish_module``).

Invariants: values are unchanged; a matmul whose only users are returns, or whose only
other user is a barrier, is left as it is, so running the pass twice changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, as_op, collect_ops, register
from .donation.function import BARRIER, insert_barrier


def _consumers(op) -> list:
    """The ops other than ``func.return`` that read ``op``'s result, when it needs a
    barrier (empty: it does not)."""
    if op.name != "linalg.matmul":
        return []
    users = dict.fromkeys(as_op(use.owner) for use in op.results[0].uses)
    consumers = [u for u in users if u.name != "func.return"]
    if len(consumers) == 1 and consumers[0].name == BARRIER:
        return []  # already isolated
    return consumers


@register
@dataclass(frozen=True)
class IsolateMatmuls(ModulePass):
    """Barriers between matmuls and their consumers (see the module docstring)."""

    name = "aotc-isolate-matmuls"

    @classmethod
    def from_options(cls, options):
        return cls()

    def run(self, module) -> None:
        for op, consumers in collect_ops(module, lambda o: _consumers(as_op(o))):
            op = as_op(op)
            result = op.results[0]
            barrier = insert_barrier(op, [result])
            barrier.move_after(op)  # right after the matmul: before every consumer
            for user in consumers:
                for i, value in enumerate(user.operands):
                    if value == result:
                        user.operands[i] = barrier.results[0]
