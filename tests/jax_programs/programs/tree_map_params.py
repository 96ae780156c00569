"""Pytrees of parameters: nested dicts updated with tree_map, counted with tree_leaves."""
import jax
import jax.numpy as jnp
from jax import tree_util


def main():
    params = {"dense": {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)},
              "out": {"w": jnp.arange(4.0).reshape(2, 2), "b": jnp.full((2,), 0.5)}}
    grads = tree_util.tree_map(lambda p: 0.1 * p + 1.0, params)

    @jax.jit
    def sgd(params, grads):
        return tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    new = sgd(params, grads)
    count = sum(x.size for x in tree_util.tree_leaves(new))
    norms = tree_util.tree_map(lambda x: jnp.sqrt(jnp.sum(x * x)), new)
    return {"new": new, "count": jnp.asarray(count), "norms": norms,
            "n_leaves": jnp.asarray(len(tree_util.tree_leaves(params)))}
