"""Newton's method for square roots with lax.while_loop and a tolerance."""
import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def newton_sqrt(a):
    def cond(state):
        x, i = state
        return jnp.logical_and(jnp.max(jnp.abs(x * x - a)) > 1e-5, i < 50)

    def body(state):
        x, i = state
        return 0.5 * (x + a / x), i + 1

    return lax.while_loop(cond, body, (a, 0))


def main():
    return newton_sqrt(jnp.array([2.0, 9.0, 0.25, 100.0]))
