"""The ``aotc`` command: compile a Python function to a ``.vmfb``, run it, inspect it.

    aotc compile model.py:predict --arg f32[64,784] -o predict.vmfb
    aotc run predict.vmfb predict --input x.npy
    aotc inspect predict.vmfb
    aotc targets

``run``, ``inspect`` and ``targets`` import only the runtime (``aotc.runtime``,
``iree.runtime`` and numpy), so they work on a machine that has no compiler; the compiler
is imported inside ``compile`` alone (``aotc.cli_compile``, whose module level imports
only the standard library). User errors (a bad argument, a missing file, an unknown
function, a program IREE rejects) print one message to stderr and exit with status 2
(the command line is malformed) or 1 (the command failed); ``aotc --verbose ...`` adds
all of IREE's diagnostics and the Python traceback. Shared pieces (``CliError``, the exit
statuses) live in ``aotc.cli_common``. A closed output pipe (``aotc targets | head -1``)
ends a command quietly with status 141, as other Unix tools.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from .cli_common import EXIT_OK, EXIT_USAGE, CliError, format_size, stdout_closed
from .cli_compile import FULL_DTYPES, SHORT_DTYPES, add_compile_parser, parse_arg_spec

__all__ = ["FULL_DTYPES", "SHORT_DTYPES", "CliError", "build_parser", "format_size", "main",
           "parse_arg_spec", "read_artifact"]

# numpy print options for results shown on the terminal: long arrays are elided.
PRINT_OPTIONS = {"threshold": 200, "edgeitems": 3, "linewidth": 100}


# ---- reading artifacts without loading them -----------------------------------------------

def read_artifact(path: str) -> dict:
    """The functions of a ``.vmfb`` and their metadata, read without creating a device
    (so it works for artifacts built for another machine). The container is checked
    first (``runtime.integrity``), so a damaged file is an error, never a crash."""
    import iree.runtime as rt

    from aotc.runtime.errors import LoadError
    from aotc.runtime.integrity import verify_container
    from aotc.runtime.metadata import FunctionMetadata

    if not os.path.isfile(path):
        raise CliError(f"{path}: no such file")
    with open(path, "rb") as f:
        data = f.read()
    try:
        container = verify_container(data, path)
    except LoadError as e:
        detail = str(e).removeprefix(f"{path}: ")
        raise CliError(f"{path}: not a .vmfb file, or a damaged one: {detail}") from e
    instance = rt.VmInstance()
    try:
        vm_module = rt.VmModule.copy_buffer(instance, data)
    except Exception as e:
        raise CliError(f"{path}: not a .vmfb file that IREE can read ({e})") from e
    functions = {}
    for fname in vm_module.function_names:
        if fname.startswith("__"):
            continue  # IREE's own entry points (__init)
        function = vm_module.lookup_function(fname)
        reflection = dict(function.reflection)
        try:
            meta = FunctionMetadata.from_reflection(reflection)
        except ValueError as e:
            raise CliError(f"{path}: function {fname!r}: {e}") from e
        functions[fname] = (meta, reflection, function)
    # A VmFunction does not keep its module alive: the module (and its instance) stay
    # in the result for as long as the functions are used.
    return {"path": path, "size": len(data), "module": vm_module.name, "functions": functions,
            "container": container, "vm_module": vm_module, "instance": instance}


def verify_artifact(info: dict, expected_sha256: str | None) -> dict:
    """``aotc inspect --verify``: the checks ``runtime.load`` makes (the container's were
    made by ``read_artifact``), each function's metadata against its ABI, and the pinned
    SHA-256; a report for printing, or ``CliError`` naming what is wrong."""
    from aotc.runtime.errors import LoadError
    from aotc.runtime.integrity import check_abi, check_expected_sha256

    container = info["container"]
    try:
        for fname, (meta, _, function) in info["functions"].items():
            if meta is not None:
                check_abi(info["path"], fname, function, meta)
        if expected_sha256 is not None:
            check_expected_sha256(container, expected_sha256, info["path"], "--expected-sha256")
    except (LoadError, ValueError, TypeError) as e:
        raise CliError(f"verification failed: {e}") from e
    return {
        "sha256": container.sha256,
        "sealed": container.sealed,
        "pinned": expected_sha256 is not None,
        "members": [{"name": m.name, "offset": m.start, "bytes": m.size, "crc32": f"{m.crc:08x}"}
                    for m in container.members],
    }


# ---- aotc inspect -------------------------------------------------------------------------

def cmd_inspect(args: argparse.Namespace) -> int:
    info = read_artifact(args.vmfb)
    if args.expected_sha256 is not None and not args.verify:
        raise CliError("--expected-sha256 checks the artifact: add --verify", EXIT_USAGE)
    verified = verify_artifact(info, args.expected_sha256) if args.verify else None
    if args.json:
        out = {
            "path": info["path"],
            "size_bytes": info["size"],
            "module": info["module"],
            "functions": {},
        }
        if verified is not None:
            out["verified"] = verified
        for fname, (meta, reflection, _) in info["functions"].items():
            if meta is None:
                out["functions"][fname] = {
                    "signature": reflection.get("iree.abi.declaration", fname),
                    "aotc": False,
                }
            else:
                entry = json.loads(meta.to_json())
                entry["signature"] = meta.signature
                entry["memory"] = _memory_figures(info, fname, meta, args)
                out["functions"][fname] = entry
        print(json.dumps(out, indent=2, sort_keys=True))
        return EXIT_OK

    functions = info["functions"]
    print(f"{info['path']}: {format_size(info['size'])} ({info['size']} bytes), "
          f"module '{info['module']}', {len(functions)} function{'s' * (len(functions) != 1)}")
    if verified is not None:
        _print_verified(verified)
    for fname, (meta, reflection, _) in functions.items():
        if meta is None:
            print(f"  {reflection.get('iree.abi.declaration', fname)}")
            print("      (no aotc metadata: compiled by something other than aotc)")
            continue
        print(f"  {meta.signature}")
        print(f"      target: {meta.target}   aotc: {meta.aotc_version}   "
              f"IREE: {meta.iree_version}   source hash: {meta.source_hash}")
        if meta.static_args:
            statics = ", ".join(f"{k}={v}" for k, v in meta.static_args.items())
            print(f"      static arguments: {statics}")
        if meta.donated:
            donated = ", ".join(f"{k} -> result {v}" for k, v in meta.donated.items())
            print(f"      donated: {donated}")
        if meta.mutated:
            written = ", ".join(f"{k} (result {v})" for k, v in meta.mutated.items())
            print(f"      writes into: {written}")
        print(f"      memory: {_memory_line(_memory_figures(info, fname, meta, args))}")
    return EXIT_OK


def _print_verified(verified: dict) -> None:
    how = ("sealed by aotc, matches the contents" if verified["sealed"]
           else "no aotc seal: the whole file's")
    pinned = ", the pinned one" if verified["pinned"] else ""
    print(f"  verified: SHA-256 {verified['sha256']} ({how}{pinned})")
    members = ", ".join(f"{m['name']} ({format_size(m['bytes'])})" for m in verified["members"])
    print(f"  members, CRC-32 checked: {members}")
    print("  metadata: schema and ABI checked against the compiled functions")


def _memory_figures(info: dict, fname: str, meta, args: argparse.Namespace) -> dict:
    """Bytes per call (from the metadata: arguments, results, donation, the forward values
    derivatives keep for their backward pass) and, with --measure, the peak of the
    transient bytes IREE holds inside a call (measured on local-sync)."""
    from aotc.runtime.memory import function_memory, measure_transient

    figures = function_memory(meta)
    figures["residual_bytes"] = meta.residual_bytes
    figures["transient_bytes"] = None
    if getattr(args, "measure", False):
        with open(info["path"], "rb") as f:
            figures["transient_bytes"] = measure_transient(f.read(), fname)
    return figures


def _memory_line(m: dict) -> str:
    def size(n):
        return "?" if n is None else format_size(n)

    parts = [f"arguments {size(m['argument_bytes'])}", f"results {size(m['result_bytes'])}"]
    if m["donated_bytes"]:
        parts.append(f"donation saves {size(m['donated_bytes'])} per call")
    if m["residual_bytes"]:
        parts.append(f"derivatives keep {size(m['residual_bytes'])} of forward values")
    if m["transient_bytes"] is not None:
        parts.append(f"transient peak {size(m['transient_bytes'])} (measured on local-sync)")
    return ", ".join(parts)


# ---- aotc targets -------------------------------------------------------------------------

def cmd_targets(args: argparse.Namespace) -> int:
    from aotc.targets import TARGETS

    rows = []
    for name, target in TARGETS.items():
        runs, why = target.runs_here()
        rows.append({"target": name, "runs_here": runs, "why": why,
                     "device": target.device, "description": target.description})
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    answers = [("yes, " if r["runs_here"] else "no: ") + r["why"] for r in rows]
    width = max(len(r["target"]) for r in rows) + 2
    answer_width = min(max(len(a) for a in answers), 44) + 2
    print(f"{'TARGET':<{width}}{'RUNS HERE':<{answer_width}}FOR")
    for r, answer in zip(rows, answers):
        print(f"{r['target']:<{width}}{answer:<{answer_width}}{r['description']}")
    print()
    print(TARGETS_EPILOG, end="")
    return EXIT_OK


TARGETS_EPILOG = """\
Several targets in one artifact: --target cpu,aarch64,vulkan (or aotc.export(...,
target="cpu,aarch64,vulkan")); the runtime runs the code that fits its device: the host
CPU unless told otherwise (aotc run --device vulkan). A CPU after a colon tunes the code
for it: aarch64:cortex-a76, x86_64:znver4, armv7:cortex-a7; a GPU family after vulkan:
vulkan:ampere, vulkan:rdna3. cuda is short for cuda:sm_80. CUDA code is PTX, compiled by
the GPU driver when loaded, so it also runs on later GPUs.
"""


# ---- aotc run -----------------------------------------------------------------------------

def _read_input(text: str, spec, index: int):
    """An input: a .npy file, or a literal number / nested list (``2.5``, ``[1,2]``) cast
    to the argument's dtype."""
    import numpy as np

    if os.path.exists(text):
        try:
            return np.load(text, allow_pickle=False)
        except Exception as e:
            raise CliError(f"--input {text!r}: not a .npy file numpy can read ({e})") from e
    if text.endswith(".npy") or os.sep in text:
        raise CliError(f"--input {text!r}: no such file")
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise CliError(f"--input {text!r}: expected a .npy file or a literal number or list "
                       f"(e.g. 2.5 or [1,2,3]); no file of that name exists", EXIT_USAGE) from None
    dtype = spec.dtype if spec is not None else None
    try:
        return np.asarray(value, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as e:
        raise CliError(f"--input {text!r} (argument {index}): cannot make a {dtype} array "
                       f"of it ({e})", EXIT_USAGE) from e


def _output_paths(outputs: Sequence[str], n_results: int) -> list[str]:
    if len(outputs) == 1 and "{}" in outputs[0]:
        return [outputs[0].replace("{}", str(i)) for i in range(n_results)]
    if len(outputs) != n_results:
        raise CliError(
            f"the function returns {n_results} result{'s' * (n_results != 1)} but "
            f"{len(outputs)} --output path{'s were' if len(outputs) != 1 else ' was'} given; "
            f"give one --output per result, or one path with a {{}} placeholder "
            f"(e.g. --output 'out_{{}}.npy', filled with 0, 1, ...)",
            EXIT_USAGE,
        )
    return list(outputs)


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    from aotc import runtime
    from aotc.runtime import errors as rt_errors

    if not os.path.isfile(args.vmfb):
        raise CliError(f"{args.vmfb}: no such file")
    try:
        module = runtime.load(args.vmfb, device=args.device)
    except rt_errors.AotcRuntimeError as e:
        raise CliError(f"cannot load {args.vmfb}: {e}") from e
    names = list(module.functions)
    fname = args.function
    if fname is None:
        if len(names) != 1:
            raise CliError(f"{args.vmfb} has {len(names)} functions ({', '.join(names)}); "
                           f"name the one to run: aotc run {args.vmfb} FUNCTION ...", EXIT_USAGE)
        fname = names[0]
    if fname not in names:
        raise CliError(f"{args.vmfb} has no function {fname!r}; it has: {', '.join(names)}")
    meta = module.functions[fname]
    arg_specs = list(getattr(meta, "args", None) or [])
    inputs = [_read_input(text, arg_specs[i] if i < len(arg_specs) else None, i)
              for i, text in enumerate(args.input)]
    if arg_specs and len(inputs) != len(arg_specs):
        raise CliError(
            f"{fname} takes {len(arg_specs)} argument{'s' * (len(arg_specs) != 1)} "
            f"({', '.join(str(a) for a in arg_specs)}) but {len(inputs)} --input "
            f"{'was' if len(inputs) == 1 else 'were'} given", EXIT_USAGE)
    result_specs = list(getattr(meta, "results", None) or [])
    if args.output and result_specs:
        _output_paths(args.output, len(result_specs))  # a wrong count fails before running
    function = module[fname]
    try:
        if hasattr(function, "call_flat"):
            results = list(function.call_flat(inputs))
        else:
            results = _flatten(function(*inputs))
    except rt_errors.AotcRuntimeError as e:
        raise CliError(str(e)) from e  # the runtime's message names the function
    result_names = [s.name for s in result_specs] if len(result_specs) == len(results) else [
        f"out[{i}]" for i in range(len(results))]
    host = [np.asarray(r) for r in results]
    if args.output:
        for path, name, value in zip(_output_paths(args.output, len(host)), result_names, host):
            try:
                np.save(path, value)
            except OSError as e:
                raise CliError(f"cannot write {path}: {e.strerror or e}") from e
            print(f"{name}: {value.dtype.name}[{','.join(map(str, value.shape))}] -> {path}")
        return EXIT_OK
    with np.printoptions(**PRINT_OPTIONS):
        for name, value in zip(result_names, host):
            print(f"{name}: {value.dtype.name}[{','.join(map(str, value.shape))}]")
            print(_indent(np.array2string(value, separator=", ")))
    return EXIT_OK


def _flatten(x) -> list:
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _flatten(item)]
    if isinstance(x, dict):
        return [leaf for key in sorted(x) for leaf in _flatten(x[key])]
    return [] if x is None else [x]


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


# ---- the parser ---------------------------------------------------------------------------

EPILOG = """\
examples:
  # compile predict() from model.py for a float32 batch of 64x784 and an int64 scalar
  aotc compile model.py:predict --arg f32[64,784] --arg i64[] -o predict.vmfb
  # run it on arrays saved with numpy.save; print the results
  aotc run predict.vmfb predict --input x.npy --input 3
  # ... or save them (one --output per result, or a {} placeholder for the index)
  aotc run predict.vmfb predict --input x.npy --input 3 --output 'y{}.npy'
  # show the functions, signatures, target and versions inside an artifact
  aotc inspect predict.vmfb
  # check it as aotc.runtime.load does and print its SHA-256 (--expected-sha256 pins it)
  aotc inspect predict.vmfb --verify
  # list the targets (cpu, aarch64, vulkan, cuda:sm_90, ...) and which can run here
  aotc targets

exit status: 0 success, 1 the command failed, 2 the command line is wrong.
"""

RUN_EPILOG = """\
inputs, one per argument in order: a .npy file (numpy.save), or a literal number or list
(2.5, [1,2,3]) converted to the argument's dtype. Results are printed (long arrays
elided), or saved with --output: one path per result, or one path containing {} which
is replaced by the result's index (0, 1, ...).
"""


def build_parser() -> argparse.ArgumentParser:
    from aotc import __version__

    parser = argparse.ArgumentParser(
        prog="aotc",
        description="Compile numpy-style Python functions ahead of time (IREE) and run the "
                    "compiled .vmfb artifacts.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"aotc {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="on errors, show all of IREE's diagnostics and the Python "
                             "traceback (for bug reports)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    add_compile_parser(sub)

    p = sub.add_parser(
        "run", help="run a function of a .vmfb on .npy inputs",
        description="Load a .vmfb with the aotc runtime (no compiler needed), call one "
                    "of its functions and print or save the results.",
        epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("vmfb", metavar="FILE.vmfb")
    p.add_argument("function", metavar="FUNCTION", nargs="?",
                   help="the function to call (optional when the file has only one)")
    p.add_argument("--input", "-i", action="append", default=[], metavar="X.npy",
                   help="one per argument, in order")
    p.add_argument("--output", "-o", action="append", default=[], metavar="Y.npy",
                   help="save results instead of printing them")
    p.add_argument("--device", default=None,
                   help="IREE device: local-task, local-sync, cuda, vulkan, ... "
                        "(default: chosen from the artifact's target and work size)")
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser(
        "inspect", help="show the functions and metadata inside a .vmfb",
        description="List the functions of a .vmfb with their signatures, target, aotc and "
                    "IREE versions, source hash, donated arguments and the bytes a call "
                    "moves. Reads the file without running it (except with --measure).",
    )
    p.add_argument("vmfb", metavar="FILE.vmfb")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--measure", action="store_true",
                   help="run each function once with zeros on local-sync (CPU artifacts) to "
                        "measure the peak of the transient bytes IREE holds inside a call")
    p.add_argument("--verify", action="store_true",
                   help="make the checks aotc.runtime.load makes (every member's CRC-32, the "
                        "aotc seal's SHA-256, the metadata against the compiled functions) "
                        "and print the artifact's SHA-256")
    p.add_argument("--expected-sha256", metavar="HEX", default=None,
                   help="with --verify: fail unless the artifact has this SHA-256 (the pinned "
                        "build; runtime.load(..., expected_sha256=...))")
    p.set_defaults(handler=cmd_inspect)

    p = sub.add_parser(
        "targets", help="list the targets aotc compiles for and which can run here",
        description="List the named targets (--target / aotc.export(target=...)), what each "
                    "is for, and whether its code can run on this machine.",
        epilog=TARGETS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(handler=cmd_targets)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The ``aotc`` command: its exit status (141 when stdout's reader closed the pipe)."""
    try:
        try:
            return _main(argv)
        finally:  # inside the try: a closed pipe shows here rather than at exit
            sys.stdout.flush()
    except BrokenPipeError:
        return stdout_closed()


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.handler(args)
    except CliError as e:
        if args.verbose:
            import traceback

            traceback.print_exc()
        print(f"aotc {args.command}: error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print(f"aotc {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
