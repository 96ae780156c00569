"""The long fuzz run: ``python -m tests.fuzz --programs 10000 [--first 0] [--batch 12]
[--workers 2]``.

Programs ``first .. first + programs - 1`` (the seed is the program's number) run in
batches, each batch in the next of ``execute.MODES`` in turn, in worker processes (a
crash kills only its worker: the batch is reported as a crash and the run goes on).
Prints one line per finding and a summary: programs, batches per mode, findings;
exits 1 if there were any. ``--out FILE`` writes the findings with their programs.
"""

from __future__ import annotations

import argparse
import concurrent.futures as futures
import multiprocessing
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    from .execute import MODES, run_seeds as _run

    spawn = multiprocessing.get_context("spawn")  # IREE's threads do not survive a fork

    seeds = list(range(args.first, args.first + args.programs))
    batches = [seeds[i:i + args.batch] for i in range(0, len(seeds), args.batch)]
    jobs = [(batch, MODES[i % len(MODES)]) for i, batch in enumerate(batches)]
    findings: list[str] = []
    per_mode = {m: 0 for m in MODES}
    start = time.time()
    done = 0
    def record(batch, mode, found):
        nonlocal done
        per_mode[mode] += len(batch)
        done += len(batch)
        for f in found:
            print(f.splitlines()[0], flush=True)
        findings.extend(found)
        if done % (args.batch * 20) < args.batch:
            print(f"... {done} programs, {len(findings)} findings, "
                  f"{time.time() - start:.0f} s", flush=True)

    broken = []
    with futures.ProcessPoolExecutor(args.workers, spawn) as pool:
        running = {pool.submit(_run, batch, mode): (batch, mode) for batch, mode in jobs}
        for future in futures.as_completed(running):
            try:
                record(*running[future], future.result())
            except futures.process.BrokenProcessPool:
                broken.append(running[future])  # this batch, or one beside it, crashed
    for batch, mode in broken:  # alone, so a crash is this batch's
        with futures.ProcessPoolExecutor(1, spawn) as pool:
            try:
                record(batch, mode, pool.submit(_run, batch, mode).result())
            except futures.process.BrokenProcessPool:
                record(batch, mode, [f"programs {batch[0]}..{batch[-1]} ({mode}): the "
                                     f"process crashed"])
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n\n".join(findings) + "\n")
    print(f"{len(seeds)} programs ({', '.join(f'{m}: {n}' for m, n in per_mode.items())}) "
          f"in {time.time() - start:.0f} s: {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
