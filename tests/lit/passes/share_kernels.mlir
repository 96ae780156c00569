// aotc-expose-kernels, cse, aotc-guard-kernels: two copies of a kernel on the same input
// become one, and so does what they feed (down to the next kernel, merged in the same
// walk); a kernel of another input stays. Inputs come back through marked barriers, the
// results of a kernel of several through one marked barrier. A kernel whose body's
// tensor.empty cse would replace by one before it (the second copy) still merges, and
// keeps its own empties (not the one before it, not one for two).
// Running the pipeline twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-expose-kernels,cse,aotc-guard-kernels' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-expose-kernels,cse,aotc-guard-kernels,aotc-expose-kernels,cse,aotc-guard-kernels' | filecheck %s

// CHECK-LABEL: func.func @twice_factored
// CHECK:         %[[IN:.*]] = util.optimization_barrier {aotc.kernel_input} %arg0 : tensor<4x4xf32>
// CHECK:         %[[K:.*]]:2 = flow.dispatch.region
// CHECK-NOT:     aotc.kernel_exposed
// CHECK:         %[[R:.*]]:2 = util.optimization_barrier {aotc.kernel_results} %[[K]]#0, %[[K]]#1
// CHECK:         %[[M:.*]] = linalg.matmul ins(%[[R]]#0, %[[R]]#0
// CHECK:         %[[FED:.*]] = util.optimization_barrier {aotc.kernel_input} %[[M]]
// CHECK:         %[[K2:.*]]:2 = flow.dispatch.region
// CHECK:         %[[R2:.*]]:2 = util.optimization_barrier {aotc.kernel_results} %[[K2]]#0, %[[K2]]#1
// CHECK:         %[[OTHER:.*]] = util.optimization_barrier {aotc.kernel_input} %arg1
// CHECK:         %[[K3:.*]]:2 = flow.dispatch.region
// CHECK:         util.optimization_barrier {aotc.kernel_results} %[[K3]]#0, %[[K3]]#1
// CHECK-NOT:     flow.dispatch.region
// CHECK:         return %[[R2]]#0, %[[R2]]#0, %[[R]]#1, %[[R]]#1
func.func @twice_factored(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %in1 = util.optimization_barrier {aotc.kernel_input} %a : tensor<4x4xf32>
  %k1:2 = flow.dispatch.region -> (tensor<4x4xf32>, tensor<4xi32>) attributes {aotc.kernel = "example"} {
    %e = tensor.empty() : tensor<4x4xf32>
    %i = tensor.empty() : tensor<4xi32>
    %n = arith.negf %in1 : tensor<4x4xf32>
    flow.return %n, %i : tensor<4x4xf32>, tensor<4xi32>
  }
  %r1:2 = util.optimization_barrier {aotc.kernel_results} %k1#0, %k1#1 : tensor<4x4xf32>, tensor<4xi32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%r1#0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%r1#0, %r1#0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %fed1 = util.optimization_barrier {aotc.kernel_input} %m1 : tensor<4x4xf32>
  %j1:2 = flow.dispatch.region -> (tensor<4x4xf32>, tensor<4xi32>) attributes {aotc.kernel = "example"} {
    %i = tensor.empty() : tensor<4xi32>
    %n = arith.negf %fed1 : tensor<4x4xf32>
    flow.return %n, %i : tensor<4x4xf32>, tensor<4xi32>
  }
  %s1:2 = util.optimization_barrier {aotc.kernel_results} %j1#0, %j1#1 : tensor<4x4xf32>, tensor<4xi32>
  // The second copy, after a tensor.empty cse would take for its body's.
  %e0 = tensor.empty() : tensor<4x4xf32>
  %in2 = util.optimization_barrier {aotc.kernel_input} %a : tensor<4x4xf32>
  %k2:2 = flow.dispatch.region -> (tensor<4x4xf32>, tensor<4xi32>) attributes {aotc.kernel = "example"} {
    %e = tensor.empty() : tensor<4x4xf32>
    %i = tensor.empty() : tensor<4xi32>
    %n = arith.negf %in2 : tensor<4x4xf32>
    flow.return %n, %i : tensor<4x4xf32>, tensor<4xi32>
  }
  %r2:2 = util.optimization_barrier {aotc.kernel_results} %k2#0, %k2#1 : tensor<4x4xf32>, tensor<4xi32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%r2#0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%r2#0, %r2#0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %fed2 = util.optimization_barrier {aotc.kernel_input} %m2 : tensor<4x4xf32>
  %j2:2 = flow.dispatch.region -> (tensor<4x4xf32>, tensor<4xi32>) attributes {aotc.kernel = "example"} {
    %i = tensor.empty() : tensor<4xi32>
    %n = arith.negf %fed2 : tensor<4x4xf32>
    flow.return %n, %i : tensor<4x4xf32>, tensor<4xi32>
  }
  %s2:2 = util.optimization_barrier {aotc.kernel_results} %j2#0, %j2#1 : tensor<4x4xf32>, tensor<4xi32>
  // Another matrix: its own kernel.
  %in3 = util.optimization_barrier {aotc.kernel_input} %b : tensor<4x4xf32>
  %k3:2 = flow.dispatch.region -> (tensor<4x4xf32>, tensor<4xi32>) attributes {aotc.kernel = "example"} {
    %i = tensor.empty() : tensor<4xi32>
    %n = arith.negf %in3 : tensor<4x4xf32>
    flow.return %n, %i : tensor<4x4xf32>, tensor<4xi32>
  }
  %r3:2 = util.optimization_barrier {aotc.kernel_results} %k3#0, %k3#1 : tensor<4x4xf32>, tensor<4xi32>
  return %s1#0, %s2#0, %r1#1, %r2#1, %r3#0 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4x4xf32>
}

// A kernel of one result gets no results barrier.
// CHECK-LABEL: func.func @one_result
// CHECK:         %[[IN:.*]] = util.optimization_barrier {aotc.kernel_input} %arg0
// CHECK-NEXT:    %[[K:.*]] = flow.dispatch.region
// CHECK-NEXT:      flow.return %[[IN]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[K]]
func.func @one_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  %in = util.optimization_barrier {aotc.kernel_input} %a : tensor<4xf32>
  %k = flow.dispatch.region -> (tensor<4xf32>) attributes {aotc.kernel = "single"} {
    flow.return %in : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}

// A kernel's two scratch tensors of one type stay two, and neither becomes the equal
// tensor.empty before the region.
// CHECK-LABEL: func.func @two_scratch
// CHECK:         %[[OUTER:.*]] = tensor.empty() : tensor<4xi32>
// CHECK:         flow.dispatch.region
// CHECK-NEXT:      %[[S1:.*]] = tensor.empty() : tensor<4xi32>
// CHECK-NEXT:      %[[S2:.*]] = tensor.empty() : tensor<4xi32>
// CHECK-NEXT:      flow.return %[[S1]], %[[S2]]
// CHECK-NOT:     flow.dispatch.region
// CHECK:         return
func.func @two_scratch(%a: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %outer = tensor.empty() : tensor<4xi32>
  %k1:2 = flow.dispatch.region -> (tensor<4xi32>, tensor<4xi32>) attributes {aotc.kernel = "scratch"} {
    %s = tensor.empty() : tensor<4xi32>
    %t = tensor.empty() : tensor<4xi32>
    flow.return %s, %t : tensor<4xi32>, tensor<4xi32>
  }
  %r1:2 = util.optimization_barrier {aotc.kernel_results} %k1#0, %k1#1 : tensor<4xi32>, tensor<4xi32>
  %k2:2 = flow.dispatch.region -> (tensor<4xi32>, tensor<4xi32>) attributes {aotc.kernel = "scratch"} {
    %s = tensor.empty() : tensor<4xi32>
    %t = tensor.empty() : tensor<4xi32>
    flow.return %s, %t : tensor<4xi32>, tensor<4xi32>
  }
  %r2:2 = util.optimization_barrier {aotc.kernel_results} %k2#0, %k2#1 : tensor<4xi32>, tensor<4xi32>
  return %outer, %r1#0, %r1#1, %r2#0, %r2#1 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}
