"""The metadata record's schema, checked field by field before the runtime uses it.

``FunctionMetadata.from_json`` runs ``check`` on the decoded JSON: every field present
with the type the runtime relies on, every dtype one the runtime knows, every shape a
list of sizes (ints), ``None`` or dimension names, the pytree records well formed and
holding as many leaves as there are arguments and results, and every index the record
gives (donated, mutated, aliases) in range. A failure is a ``ValueError`` naming the
field (``args[1].dtype``), what was expected and what was found; ``load`` turns it into
a ``LoadError``. The checks run once per load and never on the call path.
"""

from __future__ import annotations

from typing import Any

from .dtypes import DTYPES, SUPPORTED

TREE_KINDS = ("leaf", "none", "tuple", "list", "dict", "ordereddict", "defaultdict", "deque",
              "namedtuple", "structseq", "dataclass", "custom")
_KEYED = ("dict", "ordereddict", "defaultdict", "namedtuple", "dataclass")
MAX_TREE_DEPTH = 200  # deeper records are refused before anything recurses into them


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(path: str, expected: str, value: Any) -> ValueError:
    kind = type(value).__name__
    return ValueError(f"{path}: expected {expected}, got {_show(value)} ({kind})")


def _str(path: str, value: Any) -> None:
    if not isinstance(value, str):
        raise _fail(path, "a string", value)


def _number(path: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise _fail(path, "a number >= 0", value)


def _trips(path: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < -1:
        raise _fail(path, "an integer >= -1 (-1: unknown)", value)


def _index(path: str, value: Any, count: int, of: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
        raise _fail(path, f"an index of the {count} {of}", value)
    return value


def _mapping(path: str, value: Any, values: str) -> dict:
    if not isinstance(value, dict):
        raise _fail(path, f"an object of {values}", value)
    return value


def _specs(path: str, value: Any) -> None:
    if not isinstance(value, list):
        raise _fail(path, "a list of {name, shape, dtype} records", value)
    for i, spec in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(spec, dict) or set(spec) != {"name", "shape", "dtype"}:
            raise _fail(where, "a record of exactly name, shape and dtype", spec)
        _str(f"{where}.name", spec["name"])
        if spec["dtype"] not in DTYPES:
            raise _fail(f"{where}.dtype", f"one of {SUPPORTED}", spec["dtype"])
        shape = spec["shape"]
        if not isinstance(shape, list):
            raise _fail(f"{where}.shape", "a list of dimensions", shape)
        for k, dim in enumerate(shape):
            static = isinstance(dim, int) and not isinstance(dim, bool) and dim >= 0
            if not (static or dim is None or (isinstance(dim, str) and dim)):
                raise _fail(f"{where}.shape[{k}]",
                            "a size (an int >= 0), null or a dimension name", dim)


def _tree(path: str, value: Any, depth: int = 0) -> int:
    """Checks a ``TreeDef`` record; returns its number of leaves."""
    if depth > MAX_TREE_DEPTH:
        raise ValueError(f"{path}: expected a pytree at most {MAX_TREE_DEPTH} levels deep")
    if not isinstance(value, dict) or value.get("kind") not in TREE_KINDS:
        raise _fail(f"{path}.kind", f"one of {', '.join(TREE_KINDS)}",
                    value.get("kind") if isinstance(value, dict) else value)
    unknown = set(value) - {"kind", "children", "keys", "type", "aux"}
    if unknown:
        raise _fail(path, "only the fields kind, children, keys, type, aux",
                    sorted(unknown))
    kind = value["kind"]
    children = value.get("children", [])
    if not isinstance(children, list) or (kind in ("leaf", "none") and children):
        raise _fail(f"{path}.children", "a list (none for a leaf or None)", children)
    keys = value.get("keys", [])
    if not isinstance(keys, list) or (kind in _KEYED and "keys" in value
                                      and len(keys) != len(children)):
        raise _fail(f"{path}.keys", f"a list of {len(children)} keys", keys)
    if not isinstance(value.get("type", ""), str):
        raise _fail(f"{path}.type", "a 'module:QualName' string", value["type"])
    if kind == "leaf":
        return 1
    return sum(_tree(f"{path}.children[{i}]", c, depth + 1) for i, c in enumerate(children))


# Field -> (check, required); None: checked in ``check`` with the fields it refers to.
# The fields with defaults in FunctionMetadata are optional: artifacts written before
# they existed read with the default.
FIELDS: dict[str, tuple[Any, bool]] = {
    "schema": (None, True),
    "name": (_str, True),
    "args": (_specs, True),
    "results": (_specs, True),
    "in_tree": (None, True),  # checked with the leaf counts below
    "out_tree": (None, True),
    "target": (_str, True),
    "aotc_version": (_str, True),
    "iree_version": (_str, True),
    "source_hash": (_str, True),
    "work_estimate": (_number, False),
    "contraction_estimate": (_number, False),
    "matvec_estimate": (_number, False),
    "op_estimate": (_number, False),
    "residual_bytes": (_number, False),
    "kernel_loop_trips": (_trips, False),
    "static_args": (None, False),
    "donated": (None, False),
    "aliases": (None, False),
    "mutated": (None, False),
    "weak_casts": (None, False),
}


def check(data: Any) -> None:
    """Checks a decoded metadata record (module docstring); raises ``ValueError``."""
    if not isinstance(data, dict):
        raise _fail("metadata", "a JSON object", data)
    missing = [f for f, (_, required) in FIELDS.items() if required and f not in data]
    if missing:
        raise ValueError(f"metadata: expected the fields {', '.join(FIELDS)}; "
                         f"missing {', '.join(missing)}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise ValueError(f"metadata: unknown fields {', '.join(unknown)} (written by a "
                         f"newer aotc?); this runtime reads {', '.join(FIELDS)}")
    for name, (checker, _) in FIELDS.items():
        if checker is not None and name in data:
            checker(name, data[name])
    n_args, n_results = len(data["args"]), len(data["results"])
    names = [a["name"] for a in data["args"]]
    for field in ("static_args", "aliases"):
        for key, value in _mapping(field, data.get(field, {}), "strings").items():
            _str(f"{field}[{key!r}]", value)
    for field in ("donated", "mutated"):
        for key, value in _mapping(field, data.get(field, {}), "result indices").items():
            if key not in names:
                raise _fail(f"{field} key", f"an argument name ({', '.join(names)})", key)
            _index(f"{field}[{key!r}]", value, n_results, "results")
    for key, value in _mapping("weak_casts", data.get("weak_casts", {}), "dtype lists").items():
        if key not in names:
            raise _fail("weak_casts key", f"an argument name ({', '.join(names)})", key)
        if not isinstance(value, list) or not all(d in DTYPES for d in value):
            raise _fail(f"weak_casts[{key!r}]", f"a list of dtypes of {SUPPORTED}", value)
    for key, value in data.get("aliases", {}).items():
        if not key.isdigit():
            raise _fail("aliases key", "a result index as a string", key)
        _index("aliases key", int(key), n_results, "results")
        kind, _, index = value.partition(" ")
        count = {"arg": n_args, "out": n_results}.get(kind)
        if count is None or not index.isdigit():
            raise _fail(f"aliases[{key!r}]", "'arg <i>' or 'out <j>'", value)
        _index(f"aliases[{key!r}]", int(index), count, "arguments" if kind == "arg"
               else "results")
    leaves = _tree("in_tree", data["in_tree"])
    if leaves != n_args:
        raise ValueError(f"in_tree: expected a structure of the {n_args} arguments, got "
                         f"one of {leaves} leaves")
    own = n_results - len(data.get("mutated", {}))
    leaves = _tree("out_tree", data["out_tree"])
    if leaves != own:
        raise ValueError(f"out_tree: expected a structure of the {own} results, got one "
                         f"of {leaves} leaves")
