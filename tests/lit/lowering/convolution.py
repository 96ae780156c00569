# RUN: %python %s | filecheck %s
"""Snapshots of convolutions and pooling: channel-last named linalg ops (which IREE
decomposes and vectorizes), tensor.pad for padding, transposes around other layouts (the
kernel's behind a util.optimization_barrier), a strided insert_slice for input dilation,
and a linalg.generic with a strided input map for grouped convolutions.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>"."""

import aotc.lax as lax
import aotc.nn as nn

from snapshot import S, run

NHWC = ("NHWC", "HWIO", "NHWC")


# CHECK-LABEL: TEST: conv_nhwc_same
# CHECK:       func.func public @conv_nhwc_same(%[[X:.*]]: tensor<1x5x5x3xf32>, %[[W:.*]]: tensor<3x3x3x4xf32>) -> tensor<1x5x5x4xf32>
# CHECK-NOT:     linalg.transpose
# CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
# CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0]
# CHECK:           tensor.yield %[[ZERO]] : f32
# CHECK:         } : tensor<1x5x5x3xf32> to tensor<1x7x7x3xf32>
# CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x5x5x4xf32>)
# CHECK:         %[[R:.*]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x7x7x3xf32>, tensor<3x3x3x4xf32>) outs(%[[ACC]] : tensor<1x5x5x4xf32>)
# CHECK:         return %[[R]] : tensor<1x5x5x4xf32>
@run(S((1, 5, 5, 3), "float32"), S((3, 3, 3, 4), "float32"))
def conv_nhwc_same(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC)


# CHECK-LABEL: TEST: conv_nchw_strided_dilated
# CHECK:       func.func public @conv_nchw_strided_dilated(%[[X:.*]]: tensor<1x3x9x9xf32>, %[[W:.*]]: tensor<4x3x2x2xf32>) -> tensor<1x4x4x4xf32>
# CHECK:         %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<1x3x9x9xf32>) outs(%{{.*}} : tensor<1x9x9x3xf32>) permutation = [0, 2, 3, 1]
# CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<4x3x2x2xf32>) outs(%{{.*}} : tensor<2x2x3x4xf32>) permutation = [2, 3, 1, 0]
# CHECK:         %[[WB:.*]] = util.optimization_barrier %[[WT]] : tensor<2x2x3x4xf32>
# CHECK:         %[[XS:.*]] = tensor.extract_slice %[[XT]][0, 0, 0, 0] [1, 9, 8, 3] [1, 1, 1, 1]
# CHECK:         %[[R:.*]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[XS]], %[[WB]] : tensor<1x9x8x3xf32>, tensor<2x2x3x4xf32>)
# CHECK:         %[[RT:.*]] = linalg.transpose ins(%[[R]] : tensor<1x4x4x4xf32>) outs(%{{.*}} : tensor<1x4x4x4xf32>) permutation = [0, 3, 1, 2]
# CHECK:         return %[[RT]]
@run(S((1, 3, 9, 9), "float32"), S((4, 3, 2, 2), "float32"))
def conv_nchw_strided_dilated(x, w):
    return lax.conv_general_dilated(x, w, (2, 2), "VALID", rhs_dilation=(2, 1))


# CHECK-LABEL: TEST: conv_depthwise
# CHECK:       func.func public @conv_depthwise(%[[X:.*]]: tensor<1x5x5x3xf32>, %[[W:.*]]: tensor<3x3x1x3xf32>) -> tensor<1x3x3x3xf32>
# CHECK:         %[[K:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1], [2, 3]] : tensor<3x3x1x3xf32> into tensor<3x3x3xf32>
# CHECK:         %[[R:.*]] = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[X]], %[[K]] : tensor<1x5x5x3xf32>, tensor<3x3x3xf32>)
# CHECK:         return %[[R]]
@run(S((1, 5, 5, 3), "float32"), S((3, 3, 1, 3), "float32"))
def conv_depthwise(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=NHWC, feature_group_count=3)


# CHECK-LABEL: TEST: conv_grouped
# CHECK-DAG:   #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 * 2 + d6, d3, d7)>
# CHECK-DAG:   #[[KERNEL:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7, d3, d4)>
# CHECK-DAG:   #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
# CHECK:       func.func public @conv_grouped(%[[X:.*]]: tensor<1x5x5x4xf32>, %[[W:.*]]: tensor<3x3x2x4xf32>) -> tensor<1x3x2x4xf32>
# CHECK:         %[[XG:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 5, 5, 2, 2]
# CHECK:         %[[WG:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [3, 3, 2, 2, 2]
# CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[KERNEL]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
# CHECK-SAME:        ins(%[[XG]], %[[WG]] : tensor<1x5x5x2x2xf32>, tensor<3x3x2x2x2xf32>)
# CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32):
# CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
# CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
# CHECK-NEXT:      linalg.yield %[[S]] : f32
# CHECK:         %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x3x2x2x2xf32> into tensor<1x3x2x4xf32>
# CHECK:         return %[[C]]
@run(S((1, 5, 5, 4), "float32"), S((3, 3, 2, 4), "float32"))
def conv_grouped(x, w):
    return lax.conv_general_dilated(x, w, (1, 2), "VALID", dimension_numbers=NHWC, feature_group_count=2)


# CHECK-LABEL: TEST: conv_lhs_dilation
# CHECK:       func.func public @conv_lhs_dilation(%[[X:.*]]: tensor<1x4x2xf32>, %[[W:.*]]: tensor<3x2x2xf32>) -> tensor<1x7x2xf32>
# CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x9x2xf32>)
# CHECK:         %[[D:.*]] = tensor.insert_slice %[[X]] into %[[Z]][0, 1, 0] [1, 4, 2] [1, 2, 1] : tensor<1x4x2xf32> into tensor<1x9x2xf32>
# CHECK:         %[[R:.*]] = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%[[D]], %[[W]] : tensor<1x9x2xf32>, tensor<3x2x2xf32>)
# CHECK:         return %[[R]]
@run(S((1, 4, 2), "float32"), S((3, 2, 2), "float32"))
def conv_lhs_dilation(x, w):
    return lax.conv_general_dilated(x, w, (1,), [(1, 1)], lhs_dilation=(2,),
                                    dimension_numbers=("NWC", "WIO", "NWC"))


# CHECK-LABEL: TEST: max_pool_same
# CHECK:       func.func public @max_pool_same(%[[X:.*]]: tensor<1x5x5x3xf32>) -> tensor<1x3x3x3xf32>
# CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
# CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 0, 0] high[0, 1, 1, 0]
# CHECK:           tensor.yield %[[NEG_INF]] : f32
# CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<1x3x3x3xf32>)
# CHECK:         %[[WIN:.*]] = tensor.empty() : tensor<2x2xf32>
# CHECK:         %[[R:.*]] = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<1x6x6x3xf32>, tensor<2x2xf32>) outs(%[[ACC]] : tensor<1x3x3x3xf32>)
# CHECK:         return %[[R]]
@run(S((1, 5, 5, 3), "float32"))
def max_pool_same(x):
    return nn.max_pool(x, (2, 2), (2, 2), "SAME")


# CHECK-LABEL: TEST: erf_f32
# CHECK:       linalg.generic
# CHECK:         math.erf %{{.*}} : f32
# CHECK-LABEL: TEST: erf_f64
# CHECK-NOT:     math.erf
# CHECK:         math.exp %{{.*}} : f64
# CHECK:         math.copysign
@run(S((4,), "float32"))
def erf_f32(x):
    return lax.erf(x)


@run(S((4,), "float64"))
def erf_f64(x):
    return lax.erf(x)
