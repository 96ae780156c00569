"""A registered dataclass as the model: jax.tree_util.register_dataclass."""
import dataclasses
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.tree_util.register_dataclass, data_fields=["w", "b"],
                   meta_fields=["activation"])
@dataclasses.dataclass
class Layer:
    w: jnp.ndarray
    b: jnp.ndarray
    activation: str


@jax.jit
def apply(layer, x):
    y = x @ layer.w + layer.b
    return jnp.tanh(y) if layer.activation == "tanh" else jax.nn.relu(y)


def main():
    key = jax.random.PRNGKey(7)
    layer = Layer(jax.random.normal(key, (5, 3)), jnp.ones(3), "tanh")
    x = jnp.linspace(-1.0, 1.0, 10).reshape(2, 5)
    relu_layer = dataclasses.replace(layer, activation="relu")
    return apply(layer, x), apply(relu_layer, x)
