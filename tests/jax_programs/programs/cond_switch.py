"""lax.cond and lax.switch on traced predicates and indices."""
import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def piecewise(x, branch):
    y = lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)
    z = lax.switch(branch, [jnp.sin, jnp.cos, lambda v: v ** 2], y)
    return y, z


def main():
    x = jnp.array([0.5, -0.25, 1.0])
    return [piecewise(x, i) for i in range(3)] + [piecewise(-x, 1)]
