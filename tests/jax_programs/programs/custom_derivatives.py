"""JAX's custom-derivative idioms in a training loop: a numerically stable softplus by
jax.custom_jvp, gradient clipping by jax.custom_vjp, a block under jax.checkpoint."""
from functools import partial

import jax
import jax.numpy as jnp


@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * jax.nn.sigmoid(x)


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def clip_gradient(limit, x):
    return x


def clip_fwd(limit, x):
    return x, None


def clip_bwd(limit, _, g):
    return (jnp.clip(g, -limit, limit),)


clip_gradient.defvjp(clip_fwd, clip_bwd)


@jax.checkpoint
def block(params, x):
    h = softplus(x @ params["w1"])
    return jnp.tanh(h @ params["w2"])


def loss(params, x, y):
    pred = block(params, clip_gradient(0.05, x))
    return jnp.mean((pred - y) ** 2) + 1e-3 * jnp.sum(softplus(params["w1"] * 40.0))


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), value


def main():
    x = jax.random.normal(jax.random.PRNGKey(1), (16, 3))
    y = jnp.cos(x[:, :1])
    params = {"w1": jnp.full((3, 8), 0.5), "w2": jnp.full((8, 1), -0.25)}
    for _ in range(5):
        params, value = step(params, x, y)
    # the stable rule: softplus'(100) is 1 in float32, where the plain formula's is nan
    slope = jax.grad(lambda v: jnp.sum(softplus(v)))(jnp.array([100.0, 0.0]))
    return params, value, slope
