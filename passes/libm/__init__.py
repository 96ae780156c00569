"""aotc's own float64 math functions, built from arith ops only.

IREE's CPU code links no libm, and for float64 it has no inline version of sin, cos, tan,
arcsin, arccos, arctan and arctan2 (it refuses to compile them); its expm1, exp2, log1p,
sinh, tanh, arctanh and cbrt are off by up to 10**15 ulps. These implementations
are branch-free MLIR (selects instead of branches, so linalg bodies still vectorize) and
use no fused multiply-add (some CPU targets lack it, and a libm call would not link), so
they run on every target with float64: host, aarch64, riscv64, armv7, CUDA.

- ``values.py``: Float/Int/Bool scalars whose operators emit arith ops;
- ``reduction.py``: x = n*pi/2 + y, Cody-Waite up to 2**20 and Payne-Hanek beyond;
- ``trig.py``: sin, cos, tan (fdlibm's kernels on the reduced double-double);
- ``trig_float32.py``: float32 sin, cos, tan in float64 (a float-only reduction, fdlibm's
  kernels without the tail);
- ``inverse_trig.py``: arcsin, arccos, arctan, arctan2 (fdlibm's algorithms);
- ``exp_log.py``: expm1, exp2, log1p, sinh, tanh, arctanh, cbrt, log2, log10 from IREE's
  accurate float64 exp and log plus exact arithmetic;
- ``power.py``: pow (fdlibm's double-double log2 and exp2; float32's in float64).

``FLOAT64`` maps the math dialect's op names to functions of ``Float`` values; the pass
``aotc-expand-math`` (``passes/expand_math.py``) replaces the ops with them on CPU
targets. docs/accuracy.md gives the measured accuracy (benchmarks/accuracy.py).
"""

from __future__ import annotations

from typing import Callable

from . import exp_log, trig_float32
from .inverse_trig import arccos, arcsin, arctan, arctan2
from .power import power, power_float32
from .trig import cos, sin, tan
from .values import Float

FLOAT64: dict[str, Callable[..., Float]] = {
    "math.sin": sin, "math.cos": cos, "math.tan": tan,
    "math.asin": arcsin, "math.acos": arccos, "math.atan": arctan, "math.atan2": arctan2,
    "math.expm1": exp_log.expm1, "math.exp2": exp_log.exp2, "math.log1p": exp_log.log1p,
    "math.sinh": exp_log.sinh, "math.tanh": exp_log.tanh, "math.atanh": exp_log.arctanh,
    "math.cbrt": exp_log.cbrt, "math.powf": power,
    "math.log10": lambda x: exp_log.log_base(x, exp_log.INVERSE_LN10),
    "math.log2": lambda x: exp_log.log_base(x, exp_log.INVERSE_LN2),
}

# For float32 values widened to float64: sin, cos and tan need far fewer bits than a
# float64 result (trig_float32.py).
FLOAT32_INPUT: dict[str, Callable[..., Float]] = {
    **FLOAT64, "math.sin": trig_float32.sin, "math.cos": trig_float32.cos,
    "math.tan": trig_float32.tan}
# float32 pow needs no double-double: y * log x in float64 is accurate enough.
FLOAT32_INPUT["math.powf"] = power_float32

# float32 ops replaced in float32 (no widening).
FLOAT32: dict[str, Callable[..., Float]] = {"math.exp2": exp_log.exp2}
