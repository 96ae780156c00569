"""Pairwise distances with nested vmap and in_axes, out_axes."""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def main():
    points = jax.random.normal(jax.random.PRNGKey(0), (5, 3))
    pairwise = jax.jit(jax.vmap(jax.vmap(distance, in_axes=(None, 0)), in_axes=(0, None)))
    d = pairwise(points, points)
    to_origin = jax.vmap(distance, in_axes=(0, None))(points, jnp.zeros(3))
    columns = jax.vmap(lambda r: r * 2.0, in_axes=1, out_axes=1)(d)
    return d, to_origin, columns
