"""The base of aotc's Python-defined passes and their registry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


class PassError(Exception):
    """A pass could not transform the IR. The message names the pass, the op, its source
    location, the requirement that failed and how to fix it."""


@dataclass(frozen=True)
class ModulePass:
    """A pass over a ``builtin.module``. Subclasses set ``name`` and implement ``run``.

    Options are dataclass fields; ``from_options`` builds the pass from the textual
    ``key=value`` options used by ``aotc-opt`` and lit tests. A pass raises ``PassError``
    to fail; it must leave verified IR and be safe to run twice.
    """

    name: ClassVar[str] = ""

    def run(self, module) -> None:  # module: ir.Operation of the builtin.module
        raise NotImplementedError

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "ModulePass":
        return cls(**options)


REGISTRY: dict[str, type[ModulePass]] = {}


def register(cls: type[ModulePass]) -> type[ModulePass]:
    REGISTRY[cls.name] = cls
    return cls


def collect_ops(module, select) -> list:
    """``(op, info)`` for every op of ``module`` for which ``select(op)`` returns a truthy
    ``info``. Rewrite them after collecting: erasing ops during a walk is unsafe."""
    from aotc._mlir import ir

    found = []

    def visit(op):
        info = select(op)
        if info:
            found.append((op, info))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def is_private(func) -> bool:
    """Whether a ``func.func`` is private (a helper aotc.vmap made, not an entry point)."""
    from aotc._mlir import ir

    return ("sym_visibility" in func.attributes
            and ir.StringAttr(func.attributes["sym_visibility"]).value == "private")
