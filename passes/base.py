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
