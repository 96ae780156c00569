// aotc-split-bool-broadcasts: where IREE's fusion and folds make a generic yield a 0-d
// bool input beside its zero extension to i8 (the comparison `extui(b) != 0` folds back
// to `b`), every generic reading a 0-d bool has its results read through a barrier. A
// bool broadcast along an axis and a comparison of a computed value stay. Running it
// twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-split-bool-broadcasts' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-split-bool-broadcasts,aotc-split-bool-broadcasts' | filecheck %s

// CHECK-LABEL: func.func @scalar
// CHECK:         %[[V:.*]] = linalg.generic
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[V]] : tensor<4x4xi8>
// CHECK-NOT:     util.optimization_barrier
// CHECK:         linalg.generic {{.*}} ins(%[[B]] : tensor<4x4xi8>)
#point = affine_map<(d0, d1) -> ()>
#all = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @scalar(%b: tensor<i1>) -> (tensor<4x4xi1>, tensor<4x4xi8>) {
  %c0 = arith.constant 0 : i8
  %e1 = tensor.empty() : tensor<4x4xi1>
  %e8 = tensor.empty() : tensor<4x4xi8>
  %v = linalg.generic {indexing_maps = [#point, #all], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<i1>) outs(%e8 : tensor<4x4xi8>) {
  ^bb0(%in: i1, %o: i8):
    %w = arith.extui %in : i1 to i8
    linalg.yield %w : i8
  } -> tensor<4x4xi8>
  %ne = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<4x4xi8>) outs(%e1 : tensor<4x4xi1>) {
  ^bb0(%in: i8, %o: i1):
    %c = arith.cmpi ne, %in, %c0 : i8
    linalg.yield %c : i1
  } -> tensor<4x4xi1>
  return %ne, %v : tensor<4x4xi1>, tensor<4x4xi8>
}

// CHECK-LABEL: func.func @rows
// CHECK-NOT:     util.optimization_barrier
func.func @rows(%b: tensor<4xi1>, %x: tensor<4x4xf32>) -> (tensor<4x4xi1>, tensor<4x4xi8>, tensor<4x4xi1>, tensor<4x4xi8>) {
  %c0 = arith.constant 0 : i8
  %f0 = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x4xi1>
  %e8 = tensor.empty() : tensor<4x4xi8>
  %v = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4xi1>) outs(%e8 : tensor<4x4xi8>) {
  ^bb0(%in: i1, %o: i8):
    %w = arith.extui %in : i1 to i8
    linalg.yield %w : i8
  } -> tensor<4x4xi8>
  %ne = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<4x4xi8>) outs(%e1 : tensor<4x4xi1>) {
  ^bb0(%in: i8, %o: i1):
    %c = arith.cmpi ne, %in, %c0 : i8
    linalg.yield %c : i1
  } -> tensor<4x4xi1>
  %gt = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e1 : tensor<4x4xi1>) {
  ^bb0(%in: f32, %o: i1):
    %c = arith.cmpf ogt, %in, %f0 : f32
    linalg.yield %c : i1
  } -> tensor<4x4xi1>
  %gt8 = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel"]} ins(%gt : tensor<4x4xi1>) outs(%e8 : tensor<4x4xi8>) {
  ^bb0(%in: i1, %o: i8):
    %w = arith.extui %in : i1 to i8
    linalg.yield %w : i8
  } -> tensor<4x4xi8>
  return %ne, %v, %gt, %gt8 : tensor<4x4xi1>, tensor<4x4xi8>, tensor<4x4xi1>, tensor<4x4xi8>
}
