# RUN: %python %s | filecheck %s
"""Snapshots of indexing and functional updates: slice updates are
tensor.extract_slice / tensor.insert_slice (static, or at clamped run-time offsets), so
IREE writes them in place; integer-array reads are a linalg.generic that gathers with
tensor.extract; integer-array updates are one iree_linalg_ext.scatter. An argument that is
updated but not donated is read again by a barrier before the return (aotc-donate), so
that IREE updates a copy of it, not the caller's array.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>"."""

import aotc

from snapshot import S, run


# x.at[1:3].add(v): read the rows, add, write them back at the same static offsets.
# CHECK-LABEL: TEST: add_to_rows
# CHECK:       func.func public @add_to_rows(%[[X:.*]]: tensor<5x4xf32>, %[[V:.*]]: tensor<2x4xf32>) -> tensor<5x4xf32>
# CHECK:         %[[OLD:.*]] = tensor.extract_slice %[[X]][1, 0] [2, 4] [1, 1] : tensor<5x4xf32> to tensor<2x4xf32>
# CHECK:         %[[NEW:.*]] = linalg.generic
# CHECK-SAME:        ins(%[[OLD]], %[[V]] : tensor<2x4xf32>, tensor<2x4xf32>)
# CHECK:           arith.addf
# CHECK:         %[[R:.*]] = tensor.insert_slice %[[NEW]] into %[[X]][1, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<5x4xf32>
# CHECK-NEXT:    %[[KEEP:.*]]:2 = util.optimization_barrier %[[R]], %[[X]] : tensor<5x4xf32>, tensor<5x4xf32>
# CHECK-NEXT:    return %[[KEEP]]#0 : tensor<5x4xf32>
@run(S((5, 4), "float32"), S((2, 4), "float32"))
def add_to_rows(x, v):
    return x.at[1:3].add(v)


# x.at[:, ::2].set(v): a strided insert_slice, nothing read.
# CHECK-LABEL: TEST: set_every_other_column
# CHECK:       func.func public @set_every_other_column(%[[X:.*]]: tensor<5x4xf32>, %[[V:.*]]: tensor<5x2xf32>) -> tensor<5x4xf32>
# CHECK-NOT:     tensor.extract_slice
# CHECK:         %[[R:.*]] = tensor.insert_slice %[[V]] into %[[X]][0, 0] [5, 2] [1, 2] : tensor<5x2xf32> into tensor<5x4xf32>
# CHECK-NEXT:    %[[KEEP:.*]]:2 = util.optimization_barrier %[[R]], %[[X]] : tensor<5x4xf32>, tensor<5x4xf32>
# CHECK-NEXT:    return %[[KEEP]]#0 : tensor<5x4xf32>
@run(S((5, 4), "float32"), S((5, 2), "float32"))
def set_every_other_column(x, v):
    return x.at[:, ::2].set(v)


# lax.dynamic_update_slice: the start is read as an index, counted from the end when
# negative and clamped to [0, 5 - 2] with scalar arith (IREE computes it on the host),
# and the update goes in with insert_slice at that dynamic offset.
# CHECK-LABEL: TEST: dynamic_update_rows
# CHECK:       func.func public @dynamic_update_rows(%[[X:.*]]: tensor<5x4xf32>, %[[U:.*]]: tensor<2x4xf32>, %[[I:.*]]: tensor<i32>) -> tensor<5x4xf32>
# CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
# CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
# CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
# CHECK:         %[[S:.*]] = tensor.extract %[[I]][] : tensor<i32>
# CHECK-NEXT:    %[[START:.*]] = arith.index_cast %[[S]] : i32 to index
# CHECK-DAG:     %[[NEG:.*]] = arith.cmpi slt, %[[START]], %[[C0]] : index
# CHECK-DAG:     %[[FROM_END:.*]] = arith.addi %[[START]], %[[C5]] : index
# CHECK:         %[[WRAPPED:.*]] = arith.select %[[NEG]], %[[FROM_END]], %[[START]] : index
# CHECK-NEXT:    %[[LOW:.*]] = arith.minsi %[[WRAPPED]], %[[C3]] : index
# CHECK-NEXT:    %[[OFFSET:.*]] = arith.maxsi %[[LOW]], %[[C0]] : index
# CHECK-NEXT:    %[[R:.*]] = tensor.insert_slice %[[U]] into %[[X]][%[[OFFSET]], 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<5x4xf32>
# CHECK-NEXT:    %[[KEEP:.*]]:2 = util.optimization_barrier %[[R]], %[[X]] : tensor<5x4xf32>, tensor<5x4xf32>
# CHECK-NEXT:    return %[[KEEP]]#0 : tensor<5x4xf32>
@run(S((5, 4), "float32"), S((2, 4), "float32"), S((), "int32"))
def dynamic_update_rows(x, u, i):
    return aotc.lax.dynamic_update_slice(x, u, (i, 0))


# x[i] with a traced scalar: extract_slice at a clamped run-time offset.
# CHECK-LABEL: TEST: read_traced_row
# CHECK:       func.func public @read_traced_row(%[[X:.*]]: tensor<5x4xf32>, %[[I:.*]]: tensor<i64>) -> tensor<4xf32>
# CHECK:         arith.index_cast %{{.*}} : i64 to index
# CHECK:         %[[OFFSET:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
# CHECK-NEXT:    %[[ROW:.*]] = tensor.extract_slice %[[X]][%[[OFFSET]], 0] [1, 4] [1, 1] : tensor<5x4xf32> to tensor<1x4xf32>
# CHECK-NEXT:    %[[R:.*]] = tensor.collapse_shape %[[ROW]] {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
# CHECK-NEXT:    return %[[R]] : tensor<4xf32>
@run(S((5, 4), "float32"), S((), "int64"))
def read_traced_row(x, i):
    return x[i]


# x[:, idx]: a gather generic over the result (5, 3); the body reads x at (row, idx).
# CHECK-LABEL: TEST: gather_columns
# CHECK:       func.func public @gather_columns(%[[X:.*]]: tensor<5x4xf32>, %[[IDX:.*]]: tensor<3xi64>) -> tensor<5x3xf32>
# CHECK:           arith.minsi %{{.*}}, %c3_i64 : i64
# CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<3xi64>) outs(%{{.*}} : tensor<5x3xf32>)
# CHECK-NEXT:    ^bb0(%[[COL:.*]]: i64, %{{.*}}: f32):
# CHECK-NEXT:      %[[ROW:.*]] = linalg.index 0 : index
# CHECK-NEXT:      %[[J:.*]] = arith.index_cast %[[COL]] : i64 to index
# CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[J]]] : tensor<5x4xf32>
# CHECK-NEXT:      linalg.yield %[[V]] : f32
# CHECK:         return %[[R]] : tensor<5x3xf32>
@run(S((5, 4), "float32"), S((3,), "int64"))
def gather_columns(x, idx):
    return x[:, idx]


# x.at[[0, 3, 0]].add(v) with constant indices: no range guard, one row scatter whose
# region adds (original + update), so the repeated row 0 accumulates.
# CHECK-LABEL: TEST: scatter_add_rows
# CHECK:       func.func public @scatter_add_rows(%[[X:.*]]: tensor<5x4xf32>, %[[V:.*]]: tensor<3x4xf32>) -> tensor<5x4xf32>
# CHECK:         %[[R:.*]] = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) ins(%[[V]], %{{.*}} : tensor<3x4xf32>, tensor<3x1xi32>) outs(%[[X]] : tensor<5x4xf32>)
# CHECK-NEXT:    ^bb0(%[[NEW:.*]]: f32, %[[OLD:.*]]: f32):
# CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
# CHECK-NEXT:      iree_linalg_ext.yield %[[SUM]] : f32
# CHECK:         %[[KEEP:.*]]:2 = util.optimization_barrier %[[R]], %[[X]] : tensor<5x4xf32>, tensor<5x4xf32>
# CHECK-NEXT:    return %[[KEEP]]#0 : tensor<5x4xf32>
@run(S((5, 4), "float32"), S((3, 4), "float32"))
def scatter_add_rows(x, v):
    return x.at[[0, 3, 0]].add(v)


# Traced indices: out-of-range entries are clamped and change nothing (for set they
# repeat the first kept entry), so the scatter writes into x itself, with no copy of x.
# CHECK-LABEL: TEST: scatter_traced_drops
# CHECK:       func.func public @scatter_traced_drops(%[[X:.*]]: tensor<5x4xf32>, %[[I:.*]]: tensor<2xi32>) -> tensor<5x4xf32>
# CHECK-NOT:     tensor<6x4xf32>
# CHECK:         %[[R:.*]] = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x1xi32>) outs(%[[X]] : tensor<5x4xf32>)
# CHECK:         %[[KEEP:.*]]:2 = util.optimization_barrier %[[R]], %[[X]] : tensor<5x4xf32>, tensor<5x4xf32>
# CHECK-NEXT:    return %[[KEEP]]#0 : tensor<5x4xf32>
@run(S((5, 4), "float32"), S((2,), "int32"))
def scatter_traced_drops(x, i):
    return x.at[i].set(0.0)
