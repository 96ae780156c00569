"""The ``aotc`` command: compile a Python function to a ``.vmfb``, run it, inspect it.

    aotc compile model.py:predict --arg f32[64,784] -o predict.vmfb
    aotc run predict.vmfb predict --input x.npy
    aotc inspect predict.vmfb
    aotc targets

``run``, ``inspect`` and ``targets`` import only the runtime (``aotc.runtime``,
``iree.runtime`` and numpy), so they work on a machine that has no compiler; the compiler
is imported inside ``compile`` alone. User errors (a bad argument, a missing file, an unknown function, a
program IREE rejects) print one message to stderr and exit with status 2 (the command
line is malformed) or 1 (the command failed); ``aotc --verbose ...`` adds all of IREE's
diagnostics and the Python traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, Sequence

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

# Short dtype names accepted in --arg specs; full numpy names work too.
SHORT_DTYPES = {
    "f16": "float16", "f32": "float32", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "bool": "bool",
}
# The dtypes aotc compiles: every one has a short name (aotc.dtypes.DTYPES holds the same
# names; not imported here so that parsing a spec needs no compiler).
FULL_DTYPES = tuple(SHORT_DTYPES.values())
_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[(.*)\]\s*$")

# numpy print options for results shown on the terminal: long arrays are elided.
PRINT_OPTIONS = {"threshold": 200, "edgeitems": 3, "linewidth": 100}


class CliError(Exception):
    """A user error: printed as ``aotc <command>: <message>`` and exits with ``code``."""

    def __init__(self, message: str, code: int = EXIT_FAILURE):
        super().__init__(message)
        self.code = code


# ---- argument specs -----------------------------------------------------------------------

def parse_arg_spec(text: str) -> tuple[tuple[int, ...], str]:
    """Parses ``f32[64,784]`` into ``((64, 784), "float32")``; ``i64[]`` is a scalar.

    >>> parse_arg_spec("u8[3, 4]")
    ((3, 4), 'uint8')
    """
    example = "expected DTYPE[DIMS], e.g. f32[64,784], or i64[] for a scalar"
    match = _SPEC.match(text)
    if not match:
        hint = f" (a scalar is written {text.strip()}[])" if _dtype_name(text.strip()) else ""
        raise CliError(f"--arg {text!r}: {example}{hint}", EXIT_USAGE)
    name, dims_text = match.groups()
    dtype = _dtype_name(name)
    if dtype is None:
        raise CliError(
            f"--arg {text!r}: unknown dtype {name!r}; use one of "
            f"{', '.join(SHORT_DTYPES)} or a full numpy name ({', '.join(FULL_DTYPES)})",
            EXIT_USAGE,
        )
    dims: list[int] = []
    if dims_text.strip():
        for part in dims_text.split(","):
            part = part.strip()
            if not part.isdigit():
                raise CliError(
                    f"--arg {text!r}: dimension {part!r} is not a non-negative integer; "
                    f"{example}",
                    EXIT_USAGE,
                )
            dims.append(int(part))
    return tuple(dims), dtype


def _dtype_name(name: str) -> str | None:
    if name in SHORT_DTYPES:
        return SHORT_DTYPES[name]
    if name == "bool_":
        return "bool"
    return name if name in FULL_DTYPES else None


def format_size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"  # unreachable


# ---- aotc compile -------------------------------------------------------------------------

def _split_target(text: str) -> tuple[str, str]:
    path, sep, func = text.rpartition(":")
    if not sep or not path or not func:
        raise CliError(
            f"expected FILE.py:FUNCTION (e.g. model.py:predict), got {text!r}", EXIT_USAGE
        )
    return path, func


def _import_file(path: str):
    """Imports a Python file as a module, with its directory importable (for its own
    imports), and returns the module."""
    import importlib.util

    if not os.path.isfile(path):
        raise CliError(f"{path}: no such file")
    name = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]) or "module"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"{path}: cannot be imported as a Python module (is it a .py file?)")
    module = importlib.util.module_from_spec(spec)
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:
        raise CliError(f"{path}: importing it called sys.exit({e.code}); guard the script "
                       f"part with `if __name__ == \"__main__\":`") from e
    except Exception as e:
        raise CliError(f"{path}: importing it failed: {_describe(e, path)}") from e
    finally:
        if sys.path and sys.path[0] == directory:
            sys.path.pop(0)
    return module


def _describe(e: BaseException, path: str | None = None) -> str:
    """``ExcType: message (at file:line)``, the line being the innermost one in ``path``."""
    where = ""
    if path is not None:
        target = os.path.abspath(path)
        tb = e.__traceback__
        while tb is not None:
            if os.path.abspath(tb.tb_frame.f_code.co_filename) == target:
                where = f" (at {path}:{tb.tb_lineno})"
            tb = tb.tb_next
    return f"{type(e).__name__}: {e}{where}"


def _find_function(module, path: str, qualname: str):
    obj: Any = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            defined = sorted(
                n for n, v in vars(module).items()
                if callable(v) and not n.startswith("_") and not isinstance(v, type)
                and getattr(v, "__module__", None) == module.__name__
            )
            listing = f"; functions defined there: {', '.join(defined)}" if defined else ""
            raise CliError(f"{path} has no function {qualname!r}{listing}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CliError(f"{path}: {qualname!r} is a {type(obj).__name__}, not a function")
    return obj


def _check_arity(fn, where: str, n_specs: int) -> None:
    """Fails early, naming the parameters, when the --arg count cannot fit ``fn``."""
    import inspect

    try:
        params = list(inspect.signature(getattr(fn, "_fn", fn)).parameters.values())
    except (TypeError, ValueError):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    if n_specs < len(required) or (n_specs > len(positional) and not varargs):
        names = ", ".join(p.name for p in positional)
        count = (f"{len(required)}" if len(required) == len(positional)
                 else f"{len(required)} to {len(positional)}")
        raise CliError(
            f"{where} takes {count} argument{'s' * (len(positional) != 1)} ({names}) but "
            f"{n_specs} --arg {'was' if n_specs == 1 else 'were'} given; give one --arg "
            f"DTYPE[DIMS] per argument, in order",
            EXIT_USAGE,
        )


# IREE's diagnostics can run to thousands of lines (it prints whole functions as notes);
# the terminal gets the error lines, --verbose everything.
MAX_DIAGNOSTIC_LINES = 12
MAX_LINE = 240


def _short_compile_error(e, verbose: bool) -> str:
    diagnostics = getattr(e, "diagnostics", "") or ""
    message = str(e)
    if verbose or not diagnostics:
        return message
    head = message[: len(message) - len(diagnostics)].rstrip()
    lines = diagnostics.splitlines()
    errors = [line for line in lines if " error: " in line or line.startswith("error:")]
    shown = [line if len(line) <= MAX_LINE else line[:MAX_LINE] + " ..."
             for line in (errors or lines)[:MAX_DIAGNOSTIC_LINES]]
    hidden = len(lines) - len(shown)
    more = (f"\n({hidden} more lines of IREE diagnostics: add --verbose to see them)"
            if hidden else "")
    return head + "\n" + "\n".join(shown) + more


def cmd_compile(args: argparse.Namespace) -> int:
    path, qualname = _split_target(args.target_spec)
    specs = [parse_arg_spec(s) for s in args.arg]
    name = args.name or qualname.rpartition(".")[2]
    if not name.isidentifier():
        raise CliError(f"--name {name!r}: a function name must be an identifier "
                       f"(letters, digits, _; not starting with a digit)", EXIT_USAGE)
    output = args.output or f"{name}.vmfb"

    # The compiler is imported here only: run and inspect must work without it.
    try:
        import iree.compiler  # noqa: F401
    except ImportError as e:
        raise CliError("the compiler is not installed here (a runtime-only install): aotc "
                       "run, inspect and targets work; to compile, pip install "
                       "iree-base-compiler==3.13.0, or compile on another machine") from e
    import aotc
    from aotc.errors import AotcError, CompileError
    from aotc.targets import get_target

    try:
        target = get_target(args.target)
    except AotcError as e:
        raise CliError(f"--target {args.target!r}: {e}; `aotc targets` lists them",
                       EXIT_USAGE) from e
    module = _import_file(path)
    fn = _find_function(module, path, qualname)
    _check_arity(fn, f"{path}:{qualname}", len(specs))
    shape_specs = [aotc.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs]
    try:
        artifact = aotc.export(fn, *shape_specs, target=target, name=name)
    except CompileError as e:
        raise CliError(f"cannot compile {path}:{qualname}: "
                       f"{_short_compile_error(e, args.verbose)}") from e
    except AotcError as e:
        raise CliError(f"cannot compile {path}:{qualname}: {e}") from e
    except Exception as e:
        # An error raised by the user's own code while it was traced: show it with the
        # line it came from.
        raise CliError(f"tracing {path}:{qualname} failed: {_describe(e, path)}") from e
    if args.print_mlir:
        print(artifact.mlir)
    try:
        artifact.save(output)
    except OSError as e:
        raise CliError(f"cannot write {output}: {e.strerror or e}") from e
    meta = artifact.functions[name]
    print(f"{meta.signature}  [target {artifact.target}]  -> {output} "
          f"({format_size(len(artifact.vmfb))})")
    return EXIT_OK


# ---- reading artifacts without loading them -----------------------------------------------

def read_artifact(path: str) -> dict:
    """The functions of a ``.vmfb`` and their metadata, read without creating a device
    (so it works for artifacts built for another machine)."""
    import iree.runtime as rt

    from aotc.runtime.metadata import FunctionMetadata

    if not os.path.isfile(path):
        raise CliError(f"{path}: no such file")
    with open(path, "rb") as f:
        data = f.read()
    try:
        vm_module = rt.VmModule.copy_buffer(rt.VmInstance(), data)
    except Exception as e:
        raise CliError(f"{path}: not a .vmfb file that IREE can read ({e})") from e
    functions = {}
    for fname in vm_module.function_names:
        if fname.startswith("__"):
            continue  # IREE's own entry points (__init)
        reflection = dict(vm_module.lookup_function(fname).reflection)
        try:
            meta = FunctionMetadata.from_reflection(reflection)
        except ValueError as e:
            raise CliError(f"{path}: function {fname!r}: {e}") from e
        functions[fname] = (meta, reflection)
    return {"path": path, "size": len(data), "module": vm_module.name, "functions": functions}


# ---- aotc inspect -------------------------------------------------------------------------

def cmd_inspect(args: argparse.Namespace) -> int:
    info = read_artifact(args.vmfb)
    if args.json:
        out = {
            "path": info["path"],
            "size_bytes": info["size"],
            "module": info["module"],
            "functions": {},
        }
        for fname, (meta, reflection) in info["functions"].items():
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
    for fname, (meta, reflection) in functions.items():
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
        print(f"      memory: {_memory_line(_memory_figures(info, fname, meta, args))}")
    return EXIT_OK


def _memory_figures(info: dict, fname: str, meta, args: argparse.Namespace) -> dict:
    """Bytes per call (from the metadata) and, with --measure, the transient bytes IREE
    allocates inside a call (measured on local-sync)."""
    from aotc.runtime.memory import function_memory, measure_transient

    figures = function_memory(meta)
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
    if m["transient_bytes"] is not None:
        parts.append(f"transient {size(m['transient_bytes'])} (measured on local-sync)")
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
  # list the targets (cpu, aarch64, vulkan, cuda:sm_90, ...) and which can run here
  aotc targets

exit status: 0 success, 1 the command failed, 2 the command line is wrong.
"""

COMPILE_EPILOG = """\
argument specs: DTYPE[DIM,DIM,...]; [] is a scalar.
  dtypes: f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool, or numpy names (float32, int64, uint8, ...)
  e.g. --arg f32[64,784] --arg i64[] --arg bool[8]

The file is imported as a module (code under `if __name__ == "__main__":` does not run);
arrays it holds at module level and uses in FUNCTION become constants of the artifact.
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

    p = sub.add_parser(
        "compile", help="compile FILE.py:FUNCTION to a .vmfb",
        description="Trace FUNCTION from FILE.py for the given argument shapes and dtypes, "
                    "compile it with IREE and write a self-describing .vmfb.",
        epilog=COMPILE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target_spec", metavar="FILE.py:FUNCTION",
                   help="the Python file and the function in it (e.g. model.py:predict)")
    p.add_argument("--arg", action="append", default=[], metavar="SPEC",
                   help="one per function argument, in order: DTYPE[DIMS], e.g. f32[64,784]")
    p.add_argument("-o", "--output", metavar="OUT.vmfb",
                   help="where to write the artifact (default: NAME.vmfb)")
    p.add_argument("--target", default="cpu",
                   help="where the code will run: a name from `aotc targets`, or several "
                        "joined by commas (default: cpu)")
    p.add_argument("--name", help="the function's name in the artifact (default: FUNCTION)")
    p.add_argument("--print-mlir", action="store_true",
                   help="print the MLIR module handed to IREE")
    p.set_defaults(handler=cmd_compile)

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
                        "measure the transient bytes IREE allocates inside a call")
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
