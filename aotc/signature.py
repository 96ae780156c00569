"""From Python call arguments to what tracing and caching need: abstract leaves, the
argument structure, static values, names, and the artifact metadata."""

from __future__ import annotations

import atexit
import collections
import dataclasses
import inspect
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import optree

from . import dtypes, tree_util, x64
from .core import ShapeDtypeStruct, Tracer
from .errors import AotcError, TracingError
from .runtime import tree
from .runtime.errors import ArgumentError
from .runtime.subclasses import subclass_refusal
from .runtime.metadata import FunctionMetadata, TensorSpec


@dataclass(frozen=True)
class Aval(ShapeDtypeStruct):
    """An abstract argument leaf; ``weak`` marks a Python scalar argument."""

    weak: bool = False

    def __init__(self, shape, dtype, weak: bool = False):
        super().__init__(shape, dtype)
        object.__setattr__(self, "weak", weak)

    @property
    def key(self) -> tuple:
        return (self.shape, self.dtype.name, self.weak)


_PY_SCALAR_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
                     complex: np.dtype(np.complex128)}
# With x64 off (JAX's dtypes): Python complexes are weak too, and 64-bit dtypes narrowed.
_PY_SCALAR_DTYPES_X32 = {t: x64.DEFAULTS[t] for t in (bool, int, float, complex)}


def abstractify(x: Any, where: str) -> Aval:
    """The abstract value of one argument leaf."""
    if not x64.enabled():
        return _abstractify_x32(x, where)
    return _abstractify(x, where)


def _abstractify(x: Any, where: str) -> Aval:
    if isinstance(x, Aval):
        return x
    if isinstance(x, ShapeDtypeStruct):
        return Aval(x.shape, x.dtype)
    if type(x) in _PY_SCALAR_DTYPES:
        return Aval((), _PY_SCALAR_DTYPES[type(x)], weak=True)
    if isinstance(x, Tracer):
        raise TracingError(
            f"{where}: a traced array was passed to a jitted function inside another traced "
            f"function; call the inner function directly (nested jit is inlined) instead"
        )
    if isinstance(x, np.ndarray) and type(x) is not np.ndarray:
        refusal = subclass_refusal(x, where)  # a masked array, np.matrix, ...
        if refusal is not None:
            raise ArgumentError(refusal)
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dtype is None:
        try:
            arr = np.asarray(x)
        except Exception:
            arr = None
        if arr is None or arr.dtype.kind in "OUSV":  # objects, strings, bytes, records
            raise TracingError(f"{where}: {not_an_array(x)}")
        shape, dtype = arr.shape, arr.dtype
    return Aval(tuple(shape), dtypes.canonicalize(dtype, where))


def _abstractify_x32(x: Any, where: str) -> Aval:
    """``abstractify`` with x64 off: Python scalars weak int32/float32/complex64, numpy's
    64-bit arrays and specs 32-bit (JAX converts them silently)."""
    dtype = _PY_SCALAR_DTYPES_X32.get(type(x))
    if dtype is not None:
        return Aval((), dtype, weak=True)
    aval = _abstractify(x, where)
    narrowed = x64.narrow(aval.dtype)
    return aval if narrowed == aval.dtype else Aval(aval.shape, narrowed, aval.weak)


def narrow_leaves(leaves: list, avals: Sequence[Aval]) -> list:
    """The call's leaves as the compiled function takes them with x64 off: each 64-bit
    array converted to its aval's dtype, Python complexes to complex64 arrays (other
    Python scalars the runtime converts itself)."""
    out = leaves
    for i, (x, aval) in enumerate(zip(leaves, avals)):
        dtype = getattr(x, "dtype", None)
        if isinstance(x, ShapeDtypeStruct):  # a spec to lower or export: no data
            continue
        if (type(x) is complex or isinstance(dtype, np.dtype) and dtype != aval.dtype
                and not aval.weak):
            if out is leaves:
                out = list(leaves)
            out[i] = np.asarray(x).astype(aval.dtype)
    return out


def not_an_array(x: Any) -> str:
    """Why a pytree leaf ``x`` cannot be an array argument, and the fixes."""
    name = type(x).__name__
    register = (f"register it with aotc.tree_util.register_dataclass({name})"
                if dataclasses.is_dataclass(x) else
                f"register {name} as a pytree node (aotc.tree_util.register_pytree_node, "
                f"register_pytree_node_class, or register_dataclass for a dataclass)")
    return (f"expected an array, a Python scalar, aotc.ShapeDtypeStruct or a pytree of them, "
            f"got {name}, which is none of these. To pass its arrays, {register}; to pass it "
            f"as a Python value, make it a static argument (static_argnums / "
            f"static_argnames)")


@dataclass(frozen=True)
class CallSignature:
    """What one call looks like to the compiler: the cache key and how to rebuild args."""

    avals: tuple[Aval, ...]
    # The structure of (dynamic positional args tuple, dynamic kwargs dict).
    args_tree: tree_util.PyTreeDef
    static_args: tuple  # ((position or name, value), ...)
    leaf_names: tuple[str, ...]
    # Indices of the leaves of donated arguments. Not part of the key: the binder's
    # donate_argnums/donate_argnames and the args_tree determine it.
    donated: tuple[int, ...] = ()
    # aotc.config.x64 when the call was bound: the dtype rules it traces with.
    x64: bool = True

    def __post_init__(self):
        _HELD_SIGNATURES.add(self)

    @property
    def key(self) -> tuple:
        key = self.__dict__.get("_key")
        if key is None:  # one key object per signature: the one a cache holds is released
            key = (tuple(a.key for a in self.avals), _Structure(self.args_tree),
                   self.static_args, self.x64)
            object.__setattr__(self, "_key", key)
        return key


class _Structure:
    """A pytree structure held by a cache (a cache key, a result rebuild).

    optree's ``PyTreeSpec`` keeps its node types out of sight of Python's garbage
    collector. A structure naming a class of the module that also holds the jitted
    function (its methods' globals) thus forms a cycle the collector cannot free, which
    would keep the compiled module alive past interpreter exit (IREE then reports leaked
    objects). At exit the held structures are dropped (``_release_at_exit``)."""

    __slots__ = ("spec", "_hash", "__weakref__")

    def __init__(self, spec: tree_util.PyTreeDef):
        self.spec, self._hash = spec, hash(spec)
        _HELD_STRUCTURES.add(self)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        # A bare structure compares too: the fast path looks its held keys up by one.
        return self.spec == (other.spec if isinstance(other, _Structure) else other)


def held_structure(spec: tree_util.PyTreeDef) -> _Structure:
    """``spec`` as a cache may hold it (``_Structure``); equal to ``spec`` itself."""
    return _Structure(spec)


_HELD_SIGNATURES: weakref.WeakSet = weakref.WeakSet()
_HELD_STRUCTURES: weakref.WeakSet = weakref.WeakSet()
_BINDERS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _release_at_exit() -> None:
    """Drops the pytree structures aotc's caches hold (see ``_Structure``) and the
    pytree registrations, so the collector frees the cycles through user classes."""
    for signature in list(_HELD_SIGNATURES):
        object.__setattr__(signature, "args_tree", None)
    for structure in list(_HELD_STRUCTURES):
        structure.spec = None
    for binder in list(_BINDERS):
        binder._names.clear()
    _TRACED_RESULTS.clear()
    tree_util.unregister_all()


def _hashable_static(value, where: str):
    try:
        hash(value)
    except TypeError:
        raise AotcError(
            f"{where}: static arguments must be hashable (they key the compile cache), got "
            f"{type(value).__name__}; pass a tuple instead of a list, or make it a regular "
            f"array argument"
        ) from None
    return value


class ArgumentBinder:
    """Splits calls of ``fn`` into static and dynamic parts, as jax.jit does, and marks
    the leaves of donated arguments."""

    def __init__(self, fn: Callable, static_argnums: Sequence[int] = (),
                 static_argnames: Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
                 donate_argnames: str | Sequence[str] = ()):
        self.fn = fn
        self.fn_name = getattr(fn, "__name__", "function")
        try:
            self.parameters = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            self.parameters = []
        names = [p.name for p in self.parameters
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        static_argnums = ((static_argnums,) if isinstance(static_argnums, int)
                          else tuple(static_argnums))
        static_argnames = ((static_argnames,) if isinstance(static_argnames, str)
                           else tuple(static_argnames))
        # JAX semantics: a static argument can be named by position or by name.
        self.static_argnums = set(static_argnums) | {names.index(n) for n in static_argnames
                                                     if n in names}
        self.static_argnames = set(static_argnames) | {names[i] for i in static_argnums
                                                       if 0 <= i < len(names)}
        self.positional_names = names
        self.donate_argnums, self.donate_argnames = self._donation(
            names, donate_argnums, donate_argnames)
        # (args_tree, number of positional arguments) -> the leaves' names.
        self._names: dict[tuple, list[str]] = {}
        _BINDERS.add(self)

    def _donation(self, names: list[str], argnums, argnames) -> tuple[frozenset, frozenset]:
        """JAX's rules: give positions or names (or both); whichever is missing is inferred
        from the signature. A static argument cannot be donated; positions and names must
        exist when the signature is fixed (no ``*args``/``**kwargs``)."""
        argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames)
        where = f"{self.fn_name}()"
        for i in argnums:
            if not isinstance(i, int) or isinstance(i, bool):
                raise AotcError(f"{where}: donate_argnums must be integers, got {i!r}")
        for n in argnames:
            if not isinstance(n, str):
                raise AotcError(f"{where}: donate_argnames must be strings, got {n!r}")
        kinds = {p.kind for p in self.parameters}
        fixed = bool(self.parameters) and inspect.Parameter.VAR_POSITIONAL not in kinds
        if fixed:
            bad = [i for i in argnums if not -len(names) <= i < len(names)]
            if bad:
                raise AotcError(
                    f"{where}: donate_argnums={tuple(argnums)} refers to position {bad[0]}, "
                    f"but the function takes {len(names)} positional argument"
                    f"{'' if len(names) == 1 else 's'} ({', '.join(names) or 'none'}). "
                    f"Use positions 0..{len(names) - 1} or donate_argnames"
                )
        all_names = {p.name for p in self.parameters
                     if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        if self.parameters and inspect.Parameter.VAR_KEYWORD not in kinds:
            bad_names = [n for n in argnames if n not in all_names]
            if bad_names:
                raise AotcError(
                    f"{where}: donate_argnames names {bad_names[0]!r}, which is not a "
                    f"parameter; the parameters are {', '.join(sorted(all_names)) or 'none'}"
                )
        nums = {i % len(names) if fixed and i < 0 else i for i in argnums}
        nums |= {names.index(n) for n in argnames if n in names}
        by_name = set(argnames) | {names[i] for i in nums if 0 <= i < len(names)}
        clash = sorted((by_name & self.static_argnames)
                       | {names[i] for i in nums & self.static_argnums if 0 <= i < len(names)})
        clash_nums = sorted(i for i in nums & self.static_argnums if not 0 <= i < len(names))
        if clash or clash_nums:
            shown = clash[0] if clash else f"position {clash_nums[0]}"
            raise AotcError(
                f"{where}: argument {shown} is both static and donated. Static arguments "
                f"are Python values baked into the compiled code and have no buffer to "
                f"donate: remove it from donate_argnums/donate_argnames or from "
                f"static_argnums/static_argnames"
            )
        return frozenset(nums | {i for i in argnums if i < 0 and not fixed}), frozenset(by_name)

    def is_donated(self, i: int, n_args: int) -> bool:
        """Is the positional argument at ``i`` (of ``n_args``) donated?"""
        nums = self.donate_argnums
        return (i in nums or (i - n_args) in nums
                or (i < len(self.positional_names)
                    and self.positional_names[i] in self.donate_argnames))

    def arg_name(self, i: int) -> str:
        return self.positional_names[i] if i < len(self.positional_names) else f"arg{i}"

    def bind(self, args: tuple, kwargs: dict) -> tuple[CallSignature, list]:
        """Returns the call's signature and its dynamic leaves (the values to pass)."""
        n = len(args)
        static = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self.static_argnums or (i - n) in self.static_argnums:
                static.append((i, _hashable_static(
                    a, f"{self.fn_name}() static argument {self.arg_name(i)}")))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self.static_argnames:
                static.append((k, _hashable_static(v, f"{self.fn_name}() static argument {k}")))
            else:
                dyn_kwargs[k] = v
        leaves, args_tree = tree_util.tree_flatten((tuple(dyn_args), dyn_kwargs))
        names = self._names.get((args_tree, n))
        if names is None:
            names = self._names[(args_tree, n)] = self._leaf_names(args, kwargs, args_tree)
        avals = tuple(abstractify(x, f"{self.fn_name}() argument {name}")
                      for x, name in zip(leaves, names))
        donated = self._donated_leaves(args, kwargs, args_tree) if (
            self.donate_argnums or self.donate_argnames) else ()
        wide = x64.enabled()
        if not wide:
            leaves = narrow_leaves(leaves, avals)
        return CallSignature(avals, args_tree, tuple(static), tuple(names), donated,
                             wide), leaves

    def _donated_leaves(self, args, kwargs, args_tree: tree_util.PyTreeDef) -> tuple[int, ...]:
        """The flat indices of the leaves of donated arguments (positional or keyword)."""
        n = len(args)
        dyn_positions = [i for i in range(n)
                         if not (i in self.static_argnums or (i - n) in self.static_argnums)]
        pos_tree, kw_tree = args_tree.children()
        out, start = [], 0
        for i, child in zip(dyn_positions, pos_tree.children()):
            count = child.num_leaves
            if self.is_donated(i, n):
                out.extend(range(start, start + count))
            start += count
        for key, child in zip(kw_tree.entries(), kw_tree.children()):
            count = child.num_leaves
            if key in self.donate_argnames:
                out.extend(range(start, start + count))
            start += count
        return tuple(out)

    def _leaf_names(self, args, kwargs, args_tree: tree_util.PyTreeDef) -> list[str]:
        dyn_positions = [i for i in range(len(args))
                         if not (i in self.static_argnums
                                 or (i - len(args)) in self.static_argnums)]
        pos_tree, kw_tree = args_tree.children()
        names = []
        for i, child in zip(dyn_positions, pos_tree.children()):
            names.extend(leaf_paths(child, self.arg_name(i)))
        for key, child in zip(kw_tree.entries(), kw_tree.children()):
            names.extend(leaf_paths(child, str(key)))
        return names

    def rebuild(self, signature: CallSignature, leaves: list) -> tuple[tuple, dict]:
        """Puts tracers (or values) back into the call's structure, static values included."""
        dyn_args, kwargs = signature.args_tree.unflatten(leaves)
        args = list(dyn_args)
        for where, value in signature.static_args:
            if isinstance(where, int):
                args.insert(where, value)  # positions are stored non-negative, in order
            else:
                kwargs[where] = value
        return tuple(args), kwargs


def leaf_paths(treedef: tree_util.PyTreeDef, prefix: str) -> list[str]:
    """Readable names of a tree's leaves, its key paths after ``prefix``: ``params['w']``,
    ``xs[0]``, ``state.momentum[0]``."""
    return [prefix + "".join(map(_key_name, path)) for path in tree_util.treedef_paths(treedef)]


def _key_name(key) -> str:
    """A key path entry in a leaf name: as ``keystr`` writes it, a position in a node
    registered without keys as ``[0]``."""
    return f"[{key.key}]" if isinstance(key, tree_util.FlattenedIndexKey) else str(key)


# ---- structures in the artifact metadata -----------------------------------------------

# The traced structure of each result tree recorded in this process, by its metadata
# form: ``aotc.jit`` rebuilds results with it, so they have the exact types the traced
# function returned (the metadata form rebuilds only types it can import; see
# aotc/runtime/tree.py).
_TRACED_RESULTS: dict[tree.TreeDef, _Structure] = {}


def traced_result_tree(out_tree: tree.TreeDef) -> _Structure | None:
    """The traced structure (``.spec``) recorded as ``out_tree`` in this process, None
    if none was."""
    return _TRACED_RESULTS.get(out_tree)


def metadata_tree(treedef: tree_util.PyTreeDef, where: str) -> tree.TreeDef:
    """``treedef`` in the form the artifact metadata records (``aotc.runtime.tree``):
    node types by their importable names, static data as JSON where it can be. Static
    data must be hashable (it keys the compile cache)."""
    def node(node_type: type, data: Any, children) -> tree.TreeDef:
        children = tuple(children)
        if node_type is type(None):
            return tree.NONE
        if node_type in (tuple, list):
            return tree.TreeDef(node_type.__name__, children)
        if node_type in (dict, collections.OrderedDict):
            kind = "dict" if node_type is dict else "ordereddict"
            return tree.TreeDef(kind, children, _keys(data, where))
        if node_type is collections.defaultdict:
            factory, keys = data
            return tree.TreeDef("defaultdict", children, _keys(keys, where),
                                tree.type_name(factory))
        if node_type is collections.deque:
            return tree.TreeDef("deque", children, aux=tree.encode_text(data))
        name = tree.type_name(node_type)
        if optree.is_namedtuple_class(node_type):
            return tree.TreeDef("namedtuple", children, tuple(node_type._fields), name)
        if optree.is_structseq_class(node_type):
            return tree.TreeDef("structseq", children, (), name)
        try:
            hash(data)
        except TypeError:
            raise TracingError(
                f"{where}: the pytree node {node_type.__name__} has static data {data!r} "
                f"({type(data).__name__}), which is not hashable; static data keys the "
                f"compile cache, so its flatten function must return hashable aux data "
                f"(e.g. a tuple instead of a list)") from None
        registered = tree_util.registered_node(node_type)
        if registered is not None and registered.data_fields is not None:
            meta = dict(zip(registered.meta_fields, data))
            return tree.TreeDef("dataclass", children, registered.data_fields, name,
                                tree.encode_text(meta))
        return tree.TreeDef("custom", children, (), name, tree.encode_text(data))

    return treedef.walk(range(treedef.num_leaves), node, lambda _: tree.LEAF)


def _keys(keys, where: str) -> tuple:
    for key in keys:
        try:
            tree.encode(key)
        except tree.NotRepresentable:
            raise TracingError(
                f"{where}: the dict key {key!r} ({type(key).__name__}) cannot be recorded in "
                f"the artifact metadata; use str, int, float, bool, None or tuples of them "
                f"as keys") from None
    return tuple(keys)


def build_metadata(
    name: str,
    signature: CallSignature,
    out_avals: Sequence[ShapeDtypeStruct],
    out_tree: tree_util.PyTreeDef,
    target: str,
    source_hash: str,
    work: float,
    ops: float = 0.0,
    mutated: Sequence[int] = (),
    weak_casts: dict[int, set] | None = None,
    residual_bytes: int = 0,
    contraction_work: float = 0.0,
    matvec_work: float = 0.0,
) -> FunctionMetadata:
    from . import __version__
    from .compiler import iree_version

    pos_tree, kw_tree = signature.args_tree.children()
    in_tree = pos_tree if not kw_tree.num_children else signature.args_tree
    out_names = ["out"] if tree_util.treedef_is_leaf(out_tree) else leaf_paths(out_tree, "out")
    results = metadata_tree(out_tree, f"{name}() results")
    _TRACED_RESULTS[results] = _Structure(out_tree)
    return FunctionMetadata(
        name=name,
        args=tuple(TensorSpec(n, a.shape, a.dtype.name)
                   for n, a in zip(signature.leaf_names, signature.avals)),
        results=tuple(TensorSpec(n, a.shape, a.dtype.name) for n, a in zip(out_names, out_avals))
        + tuple(TensorSpec(f"{signature.leaf_names[i]} (written)", signature.avals[i].shape,
                           signature.avals[i].dtype.name) for i in mutated),
        in_tree=metadata_tree(in_tree, f"{name}() arguments"),
        out_tree=results,
        target=target,
        aotc_version=__version__,
        iree_version=iree_version(),
        source_hash=source_hash,
        work_estimate=work,
        contraction_estimate=contraction_work,
        matvec_estimate=matvec_work,
        op_estimate=ops,
        residual_bytes=int(residual_bytes),
        static_args={str(k): repr(v) for k, v in signature.static_args},
        mutated={signature.leaf_names[i]: len(out_avals) + k for k, i in enumerate(mutated)},
        weak_casts={signature.leaf_names[i]: sorted(d.name for d in dts)
                    for i, dts in sorted((weak_casts or {}).items())},
    )
