// aotc-isolate-matmuls puts the result of a linalg.matmul that something other than
// func.return reads through one util.optimization_barrier, right after the matmul; every
// consumer reads the barrier (a return keeps the matmul itself). A matmul that is only
// returned is left alone, and running the pass twice changes nothing more.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-isolate-matmuls' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-isolate-matmuls,aotc-isolate-matmuls' | filecheck %s

// CHECK-LABEL: func.func @bias_relu
// CHECK:         %[[M:.*]] = linalg.matmul
// CHECK-NEXT:    %[[B:.*]] = util.optimization_barrier %[[M]] : tensor<4x4xf64>
// CHECK-NOT:     util.optimization_barrier
// CHECK:         linalg.generic {{.*}} ins(%[[B]], %{{.*}} : tensor<4x4xf64>, tensor<4xf64>)
// CHECK:         return %{{.*}}, %[[M]]
func.func @bias_relu(%a: tensor<4x4xf64>, %b: tensor<4x4xf64>, %bias: tensor<4xf64>)
    -> (tensor<4x4xf64>, tensor<4x4xf64>) {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x4xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<4x4xf64>) -> tensor<4x4xf64>
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf64>, tensor<4x4xf64>) outs(%f : tensor<4x4xf64>)
      -> tensor<4x4xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<4x4xf64>, tensor<4xf64>) outs(%e : tensor<4x4xf64>) {
  ^bb0(%v: f64, %w: f64, %o: f64):
    %s = arith.addf %v, %w : f64
    %t = arith.maximumf %s, %z : f64
    linalg.yield %t : f64
  } -> tensor<4x4xf64>
  return %r, %m : tensor<4x4xf64>, tensor<4x4xf64>
}

// -----

// CHECK-LABEL: func.func @returned
// CHECK-NOT:     util.optimization_barrier
func.func @returned(%a: tensor<4x4xf64>, %b: tensor<4x4xf64>) -> tensor<4x4xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x4xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<4x4xf64>) -> tensor<4x4xf64>
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf64>, tensor<4x4xf64>) outs(%f : tensor<4x4xf64>)
      -> tensor<4x4xf64>
  return %m : tensor<4x4xf64>
}
