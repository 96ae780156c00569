"""The canonical JAX training loop: jax.value_and_grad of a loss, SGD on a pytree."""
import jax
import jax.numpy as jnp


def loss(params, x, y):
    pred = jnp.tanh(x @ params["w"] + params["b"])
    return jnp.mean((pred - y) ** 2)


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), value


def main():
    x = jax.random.normal(jax.random.PRNGKey(0), (32, 4))
    y = jnp.sin(x.sum(axis=1, keepdims=True))
    params = {"w": jnp.zeros((4, 1)), "b": jnp.zeros(1)}
    for _ in range(10):
        params, value = step(params, x, y)
    return params, value
