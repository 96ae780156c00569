// aotc-batch builds @<func>_batched from a per-example function: arguments marked 0 in
// in-axes get a leading batch dimension (size=N, or size=? for a dynamic one), those
// marked none keep their type; unbatched values stay unbatched; every result is batched.
// An op with a batched operand and no rule fails the pass. Running it twice changes
// nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=bias in-axes=0,none size=?}' | filecheck %s --check-prefix=BIAS
// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=bias in-axes=0,none size=?},aotc-batch{func=bias in-axes=0,none size=?}' | filecheck %s --check-prefix=BIAS
// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=bias in-axes=none,0 size=7}' | filecheck %s --check-prefix=WEIGHT
// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=rowsum in-axes=0 size=5}' | filecheck %s --check-prefix=RED
// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=mm in-axes=0,none size=?}' | filecheck %s --check-prefix=MM-X
// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=mm in-axes=0,0 size=3}' | filecheck %s --check-prefix=MM-XW
// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=mm in-axes=none,0 size=3}' | filecheck %s --check-prefix=MM-W
// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=shapes in-axes=0 size=2}' | filecheck %s --check-prefix=SHAPE
// RUN: %aotc-opt %s --pass-pipeline='aotc-batch{func=unbatched in-axes=none size=4}' | filecheck %s --check-prefix=BCAST
// RUN: not %aotc-opt %s --pass-pipeline='aotc-batch{func=slice in-axes=0,none size=2}' 2>&1 | filecheck %s --check-prefix=ERR

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0, d1) -> (d0)>

// Elementwise with a broadcast bias: the bias map gets no d0.
// BIAS-LABEL: func.func @bias_batched
// BIAS-SAME:      (%[[X:.*]]: tensor<?x4x3xf32>, %[[B:.*]]: tensor<3xf32>) -> tensor<?x4x3xf32>
// BIAS:         %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x3xf32>
// BIAS:         %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x4x3xf32>
// BIAS:         linalg.generic {indexing_maps = [#[[$M3:.*]], #[[$ROW:.*]], #[[$M3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// BIAS-SAME:      ins(%[[X]], %[[B]] : tensor<?x4x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<?x4x3xf32>)
// BIAS-NOT:   func.func @bias_batched
// WEIGHT-DAG: #[[$X:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// WEIGHT-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// WEIGHT-DAG: #[[$O:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// WEIGHT-LABEL: func.func @bias_batched
// WEIGHT-SAME:      (%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<7x3xf32>) -> tensor<7x4x3xf32>
// WEIGHT:         linalg.generic {indexing_maps = [#[[$X]], #[[$W]], #[[$O]]]
func.func @bias(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// A reduction: the init (a fill of an empty) is re-created batched, not broadcast.
// RED-LABEL: func.func @rowsum_batched
// RED-SAME:      (%[[X:.*]]: tensor<5x4x3xf32>) -> tensor<5x4xf32>
// RED:         %[[E:.*]] = tensor.empty() : tensor<5x4xf32>
// RED:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<5x4xf32>)
// RED:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// RED-SAME:      ins(%[[X]] : tensor<5x4x3xf32>) outs(%[[F]] : tensor<5x4xf32>)
// RED-NOT:     linalg.broadcast
func.func @rowsum(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x3xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Batched activation x unbatched weight: the batch folds into the rows of one matmul.
// MM-X-LABEL: func.func @mm_batched
// MM-X-SAME:      (%[[X:.*]]: tensor<?x4x8xf32>, %[[W:.*]]: tensor<8x3xf32>) -> tensor<?x4x3xf32>
// MM-X:         %[[D:.*]] = tensor.dim %[[X]]
// MM-X:         %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>
// MM-X:         %[[R:.*]] = linalg.matmul ins(%[[XC]], %[[W]] : tensor<?x8xf32>, tensor<8x3xf32>) outs(%{{.*}} : tensor<?x3xf32>)
// MM-X:         %[[O:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape [%[[D]], 4, 3] : tensor<?x3xf32> into tensor<?x4x3xf32>
// MM-X:         return %[[O]]
// Both batched: a batch_matmul.
// MM-XW-LABEL: func.func @mm_batched
// MM-XW:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<3x4x8xf32>, tensor<3x8x3xf32>) outs(%{{.*}} : tensor<3x4x3xf32>)
// Only the weight batched: the activation is broadcast into a batch_matmul.
// MM-W-LABEL: func.func @mm_batched
// MM-W:         %[[XB:.*]] = linalg.broadcast ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<3x4x8xf32>) dimensions = [0]
// MM-W:         linalg.batch_matmul ins(%[[XB]], %{{.*}} : tensor<3x4x8xf32>, tensor<3x8x3xf32>)
func.func @mm(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// Transpose, collapse and expand shift their permutation / reassociation past dim 0.
// SHAPE-LABEL: func.func @shapes_batched
// SHAPE-SAME:      (%[[X:.*]]: tensor<2x4x3xf32>) -> (tensor<2x3x4xf32>, tensor<2x12xf32>, tensor<2x2x2x3xf32>)
// SHAPE:         linalg.transpose ins(%[[X]] : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) permutation = [0, 2, 1]
// SHAPE:         tensor.collapse_shape %[[X]] {{\[\[}}0], [1, 2]] : tensor<2x4x3xf32> into tensor<2x12xf32>
// SHAPE:         tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2], [3]] output_shape [2, 2, 2, 3] : tensor<2x4x3xf32> into tensor<2x2x2x3xf32>
func.func @shapes(%x: tensor<4x3xf32>) -> (tensor<3x4xf32>, tensor<12xf32>, tensor<2x2x3xf32>) {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  %x2 = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 2, 3] : tensor<4x3xf32> into tensor<2x2x3xf32>
  return %t, %c, %x2 : tensor<3x4xf32>, tensor<12xf32>, tensor<2x2x3xf32>
}

// Nothing batched: the body is copied as is; the result is broadcast on return.
// BCAST-LABEL: func.func @unbatched_batched
// BCAST-SAME:      (%[[X:.*]]: tensor<3xf32>) -> tensor<4x3xf32>
// BCAST:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]
// BCAST:         %[[B:.*]] = linalg.broadcast ins(%[[R]] : tensor<3xf32>) outs(%{{.*}} : tensor<4x3xf32>) dimensions = [0]
// BCAST:         return %[[B]]
func.func @unbatched(%x: tensor<3xf32>) -> tensor<3xf32> {
  %e = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// An op without a rule fails the pass, naming the op, its location and how to add a rule.
// ERR: aotc-batch: no batching rule for linalg.matvec at {{.*}}batching.mlir:{{[0-9]+}}
// ERR-SAME: @rule("linalg.matvec") def rule(bt, op, operands) -> list[Batched]
func.func @slice(%x: tensor<4x3xf32>, %v: tensor<3xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.matvec ins(%x, %v : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
