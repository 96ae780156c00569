"""Compile logs (``aotc.config.log_compiles``, ``explain_cache_misses``): the records of
each trace and compile, the reasons a jitted function compiles again, disk-cache hits
and misses, export's records, silence when off, and the terminal status line."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc import compile_log


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AOTC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AOTC_DISABLE_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def logs(caplog, cache_dir):
    """The messages of the aotc records (WARNING and above) while log_compiles is on."""
    with aotc.config.override(log_compiles=True), caplog.at_level(logging.WARNING, "aotc"):
        caplog.clear()
        yield caplog


def _messages(caplog, start: int = 0) -> list[str]:
    return [r.getMessage() for r in caplog.records[start:] if r.name.startswith("aotc")]


def _misses(caplog, start: int = 0) -> list[str]:
    return [m for m in _messages(caplog, start) if m.startswith("cache miss")]


def test_shape_change_is_explained_with_times_and_disk_cache(logs):
    def f(x):
        return anp.tanh(x) * 2

    jf = aotc.jit(f)
    jf(np.ones(4, np.float32))
    first = _messages(logs)
    assert len(first) == 3, first
    assert first[0].startswith("cache miss for f (") and "first compile" in first[0]
    assert first[1].startswith("traced f(x: float32[4]) in ") and "aotc passes" in first[1]
    assert first[2].startswith("compiled f(x: float32[4]) for cpu in ")
    for stage in ("trace", "aotc passes", "IREE compile"):
        assert f"{stage} " in first[2], first[2]
    assert first[2].endswith("disk cache miss, compiled and stored")
    assert all(r.levelno == logging.WARNING and r.name == "aotc.jit" for r in logs.records)

    jf(np.ones(8, np.float32))
    assert _misses(logs, 3) == [
        f"cache miss for f ({compile_log.defined_at(f)}): x: shape float32[4] -> float32[8] "
        f"(against the one compiled before)"]


def test_hits_log_nothing(logs):
    jf = aotc.jit(lambda x, n: x * n, static_argnums=1)
    x = np.ones(3, np.float32)
    jf(x, 2)
    jf(2 * x, 2)
    jf(x, n=2)  # a keyword: a new signature (JAX keys on how arguments are passed)
    count = len(logs.records)
    for _ in range(3):
        jf(x, 2)
        jf(x, n=2)
    assert len(logs.records) == count


def test_dtype_and_weak_type_changes(logs):
    jf = aotc.jit(lambda x, y: x * y)
    x = np.ones(3, np.float32)
    jf(x, x)
    jf(x.astype(np.int32), x)
    jf(x, 2.0)
    misses = _misses(logs)
    assert "x: dtype float32[3] -> int32[3]" in misses[1], misses
    # The closest of the two before is (float32, float32): only y differs.
    assert ("y: float32[3] (an array) -> weak float64[] (a Python scalar)" in misses[2]
            and "closest of the 2" in misses[2]), misses


def test_static_value_change(logs):
    jf = aotc.jit(lambda x, n, mode: x * n if mode == "mul" else x + n,
                  static_argnums=1, static_argnames="mode")
    x = np.ones(3, np.float32)
    jf(x, 2, mode="mul")
    jf(x, 3, mode="mul")
    jf(x, 3, mode="add")
    misses = _misses(logs)
    assert misses[1].endswith(": n: static value 2 -> 3 (against the one compiled before)")
    assert "mode: static value 'mul' -> 'add'" in misses[2] and "n:" not in misses[2]
    assert "traced <lambda>(x: float32[3], n=3 static, mode='add' static)" in _messages(logs)[-2]


def test_tree_structure_change(logs):
    jf = aotc.jit(lambda p, xs: p["w"] * sum(xs))
    x = np.ones(3, np.float32)
    jf({"w": x}, [x, x])
    jf({"w": x}, [x, x, x])
    jf({"w": x, "b": x}, [x, x, x])
    misses = _misses(logs)
    assert "xs: structure [*, *] -> [*, *, *]" in misses[1], misses
    assert "p: structure" in misses[2] and "xs" not in misses[2], misses


def test_new_jit_of_the_same_function_hits_the_disk_cache(logs):
    def g(x):
        return x - 1

    x = np.ones(5, np.float32)
    aotc.jit(g)(x)
    assert _messages(logs)[-1].endswith("disk cache miss, compiled and stored")
    start = len(logs.records)
    again = aotc.jit(g)
    again(x)
    messages = _messages(logs, start)
    assert "another aotc.jit of the same function compiled this signature" in messages[0]
    assert messages[-1].startswith("loaded g(x: float32[5]) for cpu in ")
    assert messages[-1].endswith("disk cache hit, IREE compile skipped")
    assert again.stats == {"traces": 1, "compiles": 0, "disk_hits": 1}


def test_another_target_is_explained(logs):
    def h(x):
        return x * 5

    x = np.ones(2, np.float32)
    aotc.jit(h)(x)
    aotc.jit(h, target="x86_64")(x)
    assert _misses(logs)[-1].endswith(": target cpu -> x86_64 (another aotc.jit of the same "
                                      "function)")


def test_disk_cache_off_and_in_memory_lower(logs, monkeypatch):
    monkeypatch.setenv("AOTC_DISABLE_CACHE", "1")
    jf = aotc.jit(lambda x: x * 3)
    x = np.ones(2, np.float32)
    jf(x)
    assert _messages(logs)[-1].endswith("disk cache off, compiled")
    start = len(logs.records)
    compiled = jf.lower(x).compile()  # traces again, takes the executable from memory
    messages = _messages(logs, start)
    assert messages[0].startswith("traced <lambda>(x: float32[2])")
    assert messages[1] == "<lambda>(x: float32[2]) for cpu: from the in-memory cache"
    assert jf.stats["compiles"] == 1 and np.asarray(compiled(x)).tolist() == [3, 3]


def test_explain_cache_misses_alone(caplog, cache_dir):
    jf = aotc.jit(lambda x: x + 2)
    with aotc.config.override(explain_cache_misses=True), \
            caplog.at_level(logging.WARNING, "aotc"):
        jf(np.ones(2, np.float32))
        jf(np.ones(3, np.float32))
    messages = _messages(caplog)
    misses = _misses(caplog)
    assert len(misses) == 2 and "x: shape float32[2] -> float32[3]" in misses[1], messages
    # Disk cache misses are explained too (JAX's persistent-cache misses); traces are not.
    compiles = [m for m in messages if m not in misses]
    assert len(compiles) == 2 and all(m.endswith("disk cache miss, compiled and stored")
                                      for m in compiles), messages


def test_nothing_is_logged_when_off(caplog, cache_dir, monkeypatch):
    monkeypatch.delenv("AOTC_LOG_COMPILES", raising=False)
    monkeypatch.delenv("AOTC_EXPLAIN_CACHE_MISSES", raising=False)
    jf = aotc.jit(lambda x: x - 2)
    with caplog.at_level(logging.INFO, "aotc"):
        jf(np.ones(2, np.float32))
        jf(np.ones(3, np.float32))
        aotc.export(lambda x: x * 2, aotc.ShapeDtypeStruct((2,), "float32"))
    assert not [r for r in caplog.records if r.name.startswith("aotc")]
    # As JAX's: the same records at DEBUG for loggers set to DEBUG.
    with caplog.at_level(logging.DEBUG, "aotc"):
        jf(np.ones(4, np.float32))
    levels = {r.levelno for r in caplog.records if r.name.startswith("aotc")}
    assert levels == {logging.DEBUG} and len(_misses(caplog)) == 1


def test_environment_variable_switches_logging_on(cache_dir, tmp_path):
    script = textwrap.dedent("""
        import numpy as np, aotc
        f = aotc.jit(lambda x: x + 1)
        f(np.ones(3, np.float32))
        f(np.ones(3, np.float32))
    """)
    env = dict(os.environ, AOTC_LOG_COMPILES="1", AOTC_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "<lambda>" in line]
    assert len(lines) == 3, done.stderr  # one miss: explained, traced, compiled
    assert "aotc: compiling" not in done.stderr  # no status line: stderr is not a terminal


def test_export_logs_trace_and_compile(logs):
    def predict(x):
        return anp.argmax(x, axis=1)

    def loss(x, y):
        return ((x - y) ** 2).mean()

    spec = aotc.ShapeDtypeStruct((4, 3), "float32")
    aotc.export({"predict": (predict, spec), "loss": (loss, spec, spec)})
    messages = _messages(logs)
    assert [r.name for r in logs.records] == ["aotc.export"] * 3
    assert messages[0].startswith("traced predict(x: float32[4,3]) in ")
    assert messages[1].startswith("traced loss(x: float32[4,3], y: float32[4,3]) in ")
    assert messages[2].startswith("compiled predict, loss for cpu in ")
    assert "trace " in messages[2] and "aotc passes " in messages[2]
    assert "IREE compile " in messages[2] and messages[2].endswith("disk cache miss")
    # The same artifact again (or a jitted function of the same program) is a hit.
    aotc.export({"predict": (predict, spec), "loss": (loss, spec, spec)})
    again = _messages(logs)[3:]
    assert again[2].endswith("disk cache hit") and "IREE compile " not in again[2]


# ---- the status line -------------------------------------------------------------------

class _Terminal:
    """Stands in for sys.stderr: a terminal whose output is a pipe."""

    def __init__(self):
        self.read_fd, self.write_fd = os.pipe()

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.write_fd

    def output(self) -> bytes:
        os.close(self.write_fd)
        with os.fdopen(self.read_fd, "rb") as f:
            return f.read()


def _status(monkeypatch, stages_to_run, terminal=True):
    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream if terminal else open(os.devnull, "w"))
    monkeypatch.setattr(compile_log, "LONG_COMPILE_SECONDS", 0.05)
    monkeypatch.setattr(compile_log, "REFRESH_SECONDS", 0.05)
    with compile_log.Stages("f") as stages:
        for stage, shown in stages_to_run:
            with stages(stage, shown=shown):
                time.sleep(0.25)
    if not terminal:
        os.close(stream.write_fd)
        os.close(stream.read_fd)
        return None, stages
    return stream.output(), stages


def test_status_line_is_drawn_and_erased_on_a_terminal(monkeypatch):
    out, stages = _status(monkeypatch, [("trace", False), ("IREE compile", True)])
    assert b"\raotc: compiling f: IREE compile " in out, out
    assert b"trace" not in out  # user code runs while tracing: no line then
    assert out.endswith(b"\r\x1b[K")  # nothing left on the line
    assert set(stages.times) == {"trace", "IREE compile"} and stages.total >= 0.5


def test_no_status_line_when_stderr_is_not_a_terminal(monkeypatch):
    out, stages = _status(monkeypatch, [("IREE compile", True)], terminal=False)
    assert stages._thread is None and stages._fd is None


def test_status_line_can_be_switched_off(monkeypatch):
    with aotc.config.override(compile_progress=False):
        out, _ = _status(monkeypatch, [("IREE compile", True)])
    assert out == b""
