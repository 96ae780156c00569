"""Runs upstream pass pipelines and aotc's Python passes in one MLIR PassManager."""

from __future__ import annotations

from typing import Sequence, Union

from .base import ModulePass, PassError

PipelineItem = Union[str, ModulePass]

# The cleanup run on every traced module before IREE: fold constants and deduplicate.
CLEANUP: tuple[str, ...] = ("canonicalize", "cse")


def _adapter(p: ModulePass, failures: list[str]):
    """Wraps an aotc pass for PassManager.add: errors are kept, then the pass fails."""
    def run(op, pass_):
        try:
            p.run(op)
        except PassError as e:
            failures.append(str(e))
            pass_.signal_pass_failure()
        except Exception as e:  # a bug in the pass: report it as the pass's failure
            failures.append(f"{p.name}: internal error: {type(e).__name__}: {e}")
            pass_.signal_pass_failure()
    run.__name__ = p.name.replace("-", "_")
    return run


def run_pipeline(module, items: Sequence[PipelineItem]) -> None:
    """Runs ``items`` in order on ``module`` (an ir.Module or its operation), in place."""
    from aotc._mlir import ir, passmanager

    op = module.operation if isinstance(module, ir.Module) else module
    failures: list[str] = []
    with op.context:
        pm = passmanager.PassManager("builtin.module")
        for item in items:
            if isinstance(item, ModulePass):
                pm.add(_adapter(item, failures), name=item.name)
            else:
                pm.add(item)
        try:
            pm.run(op)
        except ir.MLIRError as e:
            if failures:
                raise PassError("\n".join(failures)) from None
            raise PassError(f"pass pipeline failed: {e}") from None
    if failures:
        raise PassError("\n".join(failures))
