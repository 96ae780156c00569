"""``aotc.export``: functions → one self-describing ``.vmfb`` artifact."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from . import _mlir, build, cache, compile_log
from .api import _symbol_name
from .compiler import compile_bytecode
from .errors import AotcError
from .runtime.ledger import format_bytes
from .runtime.metadata import FunctionMetadata
from .runtime.module import summary
from .signature import ArgumentBinder
from .signature_text import describe_signature
from .targets import get_target


@dataclass
class Artifact:
    """A compiled artifact: ``.vmfb`` bytes, the MLIR they came from, and the metadata
    of each function (also stored inside the ``.vmfb``)."""

    vmfb: bytes
    mlir: str
    functions: dict[str, FunctionMetadata]
    target: str  # "cpu", or several targets: "cpu,aarch64,vulkan"
    flags: tuple[str, ...] = field(default=())

    @property
    def sha256(self) -> str:
        """The artifact's SHA-256 (64 hex digits), sealed into the ``.vmfb`` by the
        compiler: what a device pins with ``aotc.runtime.load(..., expected_sha256=...)``
        and what ``aotc inspect --verify`` prints."""
        from .runtime.integrity import artifact_sha256

        return artifact_sha256(self.vmfb)

    @property
    def metadata(self) -> dict:
        """Per-function metadata as plain JSON-ready dicts."""
        return {name: json.loads(m.to_json()) for name, m in self.functions.items()}

    def save(self, path: str | os.PathLike) -> str:
        """Writes the ``.vmfb`` (atomically) and returns the path."""
        path = os.fspath(path)
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(self.vmfb)
        os.replace(tmp, path)
        return path

    def __repr__(self) -> str:
        return (f"<aotc Artifact {summary(self.functions)} for {self.target}, "
                f"{format_bytes(len(self.vmfb))}>")

    def load(self, device=None):
        """Loads the artifact into the runtime (``aotc.runtime.load(artifact.vmfb)``)."""
        from .runtime import load

        return load(self.vmfb, device=device)


def export(fn, *specs, target: str | list[str] = "cpu", name: str | None = None,
           static_argnums=(), static_argnames=(), donate_argnums=(), donate_argnames=(),
           strict_donation: bool = False, **kwspecs) -> Artifact:
    """Compiles functions into one ``.vmfb`` artifact for ``target``.

    One function::

        art = aotc.export(predict, aotc.ShapeDtypeStruct((64, 784), "float32"))
        art.save("predict.vmfb")

    Several functions in one artifact: pass a dict from name to ``(fn, *specs)``::

        art = aotc.export({"predict": (predict, x_spec), "loss": (loss, x_spec, y_spec)})

    ``target`` names where the artifact runs (``aotc targets`` lists the names): one
    target, ``"aarch64:cortex-a53"``, or several in one artifact, ``"cpu,aarch64,vulkan"``
    or ``["cpu", "vulkan"]``; ``aotc.runtime.load`` then runs the code that fits its device.

    ``specs`` are ``aotc.ShapeDtypeStruct``s or example arrays (pytrees of them);
    static arguments are given as plain values at their positions together with
    ``static_argnums``/``static_argnames``, as in ``aotc.jit``.

    Donation, as in ``aotc.jit``: ``donate_argnums``/``donate_argnames`` (applied to every
    function of a dict) let results reuse those arguments' buffers; the pairing is stored
    in each function's metadata (``Artifact.functions[name].donated``, ``aotc inspect``)
    and the runtime deletes donated arrays after each call::

        art = aotc.export(step, state_spec, donate_argnums=0)

    ``strict_donation=True`` turns an unusable donation into a ``DonationError``.
    """
    tgt = get_target(target)
    if isinstance(fn, dict):
        if specs or kwspecs:
            raise AotcError("export: with a dict of functions, give each function's specs in the "
                            "dict: {name: (fn, *specs)}")
        entries = []
        for fname, entry in fn.items():
            if not (isinstance(entry, tuple) and entry and callable(entry[0])):
                raise AotcError(f"export: entry {fname!r} must be a tuple (fn, *specs), "
                                f"got {type(entry).__name__}")
            entries.append((fname, entry[0], entry[1:], {}))
    elif callable(fn):
        entries = [(name or _symbol_name(getattr(fn, "__name__", "main")), fn, specs, kwspecs)]
    else:
        raise AotcError("export: expected a function or a dict of name -> (fn, *specs), "
                        f"got {type(fn).__name__}")

    module = build.new_module()
    functions: dict[str, FunctionMetadata] = {}
    contractions: list = []
    has_adjoints = False
    log, level = compile_log.export_logger, compile_log.level()
    logged = log.isEnabledFor(level)
    with compile_log.Stages(", ".join(e[0] for e in entries)) as stages:
        for fname, f, fspecs, fkw in entries:
            if _symbol_name(fname) != fname:
                raise AotcError(f"export: function name {fname!r} must be an identifier "
                                "(letters, digits, _)")
            if fname in functions:
                raise AotcError(f"export: function name {fname!r} is used twice")
            binder = ArgumentBinder(getattr(f, "_fn", f), static_argnums, static_argnames,
                                    donate_argnums, donate_argnames)
            signature, _ = binder.bind(tuple(fspecs), dict(fkw))
            start = stages.times.get("trace", 0.0)
            with stages("trace", shown=False):  # runs user code, which may print
                lowered = build.trace_into(module, binder, signature, fname, tgt)
            if logged:
                stages.log(log, level, "traced %s in %s",
                           describe_signature(fname, signature, binder.arg_name),
                           compile_log.seconds(stages.times["trace"] - start))
            functions[fname] = lowered.metadata
            contractions.extend(lowered.contractions)
            has_adjoints = has_adjoints or lowered.has_adjoints
        with stages("aotc passes"):
            flags = build.finish_module(module, tgt, contractions,
                                        strict_donation=strict_donation,
                                        has_adjoints=has_adjoints)
            functions = {fname: build.function_metadata(module, fname) for fname in functions}
        bytecode = _mlir.bytecode(module)
        with stages("disk cache"):
            key = cache.program_key(bytecode, flags) if cache.enabled() else None
            vmfb = cache.load(key) if key else None
        source = "off" if key is None else "miss" if vmfb is None else "hit"
        if vmfb is None:
            with stages("IREE compile"):
                vmfb = compile_bytecode(bytecode, flags, ", ".join(functions))
            if key:
                with stages("disk cache"):
                    cache.store(key, vmfb)
        if logged:
            stages.log(log, level, "compiled %s for %s in %s (%s); %s, disk cache %s",
                       ", ".join(functions), tgt.name, compile_log.seconds(stages.total),
                       compile_log.split(stages.times), format_bytes(len(vmfb)), source)
    return Artifact(vmfb, build.module_text(module), functions, tgt.name, flags)
