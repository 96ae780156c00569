"""Suite-wide settings and fixtures: compiles on one thread each under pytest-xdist, and
no idle GPU device outlives the tests that used it.

A Vulkan device keeps a completion-watcher thread that, on Mesa's software Vulkan
(lavapipe, the CI's Vulkan), busy-waits for as long as the device exists: one device
left in a worker took about half of the machine's CPU from every later test. After each
test, devices nothing refers to are released (``runtime.release_unused_devices``); at the
end of each test module, after a garbage collection (a test's jitted functions can sit in
reference cycles), again.
"""

from __future__ import annotations

import gc
import os

# One pytest-xdist worker per core: a compile's own threads would only compete with the
# other workers' (aotc.config.compile_threading). Subprocesses inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("AOTC_COMPILE_THREADING", "0")

import pytest

from aotc import runtime
from aotc.runtime import device as runtime_device


def _holds_a_gpu_device() -> bool:
    return any(not d.is_host for d in list(runtime_device._devices.values()))


@pytest.fixture(autouse=True)
def _release_idle_gpu_devices():
    yield
    if _holds_a_gpu_device():
        runtime.release_unused_devices()


@pytest.fixture(autouse=True, scope="module")
def _release_idle_gpu_devices_after_module():
    yield
    if _holds_a_gpu_device():
        gc.collect()
        runtime.release_unused_devices()
