"""Executables of a module for several devices (a CPU and a GPU), linked per device.

IREE 3.13 links a module's executables per backend (all CPU dispatches into one ELF), but
linking repoints every reference to a linked executable at the new one, so the GPU
variants that lived in the same executables lose their dispatches and are dropped: a
``cpu,vulkan`` module linked runs on the CPU only. Compiled unlinked it runs on both, at
2-2.3x the compile time and with every dispatch its own ELF (docs/architecture.md has the
figures). These two passes, run between IREE's phases by ``compiler._compile_in_stages``,
let linking work:

- ``aotc-split-executables-per-backend`` (on ``executable-targets`` IR, before linking)
  moves the variants of every backend but the first into executables of their own and
  points the dispatches' entry points at them. Each backend's linking then touches only
  its own executables.
- ``aotc-partial-executables`` (on ``hal`` IR, after linking) lets a device create only
  the executables it has a variant for. IREE creates every executable of a module when
  the module loads and fails on the first one without a variant for the device; a split
  module has such executables on every device (the GPU's on the CPU, the CPU's on the
  GPU), and dispatches pick their variant by the same format queries, so they never use
  the executable left unmade. The module still fails to load, with IREE's status and a
  message naming the formats, on a device that supports none of its formats (IREE's
  device selection refuses such a device first; this keeps the guard where it was).

Invariants: only executables with variants of several backends are split; dispatches run
the same code; running either pass twice changes nothing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import ModulePass, collect_ops, register

_BACKEND = re.compile(r'#hal\.executable\.target<"([^"]+)"')
_MISSING_VARIANT = re.compile(r"HAL device `(\w+)` does not support any variant of executable")
NO_FORMAT = ("HAL device `{device}` does not support any executable format of this module: "
             "[{formats}]")


def _symbol(op) -> str:
    from aotc._mlir import ir

    return ir.StringAttr(op.attributes["sym_name"]).value


def _backend(variant) -> str:
    match = _BACKEND.match(str(variant.attributes["target"]))
    return match.group(1) if match else str(variant.attributes["target"])


def _body_ops(op) -> list:
    return [o.operation for o in op.regions[0].blocks[0].operations]


def _renamed(attr, moved: dict):
    """``attr`` with every symbol reference ``@exe::@variant::...`` of a moved variant
    pointed at its new executable (arrays looked into); None where nothing changes."""
    from aotc._mlir import ir

    if isinstance(attr, ir.ArrayAttr):
        items = [_renamed(a, moved) for a in attr]
        if all(i is None for i in items):
            return None
        return ir.ArrayAttr.get([new or old for new, old in zip(items, attr)])
    if not isinstance(attr, ir.SymbolRefAttr):
        return None
    path = attr.value
    new = moved.get(tuple(path[:2]))
    return ir.SymbolRefAttr.get([new, *path[1:]]) if new else None


@register
@dataclass(frozen=True)
class SplitExecutablesPerBackend(ModulePass):
    name = "aotc-split-executables-per-backend"

    def run(self, module) -> None:
        taken = {_symbol(op) for op in _body_ops(module) if "sym_name" in op.attributes}
        moved: dict[tuple[str, str], str] = {}
        for exe in _body_ops(module):
            if exe.name != "hal.executable":
                continue
            groups: dict[str, list] = {}
            for v in _body_ops(exe):
                if v.name == "hal.executable.variant":
                    groups.setdefault(_backend(v), []).append(v)
            for backend, variants in list(groups.items())[1:]:
                new = _fresh(_symbol(exe) + "_" + re.sub(r"\W", "_", backend), taken)
                moved.update({(_symbol(exe), _symbol(v)): new for v in variants})
                _move_into_new_executable(exe, new, variants)
        if moved:
            _repoint(module, moved)


def _move_into_new_executable(exe, name: str, variants: list) -> None:
    """Moves ``variants`` out of ``exe`` into a new executable ``name`` (the same
    attributes otherwise) at the end of the module."""
    from aotc._mlir import ir

    attributes = {a: exe.attributes[a] for a in list(exe.attributes) if a != "sym_name"}
    attributes["sym_name"] = ir.StringAttr.get(name)
    new = ir.Operation.create("hal.executable", attributes=attributes, regions=1,
                              loc=exe.location,
                              ip=ir.InsertionPoint(exe.parent.regions[0].blocks[0]))
    end = ir.Operation.create("hal.executable_end", loc=exe.location,
                              ip=ir.InsertionPoint(new.regions[0].blocks.append()))
    for v in variants:
        v.move_before(end)


def _repoint(module, moved: dict) -> None:
    """Points every reference to a moved variant at its new executable. The references
    are outside executables (dispatches), whose code is not walked."""
    for top in _body_ops(module):
        if top.name == "hal.executable":
            continue
        for op, _ in collect_ops(top, lambda op: True):
            for name in list(op.attributes):
                new = _renamed(op.attributes[name], moved)
                if new is not None:
                    op.attributes[name] = new


def _fresh(name: str, taken: set) -> str:
    candidate, n = name, 0
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate)
    return candidate


def _format_queries(module) -> dict[str, list[tuple[str, str]]]:
    """Per device global, the (format, global holding the query's answer) of every
    ``hal.executable.format`` query IREE stored at load."""
    from aotc._mlir import ir

    found: dict[str, list[tuple[str, str]]] = {}
    for query, _ in collect_ops(module, lambda op: op.name == "hal.device.query" and
                                str(op.attributes["category"]) == '"hal.executable.format"'):
        device = query.operands[0].owner
        if device.name != "util.global.load":
            continue
        stores = [u.owner for u in query.results[1].uses if u.owner.name == "util.global.store"]
        for store in stores:
            found.setdefault(ir.FlatSymbolRefAttr(device.attributes["global"]).value, []).append(
                (ir.StringAttr(query.attributes["key"]).value,
                 ir.FlatSymbolRefAttr(store.attributes["global"]).value))
    return found


@register
@dataclass(frozen=True)
class PartialExecutables(ModulePass):
    name = "aotc-partial-executables"

    def run(self, module) -> None:
        from aotc._mlir import arith, ir

        checks = collect_ops(module, lambda op: op.name == "util.status.check_ok" and
                             "message" in op.attributes and
                             _MISSING_VARIANT.match(ir.StringAttr(op.attributes["message"]).value))
        if not checks:
            return
        queries = _format_queries(module)
        i1, i32 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(32)
        for check, match in checks:
            formats = queries.get(match.group(1))
            if not formats:
                continue  # left failing: nothing says which formats the device has
            with ir.Location.unknown(), ir.InsertionPoint(check):
                supported = None
                for _, holder in formats:
                    value = ir.Operation.create(
                        "util.global.load", results=[i1],
                        attributes={"global": ir.FlatSymbolRefAttr.get(holder)}).result
                    supported = value if supported is None else arith.ori(supported, value)
                ok = arith.constant(i32, 0)
                check.operands[0] = arith.select(supported, ok, check.operands[0])
            check.attributes["message"] = ir.StringAttr.get(NO_FORMAT.format(
                device=match.group(1), formats=", ".join(f for f, _ in formats)))
