"""Pytrees in the runtime: the structure of a function's arguments and results as the
artifact metadata records it, and the plain-Python flattening and rebuilding the runtime
needs.

The compiler flattens with ``aotc.tree_util`` (optree) and records each structure here,
as a ``TreeDef`` written into the artifact as JSON. The runtime reads it back and
rebuilds results with neither the compiler nor optree installed (a device may have only
numpy and iree-base-runtime), so this module is plain Python. Node kinds:

    leaf, none, tuple, list, dict         every artifact (dict keys sorted, as in JAX)
    ordereddict, defaultdict, deque       their keys in order; the default factory; maxlen
    namedtuple, structseq, dataclass,     a type recorded by its importable name,
    custom                                ``module:QualName``, and its static data

How a recorded type comes back (the rule): the runtime imports the type's module if it
is not imported yet and looks the name up, once per structure, at its first use. A
NamedTuple is rebuilt as ``cls(*children)`` (if its fields are still the recorded
ones), a class registered with ``aotc.tree_util.register_dataclass`` as
``cls(**data_fields, **meta_fields)``, a class registered with ``register_pytree_node``
(or its variants) through its unflatten function, which the runtime finds in
``aotc.tree_util``'s registry when the defining module has registered it in this
process. Static data is recorded when it is JSON-representable (None, bools, numbers,
strings, and tuples, lists and string-keyed dicts of them). Where the type cannot be
found (not importable, defined inside a function, changed, not registered here, static
data not recorded), the node comes back plain: a NamedTuple, structseq or custom node
as a tuple of its children, a dataclass as a dict of its data fields, a defaultdict as
a dict.

Arguments are matched against the recorded structure (``leaves_like``): a node accepts
an object of its type, or its plain form (a tuple for a NamedTuple or custom node, a
dict of data fields for a dataclass), so a device without the Python types can still
call the function.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib
import json
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable

# Kinds whose children are keyed (``keys``): dict-like, and types with named fields.
_DICT_KINDS = ("dict", "ordereddict", "defaultdict")
_DICT_NAMES = {"ordereddict": "OrderedDict", "defaultdict": "defaultdict"}


@dataclass(frozen=True)
class TreeDef:
    """The shape of a pytree without its leaves. Hashable, so it can key caches."""

    kind: str  # see the module docstring
    children: tuple["TreeDef", ...] = ()
    # Dict keys (sorted; an OrderedDict's in order), NamedTuple fields, dataclass data
    # fields.
    keys: tuple[Any, ...] = ()
    # "module:QualName" of a namedtuple, structseq, dataclass or custom node, or of a
    # defaultdict's default factory ("" for None).
    node_type: str = ""
    # The node's static data as JSON text (``encode``): a dataclass's meta fields, a
    # custom node's aux data, a deque's maxlen. None: not JSON-representable.
    aux: str | None = None

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)

    def to_json(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind}
        if self.children:
            out["children"] = [child.to_json() for child in self.children]
        if self.kind in _DICT_KINDS or self.keys:
            out["keys"] = [encode(k) for k in self.keys]
        if self.node_type:
            out["type"] = self.node_type
        if self.aux is not None:
            out["aux"] = json.loads(self.aux)
        return out

    @staticmethod
    def from_json(data: dict) -> "TreeDef":
        children = tuple(TreeDef.from_json(c) for c in data.get("children", ()))
        keys = tuple(decode(k) for k in data.get("keys", ()))
        aux = data.get("aux")
        return TreeDef(data["kind"], children, keys, data.get("type", ""),
                       None if "aux" not in data else _text(aux))

    def __str__(self) -> str:
        return _describe(self)


LEAF = TreeDef("leaf")
NONE = TreeDef("none")


# ---- static data as JSON ----------------------------------------------------------------

class NotRepresentable(ValueError):
    """A value ``encode`` cannot write as JSON so that it reads back equal."""


def encode(value: Any) -> Any:
    """``value`` as JSON data that ``decode`` turns back into an equal value of the same
    type: None, bool, int, float, str as they are; tuples as ``{"tuple": [...]}``; lists
    as lists; string-keyed dicts as ``{"dict": [[key, value], ...]}``."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is tuple:
        return {"tuple": [encode(v) for v in value]}
    if kind is list:
        return [encode(v) for v in value]
    if kind is dict and all(type(k) is str for k in value):
        return {"dict": [[k, encode(v)] for k, v in value.items()]}
    raise NotRepresentable(f"{kind.__name__} {value!r}")


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(v) for v in data]
    if isinstance(data, dict):
        if "tuple" in data:
            return tuple(decode(v) for v in data["tuple"])
        return {k: decode(v) for k, v in data["dict"]}
    return data


def encode_text(value: Any) -> str | None:
    """``value`` as canonical JSON text (``TreeDef.aux``), or None if it has none."""
    try:
        return _text(encode(value))
    except NotRepresentable:
        return None


def _text(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


def type_name(cls: Any) -> str:
    """``module:QualName`` of a class or function ("" for None)."""
    if cls is None:
        return ""
    return f"{getattr(cls, '__module__', '?')}:{getattr(cls, '__qualname__', '?')}"


def resolve(name: str) -> Any:
    """The object ``module:QualName`` names, importing the module if needed; None where
    it cannot be found."""
    module_name, _, qualname = name.partition(":")
    if not qualname or "<" in qualname:
        return None
    module = sys.modules.get(module_name)
    if module is None:
        try:
            module = importlib.import_module(module_name)
        except Exception:  # not installed here, or failing to import: the plain form
            return None
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _registered(cls: type):
    """``aotc.tree_util``'s registration of ``cls``, when that module is loaded."""
    tree_util = sys.modules.get("aotc.tree_util")
    return None if tree_util is None else tree_util.registered_node(cls)


# ---- flattening ---------------------------------------------------------------------------

def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _flatten_into(obj: Any, leaves: list, is_leaf: Callable[[Any], bool] | None,
                  every_kind: bool) -> TreeDef:
    if is_leaf is not None and is_leaf(obj):
        leaves.append(obj)
        return LEAF
    if obj is None:
        return NONE

    def flat(items) -> tuple[TreeDef, ...]:
        return tuple(_flatten_into(item, leaves, is_leaf, every_kind) for item in items)

    if not every_kind:  # tuples, lists and dicts only, as the runtime always flattened
        if isinstance(obj, (tuple, list)) and not _is_namedtuple(obj):
            return TreeDef("tuple" if isinstance(obj, tuple) else "list", flat(obj))
        if isinstance(obj, dict):
            keys = tuple(sorted(obj))
            return TreeDef("dict", flat(obj[k] for k in keys), keys)
        leaves.append(obj)
        return LEAF
    kind = type(obj)
    if kind is tuple or kind is list:
        return TreeDef(kind.__name__, flat(obj))
    if _is_namedtuple(obj):
        return TreeDef("namedtuple", flat(obj), tuple(kind._fields), type_name(kind))
    if isinstance(obj, dict):
        if isinstance(obj, collections.OrderedDict):
            keys, node, factory = tuple(obj), "ordereddict", ""
        else:
            keys = tuple(sorted(obj))
            node = "defaultdict" if isinstance(obj, collections.defaultdict) else "dict"
            factory = type_name(obj.default_factory) if node == "defaultdict" else ""
        return TreeDef(node, flat(obj[k] for k in keys), keys, factory)
    if isinstance(obj, collections.deque):
        return TreeDef("deque", flat(obj), aux=encode_text(obj.maxlen))
    node = _registered(kind)
    if node is not None:
        children, aux = node.flatten(obj)
        if node.data_fields is not None:
            meta = dict(zip(node.meta_fields, aux))
            return TreeDef("dataclass", flat(children), node.data_fields, type_name(kind),
                           encode_text(meta))
        return TreeDef("custom", flat(children), (), type_name(kind), encode_text(aux))
    leaves.append(obj)
    return LEAF


def flatten(obj: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    """Returns the leaves of ``obj`` in a fixed order and its structure of tuples, lists,
    dicts and None (anything else is a leaf)."""
    leaves: list = []
    treedef = _flatten_into(obj, leaves, is_leaf, every_kind=False)
    return leaves, treedef


def structure(obj: Any) -> TreeDef:
    """The structure of ``obj`` with every node kind this module knows (NamedTuples,
    OrderedDicts, aotc.tree_util's registered classes when it is loaded, ...): what a
    call's arguments look like, for messages."""
    return _flatten_into(obj, [], None, every_kind=True)


def leaves_like(treedef: TreeDef, obj: Any) -> list | None:
    """The leaves of ``obj`` read in ``treedef``'s structure, or None when ``obj`` does
    not have it. A node accepts its own type or its plain form (see the module
    docstring); a container is never a leaf."""
    leaves: list = []
    return leaves if _leaves_like(treedef, obj, leaves) else None


def _leaves_like(treedef: TreeDef, obj: Any, leaves: list) -> bool:
    kind = treedef.kind
    if kind == "leaf":
        if obj is None or isinstance(obj, (tuple, list, dict, collections.deque)):
            return False
        leaves.append(obj)
        return True
    if kind == "none":
        return obj is None
    children = _children_like(treedef, obj)
    if children is None or len(children) != len(treedef.children):
        return False
    return all(_leaves_like(t, c, leaves) for t, c in zip(treedef.children, children))


def _children_like(treedef: TreeDef, obj: Any) -> list | None:
    """``obj``'s children in ``treedef``'s order, or None if ``obj`` is not such a node."""
    kind = treedef.kind
    if kind in ("tuple", "list"):
        return list(obj) if type(obj) is (tuple if kind == "tuple" else list) else None
    if kind in _DICT_KINDS:
        if not isinstance(obj, dict) or set(obj) != set(treedef.keys):
            return None
        return [obj[k] for k in treedef.keys]
    if kind == "deque":
        return list(obj) if isinstance(obj, (collections.deque, list)) else None
    if kind in ("namedtuple", "structseq"):
        if not isinstance(obj, tuple) or (_is_namedtuple(obj) and kind == "namedtuple"
                                          and tuple(type(obj)._fields) != treedef.keys):
            return None
        return list(obj)
    if kind == "dataclass":
        if isinstance(obj, dict):
            return [obj[k] for k in treedef.keys] if set(obj) == set(treedef.keys) else None
        if type_name(type(obj)) != treedef.node_type:
            return None
        node = _registered(type(obj))
        if node is not None:
            children, meta = node.flatten(obj)
            if not _same_aux(treedef, dict(zip(node.meta_fields, meta))):
                return None
            return list(children)
        return [getattr(obj, k) for k in treedef.keys]
    if kind == "custom":
        if type(obj) is tuple:
            return list(obj)
        node = _registered(type(obj))
        if node is None or type_name(type(obj)) != treedef.node_type:
            return None
        children, aux = node.flatten(obj)
        return list(children) if _same_aux(treedef, aux) else None
    return None


def _same_aux(treedef: TreeDef, aux: Any) -> bool:
    """Whether ``aux`` is the recorded static data (the compiled code has it built in);
    true when none was recorded (it cannot be checked)."""
    return treedef.aux is None or encode_text(aux) == treedef.aux


# ---- rebuilding ---------------------------------------------------------------------------

_SENTINEL = object()
# One composed builder per structure: types are looked up once, at the first rebuild.
_BUILDERS: dict[TreeDef, Callable] = {}


def unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuilds the pytree ``treedef`` describes, taking leaves in order."""
    build = _BUILDERS.get(treedef)
    if build is None:
        build = _BUILDERS[treedef] = _builder(treedef)
    it = iter(leaves)
    out = build(it)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for tree structure {treedef}")
    return out


def _leaf(it) -> Any:
    leaf = next(it, _SENTINEL)
    if leaf is _SENTINEL:
        raise ValueError("too few leaves for tree structure")
    return leaf


def _builder(treedef: TreeDef) -> Callable:
    """``it -> pytree``: the rebuild of ``treedef`` from an iterator over its leaves."""
    kind = treedef.kind
    if kind == "leaf":
        return _leaf
    if kind == "none":
        return lambda it: None
    parts = [_builder(child) for child in treedef.children]

    def children(it) -> list:
        return [part(it) for part in parts]

    keys = treedef.keys
    if kind == "list":
        return children
    if kind == "dict":
        return lambda it: dict(zip(keys, children(it)))
    if kind == "ordereddict":
        return lambda it: collections.OrderedDict(zip(keys, children(it)))
    if kind == "defaultdict":
        factory = None if not treedef.node_type else resolve(treedef.node_type)
        if treedef.node_type and factory is None:
            return lambda it: dict(zip(keys, children(it)))
        return lambda it: collections.defaultdict(factory, zip(keys, children(it)))
    if kind == "deque":
        maxlen = None if treedef.aux is None else decode(json.loads(treedef.aux))
        return lambda it: collections.deque(children(it), maxlen)
    make = _maker(treedef)
    if make is not None:
        return lambda it: make(children(it))
    if kind == "dataclass":
        return lambda it: dict(zip(keys, children(it)))
    return lambda it: tuple(children(it))  # tuple, and the plain form of the others


def _maker(treedef: TreeDef) -> Callable[[list], Any] | None:
    """``children -> object`` for a node with a recorded type, None where the type
    cannot be rebuilt here (the node then comes back in its plain form)."""
    kind = treedef.kind
    if kind not in ("namedtuple", "structseq", "dataclass", "custom"):
        return None
    cls = resolve(treedef.node_type)
    if not isinstance(cls, type):
        return None
    if kind == "namedtuple":
        if tuple(getattr(cls, "_fields", ())) != treedef.keys:
            return None
        return lambda children: cls(*children)
    if kind == "structseq":
        return cls if issubclass(cls, tuple) else None
    if treedef.aux is None:
        return None
    aux = decode(json.loads(treedef.aux))
    if kind == "dataclass":
        if dataclasses.is_dataclass(cls):
            init = {f.name for f in dataclasses.fields(cls) if f.init}
            if not {*treedef.keys, *aux} <= init:
                return None
        keys = treedef.keys
        return lambda children: cls(**dict(zip(keys, children)), **aux)
    node = _registered(cls)
    if node is None:
        return None
    return lambda children: node.unflatten(aux, tuple(children))


def _describe(treedef: TreeDef) -> str:
    kind = treedef.kind
    if kind == "leaf":
        return "*"
    if kind == "none":
        return "None"
    inner = [_describe(c) for c in treedef.children]
    if kind == "tuple":
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if kind in ("list", "deque"):
        text = "[" + ", ".join(inner) + "]"
        return text if kind == "list" else f"deque({text})"
    if kind in _DICT_KINDS:
        text = "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(treedef.keys, inner)) + "}"
        return text if kind == "dict" else f"{_DICT_NAMES[kind]}({text})"
    name = treedef.node_type.rpartition(":")[2].rpartition(".")[2] or kind
    if kind in ("namedtuple", "dataclass") and len(treedef.keys) == len(inner):
        return f"{name}(" + ", ".join(f"{k}={v}" for k, v in zip(treedef.keys, inner)) + ")"
    return f"{name}(" + ", ".join(inner) + ")"
