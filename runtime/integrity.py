"""Artifact integrity: what ``load`` checks before IREE reads a ``.vmfb``, and the SHA-256
seal aotc writes into every artifact it compiles.

The container, as IREE 3.13 writes it (measured on every artifact of a 4,300-entry disk
cache): a zip archive, members stored uncompressed and 64-byte aligned, zip64 records.
The first member, ``module.fb`` at offset 0, holds the module's FlatBuffer (bytecode,
reflection metadata, the table of rodata segments); the others hold the embedded
executables (``*_embedded_elf_x86_64.so``, SPIR-V, PTX) and large constants. IREE itself
reads no zip structure but the first local header: it skips it, reads the FlatBuffer's
4-byte length prefix, and finds the rodata at offsets the FlatBuffer gives. Nothing in
IREE checks the members' CRC-32s, so a damaged executable used to reach the CPU (SIGSEGV,
SIGILL) and damaged bytecode could compute wrong values.

``verify_container`` therefore checks, before IREE sees the bytes: the end-of-directory
records, every central-directory entry against its local header, that every member's
bytes have its CRC-32, that members, directory and padding tile the file (no byte IREE
may read is outside a checked member, except up to 63 bytes of zero padding), and that
the FlatBuffer IREE will read is the ``module.fb`` member (IREE 3.13's length prefix is
the member's size, so its FlatBuffer ends 4 bytes past the member: those must be zero).

The seal: aotc's compiler stores ``aotc-sha256:<64 hex digits>`` as the zip comment, the
SHA-256 of every byte before the comment (the end record's comment length included), so
code, metadata and container are covered and the file stays a zip every tool reads
(``unzip -l`` shows the seal). IREE writes no comment, so any other comment is a damaged
seal.
``artifact_sha256`` is that digest, and for an artifact without a seal (one compiled by
``iree-compile`` directly, or by an older aotc) the SHA-256 of the whole file, which is
what ``sha256sum`` prints: the value ``load(..., expected_sha256=...)`` pins either way.
A seal that does not match the contents is a ``LoadError``.

A seal detects damage, not malice: whoever can rewrite the file can rewrite the seal. A
``.vmfb`` is native code, so loading one means trusting its source; a device that must
run only a given build pins its SHA-256 (``expected_sha256``).
"""

from __future__ import annotations

import hashlib
import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any

from . import dtypes
from .dtypes import DTYPES
from .errors import LoadError, ResultError

SEAL_PREFIX = b"aotc-sha256:"
SEAL_BYTES = len(SEAL_PREFIX) + 64
FLATBUFFER_MEMBER = "module.fb"
# IREE aligns every member to this; a gap between members is at most this much padding.
SEGMENT_ALIGNMENT = 64

_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # local file header, 30 bytes
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")  # central directory entry, 46 bytes
_END = struct.Struct("<4sHHHHIIH")  # end of central directory, 22 bytes
_END64 = struct.Struct("<4sQHHIIQQQQ")  # zip64 end of central directory, 56 bytes
_LOCATOR = struct.Struct("<4sIQI")  # zip64 end-of-directory locator, 20 bytes
_FIX = "Export it again (aotc.export or aotc compile) or copy it again from its source"


@dataclass(frozen=True)
class Member:
    """One member of the archive: its name, where its local header and its bytes are,
    and the CRC-32 its directory entry records (checked)."""

    name: str
    header: int
    start: int
    size: int
    crc: int


@dataclass(frozen=True)
class Container:
    """What ``verify_container`` found: the members in file order, the central
    directory's offset, the SHA-256 (``artifact_sha256``) and whether a seal records it."""

    members: tuple[Member, ...]
    directory: int
    sha256: str
    sealed: bool


def _damaged(where: str, what: str) -> LoadError:
    return LoadError(f"{where}: the .vmfb is damaged: {what}. {_FIX}")


def _view(data: Any) -> memoryview:
    view = memoryview(data)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _end_record(view: memoryview, where: str) -> tuple[int, int]:
    """Offset and comment length of the end-of-central-directory record, which must end
    the file exactly (comment included): anything after it is truncation or junk."""
    n = len(view)
    if n < _END.size:
        raise _damaged(where, f"expected at least {_END.size} bytes, got {n} (truncated?)")
    low = max(0, n - _END.size - 0xFFFF)
    tail = bytes(view[low:])
    pos = len(tail)
    while True:
        pos = tail.rfind(b"PK\x05\x06", 0, pos)
        if pos < 0:
            raise _damaged(where, "expected a zip end-of-directory record at the end of the "
                                  "file, found none (truncated, or bytes appended?)")
        if pos + _END.size <= len(tail):
            comment = struct.unpack_from("<H", tail, pos + 20)[0]
            if pos + _END.size + comment == len(tail):
                return low + pos, comment


def _zip64_extra(extra: bytes, wanted: list[str], where: str, what: str) -> dict[str, int]:
    """The zip64 values (``wanted``, in the zip's order) from an extra field."""
    i = 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, i)
        if i + 4 + size > len(extra):
            break
        if tag == 0x0001:
            if size < 8 * len(wanted):
                raise _damaged(where, f"{what}: expected {8 * len(wanted)} bytes of zip64 "
                                      f"sizes, got {size}")
            return dict(zip(wanted, struct.unpack_from(f"<{len(wanted)}Q", extra, i + 4)))
        i += 4 + size
    if i != len(extra):
        raise _damaged(where, f"{what}: expected an extra field of whole records, got one "
                              f"that runs past its end")
    if wanted:
        raise _damaged(where, f"{what}: expected a zip64 extra field, found none")
    return {}


def _directory(view: memoryview, where: str, end: int) -> tuple[int, int, int, int]:
    """(entries, directory offset, directory size, where the end records begin)."""
    sig, disk, cd_disk, on_disk, entries, cd_size, cd_offset, _ = _END.unpack_from(view, end)
    records = end
    if end >= _LOCATOR.size and bytes(view[end - _LOCATOR.size:end - _LOCATOR.size + 4]) == \
            b"PK\x06\x07":
        _, loc_disk, end64, disks = _LOCATOR.unpack_from(view, end - _LOCATOR.size)
        if loc_disk != 0 or disks != 1 or end64 + _END64.size > end - _LOCATOR.size:
            raise _damaged(where, f"expected a zip64 locator for one disk pointing before "
                                  f"itself, got disk {loc_disk} of {disks}, record at {end64}")
        (sig, size, _, _, disk, cd_disk, on_disk, entries, cd_size,
         cd_offset) = _END64.unpack_from(view, end64)
        if sig != b"PK\x06\x06" or end64 + 12 + size != end - _LOCATOR.size:
            raise _damaged(where, f"expected the zip64 end record at offset {end64} (signature "
                                  f"PK\\6\\6, ending at the locator), got {bytes(sig)!r} "
                                  f"of {size + 12} bytes")
        records = end64
    if disk != 0 or cd_disk != 0 or on_disk != entries:
        raise _damaged(where, f"expected a one-disk archive, got disk {disk}, directory on "
                              f"disk {cd_disk}, {on_disk} of {entries} entries on it")
    if cd_offset + cd_size != records:
        raise _damaged(where, f"expected the central directory to end at offset {records} "
                              f"(the end records), got offset {cd_offset} + size {cd_size}")
    if entries == 0:
        raise _damaged(where, "expected at least the module.fb member, got an empty archive")
    return entries, cd_offset, cd_size, records


def _entries(view: memoryview, where: str, count: int, offset: int,
             limit: int) -> list[tuple[bytes, int, int, int]]:
    """(name, CRC-32, size, local header offset) of every central-directory entry."""
    out = []
    pos = offset
    for k in range(count):
        if pos + _CENTRAL.size > limit:
            raise _damaged(where, f"directory entry {k}: expected it inside the directory, "
                                  f"got one running past its end")
        (sig, _, _, flags, method, _, _, crc, csize, usize, nlen, elen, clen, disk, _, _,
         header) = _CENTRAL.unpack_from(view, pos)
        what = f"directory entry {k} (offset {pos})"
        if sig != b"PK\x01\x02":
            raise _damaged(where, f"{what}: expected signature PK\\1\\2, got {bytes(sig)!r}")
        body = pos + _CENTRAL.size
        if body + nlen + elen + clen > limit:
            raise _damaged(where, f"{what}: expected its name and extra field inside the "
                                  f"directory, got them running past its end")
        name = bytes(view[body:body + nlen])
        extra = bytes(view[body + nlen:body + nlen + elen])
        wanted = [f for f, v in (("usize", usize), ("csize", csize), ("header", header))
                  if v == 0xFFFFFFFF] + (["disk"] if disk == 0xFFFF else [])
        big = _zip64_extra(extra, wanted, where, what)
        usize, csize = big.get("usize", usize), big.get("csize", csize)
        header = big.get("header", header)
        if method != 0 or flags & 0x9 or csize != usize:
            raise _damaged(where, f"{what} ({name!r}): expected a stored member (method 0, no "
                                  f"encryption or data descriptor, sizes equal), got method "
                                  f"{method}, flags {flags:#x}, sizes {csize}/{usize}")
        out.append((name, crc, usize, header))
        pos = body + nlen + elen + clen
    if pos != limit:
        raise _damaged(where, f"expected the directory's {count} entries to fill it up to "
                              f"offset {limit}, they end at {pos}")
    return out


def _member(view: memoryview, where: str, name: bytes, crc: int, size: int,
            header: int, limit: int) -> Member:
    what = f"member {name.decode(errors='replace')!r}"
    if header + _LOCAL.size > limit:
        raise _damaged(where, f"{what}: expected its header before the directory, got "
                              f"offset {header}")
    sig, _, flags, method, _, _, lcrc, lcsize, lusize, nlen, elen = _LOCAL.unpack_from(
        view, header)
    start = header + _LOCAL.size + nlen + elen
    if sig != b"PK\x03\x04" or start > limit:
        raise _damaged(where, f"{what}: expected its local header (PK\\3\\4) at offset "
                              f"{header}, got {bytes(sig)!r}")
    local_name = bytes(view[header + _LOCAL.size:header + _LOCAL.size + nlen])
    extra = bytes(view[header + _LOCAL.size + nlen:start])
    wanted = [f for f, v in (("usize", lusize), ("csize", lcsize)) if v == 0xFFFFFFFF]
    big = _zip64_extra(extra, wanted, where, what)
    lusize = big.get("usize", lusize)
    if (local_name != name or method != 0 or flags & 0x9 or lcrc != crc
            or lusize != size):
        raise _damaged(where, f"{what}: expected its local header to agree with the "
                              f"directory: name {name!r}, CRC-32 {crc:08x}, {size} bytes, "
                              f"stored; got {local_name!r}, {lcrc:08x}, {lusize} bytes, "
                              f"method {method}")
    if start + size > limit:
        raise _damaged(where, f"{what}: expected {size} bytes from offset {start}, the "
                              f"members end at offset {limit} (truncated?)")
    actual = zlib.crc32(view[start:start + size])
    if actual != crc:
        raise _damaged(where, f"{what} (bytes {start}..{start + size}): expected CRC-32 "
                              f"{crc:08x}, got {actual:08x}: its bytes were changed")
    return Member(name.decode(errors="replace"), header, start, size, crc)


def _check_layout(view: memoryview, where: str, members: list[Member], directory: int) -> None:
    """The members tile the bytes before the directory, with at most alignment padding of
    zeros between them, and the FlatBuffer IREE reads is the first member's bytes."""
    first = members[0]
    if first.header != 0 or first.name != FLATBUFFER_MEMBER:
        raise _damaged(where, f"expected member {FLATBUFFER_MEMBER!r} at offset 0 (where IREE "
                              f"reads the module), got {first.name!r} at offset {first.header}")
    if first.size < 4:
        raise _damaged(where, f"expected a FlatBuffer in {FLATBUFFER_MEMBER!r}, got "
                              f"{first.size} bytes")
    prefix = struct.unpack_from("<I", view, first.start)[0]
    # IREE reads prefix bytes after the 4-byte prefix; IREE 3.13 records the member's size
    # there, so up to 4 bytes past the member are the FlatBuffer's, which it writes as zeros.
    spill = first.start + 4 + prefix - (first.start + first.size)
    if prefix > first.size or (spill > 0 and any(view[first.start + first.size:][:spill])):
        raise _damaged(where, f"{FLATBUFFER_MEMBER}: expected a FlatBuffer length prefix of "
                              f"at most the member's {first.size} bytes, followed by zero "
                              f"padding, got {prefix}")
    ends = [(first.header, first.start + first.size + max(spill, 0))]
    ends += [(m.header, m.start + m.size) for m in members[1:]]
    ends.append((directory, directory))
    pos = 0
    for (start, end), member in zip(ends, [*members, None]):
        gap = start - pos
        label = member.name if member is not None else "the central directory"
        if gap < 0 or gap >= SEGMENT_ALIGNMENT or any(view[pos:start]):
            raise _damaged(where, f"expected {label} to start at most "
                                  f"{SEGMENT_ALIGNMENT - 1} zero bytes after offset {pos}, "
                                  f"got offset {start}" + (
                                      "" if gap < 0 else f" ({gap} bytes between)"))
        pos = end


def verify_container(data: Any, where: str) -> Container:
    """Checks that ``data`` is an intact ``.vmfb`` archive (module docstring) and returns
    what it holds; raises ``LoadError`` naming the damage. Reads the bytes once for the
    CRC-32s and once for the SHA-256 (about 1 GB/s each)."""
    view = _view(data)
    if bytes(view[:4]) != b"PK\x03\x04":
        raise _damaged(where, f"expected a .vmfb archive (a zip, starting with PK\\3\\4, as "
                              f"iree-compile writes it), got bytes starting with "
                              f"{bytes(view[:8])!r}")
    end, comment_length = _end_record(view, where)
    count, cd_offset, cd_size, _ = _directory(view, where, end)
    entries = _entries(view, where, count, cd_offset, cd_offset + cd_size)
    members = sorted((_member(view, where, *entry, cd_offset) for entry in entries),
                     key=lambda m: m.header)
    _check_layout(view, where, members, cd_offset)
    body = len(view) - comment_length
    digest = hashlib.sha256(view[:body]).hexdigest()
    comment = bytes(view[body:])
    sealed = bool(comment)
    if sealed:
        # IREE writes no comment, aotc only its seal: anything else is a damaged seal.
        recorded = comment[len(SEAL_PREFIX):].decode("ascii", errors="replace")
        if not comment.startswith(SEAL_PREFIX) or len(comment) != SEAL_BYTES \
                or not _is_hex(recorded):
            raise _damaged(where, f"expected no zip comment or aotc's seal ('aotc-sha256:' "
                                  f"and 64 hex digits), got {comment[:SEAL_BYTES + 8]!r}")
        if recorded != digest:
            raise _damaged(where, f"expected the SHA-256 its seal records, {recorded}, got "
                                  f"{digest} for its contents: bytes outside the checked "
                                  f"members (headers, directory, padding) were changed")
    return Container(tuple(members), cd_offset, digest, sealed)


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{text if len(text) <= 80 else text[:77] + '...'} ({type(value).__name__})"


def _is_hex(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def check_expected_sha256(container: Container, expected: Any, where: str,
                          argument: str = "load: expected_sha256") -> None:
    """``load(..., expected_sha256=...)``: the artifact must be the pinned one."""
    if not isinstance(expected, str) or not _is_hex(expected.lower()):
        error = TypeError if not isinstance(expected, str) else ValueError
        raise error(
            f"{argument}: expected the artifact's SHA-256 as a str of 64 hex "
            f"digits, got {_shown(expected)}. Pass the value Module.sha256, Artifact.sha256 "
            f"or `aotc inspect --verify` prints")
    if expected.lower() != container.sha256:
        raise LoadError(
            f"{where}: expected the artifact with SHA-256 {expected.lower()}, got one with "
            f"SHA-256 {container.sha256}: this is not the pinned build. Deploy the pinned "
            f"artifact, or pin this one (aotc inspect --verify prints its SHA-256)")


def seal(vmfb: bytes) -> bytes:
    """``vmfb`` with its SHA-256 recorded as the zip comment (module docstring); an
    existing comment (a seal included) is replaced."""
    view = _view(vmfb)
    end, _ = _end_record(view, "seal")
    body = bytes(view[:end + _END.size - 2]) + struct.pack("<H", SEAL_BYTES)
    return body + SEAL_PREFIX + hashlib.sha256(body).hexdigest().encode()


def artifact_sha256(vmfb: Any) -> str:
    """The SHA-256 that identifies an artifact: its seal's digest, or, unsealed, the
    whole file's. Checks the container (``LoadError`` when damaged)."""
    return verify_container(vmfb, "artifact").sha256


# ---- the functions' ABI against their metadata ---------------------------------------------

# IREE's Python binding shows a function's calling convention in its repr:
# "<VmFunction f(0rr_rr), ...>": version 0, one letter per argument, "_", one per result
# ("r": a reference, a buffer view here; "v": none).
_CCONV = re.compile(r"<VmFunction (?P<name>.*?)\(0(?P<args>[^_()]*)_(?P<results>[^_()]*)\)")


def calling_convention(vm_function: Any) -> tuple[str, str] | None:
    """(argument letters, result letters) of a VM function, None if IREE does not say."""
    match = _CCONV.match(repr(vm_function))
    if match is None or match.group("name") != vm_function.name:
        return None
    return tuple("" if s == "v" else s for s in match.group("args", "results"))


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets of any kind."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    tail = text[start:]
    return [p.strip() for p in [*parts, tail] if p.strip()]


_DECLARATION = re.compile(r"^(?:\w+ )*func @\S+?\((?P<args>.*)\) -> \((?P<results>.*)\)$")
# "tensor<4x?xf32>", "tensor<f32>", "tensor<2xcomplex<f32>>": dims, each followed by "x".
_TENSOR = re.compile(r"tensor<(?P<dims>(?:(?:\d+|\?)x)*)(?P<element>[^x?\d].*)>$")


def declared_types(declaration: str) -> tuple[list[str], list[str]] | None:
    """The argument and result types of an ``iree.abi.declaration``
    (``sync func @f(%input0: tensor<8xf32>) -> (%output0: tensor<f32>)``), None when it
    has another form."""
    match = _DECLARATION.match(declaration.strip())
    if match is None:
        return None

    def types(text: str) -> list[str]:
        # "%input0: tensor<8xf32> {iree.abi.output = 0 : index}" -> "tensor<8xf32>"
        return [p.split(":", 1)[-1].split(" {", 1)[0].strip() for p in _split_top(text)]

    return types(match.group("args")), types(match.group("results"))


def _type_fits(declared: str, spec: Any) -> bool:
    """Does a declared ``tensor<...>`` type agree with a metadata ``TensorSpec``?"""
    match = _TENSOR.match(declared)
    if match is None:
        return False
    dims, element = match.group("dims").split("x")[:-1], match.group("element")
    if element != DTYPES[spec.dtype].mlir or len(dims) != len(spec.shape):
        return False
    return all(d == "?" if not isinstance(s, int) else d == str(s)
               for d, s in zip(dims, spec.shape))


def check_abi(where: str, name: str, vm_function: Any, meta: Any) -> None:
    """The function the metadata describes is this one, taking and returning what the
    metadata says: counts from the calling convention IREE runs it with, types and
    shapes from its ABI declaration. ``LoadError`` otherwise."""
    fix = ("the metadata does not describe the compiled code (the artifact was edited or "
           "damaged). Export it again (aotc.export or aotc compile)")
    if meta.name != name:
        raise LoadError(f"{where}: function {name}: expected metadata for function {name!r}, "
                        f"got metadata naming {meta.name!r}: {fix}")
    cconv = calling_convention(vm_function)
    if cconv is not None:
        for letters, specs, what in ((cconv[0], meta.args, "arguments"),
                                     (cconv[1], meta.results, "results")):
            if set(letters) - {"r"} or len(letters) != len(specs):
                raise LoadError(
                    f"{where}: function {name}: expected the {len(specs)} tensor {what} "
                    f"its metadata lists, got {len(letters)} in the compiled function "
                    f"(calling convention {'_'.join(cconv)!r}, 'r' per tensor): {fix}")
    declaration = vm_function.reflection.get("iree.abi.declaration")
    declared = declared_types(declaration) if declaration else None
    if declared is None:
        return
    for types, specs, what in ((declared[0], meta.args, "argument"),
                               (declared[1], meta.results, "result")):
        if len(types) != len(specs):
            raise LoadError(f"{where}: function {name}: expected the {len(specs)} {what}s "
                            f"its metadata lists, got {len(types)} in its ABI declaration: "
                            f"{fix}")
        for i, (declared_type, spec) in enumerate(zip(types, specs)):
            if not _type_fits(declared_type, spec):
                raise LoadError(
                    f"{where}: function {name}: {what} {i} ({spec.name}): expected the "
                    f"metadata to agree with the ABI declaration, {declared_type}, got "
                    f"{str(spec).split(': ', 1)[1]}: {fix}")


# ---- results against the metadata, at each call --------------------------------------------

def result_checks(meta: Any) -> tuple[tuple[int, ...], tuple[list | None, ...], tuple]:
    """Per result: the element type it must come back with, its shape as the list
    ``HalBufferView.shape`` gives (None for a dynamic shape: ``check_result`` decides),
    and as the tuple its ``Array`` is given. The call path compares the first two per
    result (measured: ~0.15 us a result)."""
    types = tuple(DTYPES[r.dtype].element_type for r in meta.results)
    shapes = tuple(list(r.shape) if all(isinstance(d, int) for d in r.shape) else None
                   for r in meta.results)
    return types, shapes, tuple(s if s is None else tuple(s) for s in shapes)


def check_result(meta: Any, k: int, bv: Any, led: Any, unclaimed: int) -> None:
    """Result ``k`` failed the quick comparison with the metadata (exact element type,
    static shape): accepts what still agrees (a signed or unsigned integer type of the
    width; a dynamic shape's rank and static sizes), else raises ``ResultError``, first
    taking the ``unclaimed`` ledger bytes of the results not yet returned back."""
    spec = meta.results[k]
    entry = DTYPES[spec.dtype]
    element_type = int(bv.element_type)
    shape = list(bv.shape)
    try:
        got = dtypes.result_dtype(element_type)
    except TypeError:
        got = None
    fits_type = element_type == entry.element_type or (
        got is not None and entry.kind in ("int", "uint") and got.kind in "iu"
        and got.itemsize == entry.numpy.itemsize)
    fits_shape = len(shape) == len(spec.shape) and all(
        not isinstance(d, int) or d == n for d, n in zip(spec.shape, shape))
    if fits_type and fits_shape:
        return
    led.in_use -= unclaimed
    name = got if got is not None else dtypes.element_type_name(element_type)
    raise ResultError(
        f"{meta.name}(): result {k} ({spec.name}): expected {str(spec).split(': ', 1)[1]}, "
        f"as the function's metadata says, got {name}[{','.join(map(str, shape))}] from its "
        f"compiled code: the metadata does not describe the code (the artifact was edited "
        f"or damaged). Export it again (aotc.export or aotc compile)")
