// aotc-batch rules for tensor shape ops, scalars and scf control flow, on the per-example
// programs of tests/batching/programs (test_batching_rules.py runs the same batchings
// through IREE and compares them with a per-example loop).

// RUN: %aotc-opt %S/../../batching/programs/shape_ops.mlir --pass-pipeline='aotc-batch{func=slices in-axes=0,none size=3}' | filecheck %s --check-prefix=SLICE
// RUN: %aotc-opt %S/../../batching/programs/shape_ops.mlir --pass-pipeline='aotc-batch{func=slices in-axes=0,0 size=?}' | filecheck %s --check-prefix=GATHER
// RUN: %aotc-opt %S/../../batching/programs/shape_ops.mlir --pass-pipeline='aotc-batch{func=joins in-axes=0,none,0,none size=?}' | filecheck %s --check-prefix=JOIN
// RUN: %aotc-opt %S/../../batching/programs/control_flow.mlir --pass-pipeline='aotc-batch{func=branch in-axes=none,0 size=3}' | filecheck %s --check-prefix=IF
// RUN: %aotc-opt %S/../../batching/programs/control_flow.mlir --pass-pipeline='aotc-batch{func=branch in-axes=0,0 size=?}' | filecheck %s --check-prefix=SELECT
// RUN: %aotc-opt %S/../../batching/programs/control_flow.mlir --pass-pipeline='aotc-batch{func=loop in-axes=0,none size=2}' | filecheck %s --check-prefix=FOR
// RUN: %aotc-opt %S/../../batching/programs/control_flow.mlir --pass-pipeline='aotc-batch{func=count in-axes=0 size=?}' | filecheck %s --check-prefix=WHILE
// RUN: %aotc-opt %S/../../batching/programs/control_flow.mlir --pass-pipeline='aotc-batch{func=pick in-axes=none,0 size=2}' | filecheck %s --check-prefix=SWITCH
// RUN: %aotc-opt %S/../../batching/programs/control_flow.mlir --pass-pipeline='aotc-batch{func=pick in-axes=0,none size=2}' | filecheck %s --check-prefix=SWITCH-LANES
// RUN: %aotc-opt %S/../../batching/programs/linalg_ops.mlir --pass-pipeline='aotc-batch{func=conv in-axes=0,none size=?}' | filecheck %s --check-prefix=CONV
// RUN: %aotc-opt %S/../../batching/programs/linalg_ops.mlir --pass-pipeline='aotc-batch{func=conv in-axes=0,0 size=3}' | filecheck %s --check-prefix=CONV-FILTERS

// Static slices, pads and an unbatched dynamic offset keep their op; the batch dimension
// is a full leading slice.
// SLICE-LABEL: func.func @slices_batched
// SLICE:         tensor.extract_slice %arg0[0, 1, 0] [3, 2, 4] [1, 2, 1] : tensor<3x6x4xf32> to tensor<3x2x4xf32>
// SLICE:         %[[I:.*]] = arith.index_cast
// SLICE:         tensor.extract_slice %arg0[0, %[[I]], 0] [3, 1, 4] [1, 1, 1] : tensor<3x6x4xf32> to tensor<3x4xf32>
// SLICE:         tensor.insert_slice %{{.*}} into %arg0[0, %[[I]], 0] [3, 1, 4] [1, 1, 1] : tensor<3x1x4xf32> into tensor<3x6x4xf32>
// SLICE:         tensor.pad %arg0 low[0, 1, 1] high[0, 1, 1]
// SLICE:         } : tensor<3x6x4xf32> to tensor<3x8x6xf32>

// Per-example offsets: the index arithmetic runs lane by lane (i64 lanes), the slice
// becomes a gather and the insert a select inside each lane's window.
// GATHER-LABEL: func.func @slices_batched
// GATHER-SAME:    (%arg0: tensor<?x6x4xf32>, %arg1: tensor<?xi64>)
// GATHER:         %[[OFF:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<?xi64>) outs(%{{.*}} : tensor<?xi64>)
// GATHER:           arith.index_cast %{{.*}} : i64 to index
// GATHER:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<?x4xf32>)
// GATHER:           %[[LANE:.*]] = linalg.index 0 : index
// GATHER:           tensor.extract %[[OFF]][%[[LANE]]] : tensor<?xi64>
// GATHER:           tensor.extract %arg0[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<?x6x4xf32>
// GATHER:         linalg.generic {{.*}} ins(%arg0 : tensor<?x6x4xf32>) outs(%{{.*}} : tensor<?x6x4xf32>)
// GATHER:           arith.cmpi ult
// GATHER:           arith.select

// Joins move their dimension by one; batch_matmul merges the two batch dimensions.
// JOIN-LABEL: func.func @joins_batched
// JOIN:         tensor.concat dim(1) %arg0, %{{.*}} : (tensor<?x3xf32>, tensor<?x2xf32>) -> tensor<?x5xf32>
// JOIN:         linalg.broadcast ins(%arg0 : tensor<?x3xf32>) outs(%{{.*}} : tensor<?x2x3xf32>) dimensions = [1]
// JOIN:         tensor.collapse_shape %arg2 {{\[\[}}0, 1], [2], [3]] : tensor<?x2x3x4xf32> into tensor<?x3x4xf32>
// JOIN:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<?x3x4xf32>, tensor<?x4x5xf32>)
// JOIN:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [%{{.*}}, 2, 3, 5]

// An unbatched condition stays an scf.if over batched branches.
// IF-LABEL: func.func @branch_batched
// IF:         scf.if %{{.*}} -> (tensor<3x4xf32>)
// IF:           arith.negf
// IF:         } else {
// IF:           scf.yield %arg1 : tensor<3x4xf32>

// A per-example condition runs both branches and selects per lane.
// SELECT-LABEL: func.func @branch_batched
// SELECT-NOT:     scf.if
// SELECT:         arith.negf
// SELECT:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], {{.*}} ins(%arg0, %{{.*}}, %arg1 : tensor<?xi1>, tensor<?x4xf32>, tensor<?x4xf32>)
// SELECT:           arith.select

// scf.for keeps its bounds and carries the batched value.
// FOR-LABEL: func.func @loop_batched
// FOR:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %arg0) -> (tensor<2x4xf32>)

// A per-example while condition: the loop runs while any lane goes on, the body
// computes the lanes' conditions again from the forwarded value (every region keeps the
// loop's signature), and finished lanes keep their value.
// WHILE-LABEL: func.func @count_batched
// WHILE:         scf.while (%[[K:.*]] = %{{.*}}) : (tensor<?xi32>) -> tensor<?xi32>
// WHILE:           %[[LANES:.*]] = linalg.generic {{.*}} ins(%[[K]], %arg0 : tensor<?xi32>, tensor<?xi32>) outs(%{{.*}} : tensor<?xi1>)
// WHILE:             arith.cmpi slt
// WHILE:           %[[ANY:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[LANES]] : tensor<?xi1>)
// WHILE:             arith.ori
// WHILE:           %[[GO:.*]] = tensor.extract %[[ANY]][] : tensor<i1>
// WHILE:           scf.condition(%[[GO]]) %[[K]] : tensor<?xi32>
// WHILE:         } do {
// WHILE:         ^bb0(%[[S:.*]]: tensor<?xi32>):
// WHILE:           %[[L:.*]] = linalg.generic {{.*}} ins(%[[S]], %arg0 : tensor<?xi32>, tensor<?xi32>) outs(%{{.*}} : tensor<?xi1>)
// WHILE:             arith.cmpi slt
// WHILE:           %[[STEP:.*]] = linalg.generic
// WHILE:             arith.addi
// WHILE:           linalg.generic {{.*}} ins(%[[L]], %[[STEP]], %[[S]] : tensor<?xi1>, tensor<?xi32>, tensor<?xi32>)
// WHILE:             arith.select

// An unbatched switch index becomes a chain of scf.if (dynamic result sizes stay resolvable).
// SWITCH-LABEL: func.func @pick_batched
// SWITCH-NOT:     scf.index_switch
// SWITCH:         arith.cmpi eq
// SWITCH:         scf.if %{{.*}} -> (tensor<2x4xf32>)

// A per-example index runs every case and selects per lane.
// SWITCH-LANES-LABEL: func.func @pick_batched
// SWITCH-LANES-NOT:     scf.index_switch
// SWITCH-LANES:         arith.cmpi eq, %{{.*}}, %{{.*}} : index
// SWITCH-LANES:         arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32

// A shared filter: the batch joins the images dimension, one named convolution.
// CONV-LABEL: func.func @conv_batched
// CONV:         tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3], [4]] : tensor<?x1x6x6x2xf32> into tensor<?x6x6x2xf32>
// CONV:         linalg.conv_2d_nhwc_hwcf {{.*}}strides = dense<[2, 1]>{{.*}} ins(%{{.*}}, %arg1 : tensor<?x6x6x2xf32>, tensor<3x3x2x4xf32>)
// CONV:         tensor.expand_shape

// A filter per example: one generic over (b, n, oh, ow, f, kh, kw, c) with strided image reads.
// CONV-FILTERS-DAG: #[[$IMG:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5, d3 + d6, d7)>
// CONV-FILTERS-DAG: #[[$FLT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d5, d6, d7, d4)>
// CONV-FILTERS-LABEL: func.func @conv_batched
// CONV-FILTERS-NOT:   linalg.conv_2d
// CONV-FILTERS:       linalg.generic {indexing_maps = [#[[$IMG]], #[[$FLT]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CONV-FILTERS-SAME:    ins(%arg0, %arg1 : tensor<3x1x6x6x2xf32>, tensor<3x3x3x2x4xf32>)
