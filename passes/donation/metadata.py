"""Donation in the compiler: run the donation passes, then record the pairing.

``donate_and_record`` runs ``aotc-donate`` and ``aotc-keep-undonated-arguments`` (the IR
handed to IREE) and writes into each function's metadata (``iree.reflection``) the
pairing, argument name -> result index (``donated``), and the results that come back in
a buffer the runtime may already hold (``aliases``, from ``result_aliases``). The runtime
reads both: it deletes a donated array after the call, and never lets a later donation
overwrite a buffer that another array still shares.
"""

from __future__ import annotations

from dataclasses import replace

from ..base import PassError, read_metadata, write_metadata
from ..opset import VIEW_OPS
from ..pipeline import run_pipeline
from .donate import Donate
from .function import defining_op, donated_pairs
from .keep_arguments import KeepUndonatedArguments


def donation_passes(strict: bool = False) -> list:
    """The donation pipeline: pair the donated arguments, then keep the others intact."""
    return [Donate(strict=strict), KeepUndonatedArguments()]


def donate_and_record(module, strict: bool = False) -> None:
    """Runs the donation passes on ``module`` (an ``ir.Module``), then writes the pairing
    (argument name -> result index) into each function's metadata. Also records, for every
    function, which results come back in a buffer the runtime may already hold
    (``aliases``), so that a later donation never overwrites an array still in use.
    A failing pass (``strict``, or a ``DonationWarning`` turned into an error) raises
    ``DonationError``."""
    from aotc.errors import DonationError

    with module.context:
        funcs = [op.operation for op in module.body.operations
                 if op.operation.name == "func.func"]
    try:
        run_pipeline(module, donation_passes(strict))
    except PassError as e:
        raise DonationError(str(e)) from e
    with module.context:
        for f in funcs:
            meta = read_metadata(f)
            if meta is None:
                continue
            pairs = donated_pairs(f)
            donated = {meta.args[i].name: k for i, k in sorted(pairs.items())}
            aliases = result_aliases(f, pairs)
            if donated != meta.donated or aliases != meta.aliases:
                write_metadata(f, replace(meta, donated=donated, aliases=aliases))


def result_aliases(func_op, donated: dict[int, int]) -> dict[str, str]:
    """Results whose buffer IREE may share with an argument or another result: result
    index -> ``"arg <i>"`` or ``"out <j>"``. A result that is an argument (or a view of
    one: IREE may return a view in its operand's buffer) comes back in the argument's
    buffer; a value returned twice comes back in one buffer. A donated argument returned
    as its own result is no alias: it is consumed."""
    from aotc._mlir import ir

    ret = list(func_op.regions[0].blocks[0].operations)[-1].operation
    base_of: dict = {}
    out: dict[str, str] = {}
    for k, value in enumerate(ret.operands):
        base = value
        while (op := defining_op(base)) is not None and op.name in VIEW_OPS:
            base = op.operands[0]
        if isinstance(base, ir.BlockArgument):
            if donated.get(base.arg_number) != k:
                out[str(k)] = f"arg {base.arg_number}"
        elif base in base_of:
            out[str(k)] = f"out {base_of[base]}"
        else:
            base_of[base] = k
    return out
