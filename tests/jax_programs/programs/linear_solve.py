"""Least squares by the normal equations with jnp.linalg.solve, and a Cholesky factor."""
import jax
import jax.numpy as jnp


@jax.jit
def fit(x, y):
    gram = x.T @ x + 1e-3 * jnp.eye(x.shape[1])
    return jnp.linalg.solve(gram, x.T @ y), jnp.linalg.cholesky(gram)


def main():
    x = jax.random.normal(jax.random.PRNGKey(2), (40, 3))
    return fit(x, x @ jnp.array([1.0, -1.0, 2.0]))
