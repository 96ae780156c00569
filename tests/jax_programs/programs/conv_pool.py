"""A 2-D convolution with lax.conv_general_dilated (NHWC) and max pooling by reduce_window."""
import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def conv_block(x, w):
    y = lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y)
    return lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def main():
    kx, kw = jax.random.split(jax.random.PRNGKey(4))
    x = jax.random.normal(kx, (2, 8, 8, 3))
    w = jax.random.normal(kw, (3, 3, 3, 4)) * 0.2
    return conv_block(x, w)
