"""The pairing of donated arguments with results, as a pure function.

The in-place analysis (``analysis``) describes, for each donated argument, the results
whose writes its buffer can safely hold (``Candidate``); ``pair_donations`` chooses one
result per argument and one argument per result. Nothing here reads IR: the choice can
be tested, and reasoned about, on plain integers.

This module imports nothing from MLIR or aotc.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    """A result that a donated argument's buffer can safely hold.

    ``rank`` orders the choices: 0 the result *is* the argument (nothing is written),
    1 the result updates the argument in place (its writer reads the argument at the
    positions it writes), 2 the result overwrites the buffer with unrelated data. ``order``
    lists the ops that must be sequenced before the writer with a barrier (empty: none).

    >>> options = [Candidate(0, 2), Candidate(1, 1, ("barrier",)), Candidate(2, 1)]
    >>> [c.result for c in sorted(options, key=lambda c: c.key)]
    [2, 1, 0]
    """

    result: int
    rank: int
    order: tuple = ()

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.rank, len(self.order) > 0, self.result)


def pair_donations(
    donors: Sequence[int],
    candidates: Mapping[int, Sequence[Candidate]],
    taken: Collection[int] = (),
) -> dict[int, Candidate]:
    """Pairs donated arguments with results: argument index -> the chosen ``Candidate``.

    Invariants of the returned pairing:

    1. each result index appears at most once, and never one in ``taken`` (results that
       already hold a buffer, e.g. from an earlier run of the pass): one buffer holds one
       result;
    2. each argument is paired at most once, and only with one of its ``candidates``
       (which the caller has checked: identical type, safe to write in place);
    3. the number of pairs is maximal: an argument with no free candidate left takes one
       from an earlier argument only if that one can move to another of its candidates
       (an augmenting path, Kuhn's algorithm);
    4. it is deterministic: arguments are served in the order of ``donors``, each taking
       its best free candidate by ``Candidate.key`` (the argument itself first, then
       in-place updates, then writes that need no barrier, then lower result index);
    5. it is idempotent: pairing again with the chosen results added to ``taken`` and
       the paired arguments removed from ``donors`` pairs nothing new from the same
       candidates.

    >>> c = {0: [Candidate(0, 1), Candidate(1, 2)], 1: [Candidate(0, 1)]}
    >>> {a: p.result for a, p in pair_donations([0, 1], c).items()}
    {0: 1, 1: 0}
    >>> c = {0: [Candidate(0, 2), Candidate(1, 2)], 1: [Candidate(0, 2), Candidate(1, 2)]}
    >>> {a: p.result for a, p in pair_donations([0, 1], c).items()}
    {0: 0, 1: 1}
    >>> pair_donations([0, 1], c, taken={0})  # result 0 already holds a buffer
    {0: Candidate(result=1, rank=2, order=())}
    """
    taken = frozenset(taken)
    options = {
        arg: sorted((c for c in candidates.get(arg, ()) if c.result not in taken),
                    key=lambda c: c.key)
        for arg in donors
    }
    holder: dict[int, int] = {}  # result -> argument
    chosen: dict[int, Candidate] = {}

    def augment(arg: int, visited: set[int]) -> bool:
        for cand in options[arg]:
            if cand.result in visited:
                continue
            visited.add(cand.result)
            other = holder.get(cand.result)
            if other is None or augment(other, visited):
                holder[cand.result] = arg
                chosen[arg] = cand
                return True
        return False

    for arg in donors:
        free = next((c for c in options[arg] if c.result not in holder), None)
        if free is not None:
            holder[free.result] = arg
            chosen[arg] = free
        else:
            augment(arg, set())
    # An augmenting path may have moved an argument to another result: keep the final one.
    return {arg: chosen[arg] for arg in donors
            if arg in chosen and holder.get(chosen[arg].result) == arg}
