"""Pytree node types the pytree tests share: a NamedTuple, a dataclass registered with
``aotc.tree_util.register_dataclass`` and a class registered with
``register_pytree_node_class`` (importable, so exported artifacts can rebuild them)."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import aotc.tree_util as tu


class Params(NamedTuple):
    w: object
    b: object


@tu.register_dataclass
@dataclasses.dataclass
class State:
    params: object
    momentum: tuple
    lr: float = dataclasses.field(default=0.1, metadata={"static": True})


@tu.register_pytree_node_class
class Scaled:
    def __init__(self, x, scale):
        self.x, self.scale = x, scale

    def tree_flatten(self):
        return (self.x,), self.scale

    @classmethod
    def tree_unflatten(cls, scale, children):
        return cls(children[0], scale)

    def __eq__(self, other):
        return type(other) is Scaled and (self.x, self.scale) == (other.x, other.scale)
