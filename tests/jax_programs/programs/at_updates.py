"""Functional updates with .at[]: a histogram, a scatter of values, clamped reads."""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def histogram(values, bins):
    idx = jnp.clip((values * bins).astype(jnp.int32), 0, bins - 1)
    return jnp.zeros(bins).at[idx].add(1.0)


@jax.jit
def edit(x):
    x = x.at[0].set(10.0)
    x = x.at[1:3].multiply(2.0)
    x = x.at[-1].min(-5.0)
    return x, x.at[jnp.array([0, 2])].get()


def main():
    values = jax.random.uniform(jax.random.PRNGKey(9), (200,))
    return histogram(values, 8), edit(jnp.arange(6.0))
