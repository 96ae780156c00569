"""Runs upstream pass pipelines and aotc's Python passes in one MLIR PassManager."""

from __future__ import annotations

from typing import Sequence, Union

from .base import ModulePass, PassError

PipelineItem = Union[str, ModulePass]

# The cleanup run on every traced module before IREE: fold constants and deduplicate.
CLEANUP: tuple[str, ...] = ("canonicalize", "cse")


def _adapter(p: ModulePass, failures: list[tuple[str, Exception]]):
    """Wraps an aotc pass for PassManager.add: its exception is kept (with its traceback),
    then the pass fails; ``run_pipeline`` raises it once the PassManager returns."""
    def run(op, pass_):
        try:
            p.run(op)
        except Exception as e:  # noqa: BLE001  (PassError, or a bug in the pass: both kept)
            failures.append((p.name, e))
            pass_.signal_pass_failure()
    run.__name__ = p.name.replace("-", "_")
    return run


def _failure(failures: list[tuple[str, Exception]]) -> PassError:
    """One PassError for the failures of a run, chained to the first one's cause: a
    PassError's own cause, or the exception a pass raised by mistake, so the traceback
    shows the file and line where it started."""
    messages = []
    for name, e in failures:
        if isinstance(e, PassError):
            messages.append(str(e))
        else:
            messages.append(f"{name}: internal error: {type(e).__name__}: {e}{_raised_at(e)}")
    error = PassError("\n".join(messages))
    first = failures[0][1]
    error.__cause__ = first.__cause__ if isinstance(first, PassError) and first.__cause__ else first
    return error


def _raised_at(e: Exception) -> str:
    """`` (at file:line)`` of the innermost frame of ``e``'s traceback."""
    tb = e.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f" (at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno})"


def run_pipeline(module, items: Sequence[PipelineItem]) -> None:
    """Runs ``items`` in order on ``module`` (an ir.Module or its operation), in place.

    A failing pass raises ``PassError``; an exception inside a Python pass is its cause."""
    from aotc._mlir import ir, passmanager

    op = module.operation if isinstance(module, ir.Module) else module
    failures: list[tuple[str, Exception]] = []
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
                error = _failure(failures)
                raise error from error.__cause__
            raise PassError(f"pass pipeline failed: {e}") from e
    if failures:
        error = _failure(failures)
        raise error from error.__cause__
