"""The samples run end to end as a user runs them: each exports its model to a .vmfb
(at the path it is given), loads it with aotc.runtime, runs it and compares the result
with its numpy reference, printing MATCH or MISMATCH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

# sample -> (lines its report must print, smallest plausible .vmfb size in bytes)
SAMPLE_CHECKS = {
    # The weights (2.67 MB) are inside the artifact.
    "mlp": (["max |probs - numpy|"], 1_000_000),
    # The weights (80 KiB of float32) are inside the artifact.
    "cnn": (["classes identical", "max |probs - numpy|"],
            (3 * 3 * 16 + 3 * 3 * 16 * 32 + 7 * 7 * 32 * 10) * 4),
    "rnn_scan": (["max |aotc - numpy loop|"], 1000),
    "solver_while": (["max |x - numpy loop|"], 1000),
    # The training step's derivative is built by aotc-vjp; parameters are donated.
    "train_mlp": (["max relative |loss - numpy|", "max |params - numpy|"], 10_000),
}


def test_every_sample_is_checked():
    # _*.py are modules the samples share, not samples.
    samples = [p.stem for p in SAMPLES.glob("*.py") if not p.name.startswith("_")]
    assert sorted(samples) == sorted(SAMPLE_CHECKS)


@pytest.mark.parametrize("sample", sorted(SAMPLE_CHECKS))
def test_sample_matches_numpy(tmp_path, sample):
    reports, min_size = SAMPLE_CHECKS[sample]
    out = tmp_path / f"{sample}.vmfb"
    proc = subprocess.run(
        [sys.executable, str(SAMPLES / f"{sample}.py"), str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MATCH" in proc.stdout and "MISMATCH" not in proc.stdout + proc.stderr
    for report in reports:
        assert report in proc.stdout
    assert out.stat().st_size > min_size
    assert not os.path.exists(tmp_path / "out")  # wrote where it was told
