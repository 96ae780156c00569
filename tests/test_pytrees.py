"""Pytrees wherever aotc takes or returns them: NamedTuples, OrderedDicts, defaultdicts,
registered dataclasses and classes as jit/export arguments and results (same types out,
leaf names from key paths, the cache key), exported artifacts whose results the runtime
rebuilds (or falls back to tuples and dicts), vmap axes as prefix trees, and lax
carries, xs and ys."""

from __future__ import annotations

import collections
import dataclasses
import importlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.numpy as anp
import aotc.tree_util as tu
from aotc import runtime
from pytree_types import Params, Scaled, State


X = np.arange(6, dtype=np.float32).reshape(2, 3)
V = np.array([1.0, -2.0, 3.0], np.float32)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AOTC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


# ---- jit ---------------------------------------------------------------------------------


def test_jit_returns_the_types_it_was_given(cache_dir):
    def step(state, sc, od, dd):
        w = state.params.w - state.lr * state.momentum[0]
        new = State(Params(w, state.params.b), (state.momentum[0] * 0.5, state.momentum[1]),
                    state.lr)
        both = collections.OrderedDict([("z", od["z"] * sc.scale), ("a", od["a"])])
        return new, Scaled(sc.x + 1, sc.scale), both, collections.defaultdict(list, dd)

    jf = aotc.jit(step)
    args = (State(Params(V, V), (V, V), lr=0.5), Scaled(V, 3.0),
            collections.OrderedDict([("z", V), ("a", V)]), collections.defaultdict(int, {"k": V}))
    for _ in range(2):
        new, sc, od, dd = jf(*args)
    assert jf.stats["traces"] == 1
    assert type(new) is State and type(new.params) is Params and new.lr == 0.5
    _close(new.params.w, V - 0.5 * V)
    _close(new.momentum[0], V * 0.5)
    assert type(sc) is Scaled and sc.scale == 3.0
    _close(sc.x, V + 1)
    assert type(od) is collections.OrderedDict and list(od) == ["z", "a"]
    _close(od["z"], V * 3)
    assert type(dd) is collections.defaultdict and dd.default_factory is list
    names = [a.name for a in jf.lower(*args).metadata.args]
    assert names == ["state.params.w", "state.params.b", "state.momentum[0]",
                     "state.momentum[1]", "sc[0]", "od['z']", "od['a']", "dd['k']"]


def test_cache_key_tells_node_types_and_static_data_apart(cache_dir):
    def f(p):
        first, second = tu.tree_leaves(p)
        return first * 2 + second

    jf = aotc.jit(f)
    calls = [(V, V), Params(V, V), [V, V], Params(V, V), Scaled((V, V), 1.0),
             Scaled((V, V), 2.0), Scaled((V, V), 1.0)]
    for p in calls:
        out = jf(p)
        _close(out, V * 2 + V)
    assert jf.stats["traces"] == 5  # tuple, Params, list, Scaled 1.0, Scaled 2.0
    s = aotc.jit(lambda st: st.params.w * st.lr)
    for lr in (0.1, 0.2, 0.1):
        _close(s(State(Params(V, V), (), lr=lr)), V * lr)
    assert s.stats["traces"] == 2


def test_partial_is_a_pytree_argument(cache_dir):
    scale = tu.Partial(anp.multiply, V)
    jf = aotc.jit(lambda f, x: f(x))
    _close(jf(scale, V), V * V)
    _close(jf(tu.Partial(anp.multiply, V * 2), V), V * V * 2)
    assert jf.stats["traces"] == 1  # the function is static data, the array a leaf


class Opaque:
    pass


@dataclasses.dataclass
class Unregistered:
    x: object


def test_objects_that_are_not_pytrees_say_how_to_fix(cache_dir):
    jf = aotc.jit(lambda a, b: b)
    with pytest.raises(aotc.TracingError) as info:
        jf(V, {"o": Opaque()})
    message = str(info.value)
    for part in ("argument b['o']", "got Opaque", "aotc.tree_util.register_pytree_node",
                 "static argument"):
        assert part in message, message
    with pytest.raises(aotc.TracingError, match=r"register it with "
                                                r"aotc.tree_util.register_dataclass\(Unregistered\)"):
        jf(V, Unregistered(V))
    with pytest.raises(aotc.TracingError, match=r"output 1 of .* got Opaque. To return its "
                                                r"arrays, register Opaque as a pytree node"):
        aotc.jit(lambda a: (a, Opaque()))(V)
    with pytest.raises(aotc.TracingError, match=r"Scaled has static data \[1, 2\] \(list\), "
                                                r"which is not hashable"):
        aotc.jit(lambda s: s.x)(Scaled(V, [1, 2]))


EXIT_SCRIPT = textwrap.dedent("""
    import dataclasses

    import numpy as np

    import aotc
    import aotc.tree_util as tu


    @tu.register_dataclass
    @dataclasses.dataclass
    class State:
        w: object

        def scaled(self):
            return self.w * 2


    step = aotc.jit(lambda s: State(s.scaled()))  # kept in the module that defines State
    out = step(State(np.ones(3, np.float32)))
    print(type(out).__name__, np.asarray(out.w).tolist())
""")


def test_process_exit_is_clean_with_registered_classes(tmp_path, cache_dir):
    """optree's structures hide their node types from the garbage collector; aotc drops
    the ones it holds at exit, so IREE reports no objects leaked."""
    script = tmp_path / "exit.py"
    script.write_text(EXIT_SCRIPT)
    env = dict(os.environ, AOTC_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "State [2.0, 2.0, 2.0]"
    assert done.stderr == ""


# ---- export and the runtime ----------------------------------------------------------------

TYPES = '''
import dataclasses
from typing import NamedTuple

import aotc.tree_util as tu


class Stats(NamedTuple):
    mean: object
    total: object


@tu.register_dataclass
@dataclasses.dataclass
class Model:
    w: object
    name: str = dataclasses.field(default="m", metadata={"static": True})
'''


def _types_module(tmp_path, monkeypatch, name: str):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(TYPES))
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


def test_exported_results_are_rebuilt_by_runtime_load(tmp_path, monkeypatch):
    types = _types_module(tmp_path, monkeypatch, "exported_types_kept")

    def f(model, x):
        y = x @ model.w
        return types.Stats(anp.mean(y), anp.sum(y)), types.Model(model.w * 2, model.name)

    spec = aotc.ShapeDtypeStruct
    art = aotc.export(f, types.Model(spec((3, 2), "float32"), "mlp"), spec((2, 3), "float32"))
    path = art.save(str(tmp_path / "f.vmfb"))
    assert str(art.functions["f"]) == (
        "f(model.w: float32[3,2], x: float32[2,3]) -> (out[0].mean: float32[], "
        "out[0].total: float32[], out[1].w: float32[3,2])")
    m = runtime.load(path)
    w = np.ones((3, 2), np.float32)
    stats, model = m.f(types.Model(w, "mlp"), X)
    assert type(stats) is types.Stats and type(model) is types.Model and model.name == "mlp"
    _close(stats.total, (X @ w).sum())
    _close(model.w, w * 2)
    stats, _ = m.f({"w": w}, X)  # the dataclass's plain form, for a caller without the type
    _close(stats.mean, (X @ w).mean())
    with pytest.raises(runtime.ArgumentError, match="static data of a node"):
        m.f(types.Model(w, "other"), X)


def test_results_fall_back_to_plain_containers_where_the_type_is_gone(tmp_path, monkeypatch):
    types = _types_module(tmp_path, monkeypatch, "exported_types_gone")
    spec = aotc.ShapeDtypeStruct((3,), "float32")
    art = aotc.export(lambda x: (types.Stats(x.mean(), x.sum()), types.Model(x, "k")), spec,
                      name="g")
    path = art.save(str(tmp_path / "g.vmfb"))
    monkeypatch.delitem(sys.modules, "exported_types_gone")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    stats, model = runtime.load(path).g(V)
    assert type(stats) is tuple and len(stats) == 2
    _close(stats[1], V.sum())
    assert type(model) is dict and list(model) == ["w"]
    _close(model["w"], V)


# ---- vmap ----------------------------------------------------------------------------------


def test_vmap_axes_are_prefix_trees_of_namedtuples_and_dataclasses(cache_dir):
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)

    def f(p):
        return Params(p.w * p.b, anp.sum(p.b))

    vf = aotc.jit(aotc.vmap(f, in_axes=(Params(0, None),), out_axes=Params(0, None)))
    out = vf(Params(xs, V))
    assert type(out) is Params
    _close(out.w, xs * V)
    _close(out.b, V.sum())

    def g(s):
        return s.params.w * s.lr + s.momentum[0]

    axes = State(Params(0, None), (None,), lr=0.5)
    out = aotc.jit(aotc.vmap(g, in_axes=(axes,)))(State(Params(xs, V), (V,), lr=0.5))
    _close(out, xs * 0.5 + V)
    od = collections.OrderedDict([("z", xs), ("a", V)])
    axes = collections.OrderedDict([("z", 0), ("a", None)])
    out = aotc.jit(aotc.vmap(lambda d: d["z"] - d["a"], in_axes=(axes,)))(od)
    _close(out, xs - V)


def test_vmap_axes_that_do_not_match_say_what_and_where():
    xs = np.ones((4, 3), np.float32)
    f = aotc.vmap(lambda p: p.w + p.b, in_axes=({"w": 0, "b": None},))
    with pytest.raises(aotc.AotcError, match=r"in_axes gives a dict .* for p, which is a "
                                             r"Params \(Params\(w=\*, b=\*\)\)"):
        aotc.jit(f)(Params(xs, V))
    f = aotc.vmap(lambda s: s.params.w, in_axes=(State(Params(0, None), (), lr=0.9),))
    with pytest.raises(aotc.AotcError, match=r"in_axes gives a State .* for s"):
        aotc.jit(f)(State(Params(xs, V), (), lr=0.1))
    f = aotc.vmap(lambda p: p.w, in_axes=(Params(0, (None, None)),))
    with pytest.raises(aotc.AotcError, match=r"in_axes gives a tuple \(None, None\) for p.b, "
                                             r"which is a single value"):
        aotc.jit(f)(Params(xs, V))


# ---- lax control flow ---------------------------------------------------------------------


def test_lax_carries_xs_and_ys_of_registered_types(cache_dir):
    def loops(state, sc, od):
        def body(i, s):
            return State(Params(s.params.w + i, s.params.b), s.momentum, s.lr)

        s = alax.fori_loop(0, 3, body, state)
        p = alax.while_loop(lambda c: c.w[0] < 10, lambda c: Params(c.w + 4, c.b), s.params)

        def step(c, x):
            return Scaled(c.x + x.w, c.scale), Params(c.x * c.scale, anp.sum(x.b))

        last, ys = alax.scan(step, sc, Params(X, X))
        branch = alax.cond(od["z"][0] > 0, lambda d: collections.OrderedDict(
            [("z", d["a"]), ("a", d["z"])]), lambda d: d, od)
        return s, p, last, ys, branch

    s, p, last, ys, branch = aotc.jit(loops)(
        State(Params(V, V), (V,), lr=0.25), Scaled(V, 2.0),
        collections.OrderedDict([("z", V), ("a", V * 2)]))
    assert type(s) is State and s.lr == 0.25
    _close(s.params.w, V + 3)
    assert type(p) is Params
    _close(p.w, V + 3 + 4 * np.ceil((10 - (V[0] + 3)) / 4))
    assert type(last) is Scaled and last.scale == 2.0
    _close(last.x, V + X.sum(axis=0))
    assert type(ys) is Params
    _close(ys.w, np.stack([V, V + X[0]]) * 2)
    _close(ys.b, X.sum(axis=1))
    assert type(branch) is collections.OrderedDict and list(branch) == ["z", "a"]
    _close(branch["z"], V * 2)


def test_lax_structure_mismatches_say_what_was_expected(cache_dir):
    with pytest.raises(aotc.TracingError, match=r"expected the structure Params\(w=\*, b=\*\), "
                                                r"got \(\*, \*\)"):
        aotc.jit(lambda p: alax.while_loop(lambda c: c[0][0] < 1, lambda c: (c.w, c.b), p))(
            Params(V, V))
    with pytest.raises(aotc.TracingError, match=r"expected the structure "
                                                r"CustomTreeNode\(Scaled\[2.0\], \[\*\]\), got "
                                                r"CustomTreeNode\(Scaled\[3.0\], \[\*\]\)"):
        aotc.jit(lambda s: alax.fori_loop(0, 2, lambda i, c: Scaled(c.x, 3.0), s))(
            Scaled(V, 2.0))
