"""``runtime.release_unused_devices``: a device nothing holds is dropped (its threads
stop), one that an Array, a loaded module or a caller holds is kept, and asking for the
device again makes a new one that works."""

from __future__ import annotations

import gc
import os
import time

import numpy as np
import pytest

import aotc
from aotc import runtime
from aotc.runtime import targets as rt_targets


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


# A URI of local-sync that no other test uses, so that nothing else holds its device.
OWN_DEVICE = "local-sync://"


def test_a_held_device_is_kept_and_an_unheld_one_released():
    array = runtime.device_put(np.arange(4, dtype=np.float32), OWN_DEVICE)
    device = array.device
    del device
    assert OWN_DEVICE not in runtime.release_unused_devices()  # the array holds it
    assert runtime.get_device(OWN_DEVICE) is array.device
    np.testing.assert_array_equal(np.asarray(array), np.arange(4))
    del array
    gc.collect()
    assert OWN_DEVICE in runtime.release_unused_devices()
    again = runtime.device_put(np.ones(2, np.float32), OWN_DEVICE)
    np.testing.assert_array_equal(np.asarray(again), [1, 1])


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_releasing_an_idle_vulkan_device_stops_its_threads():
    if not rt_targets.available_devices("vulkan"):
        pytest.skip("no Vulkan device: apt-get install mesa-vulkan-drivers libvulkan1")
    gc.collect()
    runtime.release_unused_devices()
    before = _threads()
    double = aotc.jit(lambda x: x * 2, target="vulkan")
    np.testing.assert_array_equal(np.asarray(double(np.ones(3, np.float32))), [2, 2, 2])
    assert _threads() > before  # the device's threads (its completion watcher among them)
    assert "vulkan" not in runtime.release_unused_devices()  # the loaded program holds it
    del double
    gc.collect()
    assert "vulkan" in runtime.release_unused_devices()
    deadline = time.monotonic() + 5
    while _threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _threads() == before
