"""Keys split eagerly, fold_in, and each distribution drawn outside jit and inside it."""
import jax
import jax.numpy as jnp
from jax import random


def main():
    key = random.PRNGKey(2024)
    key, *subkeys = random.split(key, 5)
    draws = {
        "uniform": random.uniform(subkeys[0], (3, 4), minval=-1.0, maxval=2.0),
        "normal": random.normal(subkeys[1], (6,)),
        "bernoulli": random.bernoulli(subkeys[2], 0.25, (10,)),
        "randint": random.randint(subkeys[3], (8,), 0, 100),
        "folded": random.fold_in(key, 17),
        "permutation": random.permutation(key, 10),
    }
    jitted = jax.jit(lambda k: random.normal(k, (6,)))(subkeys[1])
    draws["same_in_jit"] = jnp.array_equal(jitted, draws["normal"])
    return draws
