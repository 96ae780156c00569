"""``aotc targets``, and targets through ``aotc compile`` / ``inspect`` / ``run``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from target_edge import require

from aotc.runtime import targets as rt_targets
from aotc.targets import TARGETS

MODEL = textwrap.dedent("""
    import aotc.numpy as anp

    def f(x):
        return anp.exp(x) * 2 - 1
""")


def aotc(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aotc.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False)


def test_targets_lists_every_target_and_where_it_runs():
    done = aotc("targets")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["TARGET", "RUNS", "HERE", "FOR"]
    rows = {line.split()[0]: line for line in lines[1:1 + len(TARGETS)]}
    assert list(rows) == list(TARGETS)
    assert rows["cpu"].split()[1] == "yes,"
    foreign = "riscv64" if rt_targets.host_arch() != "riscv64" else "aarch64"
    assert f"no: {foreign} code; this machine is {rt_targets.host_arch()}" in rows[foreign]
    assert "H100, H200" in rows["cuda:sm_90"] and "B200" in rows["cuda:sm_100"]
    assert "--target cpu,aarch64,vulkan" in done.stdout  # how to combine them


def test_targets_json_matches_the_table():
    rows = json.loads(aotc("targets", "--json").stdout)
    assert [r["target"] for r in rows] == list(TARGETS)
    by_name = {r["target"]: r for r in rows}
    assert by_name["cpu"]["runs_here"] is True and by_name["cpu"]["device"] == "local-task"
    assert by_name["vulkan"]["device"] == "vulkan"
    assert by_name["vulkan"]["runs_here"] == bool(rt_targets.available_devices("vulkan"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-targets")
    (d / "model.py").write_text(MODEL)
    np.save(d / "x.npy", np.linspace(-1, 1, 6, dtype=np.float32))
    return d


def test_compile_inspect_and_run_a_multi_target_artifact(workdir):
    done = aotc("compile", "model.py:f", "--arg", "f32[6]", "--target", "cpu,aarch64,vulkan",
                "-o", "f.vmfb", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "[target cpu,aarch64,vulkan]" in done.stdout
    assert "target: cpu,aarch64,vulkan" in aotc("inspect", "f.vmfb", cwd=workdir).stdout
    expected = np.exp(np.load(workdir / "x.npy")) * 2 - 1
    devices = ["local-sync"] + (["vulkan"] if rt_targets.available_devices("vulkan") else [])
    for device in devices:
        done = aotc("run", "f.vmfb", "--input", "x.npy", "--output", f"y-{device}.npy",
                    "--device", device, cwd=workdir)
        assert done.returncode == 0, done.stderr
        np.testing.assert_allclose(np.load(workdir / f"y-{device}.npy"), expected, rtol=1e-6)
    require(len(devices) == 2, "no Vulkan device (mesa-vulkan-drivers)")


def test_compile_for_another_machine_then_run_here_fails_clearly(workdir):
    done = aotc("compile", "model.py:f", "--arg", "f32[6]", "--target", "riscv64",
                "-o", "f-rv.vmfb", cwd=workdir)
    assert done.returncode == 0, done.stderr
    done = aotc("run", "f-rv.vmfb", "--input", "x.npy", "--device", "local-sync", cwd=workdir)
    assert done.returncode == 1
    assert "compiled for target riscv64, which device 'local-sync' cannot run" in done.stderr
    assert "Re-export it for target 'cpu'" in done.stderr


@pytest.mark.parametrize("target,message", [
    ("tpu", "not a known target; choose one of: cpu, x86_64"),
    ("cpu,cpu", "'cpu' is listed twice"),
])
def test_compile_rejects_unknown_targets(workdir, target, message):
    done = aotc("compile", "model.py:f", "--arg", "f32[6]", "--target", target, cwd=workdir)
    assert done.returncode == 2 and message in done.stderr and "aotc targets" in done.stderr
