"""The runtime's pytrees (aotc/runtime/tree.py): the metadata JSON of every node kind (old
artifacts' included), how results are rebuilt (the recorded type where it can be found,
the plain form otherwise), how arguments are matched, and the rebuild on a runtime-only
install without optree."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from runtime_artifacts import LEAF, compile_mlir, meta, reflection, tup

from aotc import runtime
from aotc.runtime import tree
from aotc.runtime.errors import ArgumentError
from aotc.runtime.tree import TreeDef

PLAIN_TYPES = '''
from typing import NamedTuple


class Pair(NamedTuple):
    lo: object
    hi: object
'''

AOTC_TYPES = '''
import dataclasses

import aotc.tree_util as tu


@tu.register_dataclass
@dataclasses.dataclass
class Box:
    x: object
    scale: float = dataclasses.field(default=2.0, metadata={"static": True})


@tu.register_pytree_node_class
class Scaled:
    def __init__(self, x, k):
        self.x, self.k = x, k

    def tree_flatten(self):
        return (self.x,), self.k

    @classmethod
    def tree_unflatten(cls, k, children):
        return cls(children[0], k)
'''


def _pair(module: str = "rt_plain_types") -> TreeDef:
    return TreeDef("namedtuple", (LEAF, LEAF), ("lo", "hi"), f"{module}:Pair")


def _box(scale: float = 2.0, module: str = "rt_aotc_types") -> TreeDef:
    return TreeDef("dataclass", (LEAF,), ("x",), f"{module}:Box",
                   tree.encode_text({"scale": scale}))


def _scaled(k=3, module: str = "rt_aotc_types") -> TreeDef:
    return TreeDef("custom", (LEAF,), (), f"{module}:Scaled", tree.encode_text(k))


ORDERED = TreeDef("ordereddict", (LEAF, LEAF), ("z", "a"))


def _trees_mlir(module_suffix: str = "") -> str:
    """trees(p: Pair(lo, hi), b: Box(x)) -> (Pair(lo + hi, lo), Box(x), Scaled(hi),
    OrderedDict(z=lo, a=hi))"""
    f2 = "tensor<2xf32>"
    in_tree = tup(_pair(), _box())
    out_tree = tup(_pair(), _box(), _scaled(), ORDERED)
    m = meta("trees", [("p.lo", [2], "float32"), ("p.hi", [2], "float32"),
                       ("b.x", [2], "float32")],
             [(f"out{i}", [2], "float32") for i in range(6)], in_tree, out_tree)
    return f"""
#m1 = affine_map<(d0) -> (d0)>
func.func @trees(%lo: {f2}, %hi: {f2}, %x: {f2}) -> ({f2}, {f2}, {f2}, {f2}, {f2}, {f2})
    {reflection(m)} {{
  %e = tensor.empty() : {f2}
  %s = linalg.generic {{indexing_maps = [#m1, #m1, #m1], iterator_types = ["parallel"]}}
      ins(%lo, %hi : {f2}, {f2}) outs(%e : {f2}) {{
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  }} -> {f2}
  return %s, %lo, %x, %hi, %lo, %hi : {f2}, {f2}, {f2}, {f2}, {f2}, {f2}
}}"""


@pytest.fixture(scope="module")
def types_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("types")
    (folder / "rt_plain_types.py").write_text(PLAIN_TYPES)
    (folder / "rt_aotc_types.py").write_text(AOTC_TYPES)
    return folder


@pytest.fixture(scope="module")
def trees_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("trees") / "trees.vmfb"
    path.write_bytes(compile_mlir(_trees_mlir()))
    return path


@pytest.fixture
def types(types_dir, monkeypatch):
    """The two type modules, importable (and imported) for one test."""
    import importlib

    monkeypatch.syspath_prepend(str(types_dir))
    plain = importlib.import_module("rt_plain_types")
    with_aotc = importlib.import_module("rt_aotc_types")
    yield plain, with_aotc
    for name in ("rt_plain_types", "rt_aotc_types"):
        sys.modules.pop(name, None)


A = np.array([1, 2], np.float32)
B = np.array([10, 20], np.float32)
C = np.array([5, 6], np.float32)


def test_old_artifact_json_still_loads():
    """The JSON aotc wrote before NamedTuples and registered nodes existed."""
    old = {"kind": "tuple", "children": [
        {"kind": "leaf"}, {"kind": "none"},
        {"kind": "list", "children": [{"kind": "leaf"}]},
        {"kind": "dict", "keys": ["a", "b"], "children": [{"kind": "leaf"}, {"kind": "leaf"}]}]}
    treedef = TreeDef.from_json(json.loads(json.dumps(old)))
    assert treedef.to_json() == old
    assert str(treedef) == "(*, None, [*], {'a': *, 'b': *})"
    assert tree.unflatten(treedef, [1, 2, 3, 4]) == (1, None, [2], {"a": 3, "b": 4})
    leaves, again = tree.flatten((1, None, [2], {"b": 4, "a": 3}))
    assert again == treedef and leaves == [1, 2, 3, 4]


@pytest.mark.parametrize("treedef", [
    _pair(), _box(), _scaled(), ORDERED, _scaled(k=(1, [2.5, None], {"s": "t"})),
    TreeDef("defaultdict", (LEAF,), ("k",), "builtins:list"),
    TreeDef("deque", (LEAF, LEAF), aux=tree.encode_text(5)),
    TreeDef("custom", (LEAF,), (), "m:Q", None),  # static data that JSON cannot hold
    TreeDef("dict", (LEAF, LEAF), ((1, "a"), 2)),  # tuple and int keys
], ids=str)
def test_every_kind_round_trips_through_json(treedef):
    text = json.dumps(tup(treedef).to_json())
    assert TreeDef.from_json(json.loads(text)) == tup(treedef)


def test_static_data_encoding():
    for value in [None, True, 3, 2.5, "s", (1, (2,)), [1, (2, "x")], {"a": (1,), "b": [None]}]:
        back = tree.decode(json.loads(json.dumps(tree.encode(value))))
        assert back == value and type(back) is type(value)
    for value in [{1: 2}, {1, 2}, np.float32(1), object()]:
        with pytest.raises(tree.NotRepresentable):
            tree.encode(value)
        assert tree.encode_text(value) is None


def test_recorded_types_are_rebuilt_where_found(types):
    plain, with_aotc = types
    treedef = tup(_pair(), _box(), _scaled(), ORDERED,
                  TreeDef("defaultdict", (LEAF,), ("k",), "builtins:list"),
                  TreeDef("deque", (LEAF,), aux=tree.encode_text(3)))
    pair, box, scaled, ordered, dd, dq = tree.unflatten(treedef, range(8))
    assert type(pair) is plain.Pair and pair == plain.Pair(0, 1)
    assert type(box) is with_aotc.Box and (box.x, box.scale) == (2, 2.0)
    assert type(scaled) is with_aotc.Scaled and (scaled.x, scaled.k) == (3, 3)
    assert type(ordered) is collections.OrderedDict and list(ordered.items()) == [("z", 4),
                                                                                  ("a", 5)]
    assert type(dd) is collections.defaultdict and dd.default_factory is list and dd["k"] == 6
    assert type(dq) is collections.deque and dq.maxlen == 3 and list(dq) == [7]


def test_types_that_cannot_be_found_come_back_plain(types):
    treedef = tup(
        _pair(module="no_such_module"),  # not importable
        TreeDef("namedtuple", (LEAF, LEAF), ("a", "b"), "rt_plain_types:Pair"),  # changed
        TreeDef("namedtuple", (LEAF,), ("a",), "tests.x:f.<locals>.P"),  # a local class
        _box(module="no_such_module"),
        TreeDef("dataclass", (LEAF,), ("x",), "rt_aotc_types:Box", None),  # no static data
        _scaled(module="no_such_module"),
        TreeDef("custom", (LEAF,), (), "rt_plain_types:Pair", "3"),  # not registered
        TreeDef("defaultdict", (LEAF,), ("k",), "no_such_module:factory"),
    )
    assert tree.unflatten(treedef, range(10)) == (
        (0, 1), (2, 3), (4,), {"x": 5}, {"x": 6}, (7,), (8,), {"k": 9})


def test_arguments_match_their_type_or_its_plain_form(types):
    plain, with_aotc = types
    treedef = tup(_pair(), _box(), _scaled(), ORDERED)
    ours = (plain.Pair(1, 2), with_aotc.Box(3), with_aotc.Scaled(4, 3),
            collections.OrderedDict(z=5, a=6))
    assert tree.leaves_like(treedef, ours) == [1, 2, 3, 4, 5, 6]
    assert tree.leaves_like(treedef, ((1, 2), {"x": 3}, (4,), {"a": 6, "z": 5})) == [1, 2, 3, 4,
                                                                                    5, 6]
    for bad in [(plain.Pair(1, 2), with_aotc.Box(3, scale=9.0), (4,), {"a": 6, "z": 5}),
                ((1, 2), {"x": 3}, with_aotc.Scaled(4, 5), {"a": 6, "z": 5}),
                ((1, 2), {"y": 3}, (4,), {"a": 6, "z": 5}),
                ((1, (2, 2)), {"x": 3}, (4,), {"a": 6, "z": 5}),
                ([1, 2], {"x": 3}, (4,), {"a": 6, "z": 5}),
                ((1, 2), {"x": 3}, (4,))]:
        assert tree.leaves_like(treedef, bad) is None, bad
    # What arguments look like, for messages: NamedTuples, aotc's registered classes, ...
    assert tree.structure(ours) == treedef
    # flatten keeps to tuples, lists, dicts and None, as it always has.
    assert tree.flatten(ours) == (list(ours[:3]) + [6, 5], tup(LEAF, LEAF, LEAF,
                                                            TreeDef("dict", (LEAF, LEAF),
                                                                    ("a", "z"))))


def test_results_and_arguments_of_a_loaded_artifact(trees_path, types):
    plain, with_aotc = types
    m = runtime.load(str(trees_path))
    pair, box, scaled, ordered = m.trees(plain.Pair(A, B), with_aotc.Box(C))
    assert type(pair) is plain.Pair and type(box) is with_aotc.Box
    np.testing.assert_array_equal(np.asarray(pair.lo), A + B)
    np.testing.assert_array_equal(np.asarray(box.x), C)
    assert type(scaled) is with_aotc.Scaled and scaled.k == 3
    assert list(ordered) == ["z", "a"]
    # Plain forms are accepted for the arguments.
    pair2, *_ = m.trees((A, B), {"x": C})
    np.testing.assert_array_equal(np.asarray(pair2.lo), A + B)
    with pytest.raises(ArgumentError, match=r"static data of a node .* differs"):
        m.trees(plain.Pair(A, B), with_aotc.Box(C, scale=3.0))
    with pytest.raises(ArgumentError, match=r"expected arguments with structure "
                                            r"\(Pair\(lo=\*, hi=\*\), Box\(x=\*\)\), got"):
        m.trees(A, B, C)


RUNTIME_ONLY = textwrap.dedent("""
    import sys

    class Block:
        # Stands in for a device with neither the compiler nor optree installed.
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "optree" or name.startswith("iree.compiler"):
                raise ImportError(f"{name} is not installed here (blocked by the test)")
            return None

    sys.meta_path.insert(0, Block())
    sys.path.insert(0, sys.argv[2])
    import numpy as np
    from aotc import runtime

    m = runtime.load(sys.argv[1])
    a, b, c = (np.array(v, np.float32) for v in ([1, 2], [10, 20], [5, 6]))
    pair, box, scaled, ordered = m.trees((a, b), {"x": c})
    print(type(pair).__module__, type(pair).__name__, np.asarray(pair.lo).tolist())
    print(type(box).__name__, sorted(box), type(scaled).__name__, len(scaled))
    print(type(ordered).__name__, list(ordered))
    assert "optree" not in sys.modules and "aotc.tree_util" not in sys.modules
""")


def test_runtime_only_rebuild_without_optree(trees_path, types_dir, tmp_path):
    """The NamedTuple's module imports nothing of aotc: it is rebuilt; the dataclass and
    the custom class need aotc.tree_util (optree), absent here: plain dict and tuple."""
    script = tmp_path / "runtime_only.py"
    script.write_text(RUNTIME_ONLY)
    done = subprocess.run([sys.executable, str(script), str(trees_path), str(types_dir)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split("\n")[:3] == [
        "rt_plain_types Pair [11.0, 22.0]", "dict ['x'] tuple 1", "OrderedDict ['z', 'a']"]
    assert done.stderr == ""
