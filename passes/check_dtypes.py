"""aotc-check-dtypes: fail early, naming the op and its source line, when a target cannot
compute a dtype (or an op in a dtype) the program uses, instead of a deep backend error
or, worse, a silent demotion."""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import opset
from .base import ModulePass, PassError, register


def _element_types(types) -> set[str]:
    from aotc._mlir import ir

    names = set()
    for t in types:
        if isinstance(t, ir.ShapedType):
            t = t.element_type
        names.add(str(t))
        if isinstance(t, ir.ComplexType):
            names.add(str(t.element_type))  # complex<f64> computes in f64
    return names


def _element_name(t) -> str:
    from aotc._mlir import ir

    return str(t.element_type if isinstance(t, ir.ShapedType) else t)


def _csv(text: str) -> frozenset[str]:
    return frozenset(x for x in text.split(",") if x)


@register
@dataclass(frozen=True)
class CheckDtypes(ModulePass):
    """Rejects element types in ``unsupported`` (MLIR spellings: "f64", "i64") anywhere,
    and ops in ``unsupported_ops`` ("math.sin:f64") on the given element type."""

    name = "aotc-check-dtypes"
    unsupported: frozenset[str] = frozenset()
    unsupported_ops: frozenset[str] = frozenset()
    target: str = "this target"

    @classmethod
    def from_options(cls, options):
        return cls(_csv(options.get("unsupported", "")), _csv(options.get("unsupported-ops", "")),
                   options.get("target", "this target"))

    def run(self, module) -> None:
        if not (self.unsupported or self.unsupported_ops):
            return
        problems = [p for fn in _functions(module) for p in self._function_problems(fn)]
        if problems:
            shown = "\n  ".join(problems[:10])
            more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
            raise PassError(
                f"{self.name}: target '{self.target}' cannot compute these:\n  {shown}{more}\n"
                f"Fix: convert the operands to a dtype the target supports with "
                f".astype(...) (for example float64 -> float32), or choose another target."
            )

    def _function_problems(self, fn) -> list[str]:
        """One line for the function's arguments and one per line of the user's code that
        computes in a type the target lacks (or calls an op it lacks), not one per MLIR op."""
        from aotc._mlir import ir

        name = ir.StringAttr(fn.attributes["sym_name"]).value
        problems = []
        arguments = [f"{i} is {_element_name(a.type)}"
                     for i, a in enumerate(fn.regions[0].blocks[0].arguments)
                     if _element_types([a.type]) & self.unsupported]
        if arguments:
            problems.append(f"{name}: argument {', argument '.join(arguments)}")
        types_by_line: dict[str, set[str]] = {}
        ops_by_line: dict[str, set[str]] = {}

        def visit(op):
            if op.name in _ECHOES:
                return ir.WalkResult.ADVANCE
            types = _element_types([v.type for v in op.results] + [v.type for v in op.operands])
            line = _source_line(op.location)
            if types & self.unsupported:
                types_by_line.setdefault(line, set()).update(types & self.unsupported)
            for t in types:
                if f"{op.name}:{t}" in self.unsupported_ops:
                    ops_by_line.setdefault(line, set()).add(f"{op.name} on {t}")
            return ir.WalkResult.ADVANCE

        fn.walk(visit)
        for table in (types_by_line, ops_by_line):
            if len(table) > 1:
                table.pop(_UNKNOWN, None)  # constants the cleanup moved: their users say it
        for line in sorted(types_by_line.keys() | ops_by_line.keys(), key=_in_file_order):
            what = sorted(ops_by_line.get(line, ()))
            if line in types_by_line:
                what.insert(0, f"computes in {', '.join(sorted(types_by_line[line]))}")
            problems.append(f"{line} (in {name}): {'; '.join(what)}")
        return problems


# Ops that only pass on values other ops made (or functions, reported by their ops):
# reporting them would repeat those ops' lines.
_ECHOES = opset.of_group("function", "terminator")
_UNKNOWN = "unknown location"


def _functions(module):
    from aotc._mlir import ir

    op = module.operation if isinstance(module, ir.Module) else module
    return [o for o in op.regions[0].blocks[0].operations if o.operation.name == "func.func"]


def _in_file_order(line: str):
    file, _, number = line.rpartition(":")
    return (file, int(number)) if number.isdigit() else (line, 0)


def _source_line(location) -> str:
    """``file:line`` of the first file location in ``location``, or "unknown location"."""
    found = re.search(r'"([^"]+)":(\d+)', str(location))
    return f"{found.group(1)}:{found.group(2)}" if found else _UNKNOWN
