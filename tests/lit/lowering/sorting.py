# RUN: %python %s | filecheck %s
"""Snapshots of sorting and cumulative ops: a sorting network of linalg ops in scf.for
loops, and IREE's LinalgExt scan built from Python.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>"."""

from snapshot import S, run

import aotc
import aotc.lax
import aotc.numpy as anp


# argsort: a bitonic network over the original indices of rows padded to a power of two
# (5 -> 8). A first compare-exchange generic makes the indices from its loop index; two
# scf.for loops then run one generic that reads its partner's index (i xor j) and both
# elements, through their indices, from the unsorted rows with tensor.extract. Padding
# (index >= 5, reading a clamped element) goes last, NaNs after numbers, ties by index.
# CHECK-LABEL: TEST: argsort_f32
# CHECK:       func.func public @argsort_f32(%[[X:.*]]: tensor<3x5xf32>) -> tensor<3x5xi64>
# CHECK:         %[[FIRST:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x8xi64>)
# CHECK:           arith.xori %{{.*}}, %c1 : index
# CHECK:           arith.minui %{{.*}}, %c4 : index
# CHECK:           tensor.extract %[[X]][%{{.*}}, %{{.*}}] : tensor<3x5xf32>
# CHECK:         %[[S:.*]] = scf.for %[[LEVEL:.*]] = %c2 to %c4 step %c1 iter_args(%{{.*}} = %[[FIRST]]) -> (tensor<3x8xi64>)
# CHECK:           scf.for %{{.*}} = %c0 to %[[LEVEL]] step %c1 iter_args(%[[INDICES:.*]] = %{{.*}}) -> (tensor<3x8xi64>)
# CHECK:             linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[INDICES]] : tensor<3x8xi64>)
# CHECK:               arith.xori
# CHECK:               tensor.extract %[[INDICES]][%{{.*}}, %{{.*}}] : tensor<3x8xi64>
# CHECK:               tensor.extract %[[X]][%{{.*}}, %{{.*}}] : tensor<3x5xf32>
# CHECK:               tensor.extract %[[X]][%{{.*}}, %{{.*}}] : tensor<3x5xf32>
# CHECK:               arith.cmpi sge, %{{.*}}, %c5_i64 : i64
# CHECK:               arith.cmpf uno
# CHECK:               arith.cmpi slt, %{{.*}}, %{{.*}} : i64
# CHECK:               linalg.yield %{{.*}} : i64
# CHECK:         %[[R:.*]] = tensor.extract_slice %[[S]][0, 0] [3, 5] [1, 1]
# CHECK:         return %[[R]] : tensor<3x5xi64>
@run(S((3, 5), "float32"))
def argsort_f32(x):
    return anp.argsort(x)


# cumsum: one inclusive scan, small ints accumulated in int64.
# CHECK-LABEL: TEST: cumsum_i8
# CHECK:       func.func public @cumsum_i8(%{{.*}}: tensor<3x5xi8>) -> tensor<3x5xi64>
# CHECK:         arith.extsi %{{.*}} : i8 to i64
# CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<5xi64>) -> tensor<5xi64>
# CHECK:         %[[R:.*]]:2 = iree_linalg_ext.scan dimension(0) inclusive(true) ins(%{{.*}} : tensor<3x5xi64>) outs(%{{.*}}, %[[ACC]] : tensor<3x5xi64>, tensor<5xi64>)
# CHECK:           arith.addi
# CHECK:         return %[[R]]#0 : tensor<3x5xi64>
@run(S((3, 5), "int8"))
def cumsum_i8(x):
    return anp.cumsum(x, axis=0)


# top_k: the rows sorted largest first by the network (9 -> 16 wide), a generic reading
# the sorted values through the indices, then the first 3 of both taken. In jax's order
# -0.0 comes after 0.0: the comparison looks at the sign bits of equal values.
# CHECK-LABEL: TEST: top_k_f32
# CHECK:       func.func public @top_k_f32(%[[X:.*]]: tensor<2x9xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
# CHECK:         %[[FIRST:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x16xi32>)
# CHECK:           arith.bitcast %{{.*}} : f32 to i32
# CHECK:         %[[S:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[FIRST]]) -> (tensor<2x16xi32>)
# CHECK:         %[[V:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<2x16xi32>) outs(%{{.*}} : tensor<2x16xf32>)
# CHECK:           tensor.extract %[[X]]
# CHECK:         tensor.extract_slice %[[V]][0, 0] [2, 9] [1, 1]
# CHECK:         tensor.extract_slice %[[S]][0, 0] [2, 9] [1, 1]
# CHECK:         %[[TV:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 3] [1, 1] : tensor<2x9xf32> to tensor<2x3xf32>
# CHECK:         %[[TI:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 3] [1, 1] : tensor<2x9xi32> to tensor<2x3xi32>
# CHECK:         return %[[TV]], %[[TI]] : tensor<2x3xf32>, tensor<2x3xi32>
@run(S((2, 9), "float32"))
def top_k_f32(x):
    return aotc.lax.top_k(x, 3)
