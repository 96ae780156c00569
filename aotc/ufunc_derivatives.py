"""Derivatives of the ufuncs whose scalar code the differentiation passes cannot read.

float64 ``fmod``, ``remainder`` and ``floor_divide`` and every ``ldexp`` compute on the
bits of their operands (exact results where float arithmetic would round, see
scalar_fmod.py and scalar_extra.py), and a float rebuilt from a differentiated value's
bits has no derivative the scalar rules can see (passes/autodiff/scalar.py refuses it).
Under differentiation such a ufunc is a ``custom_jvp`` call whose rule is JAX's: the
values stay the exact ones, the tangent is the sum of each float operand's tangent times
its partial derivative below. Imported with aotc's differentiation (as
aotc.linalg_derivatives), it puts ``with_rule`` in ``elementwise.WITH_DERIVATIVE_RULE``
for each of them: the ops cannot import the custom derivatives, which import them."""

from __future__ import annotations

from . import dtypes
from .core import Tracer, differentiating
from .custom_derivatives import custom_jvp
from .ops import elementwise
from .ops.arguments import as_tracer
from .ops.shape import broadcast_to

# Inside a rule's or a call's own trace the ufuncs are plain (no second custom_jvp).
_plain = [0]


def _fmod_partials(a, b):
    return 1.0, elementwise.negative(elementwise.trunc(elementwise.divide(a, b)))


def _remainder_partials(a, b):
    return 1.0, elementwise.negative(elementwise.floor(elementwise.divide(a, b)))


def _ldexp_partials(x, e):
    # d/dx x * 2**e = 2**e (ldexp of a constant: no float operand to differentiate)
    return elementwise.ldexp(1.0, e), None


# ufunc -> the partial derivatives with respect to each operand (None: not differentiable,
# an integer operand); JAX's rem and floor-divide rules.
PARTIALS = {
    "fmod": _fmod_partials,
    "remainder": _remainder_partials,
    "floor_divide": lambda a, b: (0.0, 0.0),
    "ldexp": _ldexp_partials,
}


def with_rule(name: str, args: tuple):
    """``ufunc(name, *args)`` as a custom_jvp call of its float traced operands, inside a
    derivative's trace (else None: the plain ufunc)."""
    positions = [i for i, a in enumerate(args)
                 if isinstance(a, Tracer) and dtypes.is_float(a.dtype)]
    if _plain[0] or not positions or not differentiating():
        return None
    ufunc = elementwise.ufunc

    def merged(values):
        full = list(args)
        for i, v in zip(positions, values):
            full[i] = v
        return full

    weak = []

    def plain(*values):
        _plain[0] += 1
        try:
            out = ufunc(name, *merged(values))
        finally:
            _plain[0] -= 1
        weak.append(out.weak)
        return out

    plain.__name__ = plain.__qualname__ = name
    call = custom_jvp(plain)

    @call.defjvp
    def rule(primals, tangents):
        out = plain(*primals)
        partials = PARTIALS[name](*merged(primals))
        tangent = 0.0
        for i, t in zip(positions, tangents):
            if partials[i] is not None:
                tangent = tangent + t * partials[i]
        tangent = elementwise.astype(as_tracer(tangent, name), out.dtype)
        return out, broadcast_to(tangent, out.shape)

    result = call(*[args[i] for i in positions])
    result.weak = weak[0]
    return result


elementwise.WITH_DERIVATIVE_RULE.update(dict.fromkeys(PARTIALS, with_rule))
