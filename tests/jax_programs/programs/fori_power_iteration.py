"""Power iteration with lax.fori_loop: the dominant eigenvector of a symmetric matrix."""
import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def power_iteration(a, v0):
    def body(i, v):
        w = a @ v
        return w / jnp.linalg.norm(w)

    v = lax.fori_loop(0, 100, body, v0)
    return v, v @ a @ v


def main():
    m = jax.random.normal(jax.random.PRNGKey(5), (6, 6))
    a = m @ m.T
    return power_iteration(a, jnp.ones(6) / jnp.sqrt(6.0))
