# RUN: %python %s | filecheck %s
"""Snapshots of reductions: one linalg.generic with reduction iterators over an
accumulator made by linalg.fill; keepdims restores the reduced dims with expand_shape.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>"."""

import aotc.numpy as anp

from snapshot import S, run


# CHECK-LABEL: TEST: sum_axis_keepdims
# CHECK-DAG:   #[[IN:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
# CHECK-DAG:   #[[OUT:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
# CHECK:       func.func public @sum_axis_keepdims(%[[X:.*]]: tensor<3x4xf32>) -> tensor<3x1xf32>
# CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
# CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<3xf32>
# CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<3xf32>) -> tensor<3xf32>
# CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
# CHECK-SAME:        ins(%[[X]] : tensor<3x4xf32>) outs(%[[INIT]] : tensor<3xf32>)
# CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
# CHECK-NEXT:      %[[NEXT:.*]] = arith.addf %[[V]], %[[ACC]] : f32
# CHECK-NEXT:      linalg.yield %[[NEXT]] : f32
# CHECK:         %[[R:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
# CHECK:         return %[[R]] : tensor<3x1xf32>
@run(S((3, 4), "float32"))
def sum_axis_keepdims(x):
    return anp.sum(x, axis=1, keepdims=True)


# numpy sums int32 into int64: the accumulator is i64 and each element is sign-extended.
# With axis=None every loop is a reduction into a 0-d tensor.
# CHECK-LABEL: TEST: sum_int32_all_axes
# CHECK-DAG:   #[[IN:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
# CHECK-DAG:   #[[OUT:map[0-9]*]] = affine_map<(d0, d1) -> ()>
# CHECK:       func.func public @sum_int32_all_axes(%[[X:.*]]: tensor<2x3xi32>) -> tensor<i64>
# CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
# CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : i64) outs(%{{.*}} : tensor<i64>) -> tensor<i64>
# CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "reduction"]}
# CHECK-SAME:        ins(%[[X]] : tensor<2x3xi32>) outs(%[[INIT]] : tensor<i64>)
# CHECK-NEXT:    ^bb0(%[[V:.*]]: i32, %[[ACC:.*]]: i64):
# CHECK-NEXT:      %[[WIDE:.*]] = arith.extsi %[[V]] : i32 to i64
# CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[WIDE]], %[[ACC]] : i64
# CHECK-NEXT:      linalg.yield %[[NEXT]] : i64
# CHECK:         return %[[SUM]] : tensor<i64>
@run(S((2, 3), "int32"))
def sum_int32_all_axes(x):
    return anp.sum(x)


# argmax carries (best value, its index) as two outputs of one generic; the index comes
# from linalg.index of the reduced loop. Starting from (-inf, INT64_MAX) and preferring
# the smaller index on ties and NaN gives numpy's answer (first maximum, first NaN) in
# any reduction order.
# CHECK-LABEL: TEST: argmax_axis0
# CHECK-DAG:   #[[IN:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
# CHECK-DAG:   #[[OUT:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
# CHECK:       func.func public @argmax_axis0(%[[X:.*]]: tensor<3x4xf32>) -> tensor<4xi64>
# CHECK-DAG:     %[[NO_INDEX:.*]] = arith.constant 9223372036854775807 : i64
# CHECK-DAG:     %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
# CHECK-DAG:     %[[BEST_INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<4xf32>)
# CHECK-DAG:     %[[INDEX_INIT:.*]] = linalg.fill ins(%[[NO_INDEX]] : i64) outs(%{{.*}} : tensor<4xi64>)
# CHECK:         %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]], #[[OUT]]], iterator_types = ["reduction", "parallel"]}
# CHECK-SAME:        ins(%[[X]] : tensor<3x4xf32>) outs(%[[BEST_INIT]], %[[INDEX_INIT]] : tensor<4xf32>, tensor<4xi64>)
# CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[BEST:.*]]: f32, %[[BEST_INDEX:.*]]: i64):
# CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
# CHECK-NEXT:      %[[INDEX:.*]] = arith.index_cast %[[I]] : index to i64
# CHECK-NEXT:      %[[EARLIER:.*]] = arith.cmpi slt, %[[INDEX]], %[[BEST_INDEX]] : i64
# CHECK-NEXT:      %[[GREATER:.*]] = arith.cmpf ogt, %[[V]], %[[BEST]] : f32
# CHECK-NEXT:      %[[EQUAL:.*]] = arith.cmpf oeq, %[[V]], %[[BEST]] : f32
# CHECK-NEXT:      %[[V_NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
# CHECK-NEXT:      %[[BEST_NAN:.*]] = arith.cmpf uno, %[[BEST]], %[[BEST]] : f32
# CHECK:           %[[TAKE:.*]] = arith.select %[[BEST_NAN]], %{{.*}}, %{{.*}} : i1
# CHECK-NEXT:      %[[NEW_BEST:.*]] = arith.select %[[TAKE]], %[[V]], %[[BEST]] : f32
# CHECK-NEXT:      %[[NEW_INDEX:.*]] = arith.select %[[TAKE]], %[[INDEX]], %[[BEST_INDEX]] : i64
# CHECK-NEXT:      linalg.yield %[[NEW_BEST]], %[[NEW_INDEX]] : f32, i64
# CHECK-NEXT:    } -> (tensor<4xf32>, tensor<4xi64>)
# CHECK-NEXT:    return %[[R]]#1 : tensor<4xi64>
@run(S((3, 4), "float32"))
def argmax_axis0(x):
    return anp.argmax(x, axis=0)


# A sum of products: each element is added to +0.0 before it is accumulated, so that the
# multiply-add body IREE would fuse is not taken for an in-order contraction (see
# ops/reductions._plus_zero); x + 0.0 is x but for -0.0.
# CHECK-LABEL: TEST: sum_of_squares
# CHECK:         %[[SQ:.*]] = linalg.generic
# CHECK:           arith.mulf
# CHECK:         linalg.generic {{.*}} ins(%[[SQ]] : tensor<8xf32>)
# CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
# CHECK-NEXT:      %[[PLUS:.*]] = arith.addf %[[V]], %{{.*}} : f32
# CHECK-NEXT:      %[[NEXT:.*]] = arith.addf %[[PLUS]], %[[ACC]] : f32
# CHECK-NEXT:      linalg.yield %[[NEXT]] : f32
@run(S((8,), "float32"))
def sum_of_squares(x):
    return anp.sum(x * x)
