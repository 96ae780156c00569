# RUN: %python %s | filecheck %s
"""Snapshots of pad, tile, repeat, roll and the matrix-structure ops: constant pads are
tensor.pad; tiling is a broadcast generic and a collapse; position lists along an axis
are slices joined by tensor.concat, or one gather generic when they have many runs;
triangles and diagonals are generics over linalg.index.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>"."""

import aotc.numpy as anp

from snapshot import S, run


# CHECK-LABEL: TEST: pad_constant
# CHECK:       func.func public @pad_constant(%[[X:.*]]: tensor<2x3xf32>) -> tensor<5x6xf32>
# CHECK-NEXT:    %[[C:.*]] = arith.constant 7.000000e+00 : f32
# CHECK-NEXT:    %[[R:.*]] = tensor.pad %[[X]] low[1, 0] high[2, 3] {
# CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index):
# CHECK-NEXT:      tensor.yield %[[C]] : f32
# CHECK-NEXT:    } : tensor<2x3xf32> to tensor<5x6xf32>
# CHECK-NEXT:    return %[[R]] : tensor<5x6xf32>
@run(S((2, 3), "float32"))
def pad_constant(x):
    return anp.pad(x, ((1, 2), (0, 3)), constant_values=7.0)


# Different values per side: one tensor.pad per side, axis after axis (the later axis
# owns the corners, as in numpy).
# CHECK-LABEL: TEST: pad_per_side_values
# CHECK:       func.func public @pad_per_side_values(%[[X:.*]]: tensor<2x3xi32>) -> tensor<3x5xi32>
# CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : i32
# CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
# CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[1, 0] high[0, 0] {
# CHECK:           tensor.yield %[[ONE]] : i32
# CHECK:         } : tensor<2x3xi32> to tensor<3x3xi32>
# CHECK:         %[[R:.*]] = tensor.pad %[[P]] low[0, 0] high[0, 2] {
# CHECK:           tensor.yield %[[FOUR]] : i32
# CHECK:         } : tensor<3x3xi32> to tensor<3x5xi32>
# CHECK-NEXT:    return %[[R]]
@run(S((2, 3), "int32"))
def pad_per_side_values(x):
    return anp.pad(x, ((1, 0), (0, 2)), constant_values=((1, 2), (3, 4)))


# reflect on [a b c d] by (2, 1) reads positions [2 1 0 1 2 3 2]: a reversed run (the
# gather generic of negative-step indexing) and two slices, joined by tensor.concat.
# CHECK-LABEL: TEST: pad_reflect
# CHECK:       func.func public @pad_reflect(%[[X:.*]]: tensor<4xf32>) -> tensor<7xf32>
# CHECK:         %[[REV:.*]] = linalg.generic
# CHECK-SAME:        outs(%{{.*}} : tensor<3xf32>)
# CHECK:           tensor.extract %[[X]][%{{.*}}] : tensor<4xf32>
# CHECK:         %[[MID:.*]] = tensor.extract_slice %[[X]][1] [3] [1] : tensor<4xf32> to tensor<3xf32>
# CHECK-NEXT:    %[[END:.*]] = tensor.extract_slice %[[X]][2] [1] [1] : tensor<4xf32> to tensor<1xf32>
# CHECK-NEXT:    %[[R:.*]] = tensor.concat dim(0) %[[REV]], %[[MID]], %[[END]] : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<7xf32>
# CHECK-NEXT:    return %[[R]]
@run(S((4,), "float32"))
def pad_reflect(x):
    return anp.pad(x, (2, 1), mode="reflect")


# A gather of a strided slice goes through util.optimization_barrier (IREE 3.13 cannot
# compile tensor.extract from a strided slice fused into the same dispatch).
# CHECK-LABEL: TEST: pad_reflect_strided_slice
# CHECK:         %[[SLICE:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 3] [1, 2]
# CHECK-NEXT:    %[[SRC:.*]] = util.optimization_barrier %[[SLICE]] : tensor<2x3xf32>
# CHECK:         linalg.generic
# CHECK:           tensor.extract %[[SRC]]
# CHECK:         tensor.extract_slice %[[SRC]][0, 1] [2, 2] [1, 1]
# CHECK:         tensor.concat dim(1)
@run(S((2, 6), "float32"))
def pad_reflect_strided_slice(x):
    return anp.pad(x[:, ::2], ((0, 0), (2, 0)), mode="reflect")


# tile: one broadcast generic to (reps, n) per axis, then a collapse (a view).
# CHECK-LABEL: TEST: tile_2d
# CHECK-DAG:   #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
# CHECK-DAG:   #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
# CHECK:       func.func public @tile_2d(%[[X:.*]]: tensor<2x3xf32>) -> tensor<4x9xf32>
# CHECK:         %[[B:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
# CHECK-SAME:        ins(%[[X]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x2x3x3xf32>)
# CHECK:         %[[R:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1], [2, 3]] : tensor<2x2x3x3xf32> into tensor<4x9xf32>
# CHECK-NEXT:    return %[[R]]
@run(S((2, 3), "float32"))
def tile_2d(x):
    return anp.tile(x, (2, 3))


# repeat with one count: the same broadcast, each element stretched in place.
# CHECK-LABEL: TEST: repeat_uniform
# CHECK-DAG:   #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
# CHECK:       func.func public @repeat_uniform(%[[X:.*]]: tensor<2x3xf32>) -> tensor<6x3xf32>
# CHECK:         %[[B:.*]] = linalg.generic {indexing_maps = [#[[IN]], #{{.*}}]
# CHECK-SAME:        outs(%{{.*}} : tensor<2x3x3xf32>)
# CHECK:         tensor.collapse_shape %[[B]] {{\[\[}}0, 1], [2]] : tensor<2x3x3xf32> into tensor<6x3xf32>
@run(S((2, 3), "float32"))
def repeat_uniform(x):
    return anp.repeat(x, 3, axis=0)


# roll by 1 on 5 columns: positions [4 0 1 2 3] are two slices.
# CHECK-LABEL: TEST: roll_axis1
# CHECK:       func.func public @roll_axis1(%[[X:.*]]: tensor<2x5xf32>) -> tensor<2x5xf32>
# CHECK-NEXT:    %[[LAST:.*]] = tensor.extract_slice %[[X]][0, 4] [2, 1] [1, 1] : tensor<2x5xf32> to tensor<2x1xf32>
# CHECK-NEXT:    %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 4] [1, 1] : tensor<2x5xf32> to tensor<2x4xf32>
# CHECK-NEXT:    %[[R:.*]] = tensor.concat dim(1) %[[LAST]], %[[FIRST]] : (tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x5xf32>
# CHECK-NEXT:    return %[[R]]
@run(S((2, 5), "float32"))
def roll_axis1(x):
    return anp.roll(x, 1, axis=1)


# Per-element repeats with more than 8 runs: one generic reading x at the positions of
# a constant index table.
# CHECK-LABEL: TEST: repeat_gather
# CHECK-DAG:   #[[TABLE:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
# CHECK:       func.func public @repeat_gather(%[[X:.*]]: tensor<2x16xi8>) -> tensor<2x24xi8>
# CHECK:         %[[T:.*]] = arith.constant dense<[0, 1, 1, 2, 3, 3, {{.*}}, 15, 15]> : tensor<24xi32>
# CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[TABLE]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
# CHECK-SAME:        ins(%[[T]] : tensor<24xi32>) outs(%{{.*}} : tensor<2x24xi8>)
# CHECK-NEXT:    ^bb0(%[[P:.*]]: i32, %{{.*}}: i8):
# CHECK-NEXT:      %[[J:.*]] = arith.index_cast %[[P]] : i32 to index
# CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
# CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[I]], %[[J]]] : tensor<2x16xi8>
# CHECK-NEXT:      linalg.yield %[[V]] : i8
# CHECK:         return %[[R]]
@run(S((2, 16), "int8"))
def repeat_gather(x):
    return anp.repeat(x, [1, 2] * 8, axis=1)


# CHECK-LABEL: TEST: triu_batched
# CHECK:       func.func public @triu_batched(%[[X:.*]]: tensor<2x3x4xi16>) -> tensor<2x3x4xi16>
# CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i16
# CHECK-DAG:     %[[K:.*]] = arith.constant 1 : index
# CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x3x4xi16>) outs(%{{.*}} : tensor<2x3x4xi16>)
# CHECK-NEXT:    ^bb0(%[[V:.*]]: i16, %{{.*}}: i16):
# CHECK-NEXT:      %[[COL:.*]] = linalg.index 2 : index
# CHECK-NEXT:      %[[ROW:.*]] = linalg.index 1 : index
# CHECK-NEXT:      %[[D:.*]] = arith.subi %[[COL]], %[[ROW]] : index
# CHECK-NEXT:      %[[KEEP:.*]] = arith.cmpi sge, %[[D]], %[[K]] : index
# CHECK-NEXT:      %[[OUT:.*]] = arith.select %[[KEEP]], %[[V]], %[[ZERO]] : i16
# CHECK-NEXT:      linalg.yield %[[OUT]] : i16
@run(S((2, 3, 4), "int16"))
def triu_batched(x):
    return anp.triu(x, 1)


# CHECK-LABEL: TEST: diagonal_offset
# CHECK:       func.func public @diagonal_offset(%[[X:.*]]: tensor<3x4xf32>) -> tensor<3xf32>
# CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf32>)
# CHECK-NEXT:    ^bb0(%{{.*}}: f32):
# CHECK-NEXT:      %[[T:.*]] = linalg.index 0 : index
# CHECK-NEXT:      %[[COL:.*]] = arith.addi %[[T]], %{{.*}} : index
# CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[T]], %[[COL]]] : tensor<3x4xf32>
# CHECK-NEXT:      linalg.yield %[[V]] : f32
@run(S((3, 4), "float32"))
def diagonal_offset(x):
    return anp.diagonal(x, 1)


# diag of a vector: tensor.pad to the matrix size, then a broadcast generic that keeps
# the element on diagonal k.
# CHECK-LABEL: TEST: diag_vector
# CHECK:       func.func public @diag_vector(%[[X:.*]]: tensor<3xf32>) -> tensor<4x4xf32>
# CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0] high[1]
# CHECK:         linalg.generic {{.*}} ins(%[[P]] : tensor<4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
# CHECK:           arith.cmpi eq
# CHECK:           arith.select
@run(S((3,), "float32"))
def diag_vector(x):
    return anp.diag(x, 1)
