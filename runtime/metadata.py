"""The self-description every exported function carries in ``iree.reflection``.

The compiler side writes it (``FunctionMetadata.to_reflection``) and the runtime reads
it back from a loaded ``.vmfb`` (``FunctionMetadata.from_reflection``); nothing else is
needed to validate calls, rebuild result pytrees or show signatures. IREE returns
reflection values as strings, so the whole record is one JSON string under one key.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from . import schema as _schema
from .tree import TreeDef

REFLECTION_KEY = "aotc"
SCHEMA_VERSION = 1

# A dimension is a static size (int) or dynamic: None, or a name shared between arguments.
Dim = Any


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[Dim, ...]
    dtype: str  # numpy dtype name: "float32", "bool", "uint8", ...

    def __str__(self) -> str:
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.name}: {self.dtype}[{dims}]"


@dataclass(frozen=True)
class FunctionMetadata:
    name: str
    args: tuple[TensorSpec, ...]
    results: tuple[TensorSpec, ...]
    in_tree: TreeDef  # structure of the positional arguments (a tuple), static ones removed
    out_tree: TreeDef
    target: str
    aotc_version: str
    iree_version: str
    source_hash: str
    # Estimated arithmetic work of one call (flops, elementwise ops counted as one). The
    # runtime uses it to pick a driver when the user names none.
    work_estimate: float = 0.0
    # The part of ``work_estimate`` matmuls do (convolutions count as the rest): it runs
    # about ten times as much work per second, which the driver choice weighs.
    contraction_estimate: float = 0.0
    # The part matrix-vector products do: each reads its matrix once, so it runs at the
    # speed of memory, one multiply-add about as fast as an elementwise op's element.
    matvec_estimate: float = 0.0
    # Ops one call runs, loop bodies counted per trip (0: unknown). work / ops is the size
    # of a typical dispatch, which decides whether a worker pool pays off.
    op_estimate: float = 0.0
    # Bytes of forward values the derivatives in the function keep for their backward
    # pass (``aotc-vjp``'s count; 0: no derivative). Left out of the record when 0.
    residual_bytes: int = 0
    static_args: dict[str, str] = field(default_factory=dict)
    donated: dict[str, int] = field(default_factory=dict)  # argument name -> result index
    # Results the runtime may receive in a buffer it already holds: result index (as a
    # string) -> "arg <i>" (an argument returned unchanged) or "out <j>" (a value returned
    # twice). The runtime never lets a donation overwrite such a shared buffer in place.
    aliases: dict[str, str] = field(default_factory=dict)
    # Arguments the function writes into, as numpy code does: argument name -> the index
    # of the result holding its final value (after the function's own results). The
    # runtime copies it into the caller's numpy array after the call.
    mutated: dict[str, int] = field(default_factory=dict)
    # Python scalar arguments (weakly typed) the function computes in narrower dtypes
    # (``uint8_array + k``): argument name -> those dtypes. As numpy does, a call raises
    # ``OverflowError`` for an int out of one's range and warns for a float that
    # overflows one. Left out of the record when empty.
    weak_casts: dict[str, list[str]] = field(default_factory=dict)
    # GPU targets: the most loop iterations one dispatch of the function's sequential
    # kernels (the factorizations' scalar steps) makes, over all its loops (-1: not known
    # at compile time). A driver that cuts shaders short refuses the function when it may
    # exceed the driver's limit (``device.shader_loop_limit``). Left out of the record
    # when 0.
    kernel_loop_trips: int = 0

    @property
    def signature(self) -> str:
        args = ", ".join(str(a) for a in self.args)
        results = ", ".join(str(r) for r in self.results)
        return f"{self.name}({args}) -> ({results})"

    def __str__(self) -> str:
        return self.signature

    def to_reflection(self) -> dict[str, str]:
        """The entries to put in the function's ``iree.reflection`` dictionary."""
        return {REFLECTION_KEY: self.to_json()}

    @staticmethod
    def from_reflection(reflection: dict[str, str]) -> FunctionMetadata | None:
        """Reads the record back from ``VmFunction.reflection``; None if there is none
        (a function compiled without aotc)."""
        text = reflection.get(REFLECTION_KEY)
        return None if text is None else FunctionMetadata.from_json(text)

    def to_json(self) -> str:
        data = asdict(self)
        # Records without them read as before, by older runtimes too.
        for name in ("weak_casts", "residual_bytes", "kernel_loop_trips", "contraction_estimate",
                     "matvec_estimate"):
            if not data[name]:
                del data[name]
        data["schema"] = SCHEMA_VERSION
        data["in_tree"] = self.in_tree.to_json()
        data["out_tree"] = self.out_tree.to_json()
        return json.dumps(data, sort_keys=True)

    @staticmethod
    def from_json(text: str) -> FunctionMetadata:
        """Reads a record back, checking it first (``runtime/schema.py``): a record
        that is not what this runtime reads is a ``ValueError`` naming the field."""
        data = json.loads(text)
        schema = data.get("schema") if isinstance(data, dict) else None
        if schema != SCHEMA_VERSION:
            raise ValueError(
                f"artifact metadata has schema {schema}, this runtime reads schema "
                f"{SCHEMA_VERSION}; re-export the artifact with this version of aotc"
            )
        _schema.check(data)
        del data["schema"]
        data["args"] = tuple(_spec(a) for a in data["args"])
        data["results"] = tuple(_spec(r) for r in data["results"])
        data["in_tree"] = TreeDef.from_json(data["in_tree"])
        data["out_tree"] = TreeDef.from_json(data["out_tree"])
        return FunctionMetadata(**data)


def _spec(data: dict) -> TensorSpec:
    return TensorSpec(data["name"], tuple(data["shape"]), data["dtype"])
