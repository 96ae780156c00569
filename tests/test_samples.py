"""The samples run end to end as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_mlp_sample_matches_numpy(tmp_path):
    out = tmp_path / "mlp.vmfb"
    proc = subprocess.run(
        [sys.executable, str(SAMPLES / "mlp.py"), str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MATCH" in proc.stdout and "MISMATCH" not in proc.stdout + proc.stderr
    assert "max |probs - numpy|" in proc.stdout
    assert out.stat().st_size > 1_000_000  # the weights are inside the artifact
    assert not os.path.exists(tmp_path / "out")  # wrote where it was told
