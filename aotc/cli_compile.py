"""``aotc compile``: trace a function of a Python file and write it as a ``.vmfb``.

    aotc compile model.py:predict --arg f32[64,784] --arg i64[] -o predict.vmfb

The command's parser (``add_compile_parser``), its argument specs (``parse_arg_spec``:
``f32[64,784]``, ``i64[]``) and ``cmd_compile``, which imports the file, finds the
function, checks the number of ``--arg`` against its parameters and exports it. Only
``cmd_compile`` imports the compiler (``iree.compiler`` and the tracing side of aotc), so
``aotc.cli`` imports this module at no cost to ``run``, ``inspect`` and ``targets``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

from .cli_common import EXIT_OK, EXIT_USAGE, CliError, format_size
from .runtime import dtypes as _runtime_dtypes

# Short dtype names accepted in --arg specs; full numpy names work too.
# The dtypes aotc compiles, from the one dtype table (runtime/dtypes.py: the runtime, not
# the compiler, so parsing a spec needs no compiler): full numpy names, and the short
# names --arg specs also accept.
SHORT_DTYPES = {d.short: d.name for d in _runtime_dtypes.DTYPES.values()}
FULL_DTYPES = tuple(SHORT_DTYPES.values())
_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[(.*)\]\s*$")

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
    from aotc.errors import CompilerNotInstalledError

    try:
        import aotc._mlir  # noqa: F401
    except CompilerNotInstalledError as e:
        raise CliError(f"{e}; aotc run, inspect and targets work here, or compile on "
                       f"another machine") from e
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


COMPILE_EPILOG = f"""\
argument specs: DTYPE[DIM,DIM,...]; [] is a scalar.
  dtypes: {' '.join(SHORT_DTYPES)},
          or numpy names (float32, int64, uint8, complex64, ...)
  e.g. --arg f32[64,784] --arg i64[] --arg bool[8]

The file is imported as a module (code under `if __name__ == "__main__":` does not run);
arrays it holds at module level and uses in FUNCTION become constants of the artifact.
"""


def add_compile_parser(sub) -> argparse.ArgumentParser:
    """Adds the ``compile`` command to the subparsers ``sub`` of the ``aotc`` parser."""
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
    return p
