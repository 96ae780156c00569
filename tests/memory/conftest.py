"""Shared helpers for the memory tests: devices, and running a jitted function with and
without donation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def empty_reuse_cache():
    """Allocator statistics and the reuse cache are process-wide: buffers freed by earlier
    tests (in any file) would otherwise fill the cache's free slots and change what these
    tests count. Start each test with nothing cached."""
    import gc

    from aotc import runtime

    gc.collect()
    runtime.trim()
    yield


@pytest.fixture(params=["local-sync", "local-task"])
def cpu_uri(request) -> str:
    return request.param


def quiet_jit(fn, **kwargs):
    """aotc.jit, with unusable-donation warnings silenced (tests that check them do so
    explicitly)."""
    import aotc

    jitted = aotc.jit(fn, **kwargs)

    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return jitted(*args)

    call.jitted = jitted
    return call


def on_device(uri: str, *arrays):
    from aotc import runtime

    return [runtime.device_put(np.asarray(a), uri) for a in arrays]
