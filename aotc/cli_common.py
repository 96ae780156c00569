"""What every ``aotc`` command shares: the exit statuses, ``CliError``, size formatting and
the handling of a closed output pipe.

Imports nothing but the standard library, so that ``aotc.cli`` (run, inspect, targets)
and ``aotc.cli_compile`` (compile) can both build on it without importing each other's
dependencies.
"""

from __future__ import annotations

import os
import sys

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
# What a shell reports for a tool that its closed output pipe stopped (128 + SIGPIPE).
EXIT_CLOSED_PIPE = 141


class CliError(Exception):
    """A user error: printed as ``aotc <command>: <message>`` and exits with ``code``."""

    def __init__(self, message: str, code: int = EXIT_FAILURE):
        super().__init__(message)
        self.code = code


def format_size(n: int) -> str:
    """A byte count for people.

    >>> format_size(512), format_size(3 * 1024 * 1024)
    ('512 bytes', '3.0 MiB')
    """
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"  # unreachable


def stdout_closed() -> int:
    """The exit status once stdout's reader has gone (``aotc inspect x.vmfb | head -1``):
    stdout is pointed at devnull, so that Python's flush at exit does not fail again, and
    the command ends quietly with 141, as a Unix tool stopped by SIGPIPE does (Python's
    recommended handling of ``BrokenPipeError``)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is no file (captured)
        pass
    return EXIT_CLOSED_PIPE
