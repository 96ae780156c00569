"""aotc's user-facing errors. Each class says in its docstring what causes it and the fix;
the functions at the end build the error of a traced value stored into a numpy array."""

from __future__ import annotations

import dis


class AotcError(Exception):
    """Base class of aotc's errors."""


class CompileError(AotcError):
    """IREE rejected the program. ``diagnostics`` holds IREE's own messages."""

    def __init__(self, message: str, diagnostics: str = ""):
        self.diagnostics = diagnostics
        full = message if not diagnostics else f"{message}\n--- IREE diagnostics ---\n{diagnostics}"
        super().__init__(full)


class CompilerNotInstalledError(AotcError, ImportError):
    """The IREE compiler (``iree-base-compiler``) cannot be imported: a runtime-only
    install, as on a device. Tracing and compiling (``aotc.jit``, ``aotc.export``,
    ``aotc.numpy``) need it; the runtime (``aotc.runtime``, ``aotc run``/``inspect``)
    loads and runs saved ``.vmfb`` files without it. Fix: install the compiler of the
    runtime's version, ``pip install iree-base-compiler==<version>`` (the message names
    it), or compile on another machine. ``name`` is the module that failed to import."""

    @classmethod
    def from_import_error(cls, error: ImportError) -> "CompilerNotInstalledError":
        missing = error.name or "iree.compiler"
        return cls(f"the compiler is not installed: pip install iree-base-compiler=="
                   f"{_runtime_version()}; the runtime (aotc.runtime) can still load .vmfb "
                   f"files (importing {missing} failed: {error})", name=missing)


def _runtime_version() -> str:
    """The installed IREE runtime's release, which the compiler must match."""
    from importlib import metadata

    for package in ("iree-base-runtime", "iree-runtime"):
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return "<the version of iree-base-runtime>"


class PassError(AotcError):
    """One of aotc's MLIR passes could not transform the program. The message names the
    pass, the op, its source location, the requirement that failed and how to fix it; a
    bug inside a pass is chained to this error (``__cause__``), so the traceback shows
    the file and line of the rule that failed."""


class VmapError(AotcError, ValueError):
    """``aotc.vmap`` was given arguments it cannot batch: batch sizes that disagree,
    ``in_axes``/``out_axes`` that do not match the arguments' structure, an axis out of
    range, or no batched argument and no ``axis_size``. The message names the argument."""


class TracerConversionError(AotcError, TypeError):
    """Python control flow or a Python number was asked of a traced value.

    While tracing, an array has a shape and dtype but no value, so ``if x > 0:``,
    ``while``, ``bool(x)``, ``int(x)`` or ``float(x)`` cannot be answered. Fix: make the
    argument static (``static_argnums``/``static_argnames``), or express the choice with
    array operations such as ``anp.where``.
    """


class TracedValueStoredError(AotcError):
    """A traced value was stored into a numpy array (``out = np.zeros(n); out[i] = x``):
    a numpy array holds values, and a traced array has none while tracing. Fix: create
    the array from a traced one (``np.zeros_like(x)``) or with ``aotc.numpy``, so it is
    traced too."""


class UnsupportedOpError(AotcError, NotImplementedError):
    """The function uses an operation aotc cannot trace."""


class UnsupportedDtypeError(AotcError, TypeError):
    """A dtype aotc (or the chosen target) cannot compute in."""


class TracingError(AotcError, ValueError):
    """Bad arguments to a traced operation (shapes that do not broadcast, bad axes, ...)."""


class ScalarOverflowError(AotcError, OverflowError):
    """A Python int in the program does not fit the dtype numpy computes it in
    (``uint8_array + 300``, ``int32_array * 2**40``): numpy 2 raises ``OverflowError``
    there (NEP 50), and so does aotc, naming the operation and the value. Fix: a value in
    range, or the array cast to a wider dtype first (``x.astype(np.int64) + 300``)."""


class NotTracingError(TracingError):
    """An operation that builds compiled code was asked for outside a traced function.
    aotc's public functions run such calls eagerly (``aotc/eager.py``); this error
    reaches users only from internal entry points."""


class DonationWarning(UserWarning):
    """A donated argument (``donate_argnums``/``donate_argnames``) cannot be used.

    Cause: no result has the argument's shape and dtype, every such result already holds
    another donated buffer, or writing the result into the argument's buffer in place would
    overwrite values the function still reads (the message names the op). The call still
    works: the result gets a new buffer, the argument is not consumed. Fix: donate only
    state that the function replaces with a result of the same shape and dtype, or silence
    the warning with ``warnings.filterwarnings("ignore", category=aotc.errors.DonationWarning)``.
    """


class DonationError(CompileError):
    """With ``strict_donation=True``, a donated argument cannot be used (see
    ``DonationWarning`` for the causes). Fix: donate fewer arguments, or drop
    ``strict_donation`` to donate what can be and warn about the rest."""


class ConfigError(AotcError, ValueError):
    """An ``aotc.config`` option that does not exist, a value of the wrong type, or an
    environment variable that does not parse. The message lists the options or says
    what the option takes."""


def stores_into_numpy_array(frame) -> bool:
    """Whether the user's line ``frame`` is executing ``a[i] = v``: numpy converts a traced
    ``v`` (``float()``, ``__array__``) to store it into the numpy array ``a``."""
    return frame is not None and dis.opname[frame.f_code.co_code[frame.f_lasti]] == "STORE_SUBSCR"


def value_while_tracing(t, what: str, where: str) -> TracerConversionError:
    """``what`` (int(), bool(), ...) asked of the traced array ``t`` at ``where``."""
    return TracerConversionError(
        f"{what} was asked of a traced array {t.dtype.name}{list(t.shape)} in "
        f"function '{t._trace.fn_name}' at {where}: while tracing, arrays have a shape "
        f"and dtype but no value. Fix: pass this value as a static argument "
        f"(aotc.jit(f, static_argnums=...) or static_argnames=...), or express the "
        f"choice with array operations such as aotc.numpy.where (structured control "
        f"flow, aotc.lax.cond/while_loop, covers loops and branches).")


def stored_into_numpy_array(t, where: str) -> TracedValueStoredError:
    # Not a TypeError: numpy swallows those while converting and reports "setting an
    # array element with a sequence" instead.
    return TracedValueStoredError(
        f"a traced array {t.dtype.name}{list(t.shape)} was stored into a numpy array at "
        f"{where} (in function '{t._trace.fn_name}'): a numpy array holds values, and a "
        f"traced array has none until the compiled code runs. Fix: create the array being "
        f"written from a traced one (np.zeros_like(x), np.empty_like(x), x.copy()) or with "
        f"aotc.numpy (anp.zeros(shape, dtype)), so that it is traced too")
