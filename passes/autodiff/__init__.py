"""Differentiation as a pass over aotc's MLIR: ``aotc-vjp`` (reverse mode).

``core`` holds the adjoint builder and the rule registry; the rule modules
(``structured``: linalg; ``tensor``: views, placements, barriers; ``scalar``: the
derivatives of the scalar ops in linalg bodies) register their rules on import and
attach them to the ops' rows of the vocabulary (``passes/opset.py``).
"""

from . import control, convolution, named, tensor  # noqa: F401  (register the rules)
from .stop_gradient import DropStopGradients
from .vjp import Vjp

__all__ = ["Vjp", "DropStopGradients"]
