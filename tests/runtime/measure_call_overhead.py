"""Measures the per-call overhead of a tiny call: add two float32[4] numpy arrays and read
the result with np.asarray, against the bare IREE calls the runtime makes.

Run: ``python3 tests/runtime/measure_call_overhead.py [rounds]``. Variants are interleaved
(round-robin blocks of 2000 calls) so machine noise hits them alike; medians of the
per-block averages are printed.
"""

from __future__ import annotations

import statistics
import sys
import timeit

import iree.runtime as rt
import numpy as np
from runtime_artifacts import compile_mlir, main_mlir

from aotc import runtime


def bare_iree(module: runtime.Module, a: np.ndarray, b: np.ndarray):
    """The IREE calls of one tiny call with no Python layer: copy both arguments, fresh
    argument/result lists, invoke, read the result through DLPack."""
    device = module.device
    hal = device.hal
    copy = hal.allocator.allocate_buffer_copy
    context = module._loaded.context
    function = module.vm_module.lookup_function("add")
    f32 = int(rt.HalElementType.FLOAT_32)
    local, usage = int(rt.MemoryType.DEVICE_LOCAL), int(rt.BufferUsage.DEFAULT)

    class Source:
        __slots__ = ("bv",)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            return hal.create_dlpack_capsule(self.bv, 1, 0)

        def __dlpack_device__(self):
            return (1, 0)

    def call():
        args = rt.VmVariantList(2)
        args.push_ref(copy(local, usage, hal, a, f32))
        args.push_ref(copy(local, usage, hal, b, f32))
        results = rt.VmVariantList(1)
        context.invoke(function, args, results)
        source = Source()
        source.bv = results.get_as_object(0, rt.HalBufferView)
        return np.from_dlpack(source)

    return call


def main(rounds: int = 30) -> None:
    vmfb = compile_mlir(main_mlir())
    a = np.arange(4, dtype=np.float32)
    b = np.ones(4, np.float32)
    for uri in ("local-sync", "local-task"):
        module = runtime.load(vmfb, device=uri)
        add = module.add
        cases = {
            "bare IREE calls + DLPack read": bare_iree(module, a, b),
            "module.add(a, b)": lambda add=add: add(a, b),
            "np.asarray(module.add(a, b))": lambda m=module: np.asarray(m.add(a, b)),
            "np.asarray(add.call_flat([a, b])[0])":
                lambda add=add: np.asarray(add.call_flat([a, b])[0]),
        }
        blocks: dict[str, list[float]] = {name: [] for name in cases}
        for fn in cases.values():
            for _ in range(1000):
                fn()
        for _ in range(rounds):
            for name, fn in cases.items():
                blocks[name].append(timeit.timeit(fn, number=2000) / 2000 * 1e6)
        for name, times in blocks.items():
            print(f"{uri:10s} {name:40s} median {statistics.median(times):6.2f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
