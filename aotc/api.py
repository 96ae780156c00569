"""``aotc.jit`` and its ahead-of-time stages (``lower`` → ``Lowered`` → ``compile`` →
``Compiled``), with JAX's names and semantics."""

from __future__ import annotations

import functools
import itertools
import threading
from typing import Any, Callable, Sequence

from . import _mlir, build, cache, compile_log, compiled_stats, fast_path, jit_cache
from .compiled_stats import CompiledMemoryStats
from .compiler import compile_bytecode
from .config import cached as _option
from .core import _state as _traces
from .errors import AotcError
from .runtime import tree
from .runtime.metadata import FunctionMetadata
from .runtime.module import summary
from .signature import ArgumentBinder, CallSignature
from .signature_text import describe_signature
from .targets import Target, get_target


def _flat_caller(out_tree: tree.TreeDef, call_flat):
    """``leaves -> result pytree``, composed once: the common result structures skip
    unflattening and a Python frame on the per-call path; the others are rebuilt with the
    traced structure, so results have the exact types the function returned."""
    from .signature import traced_result_tree

    if out_tree.kind == "leaf":
        return lambda leaves: call_flat(leaves)[0]
    if out_tree.kind == "tuple" and all(c.kind == "leaf" for c in out_tree.children):
        return lambda leaves: tuple(call_flat(leaves))
    traced = traced_result_tree(out_tree)
    if traced is not None:
        return lambda leaves: traced.spec.unflatten(call_flat(leaves))
    return lambda leaves: tree.unflatten(out_tree, call_flat(leaves))


def short_signature(metadata: FunctionMetadata) -> str:
    """The metadata's signature, cut for one-line reprs."""
    return summary({metadata.name: metadata.signature})


class Lowered:
    """A traced function as MLIR, before IREE: ``as_text()`` shows it, ``compile()``
    builds it."""

    _DIALECTS = (None, "linalg", "traced")

    def __init__(self, module, metadata: FunctionMetadata, flags: tuple[str, ...],
                 binder: ArgumentBinder, signature: CallSignature,
                 owner: JittedFunction | None = None, traced=None):
        self._module = module
        self.metadata = metadata
        self.flags = flags
        self._binder = binder
        self._signature = signature
        self._owner = owner  # the jitted function: its counters and in-memory cache
        self._traced = traced  # the module before aotc's passes (kept by lower())
        self._bytecode: bytes | None = None

    def __repr__(self) -> str:
        return f"<aotc Lowered {short_signature(self.metadata)} for {self.metadata.target}>"

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False,
                metadata: bool = False) -> str:
        """The MLIR module as text, as JAX's ``Lowered.as_text``.

        Args:
          dialect: which module: None or ``"linalg"`` (the default), the module IREE
            compiles (linalg on tensors, after aotc's passes: cleanup, the target's
            rewrites such as aotc's math functions on CPU, donation); ``"traced"``, the
            module as traced, before those passes.
          debug_info: print each op's source location (the user's line), as JAX's.
          metadata: print the function's aotc metadata (a JSON string in
            ``iree.reflection``) in full; by default it is abbreviated to its size.
            ``compiler_ir()`` always has it.

        >>> lowered = aotc.jit(anp.sin).lower(aotc.ShapeDtypeStruct((3,), "float32"))
        >>> "math.sin" in lowered.as_text("traced"), "math.sin" in lowered.as_text()
        (True, False)
        >>> "aotc metadata" in lowered.as_text()
        True
        """
        if dialect not in self._DIALECTS:
            raise ValueError(f"as_text: expected dialect None or 'linalg' (the module IREE "
                             f"compiles) or 'traced' (before aotc's passes), got {dialect!r}")
        module = self._module
        if dialect == "traced":
            if self._traced is None:
                raise ValueError("as_text('traced'): only a Lowered from jit(...).lower() "
                                 "keeps the traced module")
            module = self._traced
        return build.module_text(module, metadata=metadata, debug_info=debug_info)

    def compiler_ir(self):
        """The MLIR module itself (an ``ir.Module`` of the bindings in iree-base-compiler),
        as JAX's ``Lowered.compiler_ir()``: to walk its ops or print it with locations."""
        return self._module

    def cost_analysis(self) -> dict[str, float]:
        """The estimates of ``Compiled.cost_analysis``, before compiling."""
        return compiled_stats.cost_analysis(self.metadata)

    @property
    def bytecode(self) -> bytes:
        if self._bytecode is None:
            self._bytecode = _mlir.bytecode(self._module)
        return self._bytecode

    def cache_key(self) -> str:
        return cache.program_key(self.bytecode, self.flags)

    def compile(self) -> Compiled:
        """Compiles with IREE, or takes the executable from the jitted function's
        in-memory cache or from the disk cache."""
        with compile_log.Stages(self._binder.fn_name) as stages:
            return self._compile(stages)

    def _compile(self, stages: compile_log.Stages) -> Compiled:
        owner = self._owner
        memory = owner._compiled if owner is not None else None
        found = memory.get(self._signature.key) if memory is not None else None
        if found is not None:
            self._log(stages, "from the in-memory cache", "memory")
            return found
        stats = owner.stats if owner is not None else {}
        with stages("disk cache"):
            key = self.cache_key() if cache.enabled() else None
            vmfb = cache.load(key) if key else None
        source = "off" if key is None else "miss" if vmfb is None else "hit"
        compiled = None
        if vmfb is not None:
            stats["disk_hits"] = stats.get("disk_hits", 0) + 1
            try:
                with stages("load"):
                    compiled = Compiled(vmfb, self.metadata, self._binder, self._signature,
                                        self.bytecode)
            except Exception:  # noqa: BLE001 - unloadable despite its checksum: rebuild it
                source = "unloadable"
        if compiled is None:
            with stages("IREE compile"):
                vmfb = compile_bytecode(self.bytecode, self.flags, self.metadata.name)
            stats["compiles"] = stats.get("compiles", 0) + 1
            if key:
                with stages("disk cache"):
                    cache.store(key, vmfb)
            with stages("load"):
                compiled = Compiled(vmfb, self.metadata, self._binder, self._signature,
                                    self.bytecode)
        if memory is not None:
            memory.put(self._signature.key, compiled)
        self._log(stages, _SOURCES[source], source)
        return compiled

    def _log(self, stages: compile_log.Stages, where: str, source: str) -> None:
        log = compile_log.jit_logger
        level = compile_log.level(explanation=source in ("miss", "unloadable"))
        if not log.isEnabledFor(level):
            return
        what = describe_signature(self._binder.fn_name, self._signature, self._binder.arg_name)
        if source == "memory":
            stages.log(log, level, "%s for %s: %s", what, self.metadata.target, where)
            return
        verb = "loaded" if source == "hit" else "compiled"
        stages.log(log, level, "%s %s for %s in %s (%s); %s", verb, what,
                   self.metadata.target, compile_log.seconds(stages.total),
                   compile_log.split(stages.times), where)


_SOURCES = {
    "hit": "disk cache hit, IREE compile skipped",
    "miss": "disk cache miss, compiled and stored",
    "off": "disk cache off, compiled",
    "unloadable": "disk cache entry unloadable, compiled again and stored",
}


class Compiled:
    """A compiled function, loaded in the runtime and callable with arrays."""

    def __init__(self, vmfb: bytes, metadata: FunctionMetadata, binder: ArgumentBinder,
                 signature: CallSignature, bytecode: bytes | None = None):
        from .runtime import load

        self.vmfb = vmfb
        self.metadata = metadata
        self._binder = binder
        self._signature = signature
        self._bytecode = bytecode  # the MLIR it was compiled from, for as_text()
        self._memory_stats: CompiledMemoryStats | None = None
        self.module = load(vmfb)
        self._function = self.module[metadata.name]
        self._out_tree = metadata.out_tree
        self.call_flat = _flat_caller(metadata.out_tree, self._function.call_flat)
        # The fast path, as the jitted function's: the keys (fast_path.key_with_scalars, with
        # x64) of calls bound before -> the call of their dynamic arguments.
        static = binder.static_argnums
        self._static_positions = (frozenset(static) if all(i >= 0 for i in static)
                                  else None)
        self._fast: dict = {}

    def __call__(self, *args, **kwargs):
        static, key = self._static_positions, None
        if not kwargs and static is not None and not _traces.stack:
            try:
                key = (_option("x64"), fast_path.key_with_scalars(args, static))
                run = self._fast.get(key)
            except TypeError:  # an unhashable static value: the binding says so
                key = run = None
            if run is not None:
                return run([a for i, a in enumerate(args) if i not in static])
        signature, leaves = self._binder.bind(args, kwargs)
        if signature.key != self._signature.key:
            raise TypeError(
                f"{self.metadata.name}: this compiled function takes {self.metadata.signature}; "
                f"the call's arguments differ. Use the jitted function (it compiles per "
                f"signature) or lower/compile again for these arguments."
            )
        if key is not None and key[1] is not None:
            self._fast[key] = fast_path.fast_call(self.call_flat, signature, args)
        return self.call_flat(leaves)

    def __repr__(self) -> str:
        return (f"<aotc Compiled {short_signature(self.metadata)} for {self.metadata.target} "
                f"on {self.module.device.uri}>")

    def as_text(self, *, debug_info: bool = False, metadata: bool = False) -> str | None:
        """The MLIR module it was compiled from (``Lowered.as_text()``'s default), or None
        when it is not known. IREE's own intermediate forms are not kept in the ``.vmfb``."""
        if self._bytecode is None:
            return None
        return build.module_text(_mlir.parse_module(self._bytecode), metadata=metadata,
                                 debug_info=debug_info)

    def cost_analysis(self) -> dict[str, float]:
        """Estimates of one call's work, with JAX's keys: ``flops`` (the trace's work
        estimate: multiply-adds count two, other elementwise ops one, per element),
        ``bytes accessed`` (arguments read once plus results written once: a lower
        bound, intermediates are not counted), ``bytes accessed{i}{}`` per argument and
        ``bytes accessedout{}``; and aotc's ``ops`` (the op estimate, loop bodies
        counted per trip). Bytes are left out when a dimension is dynamic.

        >>> spec = aotc.ShapeDtypeStruct((8,), "float32")
        >>> c = aotc.jit(lambda x: x * 2 + 1).lower(spec).compile()
        >>> c.cost_analysis()["bytes accessed"]
        64.0
        """
        return compiled_stats.cost_analysis(self.metadata)

    def memory_analysis(self) -> CompiledMemoryStats:
        """Argument, result, alias, temporary and code sizes (``CompiledMemoryStats``).
        The temporary size is measured once, by running the function (see there).

        >>> spec = aotc.ShapeDtypeStruct((8,), "float32")
        >>> m = aotc.jit(lambda x: x * 2 + 1).lower(spec).compile().memory_analysis()
        >>> m.argument_size_in_bytes, m.output_size_in_bytes, m.alias_size_in_bytes
        (32, 32, 0)
        """
        if self._memory_stats is None:
            self._memory_stats = compiled_stats.memory_stats(self.vmfb, self.metadata)
        return self._memory_stats


_jit_ids = itertools.count()


class JittedFunction:
    """A function compiled with IREE on first call per signature (see ``aotc.jit``)."""

    def __init__(self, fn: Callable, static_argnums=(), static_argnames=(), target="cpu",
                 donate_argnums=(), donate_argnames=(), strict_donation: bool = False):
        if isinstance(fn, classmethod):
            raise AotcError(
                f"aotc.jit: expected a function, got a classmethod "
                f"({getattr(fn.__func__, '__qualname__', fn.__func__)}). Put @classmethod "
                f"outside: @classmethod above @functools.partial(aotc.jit, static_argnums=0) "
                f"(the class is then a static argument)")
        # A staticmethod inside jit: the plain function, never bound to an instance.
        self._bind_to_instance = not isinstance(fn, staticmethod)
        if not self._bind_to_instance:
            fn = fn.__func__
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._binder = ArgumentBinder(fn, static_argnums, static_argnames,
                                      donate_argnums, donate_argnames)
        self._strict_donation = bool(strict_donation)
        self._target: Target = get_target(target)
        # Signature key -> Compiled, bounded by aotc.config.jit_cache_size (LRU), and the
        # per-call fast path's keys -> Compiled.call_flat: the arguments' (shape, dtype),
        # with the values of static arguments at their positions (_fast32: x64 off).
        self._compiled = jit_cache.CompiledCache()
        self._fast = self._compiled.fast
        self._fast32 = self._compiled.fast32
        static = self._binder.static_argnums
        self._no_static = not static
        # None: a negative static position, which only the full binding resolves.
        self._static_positions = (frozenset(static) if not static or min(static) >= 0
                                  else None)
        self._static_names = frozenset(self._binder.static_argnames)
        self._lock = threading.Lock()
        self._id = next(_jit_ids)  # tells jitted functions of the same code apart in logs
        # Counters that tests and users can read: how often this function was traced,
        # compiled by IREE, or taken from the disk cache.
        self.stats = {"traces": 0, "compiles": 0, "disk_hits": 0}

    def __call__(self, *args, **kwargs):
        # The fast path: a call whose key (fast_path: what decides its trace) was seen
        # before runs its compiled function without binding its arguments. Positional
        # arrays, Python scalars and static values are keyed as they come; keyword
        # arguments and containers are flattened first (fast_path.tree_key).
        fast = self._fast if _option("x64") else self._fast32  # x64.enabled(), one call less
        key = None
        static = self._static_positions
        if not kwargs and self._no_static:
            try:
                key = tuple([(a.shape, a.dtype) for a in args])
            except AttributeError:  # a Python scalar, or not an array
                key = fast_path.key_with_scalars(args, ())
            run = fast.get(key)
            if run is not None and not _traces.stack:
                return run(args)
        elif not kwargs and static is not None:
            try:
                try:
                    key = tuple([a if i in static else (a.shape, a.dtype)
                                 for i, a in enumerate(args)])
                except AttributeError:  # a Python scalar, or not an array
                    key = fast_path.key_with_scalars(args, static)
                run = fast.get(key)
            except TypeError:  # an unhashable static value
                key = run = None
            if run is not None and not _traces.stack:
                return run([a for i, a in enumerate(args) if i not in static])
        if _traces.stack:
            # Called inside another traced function: trace through (the outer compile
            # inlines it), as nested jax.jit calls do.
            return self._fn(*args, **kwargs)
        flat = None  # the leaves of a call flattened for its key
        if key is None and static is not None:
            try:
                key, flat = fast_path.tree_key(args, kwargs, static, self._static_names)
                run = fast.get(key) if key is not None else None
            except TypeError:  # an unhashable static value
                key = run = None
            if run is not None:
                return run(flat)
        signature, leaves = self._binder.bind(args, kwargs)
        compiled = self._compiled.get(signature.key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(signature.key)
                if compiled is None:
                    compiled = self._compile_miss(signature)
                    self._compiled.put(signature.key, compiled)
        if key is not None:  # every leaf had a shape and dtype or was static
            run = fast_path.fast_call(compiled.call_flat, signature,
                                      args if flat is None else flat)
            self._compiled.remember_fast(fast, fast_path.held(key), signature.key, run)
        return compiled.call_flat(leaves)

    def __get__(self, obj, objtype=None):
        """As a method: ``obj.f`` calls ``f(obj, ...)`` with ``obj`` an ordinary argument
        (JAX's rule: an array pytree, or static by ``static_argnums=0``), sharing this
        function's compiled code across instances."""
        if obj is None or not self._bind_to_instance:
            return self
        return BoundJittedFunction(self, obj)

    def __repr__(self) -> str:
        static = self._binder.static_argnames
        params = []
        for p in self._binder.parameters:
            prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
            params.append(f"{prefix}{p.name}{' static' if p.name in static else ''}")
        compiled = len(self._compiled)
        return (f"<aotc JittedFunction {self._binder.fn_name}({', '.join(params)}) for "
                f"{self._target.name}, {compiled} signature{'' if compiled == 1 else 's'} "
                f"compiled>")

    def _describe(self, signature: CallSignature) -> str:
        return describe_signature(self._binder.fn_name, signature, self._binder.arg_name)

    def _compile_miss(self, signature: CallSignature) -> Compiled:
        """Traces and compiles a signature the in-memory cache does not have, logging why."""
        log = compile_log.jit_logger
        level = compile_log.level(explanation=True)
        explaining = log.isEnabledFor(level)
        if explaining:
            previous = [c._signature for c in self._compiled.values()]
            log.log(level, compile_log.explain_miss(
                self._fn, self._binder.fn_name, self._id, self._target.name, signature,
                previous, self._binder.arg_name))
        with compile_log.Stages(self._binder.fn_name) as stages:
            compiled = self._lower(signature, stages)._compile(stages)
        if explaining:
            compile_log.remember(self._fn, self._id, self._target.name, signature)
        return compiled

    def _lower(self, signature: CallSignature, stages: compile_log.Stages,
               keep_traced: bool = False) -> Lowered:
        module = build.new_module()
        name = _symbol_name(self._binder.fn_name)
        with stages("trace", shown=False):  # runs user code, which may print
            lowered = build.trace_into(module, self._binder, signature, name, self._target)
        self.stats["traces"] += 1
        traced = build.clone_module(module) if keep_traced else None
        with stages("aotc passes"):
            flags = build.finish_module(module, self._target, lowered.contractions,
                                        strict_donation=self._strict_donation,
                                        has_adjoints=lowered.has_adjoints)
            metadata = build.function_metadata(module, name)  # with the donation pairing
        log = compile_log.jit_logger
        level = compile_log.level()
        if log.isEnabledFor(level):
            stages.log(log, level, "traced %s in %s (%s)", self._describe(signature),
                       compile_log.seconds(stages.total), compile_log.split(stages.times))
        return Lowered(module, metadata, flags, self._binder, signature, self, traced)

    def lower(self, *args, **kwargs) -> Lowered:
        """Traces for these arguments (arrays or ``aotc.ShapeDtypeStruct``) without compiling.

        >>> f = aotc.jit(lambda x: anp.tanh(x) * 2)
        >>> text = f.lower(aotc.ShapeDtypeStruct((4,), "float32")).as_text()
        >>> print(text[text.index("func.func"):text.index(" attributes")])
        func.func public @_lambda_(%arg0: tensor<4xf32>) -> tensor<4xf32>
        """
        signature, _ = self._binder.bind(args, kwargs)
        with compile_log.Stages(self._binder.fn_name) as stages:
            return self._lower(signature, stages, keep_traced=True)

    def clear_cache(self) -> None:
        """Drops the compiled executables and gives their memory back: the loaded modules
        (a live result keeps the module that made it until it goes), the compiler's
        session, and the C heap's free pages. Later calls trace again (and load from the
        disk cache)."""
        self._compiled.clear()
        jit_cache.release_compile_memory()


class BoundJittedFunction:
    """``obj.f`` for a jitted method ``f``: calls it with ``obj`` as its first argument
    and shares its compiled code (``lower``, ``stats`` and the rest reach the jitted
    function too)."""

    __slots__ = ("_jitted", "_obj")

    def __init__(self, jitted: JittedFunction, obj: Any):
        self._jitted = jitted
        self._obj = obj

    def __call__(self, *args, **kwargs):
        try:
            return self._jitted(self._obj, *args, **kwargs)
        except AotcError as e:
            hinted = _method_hint(self._jitted, e)
            if hinted is e:
                raise
            raise hinted from e

    def lower(self, *args, **kwargs) -> Lowered:
        return self._jitted.lower(self._obj, *args, **kwargs)

    @property
    def _fn(self):  # aotc.export(obj.f, ...) traces f with obj bound
        return functools.partial(self._jitted._fn, self._obj)

    def __getattr__(self, name: str):
        return getattr(self._jitted, name)

    def __repr__(self) -> str:
        return f"<bound {self._jitted!r} of a {type(self._obj).__name__}>"


def _method_hint(jitted: JittedFunction, error: Exception) -> Exception:
    """The error of a call through ``obj.f``, with the fix when it is about ``self``."""
    binder = jitted._binder
    first = binder.arg_name(0)
    text = str(error)
    if text.startswith(f"{binder.fn_name}() argument {first}:"):
        hint = (f" {first} of a jitted method is an ordinary argument: an array pytree, or "
                f"static (hashable: it keys the compile cache) with "
                f"@functools.partial(aotc.jit, static_argnums=0)")
    elif text.startswith(f"{binder.fn_name}() static argument {first}:"):
        hint = (f" A static {first} keys the compile cache: give its class __hash__ and "
                f"__eq__ (or keep the default identity hash)")
    else:
        return error
    return type(error)(text + "." + hint if not text.endswith(".") else text + hint)


def _symbol_name(name: str) -> str:
    """A function name as an MLIR symbol the runtime exports: ``<lambda>`` -> ``_lambda_``;
    IREE keeps names starting with ``__`` for itself, so ``__call__`` -> ``f__call__``."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if cleaned.startswith("__"):
        return f"f{cleaned}"
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
    ``AOTC_LOG_COMPILES=1`` (``aotc.config.log_compiles``) logs each trace and compile
    with its times, and why a signature compiled again.

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
      A callable with ``.lower(*args)`` for the ahead-of-time path. On a class it is a
      method: ``self`` is its first argument, static by ``static_argnums=0``.

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

      A method with a static ``self`` (hashable; each instance compiles once):

      >>> from functools import partial
      >>> class Scale:
      ...     def __init__(self, k):
      ...         self.k = k
      ...     @partial(aotc.jit, static_argnums=0)
      ...     def __call__(self, x):
      ...         return x * self.k
      >>> np.asarray(Scale(3.0)(np.ones(2, np.float32)))
      array([3., 3.], dtype=float32)
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, target=target,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 strict_donation=strict_donation)
    return JittedFunction(fn, static_argnums, static_argnames, target, donate_argnums,
                          donate_argnames, strict_donation)

