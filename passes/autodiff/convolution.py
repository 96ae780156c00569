"""Reverse-mode rule for the channels-last convolutions aotc emits
(``linalg.conv_{1,2,3}d_n...c_...cf``): both adjoints as named convolutions, which IREE
compiles with its convolution code (as a generic with shifted maps, the filter's adjoint
ran 13x the forward convolution's time, the input's 9x).

For ``out[n, o, f] = sum_{k, c} x[n, o * s + k * d, c] * w[k, c, f]``:

- the filter's adjoint ``dw[k, c, f] = sum_{n, o} x[n, o * s + k * d, c] * ct[n, o, f]``
  is one batched matrix product over the window positions: the input's patches
  ``p[k, n, o, c]`` are copied out first (one strided copy), then contracted with the
  cotangent over ``(n, o)`` (as a convolution whose filter is the cotangent, IREE's code
  for a 14x14 filter and a 3x3 output was 13x slower than the forward convolution);
- the input's adjoint is the transposed convolution: the cotangent dilated by the
  stride and padded by the dilated window, convolved (dilations ``d``) with the filter
  reversed along its window and with c and f swapped.
"""

from __future__ import annotations

from .builders import dilated, reversed_along, transposed, zero_padded
from .core import Adjoint, rule, zeros

_CONVOLUTIONS = {1: "linalg.conv_1d_nwc_wcf", 2: "linalg.conv_2d_nhwc_hwcf",
                 3: "linalg.conv_3d_ndhwc_dhwcf"}


def _attribute(op, name: str, rank: int) -> list[int]:
    from aotc._mlir import ir

    if name not in op.attributes:
        return [1] * rank
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]


def _convolution(rank: int, x, w, shape: list[int], strides, dilations):
    from aotc._mlir import ir, linalg

    builder = {1: linalg.conv_1d_nwc_wcf, 2: linalg.conv_2d_nhwc_hwcf,
               3: linalg.conv_3d_ndhwc_dhwcf}[rank]
    element = ir.RankedTensorType(x.type).element_type
    init = zeros(ir.RankedTensorType.get(shape, element))
    return builder(x, w, outs=[init], strides=list(strides), dilations=list(dilations))


def _patches(x, windows: list[int], out_spatial: list[int], strides, dilations):
    """``p[k..., c, n, o...] = x[n, o * s + k * d, c]``: a copy through an affine map,
    laid out so that ``(k..., c)`` and ``(n, o...)`` collapse into a matrix."""
    from aotc._mlir import PARALLEL, affine_maps, dim_map, ir, iterator_types, linalg

    t = ir.RankedTensorType(x.type)
    rank = len(windows)
    # loops: k (rank), c, n, o (rank)
    n_loops = 2 * rank + 2
    c, n = rank, rank + 1
    exprs = [ir.AffineDimExpr.get(n)]
    for i in range(rank):
        exprs.append(ir.AffineDimExpr.get(rank + 2 + i) * strides[i]
                     + ir.AffineDimExpr.get(i) * dilations[i])
    exprs.append(ir.AffineDimExpr.get(c))
    shape = windows + [t.shape[-1], t.shape[0]] + out_spatial
    init = ir.Operation.create(
        "tensor.empty", results=[ir.RankedTensorType.get(shape, t.element_type)]).result
    g = linalg.GenericOp([init.type], [x], [init],
                         affine_maps([ir.AffineMap.get(n_loops, 0, exprs),
                                      dim_map(n_loops, list(range(n_loops)))]),
                         iterator_types([PARALLEL] * n_loops))
    block = g.regions[0].blocks.append(t.element_type, t.element_type)
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    return g.results[0]


def _reshaped(value, groups: list[list[int]], shape: list[int], expand: bool = False):
    from aotc._mlir import ir, reassociation

    t = ir.RankedTensorType(value.type)
    result = ir.RankedTensorType.get(shape, t.element_type)
    attributes = {"reassociation": reassociation(groups)}
    if expand:
        attributes["static_output_shape"] = ir.DenseI64ArrayAttr.get(shape)
    return ir.Operation.create("tensor.expand_shape" if expand else "tensor.collapse_shape",
                               results=[result], operands=[value],
                               attributes=attributes).result


def _filter_contraction(patches, ct, rank: int, filter_type):
    """``dw[k..., c, f] = sum_{n, o...} p[k..., c, n, o...] * ct[n, o..., f]`` as one
    ``linalg.matmul`` of ``(k... c) x (n o...)`` by ``(n o...) x f``."""
    from aotc._mlir import ir, linalg

    p = ir.RankedTensorType(patches.type)
    rows = 1
    for size in p.shape[:rank + 1]:
        rows *= size
    depth = 1
    for size in p.shape[rank + 1:]:
        depth *= size
    f = ir.RankedTensorType(filter_type).shape[-1]
    lhs = _reshaped(patches, [list(range(rank + 1)), list(range(rank + 1, 2 * rank + 2))],
                    [rows, depth])
    rhs = _reshaped(ct, [list(range(rank + 1)), [rank + 1]], [depth, f])
    product = linalg.matmul(lhs, rhs, outs=[zeros(ir.RankedTensorType.get(
        [rows, f], p.element_type))])
    shape = list(ir.RankedTensorType(filter_type).shape)
    return _reshaped(product, [list(range(rank + 1)), [rank + 1]], shape, expand=True)


@rule(*_CONVOLUTIONS.values())
def _conv(ad: Adjoint, op, adjoints: list) -> None:
    from aotc._mlir import ir


    x, w = op.operands[0], op.operands[1]
    ct = adjoints[0]
    if ct is None:
        return
    xt, wt = ir.RankedTensorType(x.type), ir.RankedTensorType(w.type)
    rank = xt.rank - 2
    strides = _attribute(op, "strides", rank)
    dilations = _attribute(op, "dilations", rank)
    windows = list(wt.shape[:rank])
    n, c = xt.shape[0], xt.shape[-1]
    out_spatial = list(ir.RankedTensorType(ct.type).shape[1:-1])
    if w in ad.active:
        patches = _patches(x, windows, out_spatial, strides, dilations)
        ad.add(w, _filter_contraction(patches, ct, rank, w.type))
    if x in ad.active:
        padded = ct
        for axis in range(rank):
            padded = dilated(padded, axis + 1, strides[axis])
            length = ir.RankedTensorType(padded.type).shape[axis + 1]
            padded = zero_padded(padded, axis + 1, dilations[axis] * (windows[axis] - 1),
                                  xt.shape[axis + 1] - length)
        flipped = reversed_along(w, list(range(rank)))
        flipped = transposed(flipped, list(range(rank)) + [rank + 1, rank])  # (k, f, c)
        ad.add(x, _convolution(rank, padded, flipped, [n] + list(xt.shape[1:-1]) + [c],
                               [1] * rank, dilations))
