"""Running drawn programs through aotc and comparing with numpy's bounded results.

Programs run in batches: one compiled function computes a whole batch (each program's
results under its own keys), so a compile serves many programs. A batch runs in one of
the ``MODES``; a batch that fails to compile or disagrees is rerun program by program to
name the culprits. ``run_batch`` returns the disagreements, as ``Finding``s.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

import numpy as np

import aotc
import aotc.lax as alax
import aotc.numpy as anp
import aotc.runtime as runtime

from . import bounds
from .helpers import AotcHelpers
from .programs import EXAMPLES, Program

MODES = ["jit", "vmap", "donate", "export:local-sync", "export:local-task"]


@dataclass
class Finding:
    seed: int
    mode: str
    what: str  # "error" (aotc raised) or "values"
    message: str
    source: str

    def __str__(self) -> str:
        return f"program {self.seed} ({self.mode}): {self.what}: {self.message}\n{self.source}"


def _batch_function(programs: list[Program], vmapped: bool):
    """f(*arguments of every program) -> {"<seed>.<i>": result}; static ints are baked
    in (they are static arguments of the compiled function)."""
    fns = [p.function() for p in programs]
    layout = []
    for p in programs:
        kept = [a for a in p.arguments if a.role != "static"]
        layout.append((p, len(kept)))

    def batch(*args):
        out, i = {}, 0
        for (p, n), fn in zip(layout, fns):
            given = iter(args[i:i + n])
            full = [a.examples[0] if a.role == "static" else next(given) for a in p.arguments]
            for j, r in enumerate(fn(anp, alax, AotcHelpers, *full)):
                out[f"{p.seed}.{j}"] = r
            i += n
        return out

    roles = [a.role for p in programs for a in p.arguments if a.role != "static"]
    args = [[a.examples[e] for p in programs for a in p.arguments if a.role != "static"]
            for e in range(EXAMPLES)]
    if vmapped:
        stacked = [np.stack(col) if role == "array" else col[0]
                   for role, col in zip(roles, zip(*args))]
        in_axes = tuple(0 if role == "array" else None for role in roles)
        return aotc.jit(aotc.vmap(batch, in_axes=in_axes)), stacked, roles
    return batch, args[0], roles


def _wants(programs: list[Program], vmapped: bool) -> dict:
    wants = {}
    for p in programs:
        for j in range(len(p.results)):
            per = [p.wants[e][j] for e in range(EXAMPLES)]
            if vmapped:
                wants[f"{p.seed}.{j}"] = bounds.Value(
                    np.stack([np.asarray(v.data) for v in per]),
                    np.stack([np.broadcast_to(np.asarray(v.bound, np.float64), np.shape(v.data))
                              for v in per]),
                    np.stack([np.broadcast_to(np.asarray(v.loose), np.shape(v.data)) for v in per]))
            else:
                wants[f"{p.seed}.{j}"] = per[0]
    return wants


def _call(programs: list[Program], mode: str) -> dict:
    vmapped = mode == "vmap"
    fn, args, roles = _batch_function(programs, vmapped)
    if mode in ("jit", "vmap"):
        return (fn if vmapped else aotc.jit(fn))(*args)
    arrays = tuple(i for i, r in enumerate(roles) if r == "array")
    if mode == "donate":
        placed = [aotc.device_put(a) if r == "array" else a for a, r in zip(args, roles)]
        return aotc.jit(fn, donate_argnums=arrays)(*placed)
    device = mode.split(":")[1]
    artifact = aotc.export(fn, *args, name="fuzz")
    module = runtime.load(artifact.vmfb, device=device)
    return module.fuzz(*args)


def _compare(got: dict, wants: dict, programs: list[Program], mode: str) -> list[Finding]:
    findings = []
    for p in programs:
        for j in range(len(p.results)):
            key = f"{p.seed}.{j}"
            why = bounds.disagreement(np.asarray(got[key]), wants[key])
            if why:
                findings.append(Finding(p.seed, mode, "values", f"result {j}: {why}", p.source))
    return findings


def _error(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    return text if len(text) < 2000 else text[:2000] + " ..."


def _outcome(programs: list[Program], mode: str) -> tuple[list[Finding] | None, str]:
    """``(findings, error)`` of running ``programs`` as one batch: the disagreements, or
    None and the error aotc raised."""
    try:
        got = _call(programs, mode)
        return _compare(got, _wants(programs, mode == "vmap"), programs, mode), ""
    except Exception as e:  # noqa: BLE001 - every failure of aotc is a finding
        return None, _error(e) + "\n" + "".join(traceback.format_tb(e.__traceback__)[-3:])


def _describe(findings: list[Finding] | None, error: str) -> str:
    return error or "in the batch: " + "; ".join(
        f"program {f.seed} {f.message}" for f in findings[:3])


def _together(programs: list[Program], mode: str) -> list[Program]:
    """A small subset of a failing batch that still fails together: programs are dropped
    one at a time while the rest still fails (each compile is a few seconds; this runs
    only for a batch whose every program passes alone)."""
    kept = list(programs)
    for p in programs:
        if len(kept) <= 2:
            break
        trial = [q for q in kept if q is not p]
        findings, error = _outcome(trial, mode)
        if error or findings:
            kept = trial
    return kept


def run_batch(programs: list[Program], mode: str) -> list[Finding]:
    findings, error = _outcome(programs, mode)
    if len(programs) == 1:
        return [Finding(programs[0].seed, mode, "error", error, programs[0].source)
                ] if error else findings
    if findings == []:
        return findings
    # Name the culprits: rerun alone; a batch-only failure is narrowed to the programs
    # that fail together, reported with their sources.
    alone = [f for p in programs for f in run_batch([p], mode)]
    if alone:
        return alone
    kept = _together(programs, mode)
    if len(kept) < len(programs):
        findings, error = _outcome(kept, mode)
    seeds = ",".join(str(p.seed) for p in kept)
    return [Finding(kept[0].seed, mode, "error", f"programs {seeds} fail together, each "
                    f"alone passes: {_describe(findings, error)}",
                    "\n".join(p.source for p in kept))]


def run_seeds(seeds: list[int], mode: str) -> list[str]:
    """``run_batch`` of the programs of these seeds, findings as text (for worker
    processes of the long run)."""
    import warnings

    from .programs import generate

    warnings.simplefilter("ignore")
    return [str(f) for f in run_batch([generate(s) for s in seeds], mode)]
