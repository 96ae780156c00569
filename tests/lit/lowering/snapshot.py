"""Shared by the lowering snapshot scripts (not a test: lit.cfg.py excludes it)."""

import aotc

S = aotc.ShapeDtypeStruct


def run(*specs):
    """Traces the decorated function for ``specs`` and prints its MLIR under "TEST: name"."""
    def trace(f):
        print("TEST:", f.__name__)
        print(aotc.jit(f).lower(*specs).as_text(), flush=True)
        return f
    return trace
