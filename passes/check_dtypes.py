"""aotc-check-dtypes: fail early, with the op and source line, when a target cannot
compute in a dtype the program uses (instead of a deep backend error or, worse, a silent
demotion)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import ModulePass, PassError, register


def _element_type_names(types) -> set[str]:
    from aotc._mlir import ir

    names = set()
    for t in types:
        if ir.ShapedType.isinstance(t):
            t = ir.ShapedType(t).element_type
        names.add(str(t))
    return names


@register
@dataclass(frozen=True)
class CheckDtypes(ModulePass):
    """Rejects element types in ``unsupported`` (MLIR spellings such as "f64", "i64")."""

    name = "aotc-check-dtypes"
    unsupported: frozenset[str] = frozenset()
    target: str = "this target"

    @classmethod
    def from_options(cls, options):
        unsupported = frozenset(x for x in options.get("unsupported", "").split(",") if x)
        return cls(unsupported, options.get("target", "this target"))

    def run(self, module) -> None:
        if not self.unsupported:
            return
        problems = []

        def visit(op):
            types = [v.type for v in op.results] + [v.type for v in op.operands]
            bad = _element_type_names(types) & self.unsupported
            if bad:
                problems.append(f"{op.location}: '{op.name}' uses {', '.join(sorted(bad))}")
            return _ADVANCE

        from aotc._mlir import ir

        _ADVANCE = ir.WalkResult.ADVANCE
        module.walk(visit)
        if problems:
            shown = "\n  ".join(problems[:10])
            more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
            raise PassError(
                f"{self.name}: {self.target} cannot compute in "
                f"{', '.join(sorted(self.unsupported))}:\n  {shown}{more}\n"
                f"Fix: convert to a supported dtype with .astype(...) before these ops, or "
                f"compile for a target that supports it."
            )
