"""aotc.tree_util against jax.tree_util: flattening, rebuilding, key paths and keystr,
registration of node types (dataclasses, classes, classes with keys, Partial), the
helpers around them, and the errors for mismatched trees. The comparisons with JAX are
skipped without it; the rest runs everywhere."""

from __future__ import annotations

import collections
import dataclasses
import functools

import numpy as np
import optree
import pytest

import aotc
import aotc.tree_util as tu
from pytree_types import Params, Scaled, State

# ---- node types used below, registered with aotc (and with JAX in `jtu`) --------------


class Box:
    """Registered with register_pytree_node: children by position ([0], [1])."""

    def __init__(self, value, extra, label):
        self.value, self.extra, self.label = value, extra, label

    def __eq__(self, other):
        return (type(other) is Box and (self.value, self.extra, self.label)
                == (other.value, other.extra, other.label))


def _box_flatten(box):
    return (box.value, box.extra), box.label


def _box_unflatten(label, children):
    return Box(children[0], children[1], label)


tu.register_pytree_node(Box, _box_flatten, _box_unflatten)


class Keyed:
    """Registered with keys: its leaves are named .a and ['b']."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Keyed and (self.a, self.b) == (other.a, other.b)


def _keyed_flatten_with_keys(k, keys):
    return [(keys.GetAttrKey("a"), k.a), (keys.DictKey("b"), k.b)], None


tu.register_pytree_with_keys(Keyed, lambda k: _keyed_flatten_with_keys(k, tu),
                             lambda _, children: Keyed(*children))


@pytest.fixture(scope="module")
def jtu():
    """jax.tree_util, with the classes above registered the same way."""
    jax = pytest.importorskip("jax")
    jtu = jax.tree_util
    if not getattr(jtu, "_aotc_test_registered", False):
        jtu.register_dataclass(State)
        jtu.register_pytree_node(Box, _box_flatten, _box_unflatten)
        jtu.register_pytree_node_class(Scaled)
        jtu.register_pytree_with_keys(Keyed, lambda k: _keyed_flatten_with_keys(k, jtu),
                                      lambda _, children: Keyed(*children))
        jtu._aotc_test_registered = True
    return jtu


def _trees():
    dd = collections.defaultdict(list, {"q": 1, "p": (2, 3)})
    return {
        "leaf": 1,
        "none": None,
        "empty tuple": (),
        "empty dict": {},
        "list": [1, 2, [3]],
        "dict unsorted": {"b": 1, "a": (2, 3), "c": {"z": 4, "y": 5}},
        "int keys": {2: "two", 1: "one"},
        "None inside": [None, 1, (None, 2), {"n": None, "v": 3}],
        "namedtuple": Params(w=(1, 2), b=3),
        "ordereddict": collections.OrderedDict([("z", 1), ("a", 2), ("m", [3])]),
        "defaultdict": dd,
        "dataclass": State(Params(1, 2), (3, 4), lr=0.5),
        "register_pytree_node": Box(1, [2, {"k": 3}], "lbl"),
        "register_pytree_node_class": Scaled((1, 2), 3.0),
        "with keys": Keyed(1, (2, 3)),
        "mixed": {"params": Params(w=[1, 2], b=None), "state": (State(1, (2,)), Box(3, 4, "x"))},
        "arrays": {"w": np.ones((2, 2)), "b": np.zeros(2)},
    }


TREES = _trees()


def _same_leaves(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert type(x) is type(y)
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y


@pytest.mark.parametrize("name", list(TREES))
def test_flatten_leaves_and_structure_as_jax(name, jtu):
    tree = TREES[name]
    leaves, treedef = tu.tree_flatten(tree)
    j_leaves, j_treedef = jtu.tree_flatten(tree)
    _same_leaves(leaves, j_leaves)
    _same_leaves(tu.tree_leaves(tree), j_leaves)
    assert treedef.num_leaves == j_treedef.num_leaves
    assert tu.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(j_treedef)
    assert tu.all_leaves(leaves) == jtu.all_leaves(j_leaves)
    assert tu.all_leaves([tree]) == jtu.all_leaves([tree])
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert type(rebuilt) is type(tree)
    assert tu.tree_structure(rebuilt) == treedef
    _same_leaves(tu.tree_leaves(rebuilt), leaves)


@pytest.mark.parametrize("name", list(TREES))
def test_key_paths_and_keystr_as_jax(name, jtu):
    tree = TREES[name]
    ours, treedef = tu.tree_flatten_with_path(tree)
    theirs, _ = jtu.tree_flatten_with_path(tree)
    assert [repr(p) for p, _ in ours] == [repr(p) for p, _ in theirs]
    for (path, _), (j_path, _) in zip(ours, theirs):
        assert tu.keystr(path) == jtu.keystr(j_path)
        assert (tu.keystr(path, simple=True, separator="/")
                == jtu.keystr(j_path, simple=True, separator="/"))
    assert [repr(p) for p, _ in tu.tree_leaves_with_path(tree)] == [repr(p) for p, _ in theirs]
    assert tu.treedef_paths(treedef) == [p for p, _ in ours]


@pytest.mark.parametrize("name", list(TREES))
def test_tree_map_as_jax(name, jtu):
    tree = TREES[name]

    def f(x):
        return ("mapped", x if not isinstance(x, np.ndarray) else x.tolist())

    ours, theirs = tu.tree_map(f, tree), jtu.tree_map(f, tree)
    assert type(ours) is type(theirs)
    assert tu.tree_leaves(ours, is_leaf=lambda x: isinstance(x, tuple) and x[:1] == ("mapped",)) \
        == jtu.tree_leaves(theirs, is_leaf=lambda x: isinstance(x, tuple) and x[:1] == ("mapped",))
    with_path = tu.tree_map_with_path(lambda p, x: tu.keystr(p), tree)
    j_with_path = jtu.tree_map_with_path(lambda p, x: jtu.keystr(p), tree)
    assert tu.tree_leaves(with_path) == jtu.tree_leaves(j_with_path)


def test_structures_compare_as_jax(jtu):
    """Which trees share a structure: node types, keys, arity and static data count."""
    trees = [(1, 2), [1, 2], Params(1, 2), {"a": 1, "b": 2}, {"b": 2, "a": 1},
             collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=2, a=1),
             collections.defaultdict(int, a=1, b=2), State(1, (2,)), State(1, (2,), lr=0.2),
             Box(1, 2, "x"), Box(1, 2, "y"), Scaled(1, 2.0), Scaled(1, 3.0), (1, None),
             (1, (None,)), None, ()]
    for a in trees:
        for b in trees:
            same = tu.tree_structure(a) == tu.tree_structure(b)
            assert same == (jtu.tree_structure(a) == jtu.tree_structure(b)), (a, b)
            if same:
                assert hash(tu.tree_structure(a)) == hash(tu.tree_structure(b))


def test_tree_map_several_trees_is_leaf_and_none(jtu):
    a = {"x": (1, 2), "y": None, "z": [3]}
    b = {"x": (10, 20), "y": None, "z": [30]}
    assert tu.tree_map(lambda u, v: u + v, a, b) == jtu.tree_map(lambda u, v: u + v, a, b)
    # The second tree may go deeper where the first has a leaf (it is a prefix).
    deeper = {"x": ((1, 1), 2), "y": None, "z": [3]}
    assert (tu.tree_map(lambda u, v: (u, v), a, deeper)
            == jtu.tree_map(lambda u, v: (u, v), a, deeper))
    is_none = lambda x: x is None  # noqa: E731
    assert (tu.tree_map(lambda u: "N" if u is None else u, a, is_leaf=is_none)
            == jtu.tree_map(lambda u: "N" if u is None else u, a, is_leaf=is_none))
    pairs = {"p": (1, 2), "q": [(3, 4)]}
    is_pair = lambda x: isinstance(x, tuple) and len(x) == 2 and not isinstance(x[0], tuple)  # noqa: E731
    assert tu.tree_leaves(pairs, is_leaf=is_pair) == jtu.tree_leaves(pairs, is_leaf=is_pair)


def test_helpers_as_jax(jtu):
    tree = {"a": [1, 2], "b": Params(3, 4)}
    assert tu.tree_reduce(lambda x, y: x + y, tree) == jtu.tree_reduce(lambda x, y: x + y, tree)
    assert tu.tree_reduce(lambda x, y: x + y, tree, 100) == jtu.tree_reduce(
        lambda x, y: x + y, tree, 100)
    assert tu.tree_reduce_associative(lambda x, y: x * y, tree) == 24
    assert tu.tree_reduce_associative(lambda x, y: x * y, (), identity=1) == 1
    assert tu.tree_all({"a": True, "b": [1, 0]}) is jtu.tree_all({"a": True, "b": [1, 0]})
    assert tu.tree_broadcast((1, {"k": 2}), ((0, 0), {"k": [0, 0]})) == jtu.tree_broadcast(
        (1, {"k": 2}), ((0, 0), {"k": [0, 0]}))
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure({"x": 0, "y": 0})
    j_outer, j_inner = jtu.tree_structure([0, 0]), jtu.tree_structure({"x": 0, "y": 0})
    nested = [{"x": 1, "y": 2}, {"x": 3, "y": 4}]
    assert tu.tree_transpose(outer, inner, nested) == jtu.tree_transpose(j_outer, j_inner, nested)
    assert tu.tree_transpose(outer, None, nested) == jtu.tree_transpose(j_outer, None, nested)
    children = tu.treedef_children(tu.tree_structure(tree))
    j_children = jtu.treedef_children(jtu.tree_structure(tree))
    assert [c.num_leaves for c in children] == [c.num_leaves for c in j_children]
    assert tu.treedef_tuple(children).num_leaves == jtu.treedef_tuple(j_children).num_leaves
    assert list(tu.flatten_one_level({"b": [1], "a": 2})[0]) == list(
        jtu.flatten_one_level({"b": [1], "a": 2})[0])
    keyed, _ = tu.flatten_one_level_with_keys({"b": 1, "a": (2,)})
    j_keyed, _ = jtu.flatten_one_level_with_keys({"b": 1, "a": (2,)})
    assert repr(keyed) == repr(list(j_keyed))
    # (JAX 0.10 names both fields of a NamedTuple after the first one.)
    assert tu.flatten_one_level_with_keys(Params(1, 2))[0] == [
        (tu.GetAttrKey("w"), 1), (tu.GetAttrKey("b"), 2)]
    for typ in (tuple, dict, Params, State, Box, int, np.ndarray, collections.OrderedDict):
        assert tu.is_tree_node(typ) == jtu.is_tree_node(typ), typ
    with pytest.raises(ValueError):
        tu.flatten_one_level(1)


def test_partial_as_jax(jtu):
    def add(x, y, scale=1):
        return (x + y) * scale

    ours = tu.Partial(add, 1, scale=2)
    theirs = jtu.Partial(add, 1, scale=2)
    assert tu.tree_leaves(ours) == jtu.tree_leaves(theirs) == [1, 2]
    assert ours(3) == theirs(3) == 8
    rebuilt = tu.tree_map(lambda v: v * 10, ours)
    assert isinstance(rebuilt, tu.Partial) and rebuilt(3) == add(10, 3, scale=20)
    # A functools.partial's own arguments stay static, not children.
    wrapped = tu.Partial(functools.partial(add, 5), 1)
    assert tu.tree_leaves(wrapped) == jtu.tree_leaves(jtu.Partial(functools.partial(add, 5), 1))
    assert wrapped() == 6


# ---- without JAX ------------------------------------------------------------------------


def test_key_entries_and_keystr():
    path = (tu.DictKey("params"), tu.GetAttrKey("w"), tu.SequenceKey(0), tu.FlattenedIndexKey(2))
    assert tu.keystr(path) == "['params'].w[0][<flat index 2>]"
    assert tu.keystr(path, simple=True, separator="/") == "params/w/0/2"
    assert repr(path[0]) == "DictKey(key='params')"
    assert tu.DictKey("a") == tu.DictKey("a") and hash(tu.SequenceKey(1)) == hash(tu.SequenceKey(1))
    names = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(TREES["mixed"])]
    assert names == ["['params'].w[0]", "['params'].w[1]", "['state'][0].params",
                     "['state'][0].momentum[0]", "['state'][1][<flat index 0>]",
                     "['state'][1][<flat index 1>]"]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Keyed(1, 2))] == [".a", "['b']"]


def test_registered_dataclass_fields_and_rebuild():
    state = State(Params(1, 2), (3, 4), lr=0.5)
    leaves, treedef = tu.tree_flatten(state)
    assert leaves == [1, 2, 3, 4]
    back = tu.tree_unflatten(treedef, [10, 20, 30, 40])
    assert back == State(Params(10, 20), (30, 40), lr=0.5)
    # The static field is part of the structure.
    assert tu.tree_structure(State(1, (2,), lr=0.5)) != tu.tree_structure(State(1, (2,)))

    @functools.partial(tu.register_dataclass, data_fields=["x"], meta_fields=["mode"])
    class Plain:  # not a dataclass: the fields are given
        def __init__(self, x, mode):
            self.x, self.mode = x, mode

    plain = tu.tree_map(lambda v: v + 1, Plain(1, "m"))
    assert (plain.x, plain.mode) == (2, "m")
    node = tu.registered_node(Plain)
    assert node.data_fields == ("x",) and node.meta_fields == ("mode",)


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class Two:
        a: int
        b: int

    with pytest.raises(ValueError, match=r"missing \['b'\]"):
        tu.register_dataclass(Two, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match=r"must not overlap; both list \['a'\]"):
        tu.register_dataclass(Two, data_fields=["a", "b"], meta_fields=["a"])
    with pytest.raises(TypeError, match="give both data_fields and meta_fields"):
        tu.register_dataclass(Two, data_fields=["a", "b"])
    with pytest.raises(TypeError, match="is not a dataclass"):
        tu.register_dataclass(Box)


def test_registrations_stay_in_aotcs_namespace():
    """Other optree users see an aotc-registered class as a leaf."""
    box = Box(1, 2, "x")
    assert tu.tree_leaves(box) == [1, 2]
    assert optree.tree_leaves(box) == [box]
    assert optree.tree_leaves(box, namespace="aotc") == [1, 2]


def test_none_is_an_empty_subtree():
    assert tu.tree_leaves([None, (None,), {"a": None}]) == []
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tu.tree_map(lambda x: x + 1, {"a": None, "b": 1}) == {"a": None, "b": 2}
    assert tu.treedef_is_leaf(tu.tree_structure(None))


def test_mismatched_trees_say_where_and_what():
    with pytest.raises(ValueError, match=r"(?s)tree_map rest\[0\]\['a'\].*2 children.*3 children"):
        tu.tree_map(lambda x, y: x, {"a": (1, 2)}, {"a": (1, 2, 3)})
    with pytest.raises(ValueError, match=r"(?s)key.*\['a'\].*\['b'\]"):
        tu.tree_map(lambda x, y: x, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match=r"(?s)tree_map_with_path rest\[0\].*"):
        tu.tree_map_with_path(lambda p, x, y: x, Params(1, 2), (1, 2))
    with pytest.raises(ValueError, match=r"structure \(\*, \[\*\]\) has 2 leaves, got 1"):
        tu.tree_unflatten(tu.tree_structure((0, [0])), [1])
    with pytest.raises(ValueError, match="has 2 leaves, got 3"):
        tu.tree_unflatten(tu.tree_structure((0, [0])), [1, 2, 3])


def test_module_surface():
    assert aotc.tree_util is tu
    for name in tu.__all__:
        assert hasattr(tu, name), name
    with pytest.raises(AttributeError, match="has no attribute 'tree_nope'$"):
        tu.tree_nope  # noqa: B018
    assert tu.describe(tu.tree_structure({"a": (1, 2)})) == "{'a': (*, *)}"
    assert tu.describe(tu.tree_structure(Scaled(1, 2))) == "CustomTreeNode(Scaled[2], [*])"
