# RUN: %python %s | filecheck %s
"""Snapshots of shape ops: transposes are linalg.transpose, reshapes are views
(collapse/expand, no copy), basic indexing is tensor.extract_slice (a gather generic
for negative steps), concatenation is tensor.concat.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>"."""

import aotc.numpy as anp

from snapshot import S, run


# CHECK-LABEL: TEST: transpose_axes
# CHECK:       func.func public @transpose_axes(%[[X:.*]]: tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
# CHECK-NOT:     linalg.generic
# CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<3x2x4xf32>
# CHECK:         %[[R:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[EMPTY]] : tensor<3x2x4xf32>) permutation = [1, 0, 2]
# CHECK-NOT:     linalg.generic
# CHECK:         return %[[R]] : tensor<3x2x4xf32>
@run(S((2, 3, 4), "float32"))
def transpose_axes(x):
    return anp.transpose(x, (1, 0, 2))


# (2, 3, 4) -> (3, 8) shares no dim boundary, so it goes through the flat shape.
# CHECK-LABEL: TEST: reshape_regroup
# CHECK:       func.func public @reshape_regroup(%[[X:.*]]: tensor<2x3x4xf32>) -> tensor<3x8xf32>
# CHECK-NEXT:    %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
# CHECK-NEXT:    %[[R:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [3, 8] : tensor<24xf32> into tensor<3x8xf32>
# CHECK-NEXT:    return %[[R]] : tensor<3x8xf32>
@run(S((2, 3, 4), "float32"))
def reshape_regroup(x):
    return anp.reshape(x, (3, 8))


# x[1, ::-2] on 8 columns reads columns 7, 5, 3, 1: a generic that extracts element
# (1, 7 - 2 * d1) of x (IREE's CPU tiling rejects a reversing input map such as
# d1 -> 3 - d1 on the innermost dim), then the indexed dim is collapsed away.
# CHECK-LABEL: TEST: index_negative_step
# CHECK:       func.func public @index_negative_step(%[[X:.*]]: tensor<3x8xf32>) -> tensor<4xf32>
# CHECK-DAG:     %[[ROW:.*]] = arith.constant 1 : index
# CHECK-DAG:     %[[LAST:.*]] = arith.constant 7 : index
# CHECK-DAG:     %[[STEP:.*]] = arith.constant -2 : index
# CHECK:         %[[READ:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]}
# CHECK-SAME:        outs(%{{.*}} : tensor<1x4xf32>)
# CHECK:           %[[J:.*]] = linalg.index 1 : index
# CHECK-NEXT:      %[[SCALED:.*]] = arith.muli %[[J]], %[[STEP]] : index
# CHECK-NEXT:      %[[COL:.*]] = arith.addi %[[SCALED]], %[[LAST]] : index
# CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<3x8xf32>
# CHECK-NEXT:      linalg.yield %[[V]] : f32
# CHECK:         %[[R:.*]] = tensor.collapse_shape %[[READ]] {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
# CHECK-NEXT:    return %[[R]] : tensor<4xf32>
@run(S((3, 8), "float32"))
def index_negative_step(x):
    return x[1, ::-2]


# CHECK-LABEL: TEST: concatenate_axis1
# CHECK:       func.func public @concatenate_axis1(%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>) -> tensor<2x8xf32>
# CHECK-NEXT:    %[[R:.*]] = tensor.concat dim(1) %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
# CHECK-NEXT:    return %[[R]] : tensor<2x8xf32>
@run(S((2, 3), "float32"), S((2, 5), "float32"))
def concatenate_axis1(a, b):
    return anp.concatenate([a, b], axis=1)
