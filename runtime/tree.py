"""Pytrees: nested tuples, lists, dicts and None around array leaves.

The same structure description travels from the tracer (which flattens a function's
arguments and results) into the artifact metadata (as JSON) and back into the runtime
(which rebuilds the results), so it lives here, beside the runtime, in plain Python.
Dict keys are sorted, as in JAX, so ``{"b": x, "a": y}`` and ``{"a": y, "b": x}`` have the
same structure and leaf order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable


@dataclass(frozen=True)
class TreeDef:
    """The shape of a pytree without its leaves. Hashable, so it can key caches."""

    kind: str  # "leaf" | "none" | "tuple" | "list" | "dict"
    children: tuple["TreeDef", ...] = ()
    keys: tuple[Any, ...] = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)

    def to_json(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind}
        if self.children:
            out["children"] = [child.to_json() for child in self.children]
        if self.kind == "dict":
            out["keys"] = list(self.keys)
        return out

    @staticmethod
    def from_json(data: dict) -> "TreeDef":
        children = tuple(TreeDef.from_json(c) for c in data.get("children", ()))
        return TreeDef(data["kind"], children, tuple(data.get("keys", ())))

    def __str__(self) -> str:
        return _describe(self)


LEAF = TreeDef("leaf")


def _flatten_into(obj: Any, leaves: list, is_leaf: Callable[[Any], bool] | None) -> TreeDef:
    if is_leaf is not None and is_leaf(obj):
        leaves.append(obj)
        return LEAF
    if obj is None:
        return TreeDef("none")
    if isinstance(obj, (tuple, list)) and not hasattr(obj, "_fields"):
        children = tuple(_flatten_into(item, leaves, is_leaf) for item in obj)
        return TreeDef("tuple" if isinstance(obj, tuple) else "list", children)
    if isinstance(obj, dict):
        keys = tuple(sorted(obj))
        children = tuple(_flatten_into(obj[k], leaves, is_leaf) for k in keys)
        return TreeDef("dict", children, keys)
    leaves.append(obj)
    return LEAF


def flatten(obj: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    """Returns the leaves of ``obj`` in a fixed order and its structure."""
    leaves: list = []
    treedef = _flatten_into(obj, leaves, is_leaf)
    return leaves, treedef


def unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuilds the pytree ``treedef`` describes, taking leaves in order."""
    it = iter(leaves)
    out = _build(treedef, it)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for tree structure {treedef}")
    return out


_SENTINEL = object()


def _build(treedef: TreeDef, it) -> Any:
    kind = treedef.kind
    if kind == "leaf":
        leaf = next(it, _SENTINEL)
        if leaf is _SENTINEL:
            raise ValueError("too few leaves for tree structure")
        return leaf
    if kind == "none":
        return None
    children = [_build(child, it) for child in treedef.children]
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    return dict(zip(treedef.keys, children))


def _describe(treedef: TreeDef) -> str:
    kind = treedef.kind
    if kind == "leaf":
        return "*"
    if kind == "none":
        return "None"
    inner = [_describe(c) for c in treedef.children]
    if kind == "tuple":
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if kind == "list":
        return "[" + ", ".join(inner) + "]"
    return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(treedef.keys, inner)) + "}"
