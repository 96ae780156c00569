"""The errors the runtime raises, one class per thing that can go wrong for a user.

Each also derives from the builtin a Python programmer would expect (``FileNotFoundError``
for a missing artifact, ``TypeError`` for a wrong argument, ``AttributeError``/``KeyError``
for an unknown function), so existing ``except`` clauses keep working. Messages follow
"<where>: expected <X>, got <Y>. <how to fix>", and IREE's own diagnostic, when there is
one, is carried inside the message rather than dropped.

Two families cover what can fail once a path or bytes are handed over: ``LoadError``
(the artifact: damaged, not the pinned one, metadata that disagrees with the code, code
for another target) and ``CallError`` (a call: its arguments, a deleted array, memory,
IREE's run, a result that disagrees with the metadata).
"""

from __future__ import annotations


class AotcRuntimeError(Exception):
    """Base class of every error raised by ``aotc.runtime``."""

    def __str__(self) -> str:
        # KeyError (a base of FunctionNotFoundError) would quote the message; show it plain.
        return str(self.args[0]) if self.args else ""


class LoadError(AotcRuntimeError):
    """The artifact could not be loaded.

    Cause: the bytes are not an intact ``.vmfb`` (corrupt, truncated, or some other file:
    a zip member whose CRC-32 or a seal whose SHA-256 does not match, the message names
    which), not the artifact ``expected_sha256`` pins, metadata that is unreadable,
    written by an incompatible aotc version or disagreeing with the compiled functions,
    or code compiled for another target than the device it is loaded on.
    Fix: re-export the function (``aotc.export`` or ``aotc compile``) for this target,
    copy the artifact again from its source, or load it on a device of its target.
    """


class CallError(AotcRuntimeError):
    """Base class of the errors a call of a loaded function raises: its arguments
    (``ArgumentError``, ``ShapeError``, ``DeviceMismatchError``), a deleted array
    (``DeletedArrayError``), memory (``OutOfMemoryError``), IREE's run
    (``InvocationError``), a result that disagrees with the metadata (``ResultError``),
    or a function the module does not have (``FunctionNotFoundError``)."""


class ArtifactNotFoundError(AotcRuntimeError, FileNotFoundError):
    """``load`` was given a path that does not exist. Fix: check the path."""


class DeviceError(AotcRuntimeError):
    """A device could not be created: unknown driver name, or the driver (CUDA, Vulkan,
    ...) is not installed on this machine. Fix: pick one of the listed drivers."""


class FunctionNotFoundError(CallError, AttributeError, KeyError):
    """The module has no function of that name. The message lists the ones it has."""


class ArgumentError(CallError, TypeError):
    """A call's arguments do not match the function's signature: wrong count, wrong
    nesting (pytree structure), wrong dtype, or something that is not an array.
    Fix: the message names the argument and shows what was expected."""


class ShapeError(ArgumentError, ValueError):
    """An argument has the wrong shape, or a named dynamic dimension has different sizes
    in two arguments. Fix: pass the shape shown, or re-export with a dynamic dimension."""


class ArgumentOverflowError(ArgumentError, OverflowError):
    """A Python scalar argument does not fit the dtype the function computes it in: numpy
    2 raises ``OverflowError`` for a Python int out of an integer dtype's range where it
    meets an array (``uint8_array + 300``), and so does the call, naming the argument.
    Fix: pass a value in range, or an array of a wider dtype for the other operand."""


class DeviceMismatchError(ArgumentError, ValueError):
    """An ``Array`` living on one device was passed to a function loaded on another.
    Fix: ``np.asarray(array)`` to bring it to the host first, or load the module on the
    array's device."""


class DeletedArrayError(CallError, RuntimeError):
    """An ``Array`` was used after ``delete()`` (or after being donated to a function).
    Fix: keep using the result of the call instead, or do not delete/donate the array."""


class InvocationError(CallError, RuntimeError):
    """IREE reported a failure while running a function (the message carries IREE's own
    text). Usually an argument the metadata could not check, or an out-of-memory."""


class DeviceLimitError(CallError, RuntimeError):
    """The device would cut the function short and return wrong values: Mesa's software
    Vulkan driver (lavapipe) stops each shader after 65535 loop iterations, fewer than a
    large factorization's kernel makes. Fix: run it on a hardware GPU or a CPU target, or
    factor smaller matrices."""


class OutOfMemoryError(CallError, MemoryError):
    """A device allocation failed, or would exceed the device's budget
    (``AOTC_PREALLOCATE`` / ``configure_reuse(preallocate=...)``). The message gives the
    size requested and the bytes in use. Fix: drop arrays no longer needed, donate state
    a call replaces (``donate_argnums``), ``aotc.runtime.trim()``, or raise the budget."""


class ResultError(CallError, RuntimeError):
    """A result came back with another dtype or shape than the function's metadata says:
    the metadata does not describe the compiled code (an edited or damaged artifact that
    passed the load checks). The result is not returned: reading it with the recorded
    dtype would reinterpret its bytes. Fix: export the artifact again."""
