"""aotc-check-dtypes: fail early, naming the op and its source line, when a target cannot
compute a dtype (or an op in a dtype) the program uses, instead of a deep backend error
or, worse, a silent demotion."""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, PassError, register


def _element_types(types) -> set[str]:
    from aotc._mlir import ir

    names = set()
    for t in types:
        if isinstance(t, ir.ShapedType):
            t = t.element_type
        names.add(str(t))
    return names


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

    def _problem(self, op) -> str | None:
        types = _element_types([v.type for v in op.results] + [v.type for v in op.operands])
        bad = sorted(types & self.unsupported)
        bad += sorted(t for t in types if f"{op.name}:{t}" in self.unsupported_ops)
        if not bad:
            return None
        return f"{op.location}: {op.name} on {', '.join(bad)}"

    def run(self, module) -> None:
        if not (self.unsupported or self.unsupported_ops):
            return
        from aotc._mlir import ir

        problems = []

        def visit(op):
            problem = self._problem(op)
            if problem:
                problems.append(problem)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        if problems:
            shown = "\n  ".join(problems[:10])
            more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
            raise PassError(
                f"{self.name}: target '{self.target}' cannot compute these ops:\n  {shown}{more}\n"
                f"Fix: convert the operands to a dtype the target supports with "
                f".astype(...) (for example float64 -> float32), or choose another target."
            )
