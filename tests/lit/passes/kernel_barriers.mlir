// aotc-keep-unused-kernel-results: the uses of a barrier marked aotc.kernel_results read
// the region's results directly; the barrier is rebuilt over the results nothing reads
// (a kernel's scratch), and goes when there are none; unmarked barriers stay. Running it
// twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-keep-unused-kernel-results' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-keep-unused-kernel-results,aotc-keep-unused-kernel-results' | filecheck %s

// CHECK-LABEL: func.func @scratch_kept
// CHECK:         %[[K:.*]]:3 = flow.dispatch.region
// CHECK:         util.optimization_barrier {aotc.kernel_results} %[[K]]#2 : tensor<4xi32>
// CHECK:         %[[N:.*]] = arith.negf %[[K]]#1
// CHECK:         return %[[K]]#0, %[[N]]
func.func @scratch_kept(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %k:3 = flow.dispatch.region -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) attributes {aotc.kernel = "example"} {
    %e = tensor.empty() : tensor<4xf32>
    %i = tensor.empty() : tensor<4xi32>
    flow.return %e, %e, %i : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
  }
  %r:3 = util.optimization_barrier {aotc.kernel_results} %k#0, %k#1, %k#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
  %n = arith.negf %r#1 : tensor<4xf32>
  return %r#0, %n : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @all_used
// CHECK:         %[[K:.*]]:2 = flow.dispatch.region
// CHECK:         %[[KEPT:.*]] = util.optimization_barrier %arg0
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return %[[K]]#0, %[[K]]#1, %[[KEPT]]
func.func @all_used(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %k:2 = flow.dispatch.region -> (tensor<4xf32>, tensor<4xi32>) attributes {aotc.kernel = "example"} {
    %e = tensor.empty() : tensor<4xf32>
    %i = tensor.empty() : tensor<4xi32>
    flow.return %e, %i : tensor<4xf32>, tensor<4xi32>
  }
  %r:2 = util.optimization_barrier {aotc.kernel_results} %k#0, %k#1 : tensor<4xf32>, tensor<4xi32>
  %kept = util.optimization_barrier %a : tensor<4xf32>
  return %r#0, %r#1, %kept : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}
