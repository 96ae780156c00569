"""Differentiation as passes over aotc's MLIR: ``aotc-vjp`` (reverse mode) and
``aotc-jvp`` (forward mode, ``forward.py``: the tangent sweep and its rules).

``core`` holds the adjoint builder, the region sweep and the rule registry; the rule
modules register their rules on import and attach them to the ops' rows of the
vocabulary (``passes/opset.py``): ``generic`` (the rule of ``linalg.generic``), ``named``
(the named linalg ops), ``convolution`` (channels-last convolutions), ``control``
(``scf.if``, ``scf.for``), ``tensor`` (views, placements, ``cumsum``, scatters, barriers),
``calls`` (calls with a custom derivative: custom_vjp, custom_jvp, checkpoint);
``scalar`` and ``complex_scalar`` hold the derivatives of the scalar ops in linalg bodies
(real and complex), ``builders`` the IR
the rules share.
"""

from . import calls, complex_scalar, control, convolution, forward, named, tensor  # noqa: F401
from .calls import DropCustomDerivatives
from .jvp import Jvp
from .stop_gradient import DropStopGradients
from .vjp import Vjp

__all__ = ["Vjp", "Jvp", "DropStopGradients", "DropCustomDerivatives"]
