"""Scaled dot-product attention with einsum, a causal mask and softmax."""
import jax
import jax.numpy as jnp


@jax.jit
def attention(q, k, v):
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(q.shape[-1])
    mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), dtype=bool))
    scores = jnp.where(mask, scores, -1e9)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(scores, axis=-1), v)


def main():
    kq, kk, kv = jax.random.split(jax.random.PRNGKey(1), 3)
    shape = (2, 6, 4)
    return attention(jax.random.normal(kq, shape), jax.random.normal(kk, shape),
                     jax.random.normal(kv, shape))
