"""The arith builders every scalar rule module uses: constants, comparisons by predicate
name, select and logical not. A module of its own so that ``scalar.py`` and the modules it
builds on (``scalar_fmod.py``, ``scalar_power.py``) share them without an import cycle;
``scalar.py`` re-exports them."""

from __future__ import annotations

import numpy as np

from .._mlir import arith, ir
from ..constants import scalar_constant


def const(value, dtype) -> ir.Value:
    return scalar_constant(value, dtype)


def _pred(name: str, float_pred: bool) -> ir.IntegerAttr:
    table = _FLOAT_PREDICATES if float_pred else _INT_PREDICATES
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), table[name])


# arith.cmpf / arith.cmpi predicate numbers (from the arith dialect's enums).
_FLOAT_PREDICATES = {"oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "one": 6, "ord": 7,
                     "ueq": 8, "ugt": 9, "uge": 10, "ult": 11, "ule": 12, "une": 13, "uno": 14}
_INT_PREDICATES = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5,
                   "ult": 6, "ule": 7, "ugt": 8, "uge": 9}


def cmpf(pred: str, a, b) -> ir.Value:
    return arith.CmpFOp(_pred(pred, True), a, b).result


def cmpi(pred: str, a, b) -> ir.Value:
    return arith.CmpIOp(_pred(pred, False), a, b).result


def select(c, a, b) -> ir.Value:
    return arith.SelectOp(c, a, b).result


def logical_not(c) -> ir.Value:
    return arith.XOrIOp(c, scalar_constant(True, np.bool_)).result
