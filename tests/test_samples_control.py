"""The control-flow samples run end to end as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.mark.parametrize("sample, report", [
    ("rnn_scan", "max |aotc - numpy loop|"),
    ("solver_while", "max |x - numpy loop|"),
])
def test_control_flow_sample_matches_numpy(tmp_path, sample, report):
    out = tmp_path / f"{sample}.vmfb"
    proc = subprocess.run(
        [sys.executable, str(SAMPLES / f"{sample}.py"), str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MATCH" in proc.stdout and "MISMATCH" not in proc.stdout + proc.stderr
    assert report in proc.stdout
    assert out.stat().st_size > 1000
    assert not os.path.exists(tmp_path / "out")  # wrote where it was told
