"""Target names as the runtime reads them: which device can run the code of an artifact.

Every exported function records the targets it was compiled for in its metadata, as one
string: a target is ``"<family>[:<detail>]"`` (``"cpu"``, ``"aarch64:cortex-a53"``,
``"cuda:sm_90"``, ``"vulkan"``), several are separated by commas
(``"cpu,aarch64,vulkan"``: one artifact holding code for each). ``FAMILIES`` says, per
family, which device runs its code; the compiler's table (``aotc.targets``) is built on
it, so the compiler and the runtime read names the same way.

Standard library only, plus ``iree.runtime`` where a device has to be asked (imported
then, lazily).
"""

from __future__ import annotations

import ctypes
import functools
import platform
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """A kind of code: CPU code for one architecture, or code for one GPU driver."""

    name: str
    driver: str | None  # the GPU driver that runs it; None: CPU code (local-sync/local-task)
    arch: str | None = None  # CPU code: the architecture; None: the compiling machine's

    @property
    def is_cpu(self) -> bool:
        return self.driver is None


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("cpu", None),  # the CPU of the machine that compiled it
        Family("x86_64", None, "x86_64"),
        Family("aarch64", None, "aarch64"),
        Family("android-arm64", None, "aarch64"),
        Family("armv7", None, "armv7"),
        Family("riscv64", None, "riscv64"),
        Family("vulkan", "vulkan"),
        Family("cuda", "cuda"),
        Family("hip", "hip"),
    )
}

# platform.machine() spellings -> the architecture names of FAMILIES.
_MACHINES = {
    "x86_64": "x86_64", "amd64": "x86_64",
    "aarch64": "aarch64", "arm64": "aarch64", "aarch64_be": "aarch64",
    "armv7l": "armv7", "armv8l": "armv7", "armv7": "armv7",
    "riscv64": "riscv64",
}

CPU_DRIVERS = ("local-sync", "local-task")


def split_targets(text: str) -> list[str]:
    """``"cpu, aarch64:cortex-a53,vulkan"`` -> ``["cpu", "aarch64:cortex-a53", "vulkan"]``."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def family_of(target: str) -> Family | None:
    """The family of one target name (``"cuda:sm_90"`` -> cuda); None if unknown."""
    return FAMILIES.get(target.split(":", 1)[0].strip().lower())


def host_arch() -> str:
    """This machine's CPU architecture, in the names ``FAMILIES`` uses."""
    machine = platform.machine().lower()
    return _MACHINES.get(machine, machine)


def runs_on_host_cpu(target: str) -> bool:
    """Whether ``target`` is CPU code for this machine's architecture (``cpu`` always is:
    it names the CPU of the machine that compiled it, normally this one)."""
    family = family_of(target)
    return family is not None and family.is_cpu and family.arch in (None, host_arch())


def gpu_driver(target: str) -> str | None:
    """The driver that runs a GPU target (``"cuda:sm_80"`` -> ``"cuda"``); None for CPU code."""
    family = family_of(target)
    return None if family is None else family.driver


def driver_of(device_uri: str) -> str:
    return device_uri.split("://", 1)[0].strip()


def device_runs(device_uri: str, target: str) -> bool:
    """Whether a device of this URI's driver runs code compiled for ``target`` (CUDA:
    regardless of the GPU's generation, which only the driver can check)."""
    driver = driver_of(device_uri)
    if driver in CPU_DRIVERS:
        return runs_on_host_cpu(target)
    return gpu_driver(target) == driver


@functools.cache
def cuda_compute_capabilities() -> tuple[tuple[int, int], ...]:
    """(major, minor) of every CUDA GPU here, read from the CUDA driver library; empty
    when there is no driver or no GPU."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return ()
    count, major, minor = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return ()
    found = []
    for ordinal in range(count.value):
        device = ctypes.c_int(0)
        if cuda.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
            continue
        # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76
        if (cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device) == 0
                and cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, device) == 0):
            found.append((major.value, minor.value))
    return tuple(found)


def device_targets(device_uri: str) -> list[str]:
    """The target names whose code a device of this URI runs, best first: what to
    compile for when an artifact does not fit the device.

    >>> device_targets("vulkan"), device_targets("local-task")[0]
    (['vulkan'], 'cpu')
    """
    driver = driver_of(device_uri)
    if driver in CPU_DRIVERS:
        arch = host_arch()
        return ["cpu"] + [f.name for f in FAMILIES.values() if f.is_cpu and f.arch == arch]
    if driver == "cuda":
        sms = sorted({f"cuda:sm_{major}{minor}" for major, minor in cuda_compute_capabilities()})
        return sms or ["cuda:sm_<the GPU's compute capability, e.g. 90>"]
    return [driver]


def available_devices(driver: str) -> list[str]:
    """The names of the devices IREE's ``driver`` sees here; [] when the driver or its
    system library is missing."""
    import iree.runtime as rt

    if driver not in rt.query_available_drivers():
        return []
    try:
        infos = rt.get_driver(driver).query_available_devices()
    except (RuntimeError, ValueError, OSError):
        return []
    return [str(info.get("name", info.get("path", "?"))) for info in infos]
