"""Numerically stable softmax, log_softmax and cross-entropy with one_hot labels."""
import jax
import jax.numpy as jnp


@jax.jit
def loss(logits, labels):
    one_hot = jax.nn.one_hot(labels, logits.shape[-1])
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(one_hot * log_probs, axis=-1)), jax.nn.softmax(logits)


def main():
    logits = jax.random.normal(jax.random.PRNGKey(11), (8, 5)) * 10
    labels = jnp.array([0, 1, 2, 3, 4, 0, 1, 2])
    value, probs = loss(logits, labels)
    return value, probs, jax.nn.logsumexp(logits, axis=1), jax.nn.sigmoid(logits[0])
