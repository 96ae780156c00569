"""What every ``aotc`` command shares: the exit statuses, ``CliError`` and size formatting.

Imports nothing but the standard library, so that ``aotc.cli`` (run, inspect, targets)
and ``aotc.cli_compile`` (compile) can both build on it without importing each other's
dependencies.
"""

from __future__ import annotations

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


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
