"""``aotc.jit`` and its ahead-of-time stages (``lower`` → ``Lowered`` → ``compile`` →
``Compiled``), with JAX's names and semantics."""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Sequence

from . import build, cache
from .compiler import compile_bytecode, iree_version
from .core import is_tracing
from .runtime import tree
from .runtime.metadata import FunctionMetadata
from .signature import ArgumentBinder, CallSignature
from .targets import Target, get_target


def _flat_caller(out_tree: tree.TreeDef, call_flat):
    """``leaves -> result pytree``, composed once: the common result structures skip
    tree.unflatten and a Python frame on the per-call path."""
    if out_tree.kind == "leaf":
        return lambda leaves: call_flat(leaves)[0]
    if out_tree.kind == "tuple" and all(c.kind == "leaf" for c in out_tree.children):
        return lambda leaves: tuple(call_flat(leaves))
    return lambda leaves: tree.unflatten(out_tree, call_flat(leaves))


class Lowered:
    """A traced function as MLIR, before IREE: ``as_text()`` shows it, ``compile()``
    builds it."""

    def __init__(self, module, metadata: FunctionMetadata, flags: tuple[str, ...],
                 binder: ArgumentBinder, signature: CallSignature, stats: dict | None = None):
        self._module = module
        self.metadata = metadata
        self.flags = flags
        self._binder = binder
        self._signature = signature
        self._stats = stats if stats is not None else {}
        self._bytecode: bytes | None = None

    def as_text(self) -> str:
        """The MLIR module (linalg on tensors) that IREE compiles."""
        return build.module_text(self._module)

    def compiler_ir(self):
        """The MLIR module itself (an ``ir.Module`` of the bindings in iree-base-compiler),
        as JAX's ``Lowered.compiler_ir()``: to walk its ops or print it with locations."""
        return self._module

    @property
    def bytecode(self) -> bytes:
        if self._bytecode is None:
            self._bytecode = build.bytecode(self._module)
        return self._bytecode

    def cache_key(self) -> str:
        from . import __version__

        return cache.make_key(self.bytecode, "\0".join(self.flags), iree_version(), __version__)

    def compile(self) -> "Compiled":
        """Compiles with IREE (or takes the module from the disk cache)."""
        key = self.cache_key() if cache.enabled() else None
        vmfb = cache.load(key) if key else None
        if vmfb is not None:
            self._stats["disk_hits"] = self._stats.get("disk_hits", 0) + 1
            try:
                return Compiled(vmfb, self.metadata, self._binder, self._signature)
            except Exception:
                vmfb = None  # unloadable despite its checksum: rebuild it
        vmfb = compile_bytecode(self.bytecode, self.flags, self.metadata.name)
        self._stats["compiles"] = self._stats.get("compiles", 0) + 1
        if key:
            cache.store(key, vmfb)
        return Compiled(vmfb, self.metadata, self._binder, self._signature)


class Compiled:
    """A compiled function, loaded in the runtime and callable with arrays."""

    def __init__(self, vmfb: bytes, metadata: FunctionMetadata, binder: ArgumentBinder,
                 signature: CallSignature):
        from .runtime import load

        self.vmfb = vmfb
        self.metadata = metadata
        self._binder = binder
        self._signature = signature
        self.module = load(vmfb)
        self._function = self.module[metadata.name]
        self._out_tree = metadata.out_tree
        self.call_flat = _flat_caller(metadata.out_tree, self._function.call_flat)

    def __call__(self, *args, **kwargs):
        signature, leaves = self._binder.bind(args, kwargs)
        if signature.key != self._signature.key:
            raise TypeError(
                f"{self.metadata.name}: this compiled function takes {self.metadata.signature}; "
                f"the call's arguments differ. Use the jitted function (it compiles per "
                f"signature) or lower/compile again for these arguments."
            )
        return self.call_flat(leaves)


class JittedFunction:
    """A function compiled with IREE on first call per signature (see ``aotc.jit``)."""

    def __init__(self, fn: Callable, static_argnums=(), static_argnames=(), target="cpu",
                 donate_argnums=(), donate_argnames=(), strict_donation: bool = False):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._binder = ArgumentBinder(fn, static_argnums, static_argnames,
                                      donate_argnums, donate_argnames)
        self._strict_donation = bool(strict_donation)
        self._target: Target = get_target(target)
        self._compiled: dict[Any, Compiled] = {}
        # (shape, dtype) of each argument -> Compiled.call_flat, for array-only calls.
        self._fast: dict[tuple, Callable] = {}
        self._no_static = not self._binder.static_argnums
        self._lock = threading.Lock()
        # Counters that tests and users can read: how often this function was traced,
        # compiled by IREE, or taken from the disk cache.
        self.stats = {"traces": 0, "compiles": 0, "disk_hits": 0}

    def __call__(self, *args, **kwargs):
        # The fast path: array arguments only, a signature seen before. Its key is the
        # arguments' (shape, dtype); containers and Python scalars have no .shape and go
        # through the full binding below, which keys on the whole call signature.
        if not kwargs and self._no_static:
            try:
                key = tuple([(a.shape, a.dtype) for a in args])
            except AttributeError:
                key = None
            run = self._fast.get(key)
            if run is not None and not is_tracing():
                return run(args)
        else:
            key = None
        if is_tracing():
            # Called inside another traced function: trace through (the outer compile
            # inlines it), as nested jax.jit calls do.
            return self._fn(*args, **kwargs)
        signature, leaves = self._binder.bind(args, kwargs)
        compiled = self._compiled.get(signature.key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(signature.key)
                if compiled is None:
                    compiled = self._lower(signature).compile()
                    self._compiled[signature.key] = compiled
        if key is not None:  # every argument had a shape and dtype: an array-only call
            self._fast[key] = compiled.call_flat
        return compiled.call_flat(leaves)

    def _lower(self, signature: CallSignature) -> Lowered:
        module = build.new_module()
        name = _symbol_name(self._binder.fn_name)
        lowered = build.trace_into(module, self._binder, signature, name, self._target)
        self.stats["traces"] += 1
        flags = build.finish_module(module, self._target, lowered.contractions,
                                    strict_donation=self._strict_donation)
        metadata = build.function_metadata(module, name)  # with the donation pairing
        return Lowered(module, metadata, flags, self._binder, signature, self.stats)

    def lower(self, *args, **kwargs) -> Lowered:
        """Traces for these arguments (arrays or ``aotc.ShapeDtypeStruct``) without compiling.

        >>> f = aotc.jit(lambda x: anp.tanh(x) * 2)
        >>> text = f.lower(aotc.ShapeDtypeStruct((4,), "float32")).as_text()
        >>> print(text[text.index("func.func"):text.index(" attributes")])
        func.func public @_lambda_(%arg0: tensor<4xf32>) -> tensor<4xf32>
        """
        signature, _ = self._binder.bind(args, kwargs)
        return self._lower(signature)

    def clear_cache(self) -> None:
        self._compiled.clear()
        self._fast.clear()


def _symbol_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"f_{cleaned}"


def jit(fn: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), target: str = "cpu",
        donate_argnums: int | Sequence[int] = (), donate_argnames: str | Sequence[str] = (),
        strict_donation: bool = False):
    """Compiles ``fn`` ahead of time with IREE, once per call signature.

    Like ``jax.jit``: the first call with new shapes, dtypes or static values traces ``fn``
    on abstract arrays, compiles it and caches the result in memory and on disk
    (``AOTC_CACHE_DIR``); later calls with the same signature run the compiled code.
    Arguments and results are pytrees (tuples, lists, dicts, None) of arrays.

    Args:
      fn: the function, written with ``aotc.numpy`` (numpy's names and semantics).
      static_argnums, static_argnames: arguments passed as Python values (hashable);
        each distinct value compiles once. Use them for shapes, flags and modes.
      target: where the code runs; see ``aotc.targets.TARGETS`` (default: this CPU).
      donate_argnums, donate_argnames: arguments whose buffers the call may reuse for
        results of the same shape and dtype (JAX semantics; give positions or names, the
        other is inferred). A donated runtime ``Array`` is deleted by the call (using it
        afterwards raises ``DeletedArrayError`` naming the function and argument); a numpy
        array passed there is copied to the device once and never modified. A donation
        no result can use safely gives an ``aotc.errors.DonationWarning``.
      strict_donation: make an unusable donation an ``aotc.errors.DonationError``.

    Returns:
      A callable with ``.lower(*args)`` for the ahead-of-time path.

    Example:
      >>> import aotc, aotc.numpy as anp, numpy as np
      >>> f = aotc.jit(lambda x: anp.tanh(x) * 2)
      >>> np.asarray(f(np.zeros(3, np.float32)))
      array([0., 0., 0.], dtype=float32)

      Donation: the new state is written into the old state's buffer.

      >>> step = aotc.jit(lambda s: 2 * s + 1, donate_argnums=0)
      >>> s = aotc.device_put(np.zeros(3, np.float32), "local-sync")
      >>> s = step(s)                 # the old ``s`` is deleted; keep the result
      >>> s
      Array([1., 1., 1.], dtype=float32)
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, target=target,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 strict_donation=strict_donation)
    return JittedFunction(fn, static_argnums, static_argnames, target, donate_argnums,
                          donate_argnames, strict_donation)
