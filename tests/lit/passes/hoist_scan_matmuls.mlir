// aotc-hoist-scan-matmuls: a matmul of a loop's step slice of a sequence (at the loop's
// index in the leading dimension, whole in the others) with a weight from outside the
// loop becomes one matmul over the whole sequence before the loop, each step reading
// its rows. A slice at another offset, a loop that does not visit every step, and a
// weight computed inside the loop keep the matmul in the loop. Running it twice changes
// nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-hoist-scan-matmuls,canonicalize,cse' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-hoist-scan-matmuls,aotc-hoist-scan-matmuls,canonicalize,cse' | filecheck %s

// CHECK-LABEL: func.func @rnn
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2]] : tensor<16x4x8xf32> into tensor<64x8xf32>
// CHECK:         %[[ALL:.*]] = linalg.matmul ins(%[[FLAT]], %arg2 : tensor<64x8xf32>, tensor<8x32xf32>)
// CHECK:         %[[STACKED:.*]] = tensor.expand_shape %[[ALL]] {{\[\[}}0, 1], [2]] output_shape [16, 4, 32]
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:           %[[STEP:.*]] = tensor.extract_slice %[[STACKED]][%[[I]], 0, 0] [1, 4, 32] [1, 1, 1] : tensor<16x4x32xf32> to tensor<4x32xf32>
// CHECK:           %[[REC:.*]] = linalg.matmul ins(%{{.*}}, %arg3 : tensor<4x32xf32>, tensor<32x32xf32>)
// CHECK:           linalg.generic {{.*}} ins(%[[STEP]], %[[REC]] : tensor<4x32xf32>, tensor<4x32xf32>)
func.func @rnn(%h0: tensor<4x32xf32>, %xs: tensor<16x4x8xf32>, %wx: tensor<8x32xf32>,
               %wh: tensor<32x32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%h = %h0) -> (tensor<4x32xf32>) {
    %x = tensor.extract_slice %xs[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<16x4x8xf32> to tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x32xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
    %a = linalg.matmul ins(%x, %wx : tensor<4x8xf32>, tensor<8x32xf32>) outs(%f : tensor<4x32xf32>) -> tensor<4x32xf32>
    %b = linalg.matmul ins(%h, %wh : tensor<4x32xf32>, tensor<32x32xf32>) outs(%f : tensor<4x32xf32>) -> tensor<4x32xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<4x32xf32>, tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %v = arith.addf %p, %q : f32
      %t = math.tanh %v : f32
      linalg.yield %t : f32
    } -> tensor<4x32xf32>
    scf.yield %s : tensor<4x32xf32>
  }
  return %r : tensor<4x32xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         scf.for
// CHECK:           linalg.matmul
// CHECK:         scf.for
// CHECK:           linalg.matmul
// CHECK:         scf.for
// CHECK:           linalg.matmul
func.func @kept(%h0: tensor<4x32xf32>, %xs: tensor<16x4x8xf32>, %wx: tensor<8x32xf32>)
    -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  // the slice after the step's
  %r1 = scf.for %i = %c0 to %c15 step %c1 iter_args(%h = %h0) -> (tensor<4x32xf32>) {
    %j = arith.addi %i, %c1 : index
    %x = tensor.extract_slice %xs[%j, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<16x4x8xf32> to tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x32xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
    %a = linalg.matmul ins(%x, %wx : tensor<4x8xf32>, tensor<8x32xf32>) outs(%f : tensor<4x32xf32>) -> tensor<4x32xf32>
    scf.yield %a : tensor<4x32xf32>
  }
  // half of the steps
  %r2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%h = %h0) -> (tensor<4x32xf32>) {
    %x = tensor.extract_slice %xs[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<16x4x8xf32> to tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x32xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
    %a = linalg.matmul ins(%x, %wx : tensor<4x8xf32>, tensor<8x32xf32>) outs(%f : tensor<4x32xf32>) -> tensor<4x32xf32>
    scf.yield %a : tensor<4x32xf32>
  }
  // a weight the loop computes
  %r3 = scf.for %i = %c0 to %c16 step %c1 iter_args(%h = %h0) -> (tensor<4x32xf32>) {
    %x = tensor.extract_slice %xs[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<16x4x8xf32> to tensor<4x8xf32>
    %w = tensor.extract_slice %h[0, 0] [4, 32] [1, 1] : tensor<4x32xf32> to tensor<4x32xf32>
    %wt = tensor.collapse_shape %w [[0, 1]] : tensor<4x32xf32> into tensor<128xf32>
    %w8 = tensor.expand_shape %wt [[0, 1]] output_shape [8, 16] : tensor<128xf32> into tensor<8x16xf32>
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    %a = linalg.matmul ins(%x, %w8 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
    %a2 = tensor.concat dim(1) %a, %a : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x32xf32>
    scf.yield %a2 : tensor<4x32xf32>
  }
  return %r1, %r2, %r3 : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>
}
