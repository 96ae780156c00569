"""Pytrees with ``jax.tree_util``'s names and semantics, built on optree.

A pytree is a nest of containers (tuples, lists, dicts, None, NamedTuples, OrderedDicts,
defaultdicts, and classes registered here) around leaves (arrays, scalars, anything
else). ``aotc.jit``, ``aotc.export``, ``aotc.vmap`` and ``aotc.lax``'s control flow take
and return pytrees; this module flattens them, rebuilds them and registers new node
types:

    >>> import aotc.tree_util as tu
    >>> leaves, treedef = tu.tree_flatten({"b": (1, 2), "a": None, "c": [3]})
    >>> leaves                      # dict keys sorted, None an empty subtree
    [1, 2, 3]
    >>> tu.tree_map(lambda x: 10 * x, {"w": 1, "b": (2, 3)})
    {'w': 10, 'b': (20, 30)}
    >>> [tu.keystr(p) for p, _ in tu.tree_leaves_with_path({"w": [1, 2]})]
    ["['w'][0]", "['w'][1]"]

The rules are JAX's: dict and defaultdict keys are sorted, an OrderedDict keeps its
order, None is a node with no children (``is_leaf`` can make it a leaf), a NamedTuple's
fields are its children, and a registered node's static data (its "aux data") is part
of the structure: it keys the compile cache, so it must be hashable. Two differences,
both optree's: a rebuilt dict has the key order of the flattened one (JAX sorts it; the
two compare equal), and ``collections.deque`` is a node (a leaf in JAX).

Registrations live in optree's namespace ``"aotc"``, so they neither see nor change the
registrations of other optree users. The runtime (``aotc.runtime``) rebuilds exported
results without optree, from the structure the artifact's metadata records
(``aotc/runtime/tree.py``); it finds a class registered here through ``registered_node``.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import sys
from typing import Any, Callable, Hashable, Iterable, NamedTuple, Sequence, TypeVar

import optree

NAMESPACE = "aotc"
_OPTS = {"none_is_leaf": False, "namespace": NAMESPACE}

PyTreeDef = optree.PyTreeSpec
T = TypeVar("T")

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
    "PyTreeDef", "SequenceKey", "all_leaves", "flatten_one_level",
    "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
    "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
    "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
    "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]


# ---- key paths -------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class DictKey:
    """The key of a dict entry in a key path: ``['w']``."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The index of a tuple or list entry in a key path: ``[0]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """An attribute (a NamedTuple or dataclass field) in a key path: ``.momentum``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The position of a child of a node registered without keys: ``[<flat index 0>]``
    (aotc's leaf names write it ``[0]``)."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = TypeVar("KeyEntry", bound=Hashable)
KeyPath = tuple[KeyEntry, ...]


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text, as ``jax.tree_util.keystr``.

    >>> import aotc.tree_util as tu
    >>> path = (tu.DictKey("params"), tu.GetAttrKey("w"), tu.SequenceKey(0))
    >>> tu.keystr(path), tu.keystr(path, simple=True, separator="/")
    ("['params'].w[0]", 'params/w/0')
    """
    return separator.join(map(_simple_entrystr if simple else str, keys))


def _simple_entrystr(key) -> str:
    field = _SIMPLE.get(type(key))
    return str(key if field is None else getattr(key, field))


_SIMPLE = {DictKey: "key", SequenceKey: "idx", GetAttrKey: "name", FlattenedIndexKey: "key"}


class _KeyEntry(optree.PyTreeEntry):
    """optree's path entry of a node registered with keys: the entry is the user's key
    (a ``DictKey``, ``GetAttrKey``, ... or any hashable value)."""

    def __call__(self, obj):
        key = self.entry
        if isinstance(key, GetAttrKey):
            return getattr(obj, key.name)
        return obj[getattr(key, _SIMPLE.get(type(key), "key"))]

    def codify(self, node: str = "") -> str:
        return f"{node}{self.entry}"


def _key(entry: optree.PyTreeEntry):
    """JAX's key entry for one of optree's path entries."""
    if isinstance(entry, _KeyEntry):
        return entry.entry
    if isinstance(entry, optree.MappingEntry):
        return DictKey(entry.entry)
    if isinstance(entry, (optree.NamedTupleEntry, optree.StructSequenceEntry)):
        return GetAttrKey(entry.field)
    if isinstance(entry, optree.SequenceEntry):
        return SequenceKey(entry.entry)
    if isinstance(entry, optree.GetAttrEntry):
        return GetAttrKey(entry.name)
    return FlattenedIndexKey(entry.entry)


def _path(accessor) -> KeyPath:
    return tuple(_key(entry) for entry in accessor)


def treedef_paths(treedef: PyTreeDef) -> list[KeyPath]:
    """The key path of every leaf of ``treedef``, in leaf order (an aotc addition)."""
    return [_path(accessor) for accessor in treedef.accessors()]


def child_keys(treedef: PyTreeDef) -> list:
    """The key of each child of ``treedef``'s root node (an aotc addition)."""
    if not treedef.num_children:
        return []
    return [_key(accessor[0]) for accessor in treedef.one_level().accessors()]


# ---- flattening and rebuilding -----------------------------------------------------------

def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """The leaves of ``tree`` in order and its structure.

    >>> import aotc.tree_util as tu
    >>> tu.tree_flatten([1, {"b": 2, "a": 3}, None])
    ([1, 3, 2], PyTreeSpec([*, {'a': *, 'b': *}, None]))
    """
    return optree.tree_flatten(tree, is_leaf, **_OPTS)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree``, in the order ``tree_flatten`` gives them."""
    return optree.tree_leaves(tree, is_leaf, **_OPTS)


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``tree`` (a ``PyTreeDef``), without its leaves."""
    return optree.tree_structure(tree, is_leaf, **_OPTS)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuilds the pytree ``treedef`` describes from ``leaves``, in order.

    >>> import aotc.tree_util as tu
    >>> tu.tree_unflatten(tu.tree_structure((0, [0])), ["a", "b"])
    ('a', ['b'])
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(
            f"tree_unflatten: the structure {describe(treedef)} has {treedef.num_leaves} "
            f"leaves, got {len(leaves)}; pass one leaf per * in the structure")
    return treedef.unflatten(leaves)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` applied to every leaf of ``tree`` (and the matching leaves of ``rest``, whose
    structures have ``tree``'s as a prefix), in ``tree``'s structure.

    >>> import aotc.tree_util as tu
    >>> tu.tree_map(lambda x, y: x + y, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
    {'a': 11, 'b': (22, 33)}
    """
    try:
        return optree.tree_map(f, tree, *rest, is_leaf=is_leaf, **_OPTS)
    except ValueError as e:
        _raise_mismatch("tree_map", tree, rest, is_leaf, e)
        raise


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """As ``tree_map``, with each leaf's key path as ``f``'s first argument.

    >>> import aotc.tree_util as tu
    >>> tu.tree_map_with_path(lambda p, x: f"{tu.keystr(p)}={x}", {"w": [1, 2]})
    {'w': ["['w'][0]=1", "['w'][1]=2"]}
    """
    def with_path(accessor, *leaves):
        return f(_path(accessor), *leaves)

    try:
        return optree.tree_map_with_accessor(with_path, tree, *rest, is_leaf=is_leaf, **_OPTS)
    except ValueError as e:
        _raise_mismatch("tree_map_with_path", tree, rest, is_leaf, e)
        raise


def _raise_mismatch(where: str, tree, rest: tuple, is_leaf, error: ValueError) -> None:
    """A structure mismatch between ``tree`` and one of ``rest``, by key path (JAX's
    message), chained to optree's; returns when no tree of ``rest`` mismatches."""
    for i, other in enumerate(rest):
        errors = optree.prefix_errors(tree, other, is_leaf, **_OPTS)
        if errors:
            raise errors[0](f"{where} rest[{i}]") from error


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``([(key_path, leaf), ...], treedef)``.

    >>> import aotc.tree_util as tu
    >>> tu.tree_flatten_with_path({"a": (1,)})[0]
    [((DictKey(key='a'), SequenceKey(idx=0)), 1)]
    """
    accessors, leaves, treedef = optree.tree_flatten_with_accessor(tree, is_leaf, **_OPTS)
    return [(_path(a), leaf) for a, leaf in zip(accessors, leaves)], treedef


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    """``[(key_path, leaf), ...]``, in leaf order."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` has no inner node (a leaf, or None), as in JAX."""
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root node's children."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple of subtrees with these structures."""
    return optree.treespec_tuple(list(treedefs), **_OPTS)


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every item of ``iterable`` is a leaf.

    >>> import aotc.tree_util as tu
    >>> tu.all_leaves([1, 2]), tu.all_leaves([1, (2,)])
    (True, False)
    """
    return optree.all_leaves(iterable, is_leaf, **_OPTS)


def is_tree_node(typ: type) -> bool:
    """Whether instances of ``typ`` are pytree nodes (built in, NamedTuple, registered)."""
    return (optree.register_pytree_node.get(typ, namespace=NAMESPACE) is not None
            or optree.is_namedtuple_class(typ) or optree.is_structseq_class(typ))


def flatten_one_level(tree: Any) -> tuple[list, Any]:
    """``(children, aux_data)`` of a pytree node; ValueError for a leaf."""
    out = _one_level(tree)
    return list(out.children), out.metadata


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """``([(key, child), ...], aux_data)`` of a pytree node; ValueError for a leaf."""
    out = _one_level(tree)
    keys = child_keys(optree.tree_structure(tree, lambda x: x is not tree, **_OPTS))
    return list(zip(keys, out.children)), out.metadata


def _one_level(tree: Any):
    if optree.tree_is_leaf(tree, **_OPTS):
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return optree.tree_flatten_one_level(tree, **_OPTS)


_UNSPECIFIED: Any = object()


def tree_reduce(function: Callable[[T, Any], T], tree: Any, initializer: T = _UNSPECIFIED,
                is_leaf: Callable[[Any], bool] | None = None) -> T:
    """``functools.reduce(function, tree_leaves(tree)[, initializer])``.

    >>> import aotc.tree_util as tu
    >>> tu.tree_reduce(lambda a, b: a + b, {"a": 1, "b": [2, 3]})
    6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: T = _UNSPECIFIED,
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """The leaves combined with the associative ``operation``; ``identity`` is the result
    for a tree without leaves."""
    items = tree_leaves(tree, is_leaf)
    if not items and identity is _UNSPECIFIED:
        raise TypeError("tree_reduce_associative: a tree without leaves needs identity=")
    return functools.reduce(operation, items) if items else identity


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is true."""
    return all(tree_leaves(tree, is_leaf))


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``prefix_tree`` with each of its leaves repeated over the matching subtree of
    ``full_tree``."""
    return optree.tree_broadcast_prefix(prefix_tree, full_tree, is_leaf, **_OPTS)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turns an outer tree of inner trees into an inner tree of outer trees."""
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = tree_structure(first)
    return optree.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def describe(treedef: PyTreeDef) -> str:
    """``treedef`` as a short text, ``*`` for each leaf: ``{'a': *, 'b': (*, *)}``."""
    text = str(treedef).removeprefix("PyTreeSpec(").removesuffix(")")
    return text.removesuffix(f", namespace={NAMESPACE!r}")


# ---- registering node types ----------------------------------------------------------------

class Node(NamedTuple):
    """What aotc knows of a class registered here: ``flatten(obj) -> (children, aux)``,
    ``unflatten(aux, children) -> obj``; ``data_fields``/``meta_fields`` for a class
    registered with ``register_dataclass`` (None otherwise)."""

    flatten: Callable
    unflatten: Callable
    data_fields: tuple[str, ...] | None = None
    meta_fields: tuple[str, ...] | None = None


_NODES: dict[type, Node] = {}


def registered_node(cls: type) -> Node | None:
    """The registration of ``cls`` (None if it has none): how the compiler records a
    node in the artifact metadata, and how the runtime rebuilds one."""
    return _NODES.get(cls)


def unregister_all() -> None:
    """Removes every registration made here (an aotc addition: at interpreter exit, so
    the registry stops holding the classes; see ``aotc.signature._Structure``)."""
    for cls in list(_NODES):
        optree.unregister_pytree_node(cls, namespace=NAMESPACE)
    _NODES.clear()


def _register(cls: type, node: Node, optree_flatten: Callable, entry_type) -> None:
    optree.register_pytree_node(cls, optree_flatten, node.unflatten,
                                path_entry_type=entry_type, namespace=NAMESPACE)
    _NODES[cls] = node


def register_pytree_node(nodetype: type[T], flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Makes instances of ``nodetype`` pytree nodes, as ``jax.tree_util``'s.

    ``flatten_func(obj)`` returns ``(children, aux_data)``: the children are pytrees
    (traced as arrays), the aux data is static (hashable: it keys the compile cache);
    ``unflatten_func(aux_data, children)`` builds the object back. With
    ``flatten_with_keys_func`` (``obj -> ([(key, child), ...], aux_data)``) leaf names
    use those keys; otherwise children are named by position (``[0]``).

    >>> import aotc.tree_util as tu
    >>> class Box:
    ...     def __init__(self, value, label):
    ...         self.value, self.label = value, label
    >>> tu.register_pytree_node(Box, lambda b: ((b.value,), b.label),
    ...                         lambda label, children: Box(children[0], label))
    >>> tu.tree_leaves([Box(1, "one"), Box(2, "two")])
    [1, 2]
    """
    if flatten_with_keys_func is not None:
        return register_pytree_with_keys(nodetype, flatten_with_keys_func, unflatten_func,
                                         flatten_func)
    _register(nodetype, Node(flatten_func, unflatten_func), flatten_func, optree.FlattenedEntry)


def register_pytree_with_keys(nodetype: type[T], flatten_with_keys: Callable,
                              unflatten_func: Callable, flatten_func: Callable | None = None
                              ) -> None:
    """As ``register_pytree_node``, with ``flatten_with_keys(obj) -> ([(key, child), ...],
    aux_data)``: the keys (``GetAttrKey("w")``, ``DictKey("b")``, ...) name the leaves."""
    def keyed(obj):
        pairs, aux = flatten_with_keys(obj)
        pairs = list(pairs)
        return [child for _, child in pairs], aux, [key for key, _ in pairs]

    flatten = flatten_func or (lambda obj: keyed(obj)[:2])
    _register(nodetype, Node(flatten, unflatten_func), keyed, _KeyEntry)


def register_pytree_node_class(cls: type[T]) -> type[T]:
    """Class decorator: ``cls.tree_flatten(self) -> (children, aux_data)`` and the
    classmethod ``cls.tree_unflatten(aux_data, children)`` make it a pytree node.

    >>> import aotc.tree_util as tu
    >>> @tu.register_pytree_node_class
    ... class Scaled:
    ...     def __init__(self, x, scale):
    ...         self.x, self.scale = x, scale
    ...     def tree_flatten(self):
    ...         return (self.x,), self.scale
    ...     @classmethod
    ...     def tree_unflatten(cls, scale, children):
    ...         return cls(children[0], scale)
    >>> tu.tree_structure(Scaled(1.0, 2))
    PyTreeSpec(CustomTreeNode(Scaled[2], [*]), namespace='aotc')
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type[T]) -> type[T]:
    """Class decorator: ``cls.tree_flatten_with_keys(self)`` and ``cls.tree_unflatten``
    (and ``tree_flatten``, if defined) register ``cls`` with keys."""
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten,
                              None if flatten is None else operator.methodcaller("tree_flatten"))
    return cls


def register_dataclass(nodetype: type[T], data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type[T]:
    """Makes a dataclass (or a class built from keyword arguments) a pytree node, as
    ``jax.tree_util.register_dataclass``: ``data_fields`` are its children (traced),
    ``meta_fields`` its static data (hashable, part of the compile cache key). For a
    dataclass both may be left out: fields marked ``field(metadata={"static": True})``
    are meta fields, the others data fields. Usable as a decorator.

    >>> import dataclasses
    >>> import aotc.tree_util as tu
    >>> @tu.register_dataclass
    ... @dataclasses.dataclass
    ... class State:
    ...     w: object
    ...     momentum: tuple
    ...     lr: float = dataclasses.field(default=0.1, metadata={"static": True})
    >>> [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(State(1, (2, 3)))]
    ['.w', '.momentum[0]', '.momentum[1]']
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(f"register_dataclass: give both data_fields and meta_fields, or "
                            f"neither (for a dataclass); got {data_fields=}, {meta_fields=}")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype!r} is not a dataclass, so "
                            f"data_fields and meta_fields cannot be inferred; give both")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init_fields:
            missing, unexpected = sorted(init_fields - given), sorted(given - init_fields)
            raise ValueError(
                f"register_dataclass({nodetype.__name__}): data_fields and meta_fields must "
                f"list every dataclass field with init=True and only those; missing "
                f"{missing} (add them to drop_fields to leave them out), unexpected "
                f"{unexpected}")
    if overlap := sorted(set(data_fields) & set(meta_fields)):
        raise ValueError(f"register_dataclass({nodetype.__name__}): data_fields and "
                         f"meta_fields must not overlap; both list {overlap}")

    def flatten(obj):
        return (tuple(getattr(obj, name) for name in data_fields),
                tuple(getattr(obj, name) for name in meta_fields))

    def with_entries(obj):
        return (*flatten(obj), data_fields)

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    _register(nodetype, Node(flatten, unflatten, data_fields, meta_fields), with_entries,
              optree.GetAttrEntry)
    return nodetype


def register_static(cls: type[T]) -> type[T]:
    """Makes instances of ``cls`` pytree nodes without children: the whole object is
    static data (hashable), as ``jax.tree_util.register_static``."""
    register_pytree_node(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


# ---- Partial ---------------------------------------------------------------------------

class _HashableCallableShim:
    """Holds a ``functools.partial`` given to ``Partial`` so that its arguments are not
    merged into the new one's (they are static, the new ones are children)."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        return self.fun == (other.fun if isinstance(other, _HashableCallableShim) else other)


class Partial(functools.partial):
    """A ``functools.partial`` whose arguments are pytree children and whose function is
    static data, as ``jax.tree_util.Partial``: it can be passed to and returned from
    jitted functions.

    >>> import aotc.tree_util as tu
    >>> add_one = tu.Partial(lambda x, y: x + y, 1)
    >>> tu.tree_leaves(add_one), add_one(2)
    ([1], 3)
    """

    def __new__(klass, func, *args, **kw):
        if isinstance(func, functools.partial):
            original = func
            func = _HashableCallableShim(original)
            out = super().__new__(klass, func, *args, **kw)
            func.func, func.args, func.keywords = original.func, original.args, original.keywords
            return out
        return super().__new__(klass, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


def __getattr__(name: str):
    """A name this module lacks: an AttributeError saying whether JAX has it."""
    plain = f"module 'aotc.tree_util' has no attribute {name!r}"
    jax_tree_util = sys.modules.get("jax.tree_util")  # asked only when already imported
    if name.startswith("_") or not hasattr(jax_tree_util, name):
        raise AttributeError(plain)
    raise AttributeError(f"{plain}: jax.tree_util.{name} exists, but aotc.tree_util does not "
                         f"have it yet")
