"""The on-disk cache of compiled modules.

An entry is ``<key>.vmfb`` under ``AOTC_CACHE_DIR`` (default: the user cache dir,
``$XDG_CACHE_HOME/aotc`` or ``~/.cache/aotc``). The key hashes the MLIR, the compiler
flags and the compiler and aotc versions. Writes are atomic (temporary file, then
rename); each entry carries a hash of its payload, so a corrupt or truncated entry is
detected, removed and rebuilt instead of crashing the runtime.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

MAGIC = b"AOTCVMFB1\n"
DIGEST_BYTES = 32


def cache_dir() -> Path:
    configured = os.environ.get("AOTC_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "aotc"


def enabled() -> bool:
    return (os.environ.get("AOTC_CACHE_DIR", "x") != ""
            and os.environ.get("AOTC_DISABLE_CACHE") != "1")


def make_key(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.vmfb"


def load(key: str) -> bytes | None:
    """The cached payload for ``key``, or None (missing or corrupt, which is removed)."""
    path = _path(key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header = len(MAGIC) + DIGEST_BYTES
    payload = data[header:]
    if data[: len(MAGIC)] != MAGIC or hashlib.sha256(payload).digest() != data[len(MAGIC):header]:
        try:
            path.unlink()
        except OSError:
            pass
        return None
    return payload


def store(key: str, payload: bytes) -> None:
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".vmfb")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, _path(key))
    except OSError:
        # A read-only or full cache directory must not break compilation.
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
