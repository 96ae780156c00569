"""aotc-batch: a batched copy of a per-example function, rule by rule (as JAX's vmap).

The package's modules, each importing only ``core`` (and ``passes/opset.py``,
``passes/base.py``):

- ``core``: ``Batcher`` (rebuilds a function's body with a leading batch dimension),
  ``Batched``, the rule registry (``RULES``, ``@rule``, ``batch_rule``) and the helpers
  rules share (lanes of batched scalars, lane-by-lane generics, concat, refusals);
- ``structured``: linalg.generic, matmul, transpose, broadcast, fill;
- ``tensor``: reshapes, slices, joins, pads, element reads, and scalar arith/math ops;
- ``linalg``: convolutions, pooling, batch_matmul, IREE's LinalgExt ops, barriers;
- ``scf``: control flow;
- ``kernels``: aotc's sequential kernels (one dispatch each);
- ``batch``: the pass ``Batch`` (``aotc-batch``).

Importing the package imports every rule module, which registers its rules in
``RULES`` and attaches them to their ops' rows of the vocabulary (``opset.attach``).
To support a new op, write a rule in the module of its kind and register it with
``@rule("dialect.op")`` (the op needs a row in ``passes/opset.py``).
"""

from __future__ import annotations

from . import kernels, linalg, scf, structured, tensor  # noqa: F401  (registers the rules)
from .batch import DYNAMIC, Batch
from .core import (
    RULES,
    SCALAR,
    SCALAR_DIALECTS,
    Batched,
    Batcher,
    Rule,
    batch_rule,
    concat,
    from_lane,
    is_tensor,
    lane_generic,
    lane_type,
    lanewise,
    refuse,
    rule,
    to_lane,
)
from .linalg import merge_batch, split_batch
from .scf import select_lanes
from .structured import read_lanes

__all__ = [
    "DYNAMIC", "RULES", "SCALAR", "SCALAR_DIALECTS", "Batch", "Batched", "Batcher", "Rule",
    "batch_rule", "concat", "from_lane", "is_tensor", "lane_generic", "lane_type", "lanewise",
    "merge_batch", "read_lanes", "refuse", "rule", "select_lanes", "split_batch", "to_lane",
]
