"""aotc's user-facing errors. Each class says in its docstring what causes it and the fix."""

from __future__ import annotations


class AotcError(Exception):
    """Base class of aotc's errors."""


class CompileError(AotcError):
    """IREE rejected the program. ``diagnostics`` holds IREE's own messages."""

    def __init__(self, message: str, diagnostics: str = ""):
        self.diagnostics = diagnostics
        full = message if not diagnostics else f"{message}\n--- IREE diagnostics ---\n{diagnostics}"
        super().__init__(full)


class TracerConversionError(AotcError, TypeError):
    """Python control flow or a Python number was asked of a traced value.

    While tracing, an array has a shape and dtype but no value, so ``if x > 0:``,
    ``while``, ``bool(x)``, ``int(x)`` or ``float(x)`` cannot be answered. Fix: make the
    argument static (``static_argnums``/``static_argnames``), or express the choice with
    array operations such as ``anp.where``.
    """


class UnsupportedOpError(AotcError, NotImplementedError):
    """The function uses an operation aotc cannot trace."""


class UnsupportedDtypeError(AotcError, TypeError):
    """A dtype aotc (or the chosen target) cannot compute in."""


class TracingError(AotcError, ValueError):
    """Bad arguments to a traced operation (shapes that do not broadcast, bad axes, ...)."""
