"""Methods decorated with jit: self static (hashable) with static_argnums=0."""
from functools import partial

import jax
import jax.numpy as jnp


class Scaler:
    def __init__(self, scale, offset):
        self.scale, self.offset = scale, offset

    def __hash__(self):
        return hash((self.scale, self.offset))

    def __eq__(self, other):
        return (self.scale, self.offset) == (other.scale, other.offset)

    @partial(jax.jit, static_argnums=0)
    def __call__(self, x):
        return x * self.scale + self.offset

    @partial(jax.jit, static_argnums=0)
    def inverse(self, y):
        return (y - self.offset) / self.scale


def main():
    s = Scaler(2.0, 1.0)
    x = jnp.arange(4.0)
    y = s(x)
    return y, s.inverse(y), Scaler(3.0, 0.0)(x)
