"""A training-style update with donated state: linear regression, gradients by hand."""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, donate_argnums=(0,))
def update(w, x, y, lr):
    residual = x @ w - y
    grad = 2.0 * x.T @ residual / x.shape[0]
    return w - lr * grad


def main():
    key = jax.random.PRNGKey(42)
    kx, kn = jax.random.split(key)
    x = jax.random.normal(kx, (64, 3))
    true_w = jnp.array([1.5, -2.0, 0.5])
    y = x @ true_w + 0.01 * jax.random.normal(kn, (64,))
    w = jnp.zeros(3)
    losses = []
    for _ in range(50):
        w = update(w, x, y, 0.1)
        losses.append(jnp.mean((x @ w - y) ** 2))
    return {"w": w, "losses": jnp.stack(losses)}
