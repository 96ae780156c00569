"""Fixtures: every artifact is exported once per session, per program and target."""

from __future__ import annotations

import time

import pytest
from target_programs import OPS_32, OPS_ALL, mlp, mlp_spec

import aotc

# Seconds each export took, for the session summary (and the report on vmfb sizes).
EXPORTS: dict[tuple[str, str], tuple[int, float]] = {}


class Artifacts:
    """``artifacts.mlp("aarch64")`` / ``artifacts.ops("vulkan")``: exported on first use."""

    def __init__(self, directory) -> None:
        self._dir = directory
        self._made: dict[tuple[str, str], aotc.Artifact] = {}

    def _get(self, program: str, target: str, make) -> aotc.Artifact:
        key = (program, target)
        if key not in self._made:
            start = time.perf_counter()
            self._made[key] = make()
            EXPORTS[key] = (len(self._made[key].vmfb), time.perf_counter() - start)
        return self._made[key]

    def mlp(self, target: str) -> aotc.Artifact:
        return self._get("mlp", target, lambda: aotc.export(mlp.predict, mlp_spec(), target=target))

    def ops(self, target: str) -> aotc.Artifact:
        """The small functions; float64 ones only where the target has float64."""
        has_f64 = "vulkan" not in target
        table = OPS_ALL if has_f64 else OPS_32
        entries = {name: (fn, *args) for name, (fn, *args) in table.items()}
        return self._get("ops", target, lambda: aotc.export(entries, target=target))

    def train(self, target: str) -> aotc.Artifact:
        """samples/train_mlp.py's training step (value_and_grad, donated parameters)."""
        from target_programs import train_mlp

        params, x, y = train_mlp.init()
        velocity = {k: v * 0 for k, v in params.items()}
        return self._get("train", target, lambda: aotc.export(
            train_mlp.step, params, velocity, x, y, donate_argnums=(0, 1), target=target))

    def path(self, program: str, target: str) -> str:
        """The artifact saved to a file (``<program>-<target>.vmfb``)."""
        art = self.mlp(target) if program == "mlp" else self.ops(target)
        path = self._dir / f"{program}-{target.replace(':', '_').replace(',', '+')}.vmfb"
        if not path.exists():
            art.save(path)
        return str(path)


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> Artifacts:
    return Artifacts(tmp_path_factory.mktemp("target-artifacts"))


def pytest_terminal_summary(terminalreporter):
    if not EXPORTS:
        return
    terminalreporter.section("aotc exports per target (vmfb bytes, seconds)")
    for (program, target), (size, seconds) in sorted(EXPORTS.items()):
        terminalreporter.write_line(f"{program:4s} {target:28s} {size:10d} B {seconds:6.2f} s")
