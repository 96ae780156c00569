"""Shared by the lowering snapshot scripts (not a test: lit.cfg.py excludes it)."""

import aotc

S = aotc.ShapeDtypeStruct


def run(*specs):
    """Traces the decorated function for ``specs`` and prints its MLIR under "TEST: name".
    Loops keep their traced form (passes/loops_in_dispatch.mlir snapshots the CPU
    targets' loop dispatches)."""
    def trace(f):
        print("TEST:", f.__name__)
        with aotc.config.override(loop_dispatch_max_work=0):
            print(aotc.jit(f).lower(*specs).as_text(), flush=True)
        return f
    return trace
