"""Damaged artifacts for the integrity tests, and the runner that loads and calls each.

``mutants(vmfb)`` makes the damaged copies of one exported artifact: single bytes and
blocks changed in every region of the file (the module.fb member's zip header, the
FlatBuffer, the executable's header and code, the central directory, the end records,
the seal), truncations, bytes appended, and metadata rewritten with the checksums fixed
up (``reseal``), as a tool that edits the metadata would leave it.

Run as a script (``python integrity_mutants.py MUTANTS.pickle OUT.json``), it loads and
calls every mutant in a forked child of its own, so a crash is seen as the child's
death by a signal and a hang as its alarm. The parent imports only the runtime and
creates no device (IREE's threads do not survive a fork); each child creates its own.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import struct
import sys
import zlib

import numpy as np

SIZE = 8
X = np.arange(SIZE, dtype=np.float32)
Y = np.full(SIZE, 0.5, np.float32)
N = np.arange(SIZE, dtype=np.int32) - 3


def function(x, y, n):
    """The exported function: three results, two dtypes, a 0-d one."""
    return x * 2 + y, (x - y).sum(), n * 3


EXPECTED = [X * 2 + Y, np.float32((X - Y).sum()), N * 3]
CHILD_TIMEOUT_S = 30


# ---- the file's regions --------------------------------------------------------------------

def regions(vmfb: bytes) -> dict[str, tuple[int, int]]:
    """Region name -> (start, end) byte offsets, from the verified container."""
    from aotc.runtime.integrity import verify_container

    container = verify_container(vmfb, "artifact")
    fb, exe = container.members[0], container.members[1]
    end64 = vmfb.rindex(b"PK\x06\x06")
    comment = struct.unpack_from("<H", vmfb, vmfb.rindex(b"PK\x05\x06") + 20)[0]
    out = {
        "zip header": (0, fb.start),
        "flatbuffer": (fb.start, fb.start + fb.size + 4),
        "executable header": (exe.header, exe.start),
        "executable": (exe.start, exe.start + exe.size),
        "directory": (container.directory, end64),
        "end records": (end64, len(vmfb) - comment),
    }
    if comment:
        out["seal"] = (len(vmfb) - comment, len(vmfb))
    return out


def unsealed(vmfb: bytes) -> bytes:
    """The artifact without its seal (as iree-compile writes it): only the CRC-32s and
    the layout checks stand between a damaged byte and IREE."""
    end = vmfb.rindex(b"PK\x05\x06")
    return vmfb[:end + 20] + b"\0\0"


def reseal(data: bytes) -> bytes:
    """``data`` with every member's CRC-32 recomputed (local and central headers) and
    the seal renewed if it had one: what a tool that edits an artifact would write."""
    from aotc.runtime.integrity import seal

    out = bytearray(data)
    end = data.rindex(b"PK\x05\x06")
    end64 = data.rindex(b"PK\x06\x06")
    count, cd_offset = struct.unpack_from("<Q", data, end64 + 32)[0], \
        struct.unpack_from("<Q", data, end64 + 48)[0]
    pos = cd_offset
    for _ in range(count):
        nlen, elen, clen = struct.unpack_from("<HHH", data, pos + 28)
        size = struct.unpack_from("<Q", data, pos + 46 + nlen + 4)[0]  # zip64: usize first
        header = struct.unpack_from("<Q", data, pos + 46 + nlen + 4 + 16)[0]
        lnlen, lelen = struct.unpack_from("<HH", data, header + 26)
        start = header + 30 + lnlen + lelen
        crc = zlib.crc32(data[start:start + size])
        struct.pack_into("<I", out, header + 14, crc)
        struct.pack_into("<I", out, pos + 16, crc)
        pos += 46 + nlen + elen + clen
    sealed = struct.unpack_from("<H", data, end + 20)[0] != 0
    return seal(bytes(out)) if sealed else bytes(out)


def fill_code(vmfb: bytes, pattern: bytes = b"\x0f\x0b") -> bytes:
    """``vmfb`` with the executable's code (its ELF sections flagged executable) filled
    with ``pattern`` (x86's ``ud2``: the first instruction run raises SIGILL), the rest
    of the container left as it was: damage IREE's loaders cannot see."""
    from aotc.runtime.integrity import verify_container

    exe = verify_container(vmfb, "artifact").members[1]
    data = bytearray(vmfb)
    elf = vmfb[exe.start:exe.start + exe.size]
    assert elf[:4] == b"\x7fELF", "expected an ELF executable (a CPU artifact)"
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    filled = 0
    for k in range(shnum):
        header = shoff + k * shentsize
        flags, = struct.unpack_from("<Q", elf, header + 8)
        offset, size = struct.unpack_from("<QQ", elf, header + 0x18)
        if flags & 0x4 and size:  # SHF_EXECINSTR
            start = exe.start + offset
            data[start:start + size] = (pattern * (size // len(pattern) + 1))[:size]
            filled += size
    assert filled, "expected an executable section"
    return bytes(data)


# ---- the mutants ---------------------------------------------------------------------------

def _spread(start: int, end: int, count: int) -> list[int]:
    if end - start <= count:
        return list(range(start, end))
    if count == 1:
        return [(start + end) // 2]
    return sorted({start + (end - start - 1) * k // (count - 1) for k in range(count)})


SINGLE_BYTES = {"zip header": 24, "flatbuffer": 120, "executable header": 24,
                "executable": 120, "directory": 40, "end records": 24, "seal": 24}


def byte_mutants(vmfb: bytes, tag: str, rng: random.Random) -> list[tuple[str, str, bytes]]:
    out = []
    for region, (start, end) in regions(vmfb).items():
        for offset in _spread(start, end, SINGLE_BYTES[region]):
            data = bytearray(vmfb)
            data[offset] ^= rng.randrange(1, 256)
            out.append((f"{tag} byte {offset}", region, bytes(data)))
    return out


def block_mutants(vmfb: bytes, tag: str, rng: random.Random,
                  per_region: int) -> list[tuple[str, str, bytes]]:
    out = []
    for region, (start, end) in regions(vmfb).items():
        for offset in _spread(start, end, per_region):
            for kind, block in (("random", bytes(rng.randrange(256) for _ in range(16))),
                                ("zeros", bytes(64)), ("ones", b"\xff" * 16)):
                data = bytearray(vmfb)
                block = block[:len(vmfb) - offset]
                data[offset:offset + len(block)] = block
                if bytes(data) != vmfb:
                    out.append((f"{tag} {kind} block at {offset}", region, bytes(data)))
    return out


def truncations(vmfb: bytes, tag: str) -> list[tuple[str, str, bytes]]:
    cuts = {0, 1, 4, 29, 30, 63, 64, 65, 100, len(vmfb) - 1, len(vmfb) - 22, len(vmfb) // 2}
    for start, end in regions(vmfb).values():
        cuts |= {start, start + 1, (start + end) // 2, end - 1}
    return [(f"{tag} cut to {n}", "truncated", vmfb[:n]) for n in sorted(cuts)
            if 0 <= n < len(vmfb)]


def _rewrite(vmfb: bytes, old: str, new: str) -> bytes:
    """Replaces text in the FlatBuffer by text of the same length (JSON may end in
    spaces), fixing the checksums up."""
    new = new.ljust(len(old))
    assert len(new) == len(old), (old, new)
    raw = old.encode()
    assert vmfb.count(raw) == 1, old
    return reseal(vmfb.replace(raw, new.encode()))


def metadata_mutants(vmfb: bytes) -> list[tuple[str, str, bytes]]:
    """Metadata (and ABI declaration) rewrites that keep the container intact."""
    import iree.runtime as rt

    module = rt.VmModule.copy_buffer(rt.VmInstance(), vmfb)
    reflection = dict(module.lookup_function("f").reflection)
    text, declaration = reflection["aotc"], reflection["iree.abi.declaration"]
    record = json.loads(text)

    def edited(change) -> str:
        data = json.loads(text)
        change(data)
        return json.dumps(data, separators=(",", ":"))

    def result(k, **fields):
        return lambda d: d["results"][k].update(fields)

    cases = {
        "result dtype relabelled": edited(result(0, dtype="int32")),
        "result dtype widened": edited(result(0, dtype="float64")),
        "result dtype unknown": edited(result(0, dtype="float33")),
        "argument dtype relabelled": edited(lambda d: d["args"][0].update(dtype="int32")),
        "result shape changed": edited(result(0, shape=[SIZE + 1])),
        "result rank changed": edited(result(1, shape=[1])),
        "shape not ints": edited(result(0, shape=["8", True])),
        "schema version": edited(lambda d: d.update(schema=2)),
        "field missing": edited(lambda d: d.pop("target")),
        "field of the wrong type": edited(lambda d: d.update(work_estimate="much")),
        "unknown field": edited(lambda d: d.update(extra=1)),
        "function renamed": edited(lambda d: d.update(name="g")),
        "result dropped": edited(lambda d: (d["results"].pop(), d["out_tree"]["children"].pop())),
        "out_tree leaves": edited(lambda d: d["out_tree"]["children"].pop()),
        "in_tree kind": edited(lambda d: d["in_tree"].update(kind="graph")),
        "aliases out of range": edited(lambda d: d.update(aliases={"0": "arg 9"})),
        "donated unknown argument": edited(lambda d: d.update(donated={"z": 0})),
        "mutated out of range": edited(lambda d: d.update(mutated={"x": 7})),
        "not JSON": text[:-1],
        "not an object": "[" * 40 + "]" * 40,
        "nested too deep": "[" * (len(text) // 2) + "]" * (len(text) // 2),
    }
    assert record["results"][0]["dtype"] == "float32"
    out = [(f"metadata: {name}", "metadata", _rewrite(vmfb, text, new))
           for name, new in cases.items()]
    # Both the metadata and the ABI declaration relabelled alike: the load checks agree,
    # the code does not; the call's result check must catch it.
    consistent = {
        "result 0 relabelled int32 in metadata and declaration":
            (result(0, dtype="int32"), ("output0: tensor<8xf32>", "output0: tensor<8xi32>")),
        "result 0 widened float64 in metadata and declaration":
            (result(0, dtype="float64"), ("output0: tensor<8xf32>", "output0: tensor<8xf64>")),
        "result 0 reshaped in metadata and declaration":
            (result(0, shape=[4]), ("output0: tensor<8xf32>", "output0: tensor<4xf32>")),
        "argument 0 relabelled int32 in metadata and declaration":
            (lambda d: d["args"][0].update(dtype="int32"),
             ("input0: tensor<8xf32>", "input0: tensor<8xi32>")),
    }
    for name, (change, (old, new)) in consistent.items():
        data = vmfb.replace(text.encode(), edited(change).ljust(len(text)).encode())
        assert declaration.count(old) == 1
        data = data.replace(declaration.encode(), declaration.replace(old, new).encode())
        out.append((f"metadata: {name}", "metadata+declaration", reseal(data)))
    changed = declaration.replace("%input1: tensor<8xf32>, ", "").ljust(len(declaration))
    out.append(("metadata: declaration drops an argument", "declaration",
                _rewrite(vmfb, declaration, changed)))
    return out


def mutants(vmfb: bytes, seed: int = 17) -> list[tuple[str, str, bytes]]:
    """Every mutant of a sealed artifact ``vmfb``: (label, region, bytes)."""
    rng = random.Random(seed)
    bare = unsealed(vmfb)
    out = byte_mutants(vmfb, "sealed", rng) + byte_mutants(bare, "unsealed", rng)
    out += block_mutants(bare, "unsealed", rng, 4) + block_mutants(vmfb, "sealed", rng, 1)
    out += truncations(vmfb, "sealed") + truncations(bare, "unsealed")
    out += [("sealed + 1 byte", "appended", vmfb + b"\0"),
            ("sealed + junk", "appended", vmfb + b"junk" * 10),
            ("unsealed + 1 byte", "appended", bare + b"\0"),
            ("twice", "appended", vmfb + vmfb)]
    out += metadata_mutants(vmfb) + metadata_mutants(bare)
    return out


# ---- the runner ----------------------------------------------------------------------------

def _child(data: bytes) -> dict:
    from aotc.runtime import errors

    families = tuple(c for c in (getattr(errors, "LoadError", None),
                                 getattr(errors, "CallError", None)) if c is not None)
    try:
        from aotc import runtime

        module = runtime.load(data, device="local-sync")
        outs = module["f"](X, Y, N)
        got = [np.asarray(o) for o in outs]
    except families as e:
        return {"outcome": "error", "type": type(e).__name__, "message": str(e)}
    except BaseException as e:  # noqa: BLE001 - what escapes is the finding
        return {"outcome": "escaped", "type": type(e).__name__, "message": str(e)[:500]}
    right = len(got) == len(EXPECTED) and all(
        g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
        and np.array_equal(g, w) for g, w in zip(got, EXPECTED))
    return {"outcome": "ok" if right else "wrong",
            "message": "" if right else repr([(g.dtype, g.shape, g.tolist()) for g in got])}


def _rejected_before_iree(data: bytes) -> bool:
    """Does ``load`` refuse ``data`` in its pure-Python container check, before IREE (or
    any native code) reads a byte? Such a mutant cannot crash the process, so it runs in
    the runner itself. With a runtime whose load makes no such check (measuring before
    it existed), every mutant forks."""
    from aotc.runtime import errors, module

    verify_container = getattr(module, "verify_container", None)
    if verify_container is None:
        return False
    LoadError = errors.LoadError  # noqa: N806
    try:
        verify_container(data, "mutant")
    except LoadError:
        return True
    return False


def run(cases: list[tuple[str, str, bytes]]) -> list[dict]:
    """Loads and calls each case, in a forked child unless the container check refuses
    it (``_rejected_before_iree``); returns one record per case."""
    from aotc import runtime  # noqa: F401 - imported once, before the forks

    records = []
    for label, region, data in cases:
        if _rejected_before_iree(data):
            record = _child(data)
            record.update(label=label, region=region, forked=False)
            records.append(record)
            continue
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: load, call, report, leave without cleanup
            os.close(read)
            signal.alarm(CHILD_TIMEOUT_S)
            try:
                record = _child(data)
            except BaseException as e:  # noqa: BLE001
                record = {"outcome": "escaped", "type": type(e).__name__, "message": str(e)}
            os.write(write, json.dumps(record).encode())
            os._exit(0)
        os.close(write)
        chunks = []
        while chunk := os.read(read, 65536):
            chunks.append(chunk)
        os.close(read)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            record = {"outcome": "hang" if sig == signal.SIGALRM else "crash",
                      "type": signal.Signals(sig).name, "message": ""}
        elif not chunks:
            record = {"outcome": "crash", "type": f"exit {os.WEXITSTATUS(status)}",
                      "message": ""}
        else:
            record = json.loads(b"".join(chunks))
        record.update(label=label, region=region, forked=True)
        records.append(record)
    return records


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        todo = pickle.load(f)
    with open(sys.argv[2], "w") as f:
        json.dump(run(todo), f)
