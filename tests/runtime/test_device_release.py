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


def test_a_lost_device_is_replaced_by_a_new_one():
    """IREE's DEVICE_LOST (a GPU driver's; lavapipe once lost a device in the suite) makes
    every later use of the device fail: the error says so and how to go on, and the next
    load on its URI, or on the lost device itself, runs on a new one."""
    from aotc.runtime import call_support

    art = aotc.export(lambda x: x * 2, aotc.ShapeDtypeStruct((4,), "float32"), name="double")
    module = runtime.load(art.vmfb, device=OWN_DEVICE)
    lost = module.device
    error = call_support.invocation_error(
        module["double"].metadata,
        RuntimeError("queue.c:5253: DATA_LOSS; [vkQueueSubmit2] VK_ERROR_DEVICE_LOST"), lost)
    assert isinstance(error, runtime.InvocationError)
    assert (f"the device {OWN_DEVICE!r} was lost while running it" in str(error)
            and "load the module again (aotc.runtime.load)" in str(error)), str(error)
    assert lost.lost and runtime.get_device(OWN_DEVICE) is not lost
    again = runtime.load(art.vmfb, device=lost)
    assert again.device is runtime.get_device(OWN_DEVICE) and not again.device.lost
    np.testing.assert_array_equal(np.asarray(again["double"](np.arange(4, dtype=np.float32))),
                                  [0, 2, 4, 6])
