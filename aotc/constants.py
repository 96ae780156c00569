"""MLIR constants from numpy values: dense tensors (splats where uniform) and scalars.

The lowest layer of the tracer: it needs only the dtype table and the MLIR bindings, so
the tracer core (``Trace.constant``) and every op can build constants.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from ._mlir import (PARALLEL, affine_maps, arith, complex_dialect, dim_map, ir,
                    iterator_types, linalg, tensor)


def dense_constant(array: np.ndarray) -> ir.Value:
    array = np.asarray(array, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
    ty = dtypes.tensor_type(array.shape, array.dtype)
    if dtypes.is_complex(array.dtype) and array.size > 1 and np.any(array != array.flat[0]):
        return _complex_table(array)
    if (array.size and np.all(array == array.flat[0]) and not _has_nan(array)
            and not dtypes.is_complex(array.dtype)):  # no splat attribute for complex
        attr = ir.DenseElementsAttr.get_splat(ty, scalar_attr(array.flat[0], array.dtype))
    else:
        # Signless MLIR integers: unsigned data goes in as the same bits, signed view.
        raw = (array.view(f"i{array.dtype.itemsize}") if dtypes.kind(array.dtype) == "uint"
               else array)
        attr = (ir.DenseElementsAttr.get(raw, type=ty) if array.dtype != np.bool_
                else ir.DenseElementsAttr.get(raw))
    return arith.ConstantOp(ty, attr).result


def _complex_table(array: np.ndarray) -> ir.Value:
    """A complex array that is not a splat, made at run time from two real tables: IREE
    3.13 crashes (SIGFPE while packing constants into a resource) on a non-splat complex
    constant it keeps in memory rather than inlining it into a dispatch (one over 256
    bytes, or one passed to a factorization's kernel). The real tables pass a barrier,
    so const-eval cannot fold the generic that combines them back into such a constant."""
    part = dtypes.real_dtype(array.dtype)
    tables = [dense_constant(np.ascontiguousarray(p, dtype=part)) for p in (array.real,
                                                                           array.imag)]
    tables = ir.Operation.create("util.optimization_barrier",
                                 results=[t.type for t in tables], operands=tables).results
    kind = dtypes.tensor_type(array.shape, array.dtype)
    element = kind.element_type
    identity = dim_map(array.ndim, list(range(array.ndim)))
    init = tensor.EmptyOp(list(array.shape), element).result
    generic = linalg.GenericOp([kind], list(tables), [init], affine_maps([identity] * 3),
                               iterator_types([PARALLEL] * array.ndim))
    block = generic.regions[0].blocks.append(*([dtypes.mlir_type(part)] * 2), element)
    with ir.InsertionPoint(block):
        linalg.YieldOp([complex_dialect.CreateOp(element, block.arguments[0],
                                                 block.arguments[1]).result])
    return generic.results[0]


def _has_nan(array: np.ndarray) -> bool:
    return (dtypes.is_float(array.dtype) or dtypes.is_complex(array.dtype)) and bool(
        np.isnan(array).any())


def scalar_attr(value, dtype: np.dtype) -> ir.Attribute:
    dtype = np.dtype(dtype)
    ty = dtypes.mlir_type(dtype)
    if dtypes.is_float(dtype):
        return ir.FloatAttr.get(ty, float(value))
    if dtype == np.bool_:
        return ir.IntegerAttr.get(ty, int(bool(value)))
    # Signless integers: store the two's-complement bit pattern.
    bits = dtypes.info(dtype).bits
    v = int(np.asarray(value).astype(dtype))
    if v >= 1 << (bits - 1):
        v -= 1 << bits
    return ir.IntegerAttr.get(ty, v)


def scalar_constant(value, dtype: np.dtype) -> ir.Value:
    """A scalar (not tensor) constant, for use inside linalg bodies."""
    if dtypes.is_complex(dtype):
        z = complex(np.asarray(value).astype(dtype))
        part = dtypes.real_dtype(dtype)
        parts = ir.ArrayAttr.get([scalar_attr(z.real, part), scalar_attr(z.imag, part)])
        return complex_dialect.ConstantOp(dtypes.mlir_type(dtype), parts).result
    return arith.ConstantOp(dtypes.mlir_type(dtype), scalar_attr(value, dtype)).result
