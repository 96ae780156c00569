"""The CNN sample runs end to end as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_cnn_sample_matches_numpy(tmp_path):
    out = tmp_path / "cnn.vmfb"
    proc = subprocess.run(
        [sys.executable, str(SAMPLES / "cnn.py"), str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MATCH" in proc.stdout and "MISMATCH" not in proc.stdout + proc.stderr
    assert "classes identical" in proc.stdout
    assert "max |probs - numpy|" in proc.stdout
    # The weights (80 KiB of float32) are inside the artifact.
    assert out.stat().st_size > (3 * 3 * 16 + 3 * 3 * 16 * 32 + 7 * 7 * 32 * 10) * 4
    assert not os.path.exists(tmp_path / "out")  # wrote where it was told
