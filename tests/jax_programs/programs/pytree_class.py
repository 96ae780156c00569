"""A class registered with register_pytree_node_class, returned from jit."""
import jax
import jax.numpy as jnp
from jax.tree_util import register_pytree_node_class


@register_pytree_node_class
class Gaussian:
    def __init__(self, mean, log_std):
        self.mean, self.log_std = mean, log_std

    def tree_flatten(self):
        return (self.mean, self.log_std), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@jax.jit
def shift(g, delta):
    return Gaussian(g.mean + delta, g.log_std - 0.5)


@jax.jit
def log_prob(g, x):
    z = (x - g.mean) / jnp.exp(g.log_std)
    return jnp.sum(-0.5 * z * z - g.log_std - 0.5 * jnp.log(2 * jnp.pi))


def main():
    g = Gaussian(jnp.zeros(3), jnp.zeros(3))
    moved = shift(g, jnp.array([1.0, 2.0, 3.0]))
    assert isinstance(moved, Gaussian)
    return moved.mean, moved.log_std, log_prob(moved, jnp.ones(3))
