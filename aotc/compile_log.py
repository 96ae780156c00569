"""Compile logs: what ``aotc.jit`` and ``aotc.export`` trace and compile, how long each
stage takes, where an executable came from, and why a jitted function compiled again.

Records go to Python ``logging`` under the logger ``aotc`` (``aotc.jit``,
``aotc.export``). As in JAX, they are WARNING records when ``aotc.config.log_compiles``
(``AOTC_LOG_COMPILES=1``) is on, so they show without any logging setup, and DEBUG
records otherwise; ``explain_cache_misses`` makes only the explanations (and disk cache
misses) WARNING records. Nothing here runs on a cache hit: the callers log only when
they trace or compile.

While a compile runs, ``Stages`` shows one status line on stderr (stage and elapsed
time) when stderr is a terminal, and erases it when the compile ends.
"""

from __future__ import annotations

import collections
import logging
import os
import sys
import threading
import time
from typing import Any, Callable

from . import config

logger = logging.getLogger("aotc")
jit_logger = logging.getLogger("aotc.jit")
export_logger = logging.getLogger("aotc.export")

# The status line appears after this long with log_compiles on, and after
# LONG_COMPILE_SECONDS without; it is redrawn every REFRESH_SECONDS.
LOGGING_DELAY_SECONDS = 0.5
LONG_COMPILE_SECONDS = 3.0
REFRESH_SECONDS = 0.5


level = config.log_level  # a record's level: WARNING when its option is on, else DEBUG


def seconds(s: float) -> str:
    """``412 ms``, ``1.30 s``, ``85 us``."""
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


def split(times: dict[str, float]) -> str:
    """``trace 2.1 ms, aotc passes 0.8 ms, IREE compile 412 ms``."""
    return ", ".join(f"{stage} {seconds(t)}" for stage, t in times.items())


def defined_at(fn: Any) -> str:
    """``model.py:12`` (relative to the working directory when inside it), or ''."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    path = code.co_filename
    try:
        relative = os.path.relpath(path)
        path = path if relative.startswith("..") else relative
    except ValueError:  # another drive
        pass
    return f"{path}:{code.co_firstlineno}"


# ---- Stages: timing and the terminal status line -----------------------------------------

class Stages:
    """Times the stages of one trace-and-compile (``with stages("trace"): ...``) and,
    when stderr is a terminal, shows ``aotc: compiling f: IREE compile 4.5 s`` on one
    line while it runs. The line is drawn from a background thread onto a copy of the
    terminal's file descriptor (IREE's diagnostics capture takes over descriptor 2 while
    it compiles) and erased before each log record and at the end.

    Stages that run user code (tracing, which may print) never draw the line.
    """

    def __init__(self, name: str):
        self.name = name
        self.times: dict[str, float] = {}
        self._stage: str | None = None
        self._start = time.perf_counter()
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._drawn = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "Stages":
        if _terminal() and config.compile_progress:
            try:
                self._fd = os.dup(sys.stderr.fileno())
            except (OSError, ValueError, AttributeError):
                self._fd = None
        if self._fd is not None:
            delay = LOGGING_DELAY_SECONDS if config.log_compiles else LONG_COMPILE_SECONDS
            self._thread = threading.Thread(target=self._run, args=(delay,),
                                            name="aotc-compile-status", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        self._erase()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __call__(self, stage: str, *, shown: bool = True) -> "_Stage":
        return _Stage(self, stage, shown)

    def log(self, log: logging.Logger, lvl: int, message: str, *args: Any) -> None:
        """Logs a record with the status line out of its way."""
        self._erase()
        log.log(lvl, message, *args)

    @property
    def total(self) -> float:
        return sum(self.times.values())

    def _run(self, delay: float) -> None:
        if self._done.wait(delay):
            return
        while True:
            self._draw()
            if self._done.wait(REFRESH_SECONDS):
                return

    def _draw(self) -> None:
        with self._lock:
            stage = self._stage
            if stage is None or self._fd is None:
                return
            text = f"aotc: compiling {self.name}: {stage} {time.perf_counter() - self._start:.1f} s"
            try:
                width = os.get_terminal_size(self._fd).columns or 80  # 0: size unknown
            except OSError:
                width = 80
            try:
                os.write(self._fd, ("\r" + text[: max(width - 1, 10)] + "\x1b[K").encode())
                self._drawn = True
            except OSError:
                pass

    def _erase(self) -> None:
        with self._lock:
            if self._drawn and self._fd is not None:
                try:
                    os.write(self._fd, b"\r\x1b[K")
                except OSError:
                    pass
            self._drawn = False


class _Stage:
    __slots__ = ("stages", "stage", "shown", "start")

    def __init__(self, stages: Stages, stage: str, shown: bool):
        self.stages, self.stage, self.shown = stages, stage, shown

    def __enter__(self) -> None:
        self.stages._stage = self.stage if self.shown else None
        if not self.shown:
            self.stages._erase()
        self.start = time.perf_counter()

    def __exit__(self, *exc) -> None:
        times = self.stages.times
        times[self.stage] = times.get(self.stage, 0.0) + time.perf_counter() - self.start
        self.stages._stage = None


def _terminal() -> bool:
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


# ---- Why a jitted function compiled again ----------------------------------------------

# Signatures compiled by any aotc.jit of a user function (by its code object), kept while
# explanations are wanted: they tell "a new aotc.jit of the same function" (made per call)
# and "the same function for another target" from a first compile.
_HISTORY_PER_FUNCTION = 8
_seen: dict[Any, collections.deque] = {}
_seen_lock = threading.Lock()


def _user_code(fn: Any) -> Any:
    code = getattr(fn, "__code__", None)
    module = getattr(fn, "__module__", None) or ""
    return None if code is None or module == "aotc" or module.startswith("aotc.") else code


def remember(fn: Any, owner: int, target: str, signature: Any) -> None:
    """Records a compiled signature of ``fn`` (only called while explanations are on)."""
    code = _user_code(fn)
    if code is not None:
        with _seen_lock:
            _seen.setdefault(code, collections.deque(maxlen=_HISTORY_PER_FUNCTION)).append(
                (owner, target, signature))


def explain_miss(fn: Any, name: str, owner: int, target: str, signature: Any,
                 previous: list, arg_name: Callable[[int], str]) -> str:
    """Why this call of a jitted function is not in its cache: the argument changes from
    the closest signature it compiled before, or, for its first compile, what other
    ``aotc.jit``s of the same function compiled."""
    where = defined_at(fn)
    head = f"cache miss for {name}" + (f" ({where})" if where else "")
    if previous:
        diffs = _closest(signature, previous, arg_name)
        count = len(previous)
        closest = "the one" if count == 1 else f"the closest of the {count}"
        return (f"{head}: {'; '.join(diffs) or 'explanation unavailable'} "
                f"(against {closest} compiled before)")
    code = _user_code(fn)
    with _seen_lock:
        others = [(t, s) for o, t, s in _seen.get(code, ()) if o != owner] if code else []
    if not others:
        return f"{head}: first compile of this jitted function"
    same = [t for t, s in others if s.key == signature.key]
    if target in same:
        return (f"{head}: first compile of this jitted function, but another aotc.jit of the "
                f"same function compiled this signature before. A jitted function keeps its "
                f"compiled code: make it once and reuse it, not anew for each call")
    if same:
        return f"{head}: target {same[-1]} -> {target} (another aotc.jit of the same function)"
    diffs = _closest(signature, [s for _, s in others], arg_name)
    return (f"{head}: first compile of this jitted function; against another aotc.jit of "
            f"the same function: {'; '.join(diffs)}")


def _closest(signature: Any, previous: list, arg_name: Callable[[int], str]) -> list[str]:
    """The differences from the previous signature with the fewest (the latest on ties)."""
    from .signature_text import describe_difference

    best: list[str] | None = None
    for old in previous:
        diffs = describe_difference(signature, old, arg_name)
        if best is None or len(diffs) <= len(best):
            best = diffs
    return best or []
