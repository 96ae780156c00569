// aotc-drop-kernel-barriers removes the barrier marked aotc.kernel_results (each result
// replaced by its operand) and leaves every other barrier. Running it twice changes
// nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-drop-kernel-barriers' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-drop-kernel-barriers,aotc-drop-kernel-barriers' | filecheck %s

// CHECK-LABEL: func.func @kernel_results
// CHECK:         %[[K:.*]]:2 = flow.dispatch.region
// CHECK:         %[[KEPT:.*]] = util.optimization_barrier %arg0
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return %[[K]]#0, %[[K]]#1, %[[KEPT]]
func.func @kernel_results(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %k:2 = flow.dispatch.region -> (tensor<4xf32>, tensor<4xi32>) attributes {aotc.kernel = "example"} {
    %e = tensor.empty() : tensor<4xf32>
    %i = tensor.empty() : tensor<4xi32>
    flow.return %e, %i : tensor<4xf32>, tensor<4xi32>
  }
  %r:2 = util.optimization_barrier {aotc.kernel_results} %k#0, %k#1 : tensor<4xf32>, tensor<4xi32>
  %kept = util.optimization_barrier %a : tensor<4xf32>
  return %r#0, %r#1, %kept : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}
