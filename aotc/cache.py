"""The on-disk cache of compiled modules.

An entry is ``<key>.vmfb`` under ``AOTC_CACHE_DIR`` (default: the user cache dir,
``$XDG_CACHE_HOME/aotc`` or ``~/.cache/aotc``). The key hashes the MLIR, the compiler
flags and the compiler and aotc versions. Writes are atomic (temporary file, then
rename); each entry carries a hash of its payload, so a corrupt or truncated entry is
detected, removed and rebuilt instead of crashing the runtime.

The cache holds at most ``AOTC_CACHE_MAX_BYTES`` (default 1 GiB; ``"512mib"``, bytes, or
``0``/``*`` for no cap). Past it, a store removes the least recently used entries until
the cache is at ``EVICT_TO`` of the cap. Recency is the entry's mtime, which a hit
touches (atime is unreliable: ``noatime``/``relatime`` mounts). Several processes may
store and evict at once: a removal is an ``unlink`` of a whole entry (a reader that
opened it still reads it whole; one that comes after misses and compiles), two
processes removing the same entry is no error, a temporary file is never an entry, and
an entry just written is never removed by its own store.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from pathlib import Path

from .errors import ConfigError

MAGIC = b"AOTCVMFB1\n"
DIGEST_BYTES = 32

DEFAULT_MAX_BYTES = 1 << 30
# Eviction goes below the cap, so that each store past it does not evict (and scan) again.
EVICT_TO = 0.9
# A temporary file this old belongs to a writer that died (a write takes milliseconds).
STALE_TEMPORARY_SECONDS = 3600
# A process scans the directory after a store when its own count of the bytes there
# reaches the cap, or when its last scan is this old (other processes store too).
RESCAN_SECONDS = 10.0

_TEMPORARY_PREFIX = ".tmp-"
_ENTRY_SUFFIX = ".vmfb"

# directory -> (bytes there at the last scan plus this process's stores since, its time)
_sizes: dict[str, tuple[int, float]] = {}
_sizes_lock = threading.Lock()


def cache_dir() -> Path:
    configured = os.environ.get("AOTC_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "aotc"


def enabled() -> bool:
    on = (os.environ.get("AOTC_CACHE_DIR", "x") != ""
          and os.environ.get("AOTC_DISABLE_CACHE") != "1")
    if on:
        max_bytes()  # a malformed cap is reported before a compile, not after it
    return on


def max_bytes() -> int | None:
    """``AOTC_CACHE_MAX_BYTES``: the most bytes of entries the cache keeps (None: no
    cap), read at each store: ``"256mib"`` is 268435456, unset or empty
    ``DEFAULT_MAX_BYTES``."""
    from .runtime.allocator import parse_size

    text = os.environ.get("AOTC_CACHE_MAX_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        size = parse_size(text, "AOTC_CACHE_MAX_BYTES")
    except ValueError as e:
        raise ConfigError(f"{e}; 0 or * for no cap") from None
    return size or None


def make_key(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def program_key(bytecode: bytes, flags: tuple[str, ...]) -> str:
    """The key of a compiled program: its MLIR bytecode, the IREE flags and the versions
    of IREE and aotc (``aotc.jit`` and ``aotc.export`` share entries)."""
    from . import __version__
    from .compiler import iree_version

    return make_key(bytecode, "\0".join(flags), iree_version(), __version__)


def _path(key: str) -> Path:
    return cache_dir() / f"{key}{_ENTRY_SUFFIX}"


def load(key: str) -> bytes | None:
    """The cached payload for ``key``, or None (missing or corrupt, which is removed).
    A hit makes the entry the most recently used."""
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
    try:
        os.utime(path)
    except OSError:  # evicted meanwhile, or a read-only cache: the hit stands
        pass
    return payload


def store(key: str, payload: bytes) -> None:
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=_TEMPORARY_PREFIX, suffix=_ENTRY_SUFFIX)
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, _path(key))
    except OSError:
        # A read-only or full cache directory must not break compilation.
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
        return
    _after_store(directory, len(MAGIC) + DIGEST_BYTES + len(payload), _path(key).name)


def _after_store(directory: Path, added: int, name: str) -> None:
    cap = max_bytes()
    if cap is None:
        return
    now = time.monotonic()
    with _sizes_lock:
        known, scanned = _sizes.get(str(directory), (0, -RESCAN_SECONDS))
        known += added
        _sizes[str(directory)] = (known, scanned)
    if known < cap and now - scanned < RESCAN_SECONDS:
        return
    evict(directory, cap, keep=name)


def evict(directory: Path | None = None, cap: int | None = None, keep: str | None = None) -> int:
    """Removes the least recently used entries of ``directory`` (the cache's) while it
    holds more than ``cap`` bytes (``max_bytes()``), down to ``EVICT_TO`` of it, and
    temporary files left by dead writers. ``keep`` (a file name) is never removed.
    Returns the bytes removed."""
    directory = cache_dir() if directory is None else directory
    cap = max_bytes() if cap is None else cap
    entries, total = _scan(directory, remove_stale=True)
    removed = 0
    if cap is not None and total > cap:
        entries.sort()  # oldest mtime first (the name breaks ties: a stable order)
        target = int(cap * EVICT_TO)
        for _, name, size in entries:
            if total <= target:
                break
            if name == keep:
                continue
            try:
                os.unlink(directory / name)
            except FileNotFoundError:  # another process evicted it first: gone all the same
                pass
            except OSError:  # not ours to remove (permissions, open elsewhere on Windows)
                continue
            total -= size
            removed += size
    with _sizes_lock:
        _sizes[str(directory)] = (total, time.monotonic())
    return removed


def _scan(directory: Path, remove_stale: bool = False) -> tuple[list[tuple[float, str, int]],
                                                                 int]:
    """(mtime, name, size) of every entry, and their total size; with ``remove_stale``,
    removes the temporary files of dead writers on the way."""
    entries, total = [], 0
    now = time.time()
    try:
        listing = list(os.scandir(directory))
    except OSError:
        return entries, total
    for item in listing:
        name = item.name
        if not name.endswith(_ENTRY_SUFFIX):
            continue
        try:
            info = item.stat(follow_symlinks=False)
        except OSError:  # removed since the listing
            continue
        if name.startswith(_TEMPORARY_PREFIX):
            if remove_stale and now - info.st_mtime > STALE_TEMPORARY_SECONDS:
                try:
                    os.unlink(item.path)
                except OSError:
                    pass
            continue
        entries.append((info.st_mtime, name, info.st_size))
        total += info.st_size
    return entries, total


def total_bytes(directory: Path | None = None) -> int:
    """The bytes of the entries in the cache now."""
    return _scan(cache_dir() if directory is None else directory)[1]
