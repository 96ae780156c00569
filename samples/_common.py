"""What the samples share: where the artifact is written and how a run reports its result.

Not a sample itself: the samples import it (``python samples/<name>.py`` puts this folder
on the import path).
"""

from __future__ import annotations

import os
import sys

import numpy as np


def output_path(argv: list[str], name: str) -> str:
    """The .vmfb path given on the command line (default: out/<name>.vmfb); its folder
    is created."""
    path = argv[1] if len(argv) > 1 else os.path.join("out", f"{name}.vmfb")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return path


def print_classes(batch: int, classes: np.ndarray, ref_classes: np.ndarray,
                  shown: int = 16) -> None:
    """The first ``shown`` classes predicted by aotc and by numpy, one line each."""
    print(f"batch     {batch} images; predicted classes (first {shown}):")
    print(f"  aotc    {classes[:shown].tolist()}")
    print(f"  numpy   {ref_classes[:shown].tolist()}")


def print_probs_error(err: float, rtol: float, atol: float, classes_note: str) -> None:
    """The largest difference of the probabilities from numpy's, then how the classes
    compare."""
    print(f"max |probs - numpy| = {err:.2e} (rtol {rtol:g}, atol {atol:g}); {classes_note}")


def verdict(ok: bool) -> int:
    """Prints MATCH (stdout) or MISMATCH (stderr); returns the exit status."""
    if ok:
        print("MATCH: aotc agrees with numpy")
        return 0
    print("MISMATCH: aotc disagrees with numpy", file=sys.stderr)
    return 1
