"""Runs the samples on the GPUs of this machine (CUDA and Vulkan), checks them against
numpy and times them. Meant for a machine with an NVIDIA GPU; takes 1-3 minutes.

    python benchmarks/gpu_check.py                      # cuda, vulkan, and the CPU for scale
    python benchmarks/gpu_check.py --devices vulkan     # one device kind
    python benchmarks/gpu_check.py --json out.json      # also write the results

For CUDA it compiles for the GPU's own target (``cuda:sm_90`` on an H100/H200, through
the device-target attribute aotc writes into the module) and for ``cuda:sm_80`` (PTX the
driver compiles forward for a newer GPU), for Vulkan IREE's portable baseline. Each case
reports the compile time, the load time (CUDA: includes the driver's PTX compile), the
first call, and per-call times (median and 90th percentile, results read back to the
host) with inputs already on the device. Exit status: 0 when every case that could run
matched numpy, 1 on a mismatch or error, 2 when a requested device kind is missing
(with --strict; otherwise it is reported and skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

import aotc
import aotc.numpy as anp
from aotc import runtime
from aotc.runtime import targets as rt_targets
from aotc.targets import TARGETS, get_target

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "samples"))

import mlp  # noqa: E402  (samples/mlp.py, importable once samples/ is on the path)

TIME_PER_CASE_S = 3.0  # timing loop budget per case (the whole run stays under 5 minutes)
MAX_CALLS = 500


# ---- programs: the MLP sample at two batch sizes, and a few dtypes ---------------------

def _mlp_case(batch: int):
    x = np.random.default_rng(1).standard_normal((batch, mlp.LAYERS[0]), dtype=np.float32)

    def check(results) -> tuple[bool, float]:
        probs, classes = (np.asarray(r) for r in results)
        ref_probs, ref_classes = mlp.predict_numpy(x)
        err = float(np.max(np.abs(probs - ref_probs)))
        top2 = np.sort(ref_probs, axis=1)[:, -2:]
        tie = (top2[:, 1] - top2[:, 0]) <= mlp.ATOL
        ok = (np.allclose(probs, ref_probs, rtol=mlp.RTOL, atol=mlp.ATOL)
              and bool(np.all((classes == ref_classes) | tie)))
        return ok, err

    spec = aotc.ShapeDtypeStruct(x.shape, "float32")
    return (f"mlp{batch}", mlp.predict, (spec,), (x,), check,
            2 * batch * (784 * 512 + 512 * 512 + 512 * 10))


def _ops(x, n):
    y = anp.tanh(x) * 2.0 + anp.exp(-anp.abs(x))
    return y, anp.sum(y, axis=1), (n * 3 + 7) // 2, anp.argmax(x, axis=1)


def _ops_numpy(x, n):
    y = np.tanh(x) * np.float32(2.0) + np.exp(-np.abs(x))
    return y, np.sum(y, axis=1), (n * 3 + 7) // 2, np.argmax(x, axis=1).astype(np.int64)


def _ops_case():
    # y is returned and reduced too: a fusion IREE 3.13 gets badly wrong on some GPU
    # backends (see VULKAN_FUSION in aotc/targets.py); this checks it stays fast.
    x = np.random.default_rng(2).standard_normal((512, 1024), dtype=np.float32)
    n = np.arange(-2**20, 2**20, 1024, dtype=np.int32)

    def check(results) -> tuple[bool, float]:
        got = [np.asarray(r) for r in results]
        ref = _ops_numpy(x, n)
        err = max(float(np.max(np.abs(g.astype(np.float64) - r))) for g, r in zip(got, ref))
        ok = all(g.dtype == r.dtype and np.allclose(g, r, rtol=1e-5, atol=1e-5)
                 for g, r in zip(got, ref))
        return ok, err

    specs = (aotc.ShapeDtypeStruct(x.shape, "float32"), aotc.ShapeDtypeStruct(n.shape, "int32"))
    return "ops512k", _ops, specs, (x, n), check, 8 * x.size


CASES = (_mlp_case(64), _mlp_case(4096), _ops_case())


# ---- running one case ----------------------------------------------------------------

@dataclass
class Result:
    program: str
    target: str
    device: str
    status: str  # MATCH, MISMATCH, ERROR, SKIPPED
    detail: str = ""
    vmfb_bytes: int = 0
    compile_s: float = 0.0
    load_s: float = 0.0
    first_call_ms: float = 0.0
    median_ms: float = 0.0
    p90_ms: float = 0.0
    calls: int = 0
    gflops: float = 0.0
    max_abs_err: float = 0.0
    extra: dict = field(default_factory=dict)


def run_case(case, target: str, device: str) -> Result:
    name, fn, specs, inputs, check, flops = case
    result = Result(name, target, device, "ERROR")
    try:
        start = time.perf_counter()
        artifact = aotc.export(fn, *specs, target=target)
        result.compile_s = time.perf_counter() - start
        result.vmfb_bytes = len(artifact.vmfb)
        result.extra["flags"] = " ".join(artifact.flags)
        start = time.perf_counter()
        module = runtime.load(artifact.vmfb, device=device)
        result.load_s = time.perf_counter() - start
        function = module[fn.__name__]
        args = [runtime.device_put(a, module.device) for a in inputs]
        start = time.perf_counter()
        out = function(*args)
        host = [np.asarray(r) for r in out]
        result.first_call_ms = (time.perf_counter() - start) * 1e3
        ok, result.max_abs_err = check(host)
        times = []
        deadline = time.perf_counter() + TIME_PER_CASE_S
        while time.perf_counter() < deadline and len(times) < MAX_CALLS:
            start = time.perf_counter()
            out = function(*args)
            for r in out:
                np.asarray(r)  # waits for the device and reads back
            times.append(time.perf_counter() - start)
            del out
        result.calls = len(times)
        result.median_ms = statistics.median(times) * 1e3
        result.p90_ms = sorted(times)[int(0.9 * (len(times) - 1))] * 1e3
        result.gflops = flops / (result.median_ms / 1e3) / 1e9
        result.status = "MATCH" if ok else "MISMATCH"
    except runtime.DeviceError as e:
        result.status, result.detail = "SKIPPED", str(e).splitlines()[0][:300]
    except Exception as e:  # noqa: BLE001 - a check script reports every failure and goes on
        result.detail = f"{type(e).__name__}: {e}"[:2000]
        traceback.print_exc()
    return result


def cuda_targets() -> list[str]:
    """The GPU's own table target (the nearest one at or below its compute capability)
    and cuda:sm_80 (PTX compiled forward by the driver)."""
    table = sorted(int(n.split("sm_")[1]) for n in TARGETS if n.startswith("cuda:"))
    found = rt_targets.cuda_compute_capabilities()
    names = []
    if found:
        cc = max(major * 10 + minor for major, minor in found)
        own = max((sm for sm in table if sm <= cc), default=table[0])
        names.append(f"cuda:sm_{own}")
    if "cuda:sm_80" not in names:
        names.append("cuda:sm_80")
    return names


def environment() -> dict:
    info = {"iree_drivers": sorted(__import__("iree.runtime").runtime.query_available_drivers()),
            "cuda_compute_capabilities": rt_targets.cuda_compute_capabilities(),
            "cuda_devices": rt_targets.available_devices("cuda"),
            "vulkan_devices": rt_targets.available_devices("vulkan"),
            "host": rt_targets.host_arch(), "cpus": os.cpu_count()}
    try:
        import subprocess

        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30,
                             check=False)
        info["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
    except (OSError, subprocess.SubprocessError) as e:
        info["nvidia_smi"] = f"unavailable ({e})"
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", default="cuda,vulkan,cpu",
                        help="device kinds to check, comma-separated (default: cuda,vulkan,cpu; "
                             "cpu is the scale the GPUs are compared against)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--strict", action="store_true",
                        help="exit 2 when a requested GPU kind is missing (default: report it)")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.devices.split(",") if k.strip()]

    start = time.perf_counter()
    env = environment()
    print("environment:", json.dumps(env, indent=1))
    plan: list[tuple[str, str]] = []  # (target, device)
    for kind in kinds:
        if kind == "cuda":
            plan += [(t, "cuda") for t in cuda_targets()]
        elif kind == "vulkan":
            plan.append(("vulkan", "vulkan"))
        elif kind == "cpu":
            plan.append(("cpu", "local-task"))
        else:
            parser.error(f"--devices: expected cuda, vulkan or cpu, got {kind!r}")
    for target, _ in plan:
        get_target(target)  # a bad name fails before anything runs

    results: list[Result] = []
    missing = []
    for target, device in plan:
        driver = device.split("://")[0]
        if driver in ("cuda", "vulkan") and not rt_targets.available_devices(driver):
            missing.append(driver)
            results += [Result(c[0], target, device, "SKIPPED", f"no {driver} device here")
                        for c in CASES]
            continue
        for case in CASES:
            result = run_case(case, target, device)
            results.append(result)
            print(f"  {result.program:8s} {target:11s} {device:10s} {result.status:8s} "
                  f"median {result.median_ms:9.3f} ms  {result.detail[:120]}", flush=True)

    print()
    header = (f"{'program':8s} {'target':11s} {'device':10s} {'status':8s} {'vmfb':>9s} "
              f"{'compile':>8s} {'load':>7s} {'1st ms':>8s} {'med ms':>9s} {'p90 ms':>9s} "
              f"{'GFLOP/s':>8s} {'max err':>9s}")
    print(header)
    for r in results:
        print(f"{r.program:8s} {r.target:11s} {r.device:10s} {r.status:8s} "
              f"{r.vmfb_bytes / 2**20:8.2f}M {r.compile_s:7.2f}s {r.load_s:6.2f}s "
              f"{r.first_call_ms:8.2f} {r.median_ms:9.3f} {r.p90_ms:9.3f} {r.gflops:8.1f} "
              f"{r.max_abs_err:9.2e}" + (f"  {r.detail[:100]}" if r.detail else ""))
    elapsed = time.perf_counter() - start
    print(f"\n{len(results)} cases in {elapsed:.0f} s; "
          + ", ".join(f"{s}: {sum(r.status == s for r in results)}"
                      for s in ("MATCH", "MISMATCH", "ERROR", "SKIPPED")))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"environment": env, "elapsed_s": elapsed, "results": [asdict(r) for r in results]},
            indent=1))
    if any(r.status in ("MISMATCH", "ERROR") for r in results):
        return 1
    if args.strict and missing:
        print(f"missing device kinds: {', '.join(sorted(set(missing)))}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
