"""Signatures described for people: ``f(x: float32[4,3], n=3 static)`` in compile logs
and reprs, and what changed between two call signatures (the cache-miss explanations of
``aotc.config.explain_cache_misses``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np  # noqa: F401  (the examples)

from . import tree_util
from .signature import ArgumentBinder, Aval, CallSignature  # noqa: F401  (ArgumentBinder: the examples)

# ---- Describing signatures: compile logs and cache-miss explanations -------------------

@dataclass(frozen=True)
class _Argument:
    """One argument of a call as the signature sees it."""

    passed: str  # "position" or "keyword"
    static: bool
    value: Any = None  # a static argument's value
    tree: tree_util.PyTreeDef | None = None  # a dynamic argument's structure
    avals: tuple = ()  # ... its leaves
    leaf_names: tuple = ()


def _arguments(signature: CallSignature, arg_name: Callable[[int], str]) -> dict[str, _Argument]:
    """Argument name -> how it was passed, in call order (positions, then keywords)."""
    pos_tree, kw_tree = signature.args_tree.children()
    static_positions = {w: v for w, v in signature.static_args if isinstance(w, int)}
    count = pos_tree.num_children + len(static_positions)
    children = iter(pos_tree.children())
    out: dict[str, _Argument] = {}
    start = 0

    def dynamic(child: tree_util.PyTreeDef, passed: str) -> _Argument:
        nonlocal start
        end = start + child.num_leaves
        arg = _Argument(passed, False, tree=child, avals=signature.avals[start:end],
                        leaf_names=signature.leaf_names[start:end])
        start = end
        return arg

    for i in range(count):
        out[arg_name(i)] = (_Argument("position", True, static_positions[i])
                            if i in static_positions else dynamic(next(children), "position"))
    for key, child in zip(kw_tree.entries(), kw_tree.children()):
        out[str(key)] = dynamic(child, "keyword")
    for where, value in signature.static_args:
        if not isinstance(where, int):
            out[where] = _Argument("keyword", True, value)
    return out


def describe_aval(aval: Aval) -> str:
    """``float32[4,3]``; a Python scalar's weak type is marked: ``weak float64[]``."""
    dims = ",".join("?" if d is None else str(d) for d in aval.shape)
    return f"{'weak ' if aval.weak else ''}{aval.dtype.name}[{dims}]"


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_signature(name: str, signature: CallSignature,
                       arg_name: Callable[[int], str] = lambda i: f"arg{i}",
                       max_leaves: int = 12) -> str:
    """A call signature as one line: ``f(x: float32[4,3], n=3 static)``.

    >>> binder = ArgumentBinder(lambda x, n: x, static_argnums=1)
    >>> sig, _ = binder.bind((np.zeros((4, 3), np.float32), 3), {})
    >>> describe_signature("f", sig, binder.arg_name)
    'f(x: float32[4,3], n=3 static)'
    """
    parts: list[str] = []
    shown = 0
    for arg_key, arg in _arguments(signature, arg_name).items():
        if arg.static:
            parts.append(f"{arg_key}={_short(arg.value)} static")
        elif not arg.avals:
            parts.append(f"{arg_key}: {tree_util.describe(arg.tree)}")
        for leaf, aval in zip(arg.leaf_names, arg.avals):
            if shown == max_leaves:
                parts.append(f"... ({len(signature.avals) - shown} more arrays)")
            if shown < max_leaves:
                parts.append(f"{leaf}: {describe_aval(aval)}")
            shown += 1
    return f"{name}({', '.join(parts)})"


def _tree_difference(new: tree_util.PyTreeDef, old: tree_util.PyTreeDef,
                     path: str) -> str | None:
    """Where two structures first differ: ``xs[1]: structure * -> (*, *)``."""
    if new == old:
        return None
    changed = f"{path}: structure {tree_util.describe(old)} -> {tree_util.describe(new)}"
    if (new.kind != old.kind or new.type != old.type or new.num_children != old.num_children
            or new.entries() != old.entries()):
        return changed
    for key, a, b in zip(tree_util.child_keys(new), new.children(), old.children()):
        found = _tree_difference(a, b, f"{path}{key}")
        if found:
            return found
    return changed


def _aval_difference(leaf: str, new: Aval, old: Aval) -> str | None:
    if new.key == old.key:
        return None
    if new.weak != old.weak:
        def kind(a: Aval) -> str:
            return "a Python scalar" if a.weak else "an array"
        return f"{leaf}: {describe_aval(old)} ({kind(old)}) -> {describe_aval(new)} ({kind(new)})"
    what = [w for w, changed in (("shape", new.shape != old.shape),
                                 ("dtype", new.dtype != old.dtype)) if changed]
    return f"{leaf}: {' and '.join(what)} {describe_aval(old)} -> {describe_aval(new)}"


def _same_static(a: Any, b: Any) -> bool:
    """Do two static values key the same cache entry (equal, with equal hashes)?"""
    try:
        return bool(a == b) and hash(a) == hash(b)
    except Exception:  # noqa: BLE001 - a user type's __eq__ may raise or return arrays
        return False


def describe_difference(new: CallSignature, old: CallSignature,
                        arg_name: Callable[[int], str] = lambda i: f"arg{i}") -> list[str]:
    """What differs between two signatures of one function, one line per argument that
    changed (empty when they are the same key): shape, dtype, weak type, static value,
    structure, how it was passed, or whether it was passed at all.

    >>> binder = ArgumentBinder(lambda x, n: x, static_argnums=1)
    >>> a, _ = binder.bind((np.zeros(4, np.float32), 3), {})
    >>> b, _ = binder.bind((np.zeros(8, np.float32), 4), {})
    >>> describe_difference(b, a, binder.arg_name)
    ['x: shape float32[4] -> float32[8]', 'n: static value 3 -> 4']
    """
    before, now = _arguments(old, arg_name), _arguments(new, arg_name)
    lines: list[str] = []
    if new.x64 != old.x64:
        lines.append(f"aotc.config.x64: {old.x64} -> {new.x64}")
    for arg_key, arg in now.items():
        was = before.get(arg_key)
        if was is None:
            shown = (f"{_short(arg.value)}, static" if arg.static
                     else ", ".join(describe_aval(a) for a in arg.avals)
                     or tree_util.describe(arg.tree))
            lines.append(f"{arg_key}: passed now ({shown}), not before")
        elif arg.passed != was.passed:
            lines.append(f"{arg_key}: passed by {arg.passed} now, by {was.passed} before")
        elif arg.static:
            if not _same_static(arg.value, was.value):
                old_text, new_text = _short(was.value), _short(arg.value)
                same = " (equal reprs, unequal values)" if old_text == new_text else ""
                lines.append(f"{arg_key}: static value {old_text} -> {new_text}{same}")
        elif arg.tree != was.tree:
            lines.append(_tree_difference(arg.tree, was.tree, arg_key))
        else:
            lines.extend(d for leaf, a, b in zip(arg.leaf_names, arg.avals, was.avals)
                         if (d := _aval_difference(leaf, a, b)))
    lines.extend(f"{arg_key}: passed before, not now" for arg_key in before if arg_key not in now)
    return lines
