"""JAX quickstart: an MLP initialized eagerly from split keys, per-example predict vmapped."""
import jax
import jax.numpy as jnp
from jax import random


def init_params(sizes, key):
    keys = random.split(key, len(sizes))
    return [(random.normal(k, (n, m)) * jnp.sqrt(2.0 / m), jnp.zeros(n))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, image):
    activations = image
    for w, b in params[:-1]:
        activations = jax.nn.relu(jnp.dot(w, activations) + b)
    w, b = params[-1]
    logits = jnp.dot(w, activations) + b
    return logits - jax.nn.logsumexp(logits)


def main():
    params = init_params([784, 128, 64, 10], random.PRNGKey(0))
    images = random.uniform(random.PRNGKey(1), (16, 784))
    batched = jax.jit(jax.vmap(predict, in_axes=(None, 0)))
    preds = batched(params, images)
    return {"preds": preds, "classes": jnp.argmax(preds, axis=1)}
