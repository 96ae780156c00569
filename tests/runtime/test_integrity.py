"""Artifact integrity: a damaged, edited or truncated ``.vmfb`` is a ``LoadError`` or a
``CallError`` with a clear message, never a crash and never a wrong result.

The artifact is exported once (``artifact``); every load of a mutant runs in a
subprocess (``integrity_mutants.py``), so a crash shows as a signal exit. Measured on
the code before the container checks (the same mutants, every one in a forked child):
of 728 single-byte mutants 24 crashed the process (SIGSEGV/SIGILL, in the executable and
the FlatBuffer), 53 raised IREE's IndexError, nanobind's RuntimeError or a TypeError,
2 returned wrong values; metadata relabelled a result's dtype and the values came back
reinterpreted.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import pickle
import subprocess
import sys
import time
import zipfile
from io import BytesIO

import integrity_mutants as im
import numpy as np
import pytest

from aotc import runtime
from aotc.runtime import errors, integrity
from aotc.runtime.metadata import FunctionMetadata

RUNNER = im.__file__
FIX_WORDS = ("xport", "copy it again", "Convert", "Pass", "pinned")


@pytest.fixture(scope="module")
def artifact() -> bytes:
    import aotc

    return aotc.export(im.function, im.X, im.Y, im.N, name="f").vmfb


def _run(cases: list, tmp_path, workers: int = 1, timeout: float = 300) -> list[dict]:
    """Runs the cases in ``workers`` runner subprocesses (each forks a child per mutant
    that reaches IREE); the records in the cases' order."""
    parts = [cases[k::workers] for k in range(workers)]
    procs = []
    for k, part in enumerate(parts):
        source, out = tmp_path / f"cases{k}.pickle", tmp_path / f"records{k}.json"
        source.write_bytes(pickle.dumps(part))
        procs.append((subprocess.Popen([sys.executable, RUNNER, str(source), str(out)],
                                       stderr=subprocess.PIPE), out))
    records: list[list[dict]] = []
    for proc, out in procs:
        _, stderr = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, f"the runner died ({proc.returncode}): {stderr.decode()}"
        records.append(json.loads(out.read_text()))
    merged = [None] * len(cases)
    for k, part in enumerate(records):
        merged[k::workers] = part
    return merged


def _clear(record: dict) -> bool:
    message = record["message"]
    return "expected" in message and any(w in message for w in FIX_WORDS)


def test_mutants(artifact, tmp_path):
    """Hundreds of single bytes and blocks changed in every region, truncations, bytes
    appended, metadata rewritten: 0 crashes, 0 wrong results, every failure a
    LoadError/CallError subclass with a clear message. (2 runner processes, ~10 s.)"""
    start = time.perf_counter()
    cases = im.mutants(artifact)
    records = _run(cases, tmp_path, workers=2)
    seconds = time.perf_counter() - start
    outcomes = collections.Counter(r["outcome"] for r in records)
    single = [r for r in records if " byte " in r["label"]]
    by_region = collections.Counter(r["region"] for r in single)
    summary = (f"{len(records)} mutants ({len(single)} single bytes: "
               f"{dict(sorted(by_region.items()))}) in {seconds:.1f} s: {dict(outcomes)}; "
               f"errors {dict(collections.Counter(r.get('type') for r in records))}; "
               f"{sum(r['forked'] for r in records)} reached IREE (forked)")
    print(summary)
    assert len(single) >= 300 and all(n >= 20 for n in by_region.values()), summary
    bad = [r for r in records if r["outcome"] not in ("ok", "error")]
    assert not bad, "\n".join(f"{r['label']} ({r['region']}): {r['outcome']} {r.get('type')} "
                              f"{r['message'][:200]}" for r in bad[:20])
    unclear = [r for r in records if r["outcome"] == "error" and not _clear(r)]
    assert not unclear, "\n".join(f"{r['label']}: {r['message'][:300]}" for r in unclear[:10])
    # Damage inside a member is always found (its CRC-32, or the seal); what loads and
    # runs had a byte changed that IREE never reads (a zip header's time or version).
    for r in records:
        if r["outcome"] == "ok":
            assert r["region"] in ("zip header", "executable header", "directory",
                                   "end records"), r
            assert r["label"].startswith("unsealed"), r  # the seal covers those bytes too
    damaged = [r for r in records if r["region"] in ("flatbuffer", "executable")]
    assert all(r["outcome"] == "error" for r in damaged)


# ---- each defect of the issue, before and after ----------------------------------------------

def test_damaged_executable_does_not_run(artifact, tmp_path):
    """Before: code overwritten with ud2 reached the CPU (SIGILL at the first call).
    Now its member's CRC-32 fails (the seal, too, once that is stripped)."""
    cases = [("code filled with ud2", "executable", im.fill_code(artifact)),
             ("unsealed, code filled with ud2", "executable",
              im.fill_code(im.unsealed(artifact)))]
    for record in _run(cases, tmp_path):
        assert record["outcome"] == "error" and record["type"] == "LoadError", record
        assert "member 'module_linked_embedded_elf_x86_64.so'" in record["message"]
        assert "expected CRC-32" in record["message"]


def test_iree_and_python_errors_become_load_errors(artifact, tmp_path):
    """Before: nanobind's RuntimeError (metadata that is not UTF-8), IndexError (aliases
    or mutated indices out of range), TypeError (a renamed function) escaped."""
    fn = _reflection(artifact)
    text = fn["aotc"]
    broken = text.replace('"target": "cpu"', '"target": "\udcff\udcffu"')
    cases = [
        ("metadata not UTF-8", "metadata",
         im.reseal(artifact.replace(text.encode(), broken.encode("utf-8", "surrogateescape")))),
        *[(label, region, data) for label, region, data in im.metadata_mutants(artifact)
          if label.split(": ")[1] in ("aliases out of range", "mutated out of range",
                                      "function renamed")],
    ]
    records = _run(cases, tmp_path)
    assert len(records) == 4
    for record in records:
        assert record["outcome"] == "error" and record["type"] == "LoadError", record
        assert _clear(record), record


def test_relabelled_dtype_is_refused(artifact, tmp_path):
    """Before: a result's dtype relabelled in the metadata came back reinterpreted
    (float32 bits read as int32; float64 read past the buffer). Now the load compares
    the metadata with the ABI declaration, and the call each result's element type and
    shape with the metadata."""
    wanted = {"metadata: result dtype relabelled": "LoadError",
              "metadata: result dtype widened": "LoadError",
              "metadata: result 0 relabelled int32 in metadata and declaration": "ResultError",
              "metadata: result 0 widened float64 in metadata and declaration": "ResultError",
              "metadata: result 0 reshaped in metadata and declaration": "ResultError"}
    cases = [c for c in im.metadata_mutants(artifact) if c[0] in wanted]
    records = {r["label"]: r for r in _run(cases, tmp_path)}
    assert len(records) == len(wanted)
    for label, record in records.items():
        assert record["outcome"] == "error", record
        assert record["type"] == wanted[label], record
    message = records["metadata: result 0 relabelled int32 in metadata and declaration"]["message"]
    assert message.startswith("f(): result 0 (out[0]): expected int32[8], as the "
                              "function's metadata says, got float32[8]")


def test_crafted_disk_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    """Before: a cache entry whose payload was damaged, its cache checksum recomputed,
    crashed the process at the first call. Now the runtime's load refuses it and the
    jitted function compiles again, in a fresh process."""
    import aotc
    from aotc import cache

    monkeypatch.setenv("AOTC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AOTC_DISABLE_CACHE", raising=False)
    aotc.jit(im.function)(im.X, im.Y, im.N)
    (entry,) = (tmp_path / "cache").glob("*.vmfb")
    header = len(cache.MAGIC) + cache.DIGEST_BYTES
    payload = im.fill_code(entry.read_bytes()[header:])
    entry.write_bytes(cache.MAGIC + hashlib.sha256(payload).digest() + payload)
    script = (
        "import sys, numpy as np, aotc; sys.path.insert(0, sys.argv[1])\n"
        "import integrity_mutants as im\n"
        "f = aotc.jit(im.function)\n"
        "outs = f(im.X, im.Y, im.N)\n"
        "assert all(np.array_equal(np.asarray(o), w) for o, w in zip(outs, im.EXPECTED))\n"
        "print(f.stats)\n")
    done = subprocess.run([sys.executable, "-c", script, os.path.dirname(RUNNER)],
                          capture_output=True, text=True, timeout=300, env=os.environ)
    assert done.returncode == 0, f"{done.returncode}: {done.stderr[-2000:]}"
    stats = eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - our own dict
    assert stats.get("disk_hits") == 1 and stats.get("compiles") == 1, stats
    # The entry was replaced by a good one.
    assert integrity.verify_container(entry.read_bytes()[header:], str(entry)).sealed


# ---- the seal, the pin, the CLI ---------------------------------------------------------------

def _reflection(vmfb: bytes) -> dict:
    import iree.runtime as rt

    module = rt.VmModule.copy_buffer(rt.VmInstance(), vmfb)
    return dict(module.lookup_function("f").reflection)


def test_seal(artifact):
    container = integrity.verify_container(artifact, "a")
    assert container.sealed and [m.name for m in container.members][0] == "module.fb"
    archive = zipfile.ZipFile(BytesIO(artifact))  # still a zip every tool reads
    assert archive.comment == b"aotc-sha256:" + container.sha256.encode()
    assert archive.testzip() is None
    body = artifact[:-integrity.SEAL_BYTES]
    assert hashlib.sha256(body).hexdigest() == container.sha256
    bare = im.unsealed(artifact)  # unsealed: the whole file's SHA-256, as sha256sum
    assert runtime.artifact_sha256(bare) == hashlib.sha256(bare).hexdigest()
    assert integrity.seal(bare) == artifact
    assert runtime.load(bare).sha256 == hashlib.sha256(bare).hexdigest()


def test_expected_sha256(artifact, tmp_path):
    digest = runtime.artifact_sha256(artifact)
    path = tmp_path / "f.vmfb"
    path.write_bytes(artifact)
    module = runtime.load(path, expected_sha256=digest.upper())
    assert module.sha256 == digest
    outs = module.f(im.X, im.Y, im.N)
    assert all(np.array_equal(np.asarray(o), w) for o, w in zip(outs, im.EXPECTED))
    other = im.unsealed(artifact)  # the same code, another file: not the pinned one
    with pytest.raises(runtime.LoadError, match=f"expected the artifact with SHA-256 {digest}"
                                                r", got one with SHA-256 [0-9a-f]{64}: this "
                                                "is not the pinned build"):
        runtime.load(other, expected_sha256=digest)
    with pytest.raises(TypeError, match="expected_sha256: expected the artifact's SHA-256 "
                                        r"as a str of 64 hex digits, got b'\\x00' \(bytes\)"):
        runtime.load(artifact, expected_sha256=b"\0")
    with pytest.raises(ValueError, match="got 'abc' \\(str\\)"):
        runtime.load(artifact, expected_sha256="abc")


def test_inspect_verify(artifact, tmp_path, capsys):
    from aotc.cli import main

    path = tmp_path / "f.vmfb"
    path.write_bytes(artifact)
    digest = runtime.artifact_sha256(artifact)
    assert main(["inspect", str(path), "--verify", "--expected-sha256", digest]) == 0
    out = capsys.readouterr().out
    assert f"verified: SHA-256 {digest} (sealed by aotc, matches the contents, the " \
           f"pinned one)" in out
    assert "members, CRC-32 checked: module.fb" in out
    assert main(["inspect", str(path), "--verify", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["verified"]
    assert report["sha256"] == digest and report["sealed"] and not report["pinned"]
    assert main(["inspect", str(path), "--verify", "--expected-sha256", "0" * 64]) == 1
    assert "this is not the pinned build" in capsys.readouterr().err
    damaged = bytearray(artifact)
    damaged[len(damaged) // 2] ^= 0x40
    path.write_bytes(damaged)
    for args in (["inspect", str(path)], ["inspect", str(path), "--verify"]):
        assert main(args) == 1
        err = capsys.readouterr().err
        assert f"{path}: not a .vmfb file, or a damaged one: the .vmfb is damaged: " in err
        assert "expected CRC-32" in err


# ---- the pieces ---------------------------------------------------------------------------

def test_schema_fields_are_the_metadata_fields():
    from dataclasses import MISSING, fields

    from aotc.runtime.schema import FIELDS

    declared = {f.name: f.default is MISSING and f.default_factory is MISSING
                for f in fields(FunctionMetadata)}
    assert {**declared, "schema": True} == {k: required for k, (_, required) in FIELDS.items()}


def test_call_errors_share_a_base():
    for cls, builtin in ((errors.ArgumentError, TypeError), (errors.ShapeError, ValueError),
                         (errors.DeviceMismatchError, ValueError),
                         (errors.DeletedArrayError, RuntimeError),
                         (errors.InvocationError, RuntimeError),
                         (errors.OutOfMemoryError, MemoryError),
                         (errors.ResultError, RuntimeError),
                         (errors.FunctionNotFoundError, KeyError)):
        assert issubclass(cls, errors.CallError) and issubclass(cls, builtin), cls
    assert not issubclass(errors.LoadError, errors.CallError)

