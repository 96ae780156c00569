"""static_argnames and static_argnums: shapes and modes as Python values."""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("n", "mode"))
def features(x, n, mode="poly"):
    if mode == "poly":
        return jnp.stack([x ** i for i in range(n)], axis=-1)
    return jnp.stack([jnp.sin(i * x) for i in range(1, n + 1)], axis=-1)


@partial(jax.jit, static_argnums=1)
def window_sums(x, width):
    return jnp.convolve(x, jnp.ones(width), mode="valid")


def main():
    x = jnp.linspace(0.0, 1.0, 5)
    return (features(x, n=3), features(x, n=4, mode="fourier"), features(x, 3, "poly"),
            window_sums(jnp.arange(10.0), 3))
