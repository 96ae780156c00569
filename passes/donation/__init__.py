"""Buffer donation: results written into the buffers of donated arguments.

The package, in the order the work happens:

* ``pairing``: ``Candidate`` and ``pair_donations``, the pure choice of one result per
  donated argument (no MLIR);
* ``analysis``: ``InPlaceAnalysis``, which decides from the IR whether a result can be
  written into an argument's buffer in place, and what must run before the write, on
  ``positions`` (the offsets ops read and write at, run-time ones included, and the
  placement rules of concat, insert_slice and scatter);
* ``donate``: the pass ``aotc-donate``, which pairs the marked arguments (``aotc.donate``)
  with results (``iree.abi.output``), orders reads with barriers, and warns about the
  rest;
* ``keep_arguments``: the pass ``aotc-keep-undonated-arguments``, which keeps the arguments
  that are not donated intact despite an IREE 3.13 in-place update;
* ``metadata``: what the compiler runs (both passes, ``donate_and_record``) and records in
  each function's metadata (``donated``, ``aliases``);
* ``function``: the argument attributes, body walks and barriers all of them use.

The submodules import each other without a circle (``pairing`` and ``function`` import
no sibling, ``positions`` imports ``function``, ``analysis`` those and ``pairing``, the
passes ``analysis``, ``metadata`` the passes), and never this package.
"""

from __future__ import annotations

from .analysis import InPlaceAnalysis, Writer
from .donate import Donate
from .function import MARKER, OUTPUT, WRITTEN, donated_pairs, mark_donated, mark_written
from .keep_arguments import KeepUndonatedArguments
from .metadata import donate_and_record, donation_passes, result_aliases
from .pairing import Candidate, pair_donations

__all__ = [
    "MARKER",
    "OUTPUT",
    "WRITTEN",
    "Candidate",
    "Donate",
    "InPlaceAnalysis",
    "KeepUndonatedArguments",
    "Writer",
    "donate_and_record",
    "donated_pairs",
    "donation_passes",
    "mark_donated",
    "mark_written",
    "pair_donations",
    "result_aliases",
]
