// aotc-shield-strided-slices: a slice with a stride other than 1 of a generic IREE's
// fusion leaves bit-extending (here a bool widened to i64, alone and clipped in the same
// generic) reads it through a barrier; a unit-stride slice and a
// slice of a generic that keeps its width stay as they are. Running it twice changes
// nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-shield-strided-slices' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-shield-strided-slices,aotc-shield-strided-slices' | filecheck %s

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @widened
// CHECK:         %[[W:.*]] = linalg.generic
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[W]]
// CHECK-NEXT:    tensor.extract_slice %[[B]][0] [4] [2]
// CHECK-NOT:     util.optimization_barrier
// CHECK:         tensor.extract_slice %[[W]][0] [4] [1]
func.func @widened(%x: tensor<8xi1>) -> (tensor<4xi64>, tensor<4xi64>) {
  %e = tensor.empty() : tensor<8xi64>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xi1>) outs(%e : tensor<8xi64>) {
  ^bb0(%in: i1, %out: i64):
    %v = arith.extui %in : i1 to i64
    linalg.yield %v : i64
  } -> tensor<8xi64>
  %strided = tensor.extract_slice %w[0] [4] [2] : tensor<8xi64> to tensor<4xi64>
  %unit = tensor.extract_slice %w[0] [4] [1] : tensor<8xi64> to tensor<4xi64>
  return %strided, %unit : tensor<4xi64>, tensor<4xi64>
}

// CHECK-LABEL: func.func @widened_and_clipped
// CHECK:         %[[C:.*]] = linalg.generic
// CHECK:           arith.maxsi
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[C]]
// CHECK-NEXT:    tensor.extract_slice %[[B]][1] [3] [2]
func.func @widened_and_clipped(%x: tensor<8xi1>) -> tensor<3xi64> {
  %e = tensor.empty() : tensor<8xi64>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xi1>) outs(%e : tensor<8xi64>) {
  ^bb0(%in: i1, %out: i64):
    %lo = arith.constant -2 : i64
    %w = arith.extui %in : i1 to i64
    %v = arith.maxsi %w, %lo : i64
    linalg.yield %v : i64
  } -> tensor<8xi64>
  %s = tensor.extract_slice %c[1] [3] [2] : tensor<8xi64> to tensor<3xi64>
  return %s : tensor<3xi64>
}

// CHECK-LABEL: func.func @same_width
// CHECK-NOT:     util.optimization_barrier
func.func @same_width(%x: tensor<8xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %s = tensor.extract_slice %d[0] [4] [2] : tensor<8xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}
