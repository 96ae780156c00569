"""aotc-opt: run a pass pipeline over an MLIR file and print the result, as ``mlir-opt`` does.

    python -m aotc.passes.opt input.mlir --pass-pipeline='canonicalize,cse'
    python -m aotc.passes.opt - --split-input-file \\
        --pass-pipeline='aotc-check-dtypes{unsupported=f64 target=gpu}'

The pipeline is a comma-separated list. An element whose name is in ``REGISTRY`` is an aotc
pass, with its options in braces as space-separated ``key=value`` pairs (MLIR's textual
syntax); ``aotc-cleanup`` is the cleanup run on every traced module (``CLEANUP``); any
other element is an upstream pass or nested pipeline (``canonicalize``, ``cse``,
``func.func(canonicalize)``). An outer ``builtin.module(...)`` is accepted and
removed. A failing pass (or unparsable input) prints its message on stderr and the tool
exits 1; with ``--split-input-file`` the other chunks still run and print. A mistake in
the pipeline or the arguments exits 2 before any input is read.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from typing import Sequence

from .base import REGISTRY, ModulePass, PassError
from .pipeline import CLEANUP, PipelineItem, run_pipeline

SPLIT_MARKER = "// -----"

# Named upstream pipelines, so tests check the pipelines aotc really runs.
PIPELINES: dict[str, str] = {"aotc-cleanup": ",".join(CLEANUP)}

_OPENERS = {"(": ")", "{": "}", "[": "]"}


class UsageError(Exception):
    """A command-line or pipeline-syntax mistake: reported before any input is read."""


def _split_top_level(text: str, separators: str) -> list[str]:
    """Splits ``text`` at ``separators`` outside of brackets and double quotes.

    >>> _split_top_level("a{x=1,2 y=3},b(c,d)", ",")
    ['a{x=1,2 y=3}', 'b(c,d)']
    """
    parts, current, stack, quoted = [], [], [], False
    for ch in text:
        if quoted:
            quoted = ch != '"'
        elif ch == '"':
            quoted = True
        elif ch in _OPENERS:
            stack.append(_OPENERS[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
        elif not stack and ch in separators:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    if stack or quoted:
        raise UsageError(f"--pass-pipeline: expected balanced brackets and quotes, got {text!r}")
    parts.append("".join(current))
    return parts


def _unwrap(value: str) -> str:
    """Removes one pair of enclosing braces or quotes from an option value."""
    if len(value) >= 2 and (value[0], value[-1]) in (("{", "}"), ('"', '"')):
        return value[1:-1]
    return value


def _option_names(cls: type[ModulePass]) -> list[str]:
    return sorted(f.name.replace("_", "-") for f in dataclasses.fields(cls))


def parse_options(pass_name: str, text: str, cls: type[ModulePass]) -> dict[str, str]:
    """Parses ``key=value key2=value2`` (the text inside a pass's braces) into a dict.

    >>> from aotc.passes import CheckDtypes
    >>> parse_options("aotc-check-dtypes", "unsupported=f64 target=gpu", CheckDtypes)
    {'unsupported': 'f64', 'target': 'gpu'}
    """
    valid = _option_names(cls)
    options: dict[str, str] = {}
    for item in _split_top_level(text.strip(), " \t\n"):
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"{pass_name}: expected options as key=value, got {item!r}. "
                             f"Valid options: {', '.join(valid) or '(none)'}")
        if key not in valid and key.replace("_", "-") not in valid:
            raise UsageError(f"{pass_name}: unknown option {key!r}. "
                             f"Valid options: {', '.join(valid) or '(none)'}")
        options[key] = _unwrap(value)
    return options


def _make_pass(pass_name: str, options: dict[str, str]) -> ModulePass:
    cls = REGISTRY[pass_name]
    try:
        return cls.from_options(options)
    except (TypeError, ValueError) as e:
        raise UsageError(f"{pass_name}: invalid options {options}: {e}") from e


_ELEMENT = re.compile(r"^\s*([\w.$-]+)\s*(?:\{(.*)\})?\s*$", re.DOTALL)


def parse_pipeline(text: str) -> list[PipelineItem]:
    """Turns a ``--pass-pipeline`` string into items for ``run_pipeline``.

    Consecutive upstream passes are joined into one pipeline string, aotc passes become
    ``ModulePass`` instances:

    >>> items = parse_pipeline("canonicalize,cse,aotc-check-dtypes{unsupported=f64},cse")
    >>> items[0], type(items[1]).__name__, items[1].unsupported, items[2]
    ('canonicalize,cse', 'CheckDtypes', frozenset({'f64'}), 'cse')
    """
    text = text.strip()
    wrapped = re.fullmatch(r"builtin\.module\s*\((.*)\)", text, re.DOTALL)
    if wrapped:
        text = wrapped.group(1).strip()
    if not text:
        return []
    items: list[PipelineItem] = []
    upstream: list[str] = []
    for element in _split_top_level(text, ","):
        element = element.strip()
        if not element:
            raise UsageError(f"--pass-pipeline: expected a pass name between commas, got {text!r}")
        match = _ELEMENT.match(element)
        if match and match.group(1) in REGISTRY:
            if upstream:
                items.append(",".join(upstream))
                upstream = []
            name = match.group(1)
            options = parse_options(name, match.group(2) or "", REGISTRY[name])
            items.append(_make_pass(name, options))
        else:
            upstream.append(PIPELINES.get(element, element))
    if upstream:
        items.append(",".join(upstream))
    return items


def check_upstream(items: Sequence[PipelineItem]) -> None:
    """Fails with a UsageError naming the element when an upstream pass is unknown."""
    from aotc._mlir import ir, passmanager

    with ir.Context():
        for item in items:
            if isinstance(item, str):
                try:
                    passmanager.PassManager("builtin.module").add(item)
                except ValueError as e:
                    raise UsageError(
                        f"--pass-pipeline: {str(e).strip()}\n"
                        f"aotc passes: {', '.join(sorted(REGISTRY)) or '(none)'}; "
                        f"pipelines: {', '.join(PIPELINES)}"
                    ) from None


def split_input(text: str) -> list[str]:
    """Splits at lines starting with ``// -----``. Each chunk is padded with the newlines
    that precede it, so line numbers in locations and errors are those of the whole file."""
    chunks, current, start, lines = [], [], 0, text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.lstrip().startswith(SPLIT_MARKER):
            chunks.append("\n" * start + "".join(current))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append("\n" * start + "".join(current))
    return chunks


_TOP_LEVEL_OP = re.compile(r"^[^\s/#!}]")


def _wrap_in_module(text: str) -> str:
    """Puts several top-level ops into one ``module { ... }`` after the alias definitions
    (``#map = ...``), writing ``module {`` on a blank or comment line where one precedes
    the first op, so that no line or column number changes."""
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if _TOP_LEVEL_OP.match(line)), 0)
    before = lines[first - 1].strip() if first else None
    if before is not None and (before == "" or before.startswith("//")):
        lines[first - 1] = "module {" + lines[first - 1]
    else:
        lines[first] = "module { " + lines[first]
    return "\n".join(lines) + "\n}\n"


def parse_module(text: str, source_name: str):
    """Parses ``text`` into a ``builtin.module`` operation in the current context. Like
    mlir-opt, a file without a top-level module gets one."""
    from aotc._mlir import ir

    try:
        op = ir.Operation.parse(text, source_name=source_name)
    except ir.MLIRError as e:
        if "single top-level operation" not in str(e):
            raise
        op = ir.Operation.parse(_wrap_in_module(text), source_name=source_name)
    if op.operation.name == "builtin.module":
        return op.operation
    module = ir.Module.create(op.location)
    module.body.append(op.operation)
    return module.operation


def process(text: str, source_name: str, items: Sequence[PipelineItem], args) -> str:
    """Parses one chunk in a fresh context, runs the pipeline and returns the printed IR.
    Raises ir.MLIRError (bad input) or PassError (a pass failed)."""
    import io

    from aotc._mlir import ir

    with ir.Context() as context, ir.Location.unknown():
        context.allow_unregistered_dialects = args.allow_unregistered_dialect
        module = parse_module(text, source_name)
        run_pipeline(module, items)
        out = io.StringIO()
        module.print(print_generic_op_form=args.mlir_print_op_generic,
                     enable_debug_info=args.mlir_print_debuginfo, file=out)
        return out.getvalue()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m aotc.passes.opt",
        description="Runs aotc and upstream MLIR passes over a file and prints the IR.",
        epilog=f"aotc passes: {', '.join(sorted(REGISTRY)) or '(none)'}; "
               f"pipelines: {', '.join(f'{k} = {v}' for k, v in PIPELINES.items())}",
    )
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file, or - for stdin")
    parser.add_argument("--pass-pipeline", default="",
                        help="e.g. 'canonicalize,cse,aotc-check-dtypes{unsupported=f64}'")
    parser.add_argument("--split-input-file", action="store_true",
                        help=f"process chunks separated by '{SPLIT_MARKER}' independently")
    parser.add_argument("--mlir-print-op-generic", action="store_true",
                        help="print ops in their generic form")
    parser.add_argument("--mlir-print-debuginfo", action="store_true",
                        help="print locations")
    parser.add_argument("--allow-unregistered-dialect", action="store_true")
    parser.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from aotc._mlir import ir

    args = _parser().parse_args(argv)
    try:
        items = parse_pipeline(args.pass_pipeline)
        check_upstream(items)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.input == "-":
        text, source_name = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(args.input, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            print(f"error: cannot read {args.input}: {e.strerror}", file=sys.stderr)
            return 2
        source_name = args.input

    chunks = split_input(text) if args.split_input_file else [text]
    outputs, failed = [], False
    for chunk in chunks:
        try:
            outputs.append(process(chunk, source_name, items, args))
        except (PassError, ir.MLIRError) as e:
            print(str(e), file=sys.stderr)
            failed = True
    result = f"{SPLIT_MARKER}\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(result)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
