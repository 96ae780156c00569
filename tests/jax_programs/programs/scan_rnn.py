"""An Elman RNN over a sequence with lax.scan, params as a dict."""
import jax
import jax.numpy as jnp
from jax import lax


def rnn(params, xs, h0):
    def step(h, x):
        h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h.sum()

    return lax.scan(step, h0, xs)


def main():
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(3), 3)
    params = {"wx": jax.random.normal(k1, (8, 16)) * 0.3,
              "wh": jax.random.normal(k2, (16, 16)) * 0.3, "b": jnp.zeros(16)}
    xs = jax.random.normal(k3, (20, 4, 8))
    h, sums = jax.jit(rnn)(params, xs, jnp.zeros((4, 16)))
    return h, sums
