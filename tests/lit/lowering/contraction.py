# RUN: %python %s | filecheck %s
"""Snapshots of contractions: float matmuls become linalg's named ops (which IREE tiles
and vectorizes best), integer ones a generic with a reduction loop.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>"."""

from snapshot import S, run

import aotc
import aotc.numpy


# CHECK-LABEL: TEST: matmul_f32
# CHECK:       func.func public @matmul_f32(%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>) -> tensor<3x5xf32>
# CHECK-NOT:     linalg.generic
# CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
# CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<3x5xf32>
# CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<3x5xf32>) -> tensor<3x5xf32>
# CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[ACC]] : tensor<3x5xf32>) -> tensor<3x5xf32>
# CHECK-NOT:     linalg.generic
# CHECK:         return %[[R]] : tensor<3x5xf32>
@run(S((3, 4), "float32"), S((4, 5), "float32"))
def matmul_f32(a, b):
    return a @ b


# CHECK-LABEL: TEST: batch_matmul_f32
# CHECK:       func.func public @batch_matmul_f32(%[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
# CHECK-NOT:     linalg.generic
# CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
# CHECK:         %[[R:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%[[ACC]] : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
# CHECK-NOT:     linalg.generic
# CHECK:         return %[[R]] : tensor<2x3x5xf32>
@run(S((2, 3, 4), "float32"), S((2, 4, 5), "float32"))
def batch_matmul_f32(a, b):
    return a @ b


# CHECK-LABEL: TEST: matmul_int32
# CHECK-DAG:   #[[LHS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
# CHECK-DAG:   #[[RHS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
# CHECK-DAG:   #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
# CHECK:       func.func public @matmul_int32(%[[A:.*]]: tensor<3x4xi32>, %[[B:.*]]: tensor<4x5xi32>) -> tensor<3x5xi32>
# CHECK-NOT:     linalg.matmul
# CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
# CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.*}} : tensor<3x5xi32>) -> tensor<3x5xi32>
# CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
# CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<3x4xi32>, tensor<4x5xi32>) outs(%[[ACC]] : tensor<3x5xi32>)
# CHECK-NEXT:    ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %[[SUM:.*]]: i32):
# CHECK-NEXT:      %[[P:.*]] = arith.muli %[[X]], %[[Y]] : i32
# CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[SUM]], %[[P]] : i32
# CHECK-NEXT:      linalg.yield %[[NEXT]] : i32
# CHECK-NOT:     linalg.matmul
# CHECK:         return %[[R]] : tensor<3x5xi32>
@run(S((3, 4), "int32"), S((4, 5), "int32"))
def matmul_int32(a, b):
    return a @ b


# A contraction whose operands are not in matmul order is transposed into it, so that it
# still becomes linalg.matmul.
# CHECK-LABEL: TEST: transposed_lhs_f32
# CHECK:       func.func public @transposed_lhs_f32(%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x5xf32>) -> tensor<3x5xf32>
# CHECK-NOT:     linalg.generic
# CHECK:         %[[T:.*]] = linalg.transpose ins(%[[A]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<3x4xf32>) permutation = [1, 0]
# CHECK:         %[[R:.*]] = linalg.matmul ins(%[[T]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%{{.*}} : tensor<3x5xf32>) -> tensor<3x5xf32>
# CHECK:         return %[[R]] : tensor<3x5xf32>
@run(S((4, 3), "float32"), S((4, 5), "float32"))
def transposed_lhs_f32(a, b):
    return aotc.numpy.einsum("ki,kj->ij", a, b)


# Three operands are contracted pairwise, the smaller intermediate (b @ c: 4x4) first.
# CHECK-LABEL: TEST: chain_f32
# CHECK:       func.func public @chain_f32(%[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<4x6xf32>, %[[C:.*]]: tensor<6x4xf32>) -> tensor<8x4xf32>
# CHECK:         %[[BC:.*]] = linalg.matmul ins(%[[B]], %[[C]] : tensor<4x6xf32>, tensor<6x4xf32>) outs(%{{.*}} : tensor<4x4xf32>) -> tensor<4x4xf32>
# CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %[[BC]] : tensor<8x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<8x4xf32>) -> tensor<8x4xf32>
# CHECK-NOT:     linalg.generic
# CHECK:         return %[[R]] : tensor<8x4xf32>
@run(S((8, 4), "float32"), S((4, 6), "float32"), S((6, 4), "float32"))
def chain_f32(a, b, c):
    return aotc.numpy.einsum("ij,jk,kl->il", a, b, c)
