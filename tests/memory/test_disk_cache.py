"""The disk cache's size cap (``AOTC_CACHE_MAX_BYTES``): least recently used entries go
first, a hit makes an entry recent, and several processes storing, reading and evicting
at once neither fail nor read a damaged entry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from aotc import cache
from aotc.errors import ConfigError

PAYLOAD = 1000
ENTRY = len(cache.MAGIC) + cache.DIGEST_BYTES + PAYLOAD


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("AOTC_CACHE_DIR", str(directory))
    monkeypatch.delenv("AOTC_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("AOTC_CACHE_MAX_BYTES", raising=False)
    return directory


def _key(i: int) -> str:
    return f"{i:064x}"


def _payload(i: int) -> bytes:
    return bytes([i % 251]) * PAYLOAD


def _age(directory, key: str, seconds_ago: float) -> None:
    path = directory / f"{key}.vmfb"
    stamp = time.time() - seconds_ago
    os.utime(path, (stamp, stamp))


def test_the_cap_evicts_the_least_recently_used(cache_dir, monkeypatch):
    """Before: the cache grew without bound (164 MiB and 4466 entries here after a few
    days of test runs)."""
    monkeypatch.setenv("AOTC_CACHE_MAX_BYTES", str(10 * ENTRY))
    for i in range(10):
        cache.store(_key(i), _payload(i))
        _age(cache_dir, _key(i), 1000 - i)  # entry 0 the oldest
    assert cache.total_bytes() == 10 * ENTRY
    assert cache.load(_key(0)) == _payload(0)  # a hit: entry 0 is now the newest
    cache.store(_key(10), _payload(10))  # over the cap: down to 90% of it
    kept = sorted(p.stem for p in cache_dir.glob("*.vmfb"))
    assert kept == sorted(_key(i) for i in (0, 3, 4, 5, 6, 7, 8, 9, 10))
    assert cache.total_bytes() <= 0.9 * 10 * ENTRY


def test_a_hit_touches_the_entry(cache_dir):
    cache.store(_key(1), _payload(1))
    _age(cache_dir, _key(1), 86400)
    assert cache.load(_key(1)) == _payload(1)
    assert time.time() - (cache_dir / f"{_key(1)}.vmfb").stat().st_mtime < 60


def test_an_entry_over_the_cap_stays_until_the_next_store(cache_dir, monkeypatch):
    monkeypatch.setenv("AOTC_CACHE_MAX_BYTES", str(ENTRY // 2))
    cache.store(_key(1), _payload(1))
    assert cache.load(_key(1)) == _payload(1)
    cache.store(_key(2), _payload(2))
    assert [p.stem for p in cache_dir.glob("*.vmfb")] == [_key(2)]


def test_temporary_files_of_live_writers_stay_and_dead_ones_go(cache_dir, monkeypatch):
    monkeypatch.setenv("AOTC_CACHE_MAX_BYTES", str(ENTRY))
    cache_dir.mkdir(parents=True)
    live, dead = cache_dir / ".tmp-live.vmfb", cache_dir / ".tmp-dead.vmfb"
    live.write_bytes(b"being written")
    dead.write_bytes(b"left by a writer that died")
    stamp = time.time() - 2 * cache.STALE_TEMPORARY_SECONDS
    os.utime(dead, (stamp, stamp))
    for i in range(3):
        cache.store(_key(i), _payload(i))
    assert live.exists() and not dead.exists()
    assert [p.stem for p in cache_dir.glob("[!.]*.vmfb")] == [_key(2)]


def test_the_cap_setting(monkeypatch):
    monkeypatch.delenv("AOTC_CACHE_MAX_BYTES", raising=False)
    assert cache.max_bytes() == cache.DEFAULT_MAX_BYTES == 1 << 30
    for text, wanted in (("256mib", 256 << 20), ("4096", 4096), ("0", None), ("*", None)):
        monkeypatch.setenv("AOTC_CACHE_MAX_BYTES", text)
        assert cache.max_bytes() == wanted
    monkeypatch.setenv("AOTC_CACHE_MAX_BYTES", "lots")
    monkeypatch.setenv("AOTC_CACHE_DIR", "/nonexistent")
    with pytest.raises(ConfigError, match="AOTC_CACHE_MAX_BYTES.*'lots'"):
        cache.enabled()  # before a compile, not after it


WRITER = textwrap.dedent("""
    import hashlib, os, random, sys
    from aotc import cache

    worker, entries, size = map(int, sys.argv[1:])
    rng = random.Random(worker)

    def payload(i):
        return hashlib.sha256(str(i).encode()).digest() * (size // 32)

    hits = 0
    for n in range(entries):
        i = rng.randrange(3 * entries)  # the workers share keys: same key, same payload
        found = cache.load(f"{i:064x}")
        if found is None:
            cache.store(f"{i:064x}", payload(i))
        elif found != payload(i):
            sys.exit(f"worker {worker}: entry {i} read back damaged")
        else:
            hits += 1
    print(hits)
""")


def test_concurrent_writers_and_eviction(cache_dir, monkeypatch):
    """Four processes store, read and evict in one small cache at once: none fails, none
    reads a damaged entry, and what remains is whole."""
    cap = 40 * 4096
    monkeypatch.setenv("AOTC_CACHE_MAX_BYTES", str(cap))
    workers = [subprocess.Popen([sys.executable, "-c", WRITER, str(w), "150", "4096"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=os.environ)
               for w in range(4)]
    results = [w.communicate(timeout=300) for w in workers]
    for worker, (out, err) in zip(workers, results):
        assert worker.returncode == 0, err[-2000:]
    assert sum(int(out) for out, _ in results) > 0  # the workers did share entries
    # Each process rescans after its own stores reach the cap: the cache may exceed it by
    # what the others stored meanwhile, never by more than one cap each.
    assert cache.total_bytes() <= 5 * cap
    cache.evict()
    assert cache.total_bytes() <= cap
    names = [p.name for p in cache_dir.iterdir()]
    assert not [n for n in names if n.startswith(".tmp-")]
    for name in names:
        assert cache.load(name[: -len(".vmfb")]) is not None  # every entry whole
