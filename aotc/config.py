"""aotc's options: one table, read as attributes, changed with ``update``.

Each option has a default, an environment variable that overrides the default, a type
and a line of documentation (``OPTIONS``). ``update`` overrides both for the process;
``override`` does it for a ``with`` block.

    >>> import aotc
    >>> aotc.config.log_compiles
    False
    >>> aotc.config.update("log_compiles", True)     # or AOTC_LOG_COMPILES=1
    >>> aotc.config.log_compiles
    True
    >>> aotc.config.update("log_compiles", None)     # back to the environment's value
    >>> with aotc.config.override(explain_cache_misses=True):
    ...     aotc.config.explain_cache_misses
    True
    >>> aotc.config.update("log_compile", True)
    Traceback (most recent call last):
    ...
    aotc.errors.ConfigError: aotc.config.update: expected one of the options ..., got 'log_compile'

JAX's names are accepted with aotc's prefix too: ``update("aotc_log_compiles", True)``.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from .errors import ConfigError


@dataclass(frozen=True)
class Option:
    name: str
    default: Any
    env: str  # the environment variable that overrides the default
    type: type
    doc: str


OPTIONS: dict[str, Option] = {o.name: o for o in (
    Option("log_compiles", False, "AOTC_LOG_COMPILES", bool,
           "Log each trace and compile of aotc.jit and aotc.export (logger 'aotc', level "
           "WARNING; DEBUG when off): the signature, the time of each stage, where the "
           "executable came from and why a jitted function compiled again."),
    Option("explain_cache_misses", False, "AOTC_EXPLAIN_CACHE_MISSES", bool,
           "Log (WARNING) why a jitted function compiled again, and disk cache misses, "
           "without the rest of log_compiles."),
    Option("eager_exact", False, "AOTC_EAGER_EXACT", bool,
           "Eager calls (aotc.numpy outside a traced function) of math functions, float "
           "reductions and contractions are compiled, so their values are jit's bit for "
           "bit, instead of computed by numpy on the host (to numpy's accuracy, far "
           "faster the first time: no compile). See aotc/eager.py."),
    Option("compile_progress", True, "AOTC_COMPILE_PROGRESS", bool,
           "Show a status line (stage, elapsed time) on stderr while a compile runs, when "
           "stderr is a terminal: after 0.5 s with log_compiles, else after 3 s."),
    Option("x64", True, "AOTC_X64", bool,
           "numpy's dtypes (True: float64 and int64 defaults, numpy 2's promotion). False: "
           "JAX's with jax_enable_x64 off, for JAX programs: float32/int32/complex64 "
           "defaults, JAX's promotion lattice, 64-bit inputs made 32-bit (a warning for "
           "an explicitly requested dtype). Read when a function is traced or called "
           "eagerly; the environment variable once per process. See aotc/x64.py."),
    Option("compile_threading", True, "AOTC_COMPILE_THREADING", bool,
           "Let IREE's compiler run a compile's passes on several threads: a single "
           "compile finishes sooner. Off, each compile runs on one thread, which takes "
           "less CPU in all (about 7% on a 2-core machine) where several processes "
           "compile at once, one per core (a test suite under pytest-xdist). Read when a "
           "compile starts."),
    Option("jit_cache_size", 0, "AOTC_JIT_CACHE_SIZE", int,
           "The most compiled signatures each jitted function keeps in memory; past it the "
           "least recently called one is dropped (a later call with it traces again and "
           "loads from the disk cache). 0: no bound. Read when a signature is added. See "
           "aotc/jit_cache.py."),
    Option("loop_dispatch_max_work", 1, "AOTC_LOOP_DISPATCH_MAX_WORK", int,  # MAX_WORK
           "On CPU targets, a loop (fori_loop, while_loop, scan) whose every op takes at "
           "most this many element-steps, and whose carries are updated in place or "
           "are scalars, runs as one dispatch (a kernel with the loop inside) instead "
           "of one dispatch per op and iteration. 1 (the default): loops of scalar "
           "steps, the ones IREE compiles this way; larger values are tried and fall "
           "back to the per-op form when IREE fails (a second compile). 0: no loop runs "
           "as one dispatch. Read when a function is compiled. See "
           "passes/loops_in_dispatch.py."),
)}

_PREFIX = "aotc_"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")

# Values given to update(); the environment and the defaults fill in the rest.
_values: dict[str, Any] = {}


def _option(name: str, where: str) -> Option:
    option = OPTIONS.get(name[len(_PREFIX):] if name.startswith(_PREFIX) else name)
    if option is None:
        raise ConfigError(f"{where}: expected one of the options {', '.join(sorted(OPTIONS))}, "
                          f"got {name!r}")
    return option


def _check_type(option: Option, value: Any, where: str) -> Any:
    wanted = option.type
    if not isinstance(value, wanted) or (wanted is int and isinstance(value, bool)):
        raise ConfigError(f"{where}: option {option.name} takes a {wanted.__name__}, got "
                          f"{type(value).__name__} {value!r}")
    return value


def _from_env(option: Option) -> Any:
    text = os.environ.get(option.env)
    if text is None:
        return option.default
    if option.type is bool:
        if text.strip().lower() in _TRUE:
            return True
        if text.strip().lower() in _FALSE:
            return False
        raise ConfigError(f"{option.env}={text!r}: expected 1 or 0 (true/false, yes/no, "
                          f"on/off) for the option {option.name}")
    try:
        return option.type(text)
    except ValueError:
        raise ConfigError(f"{option.env}={text!r}: expected a {option.type.__name__} for the "
                          f"option {option.name}") from None


def log_level(explanation: bool = False) -> int:
    """The level of a compile log record: WARNING when its option is on (JAX's rule),
    else DEBUG (see aotc/compile_log.py)."""
    if value("log_compiles") or (explanation and value("explain_cache_misses")):
        return logging.WARNING
    return logging.DEBUG


def value(name: str) -> Any:
    """The option's value: from ``update``, else its environment variable, else its default."""
    option = _option(name, "aotc.config")
    if option.name in _values:
        return _values[option.name]
    return _from_env(option)


# Environment values read by ``cached``, once per process.
_env_cache: dict[str, Any] = {}


def cached(name: str) -> Any:
    """``value(name)`` for checks made on every call (``x64`` by jit's fast path and
    eager calls): ``update`` and ``override`` apply at once, the environment variable is
    read the first time only (``value`` reads it each time: about 1.5 us)."""
    found = _values.get(name)  # (None is no option's value: update(name, None) unsets)
    if found is None:
        found = _env_cache.get(name)
        if found is None:
            found = _env_cache[name] = _from_env(_option(name, "aotc.config"))
    return found


def update(name: str, new_value: Any) -> None:
    """Sets an option for this process (it wins over the environment variable); None
    removes the setting, so the environment variable or the default applies again."""
    option = _option(name, "aotc.config.update")
    if new_value is None:
        _values.pop(option.name, None)
    else:
        _values[option.name] = _check_type(option, new_value, "aotc.config.update")


@contextmanager
def override(**values: Any) -> Iterator[None]:
    """Sets options for the ``with`` block, then restores what was there."""
    options = [_option(name, "aotc.config.override") for name in values]
    for option, new_value in zip(options, values.values()):
        _check_type(option, new_value, "aotc.config.override")
    saved = {o.name: _values[o.name] for o in options if o.name in _values}
    try:
        for option, new_value in zip(options, values.values()):
            _values[option.name] = new_value
        yield
    finally:
        for option in options:
            _values.pop(option.name, None)
        _values.update(saved)


def describe() -> str:
    """One line per option: name, value, environment variable, documentation."""
    return "\n".join(f"{o.name} = {value(o.name)!r} ({o.env}): {o.doc}" for o in OPTIONS.values())


def __getattr__(name: str) -> Any:
    if name in OPTIONS:
        return value(name)
    raise AttributeError(f"aotc.config has no option {name!r}; the options are "
                         f"{', '.join(sorted(OPTIONS))}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(OPTIONS))
