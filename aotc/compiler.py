"""Compiling MLIR to a .vmfb with IREE's in-process compiler.

One compiler session per flag set is kept and reused; each compile is one invocation.
A session keeps the uniqued types and attributes of every module it compiled (about 30
KiB per distinct module), so it is replaced after ``SESSION_MAX_COMPILES`` compiles and
dropped by ``release_sessions`` (``clear_cache``); a new one takes under a millisecond.
IREE prints its diagnostics to the C-level stderr, so they are captured from file
descriptor 2 and carried in ``CompileError``.
A module for several devices (a CPU and a GPU) compiles instead in three runs of the
``iree-compile`` tool, with aotc's passes between IREE's phases so that each device's
code is linked (``_compile_in_stages``).
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading

from . import config
from .errors import CompileError
from .runtime.integrity import seal

SESSION_MAX_COMPILES = 64

_sessions: dict[tuple, object] = {}  # (threading on, *flags) -> session
_session_compiles: dict[tuple, int] = {}  # compiles each session has run
_lock = threading.Lock()


def _session(flags: tuple[str, ...]):
    """The session for ``flags`` and ``config.compile_threading`` (called with ``_lock``
    held), a new one after ``SESSION_MAX_COMPILES`` compiles: what the old one kept goes
    with it."""
    from iree.compiler.api import Session

    threading_on = bool(config.compile_threading)
    key = (threading_on, *flags)
    session = _sessions.get(key)
    if session is None or _session_compiles.get(key, 0) >= SESSION_MAX_COMPILES:
        session = Session()
        try:
            session.set_flags(*flags)
        except ValueError as e:
            raise CompileError(f"IREE rejected the compiler flags {' '.join(flags)}",
                               str(e)) from None
        if not threading_on:
            # The session hands its MLIR context over (it keeps using it; the Python
            # object now owns it): threading is a property of the context, not a flag.
            session.context.enable_multithreading(False)
        _sessions[key] = session
        _session_compiles[key] = 0
    _session_compiles[key] += 1
    return session


def release_sessions() -> None:
    """Drops the compiler sessions and what they keep of the modules compiled so far
    (the next compile makes a new one)."""
    with _lock:
        _sessions.clear()
        _session_compiles.clear()


class _CaptureStderr:
    """Redirects file descriptor 2 into a temporary file while IREE runs."""

    def __enter__(self):
        self.file = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()


# Known IREE 3.13 codegen failures and the flags that avoid them, tried once when the
# diagnostics match. Dispatch-creation O2+ fuses a softmax whose result is both returned
# and reduced again into a dispatch the CPU backend then cannot distribute.
FALLBACKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("failed on workgroup distribution verification", ("--iree-dispatch-creation-opt-level=O1",)),
    # The same fusion on the CUDA backend (the MLP sample's softmax + argmax).
    ("failed to bufferize op", ("--iree-dispatch-creation-opt-level=O1",)),
    # Data tiling around a util.optimization_barrier (the donation pass's ordering of an
    # in-place update, e.g. both weights of an MLP training step donated) packs a
    # transposed operand with vectors the CPU backend rejects.
    ("operations with large vector sizes", ("--iree-dispatch-creation-opt-level=O1",)),
    # Propagating a transpose through a two-result generic (argmax with its result moved,
    # e.g. vmap with out_axes=-1) drops one of its results.
    ("to match the number of inits", ("--iree-global-opt-propagate-transposes=false",)),
    # Const-expr hoisting turns a loop's initial carry into a constant resource that the
    # loop's stream form then rejects (gradients of a scan next to another loop's).
    ("should match successor input type", ("--iree-opt-const-expr-hoisting=false",)),
    # A gather IREE raises to a slice of a producer that other dispatches fuse as well
    # (vmap of a diagonal of x | y beside other uses of x | y): its dispatch regions
    # read a value before it is defined.
    ("does not dominate this use", ("--iree-dispatch-creation-opt-level=O1",)),
    # A float64 math function fused with a reduction of it over a few thousand elements
    # (any(cos(x)) beside fmin(.., cos(x))) kept more than IREE's 32 KiB of stack.
    ("exceeded stack allocation limit", ("--iree-dispatch-creation-opt-level=O1",)),
    # CUDA: a scatter (x.at[idx].add) whose updates come from a fused producer.
    ("failed to apply fusion + hoisting patterns", ("--iree-dispatch-creation-opt-level=O1",)),
    # targets.INNER_TILED on a form its lowering cannot compile (a matrix-vector product,
    # a consumer fused into the matmul's dispatch), should one get past the compiler's
    # checks (build.matrix_matmuls, aotc-isolate-matmuls).
    ("'iree_codegen.inner_tiled' op shape does not match",
     ("--iree-llvmcpu-enable-inner-tiled=false",)),
    ("materialization failed", ("--iree-llvmcpu-enable-inner-tiled=false",)),
)

# Options IREE keeps process-wide (plain LLVM options, settable once per process) rather
# than per session: a session rejects them, so a compile that needs one runs the
# iree-compile tool in a subprocess instead.
PROCESS_WIDE_FLAGS = ("--iree-hal-external-resources-mappable", "--iree-hal-link-executables",
                      "--iree-llvmcpu-vector-pproc-strategy",
                      "--iree-global-opt-propagate-transposes")


def compile_bytecode(mlir: bytes, flags: tuple[str, ...], name: str = "module") -> bytes:
    """Compiles MLIR (text or bytecode) to .vmfb bytes, sealed with their SHA-256
    (``runtime.integrity.seal``: every artifact and disk-cache entry carries it, and the
    runtime checks it on load); raises CompileError with diagnostics. A module that
    fails to compile with what aotc added for speed alone (loops that
    aotc-loops-in-dispatch put in dispatches of their own: IREE's code generation of a
    loop inside a dispatch covers less than its VM's; aotc-tile-matmuls' tile settings)
    is compiled again without it."""
    try:
        return seal(_compile_with_fallbacks(mlir, tuple(flags), name))
    except CompileError:
        from .passes.loops_in_dispatch import without_loop_dispatches
        from .passes.matmul_tiles import without_tile_settings

        plain, dropped = mlir, []
        for what, drop in (("its loops as dispatches of their own", without_loop_dispatches),
                           ("its matmuls' tile settings", without_tile_settings)):
            simpler = drop(plain)
            if simpler is not None:
                plain = simpler
                dropped.append(what)
        if not dropped:
            raise
        logging.getLogger("aotc").log(
            config.log_level(), "%s: IREE could not compile %s; compiling without",
            name, " and ".join(dropped))
        # In a process of its own: the retried module is the rare one IREE fails on, and
        # IREE 3.13's compiler died of SIGFPE on one (a fill of no elements), which in
        # this process would have ended the user's program.
        _isolated.active = True
        try:
            return seal(_compile_with_fallbacks(plain, tuple(flags), name))
        finally:
            _isolated.active = False


def _compile_with_fallbacks(mlir: bytes, flags: tuple[str, ...], name: str) -> bytes:
    try:
        return _compile_once(mlir, flags, name)
    except CompileError as e:
        for symptom, extra in FALLBACKS:
            if symptom in e.diagnostics:
                return _compile_once(mlir, flags + extra, name)
        raise


# Set while compile_bytecode retries a module: compiles then run the iree-compile tool.
_isolated = threading.local()


def _compile_once(mlir: bytes, flags: tuple[str, ...], name: str) -> bytes:
    from iree.compiler.api import Output, Source

    if _several_devices(mlir, flags):
        return _compile_in_stages(mlir, flags, name)
    if (any(f.split("=", 1)[0] in PROCESS_WIDE_FLAGS for f in flags)
            or getattr(_isolated, "active", False)):
        return _compile_with_tool(mlir, flags, name)

    with _lock:
        session = _session(tuple(flags))
        invocation = session.invocation()
        try:
            invocation.enable_console_diagnostics()
            source = Source.wrap_buffer(
                session, mlir if mlir.startswith(b"ML\xefR") else mlir + b"\0")
            with _CaptureStderr() as captured:
                ok = invocation.parse_source(source) and invocation.execute()
                output = None
                if ok:
                    output = Output.open_membuffer()
                    invocation.output_vm_bytecode(output)
            if not ok:
                raise _failure(name, flags, captured.text)
            return bytes(output.map_memory())
        finally:
            invocation.close()


def _several_devices(mlir: bytes, flags: tuple[str, ...]) -> bool:
    """Is the module for several devices (a CPU and a GPU)? Such a module names its
    devices in its ``hal.device.targets`` attribute, never in a flag."""
    if any(f.startswith("--iree-hal-target-device=") for f in flags):
        return False
    from ._mlir import parse_module

    try:
        module = parse_module(mlir)
    except Exception:  # IREE's parser reports it, with its diagnostics, in the compile
        return False
    if "hal.device.targets" not in module.operation.attributes:
        return False
    devices = re.findall(r'#hal\.device\.target<"([\w-]+)"',
                         str(module.operation.attributes["hal.device.targets"]))
    return len(set(devices)) > 1


def _compile_in_stages(mlir: bytes, flags: tuple[str, ...], name: str) -> bytes:
    """A module for several devices, with each device's executables linked: IREE's tool
    to the executables' code, aotc's pass that gives each backend executables of its own,
    the tool to the HAL program (linking per backend), aotc's pass that lets a device
    skip executables it has no code for, and the tool to the end
    (passes/device_executables.py says why)."""
    from ._mlir import bytecode, parse_module
    from .passes import PartialExecutables, SplitExecutablesPerBackend, run_pipeline

    for phases, rewrite in (
            (("--compile-to=executable-targets",), SplitExecutablesPerBackend()),
            (("--compile-from=executable-targets", "--compile-to=hal"), PartialExecutables()),
    ):
        module = parse_module(_compile_with_tool(
            mlir, flags + phases + ("--emit-mlir-bytecode",), name))
        run_pipeline(module, [rewrite])
        mlir = bytecode(module)
    return _compile_with_tool(mlir, flags + ("--compile-from=hal",), name)


def _compile_with_tool(mlir: bytes, flags: tuple[str, ...], name: str) -> bytes:
    import subprocess

    from iree.compiler.tools.binaries import find_tool

    with tempfile.TemporaryDirectory(prefix="aotc-") as tmp:
        source, output = os.path.join(tmp, "in.mlirbc"), os.path.join(tmp, "out.vmfb")
        with open(source, "wb") as f:
            f.write(mlir)
        single = () if config.compile_threading else ("--mlir-disable-threading",)
        done = subprocess.run([find_tool("iree-compile"), source, *flags, *single, "-o", output],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise _failure(name, flags, done.stderr + done.stdout)
        with open(output, "rb") as f:
            return f.read()


def _failure(name: str, flags: tuple[str, ...], diagnostics: str) -> CompileError:
    return CompileError(
        f"IREE could not compile '{name}' (flags: {' '.join(flags)}). The diagnostics "
        f"below name the failing op; if it is an op or dtype the target cannot run, "
        f"change the dtype or the target.",
        diagnostics.strip(),
    )


def iree_version() -> str:
    from iree.compiler.version import VERSION

    return VERSION
