"""Eager data preprocessing: normalization, masking, running statistics, sorting."""
import jax
import jax.numpy as jnp
from jax import random


def main():
    data = random.normal(random.PRNGKey(8), (50, 4)) * jnp.array([1.0, 10.0, 0.1, 5.0]) + 3.0
    mean, std = data.mean(axis=0), data.std(axis=0)
    normalized = (data - mean) / std
    clipped = jnp.clip(normalized, -2.0, 2.0)
    mask = jnp.abs(normalized) > 1.5
    outliers = jnp.sum(mask, axis=0)
    running = jnp.cumsum(data[:, 0]) / jnp.arange(1, 51)
    order = jnp.argsort(data[:, 1])
    top3 = data[order[-3:], 1]
    filled = jax.block_until_ready(jnp.where(mask, 0.0, normalized))
    assert isinstance(filled, jax.Array) and jax.device_get(filled).shape == (50, 4)
    return {"mean": mean, "std": std, "clipped": clipped, "outliers": outliers,
            "running": running, "top3": top3, "filled": filled.sum(axis=1),
            "quantiles": jnp.percentile(data[:, 3], jnp.array([10.0, 50.0, 90.0]))}
