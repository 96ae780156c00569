"""The one module that imports the MLIR Python bindings shipped inside iree-base-compiler.

Everything else in aotc that builds IR imports ``ir`` and the dialects from here, so a
change of where the bindings live touches one file. Where the compiler is not installed
(a runtime-only install), importing this module, and so the first use of ``aotc.jit``,
``aotc.export`` or ``aotc.numpy``, raises ``CompilerNotInstalledError`` (an ImportError)
saying which package to install; ``aotc.runtime`` never imports it.
"""

from __future__ import annotations

from .errors import CompilerNotInstalledError

try:
    from iree.compiler import ir, passmanager  # noqa: F401
    from iree.compiler.dialects import arith, func, linalg, math, scf, tensor  # noqa: F401
    from iree.compiler.dialects import complex as complex_dialect  # noqa: F401
except ImportError as e:
    raise CompilerNotInstalledError.from_import_error(e) from e

PARALLEL = "#linalg.iterator_type<parallel>"


def bytecode(module: ir.Module) -> bytes:
    """The module (an ir.Module or its operation) as MLIR bytecode."""
    import io

    buf = io.BytesIO()
    getattr(module, "operation", module).write_bytecode(buf)
    return buf.getvalue()


def parse_module(data: bytes | str) -> ir.Module:
    """A module from its bytecode (``bytecode``) or text, in a context of its own."""
    return ir.Module.parse(data, context=ir.Context())
REDUCTION = "#linalg.iterator_type<reduction>"


def iterator_types(kinds: list[str]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(k) for k in kinds])


def affine_maps(maps: list[ir.AffineMap]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def dim_map(n_dims: int, dims: list[int]) -> ir.AffineMap:
    """An affine map over ``n_dims`` loop dimensions selecting ``dims`` in order."""
    return ir.AffineMap.get(n_dims, 0, [ir.AffineDimExpr.get(d) for d in dims])


def index_constant(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def reassociation(groups) -> ir.ArrayAttr:
    """The ``reassociation`` attribute of collapse_shape/expand_shape: the groups of dims
    that merge into (or split from) each dim of the other shape."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])
