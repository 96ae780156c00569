"""Optimizer state as a NamedTuple: SGD with momentum, jitted, state in and out."""
from typing import NamedTuple

import jax
import jax.numpy as jnp


class State(NamedTuple):
    params: jnp.ndarray
    momentum: jnp.ndarray
    step: jnp.ndarray


@jax.jit
def step(state, grad):
    momentum = 0.9 * state.momentum + grad
    return State(state.params - 0.1 * momentum, momentum, state.step + 1)


def main():
    state = State(jnp.ones(4), jnp.zeros(4), jnp.asarray(0))
    for i in range(5):
        state = step(state, state.params * (i + 1))
    assert isinstance(state, State)
    return state
