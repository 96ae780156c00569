// aotc-fold-empty-loops replaces the results of a structured op that iterates zero times
// by its outs: a reduction over a loop of range 0 is its init, a matmul with an inner
// dimension of 0 is its accumulator; a generic whose loops all have a range stays.
// Running it twice changes nothing more.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-fold-empty-loops' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-fold-empty-loops,aotc-fold-empty-loops' | filecheck %s

// CHECK-LABEL: func.func @empty
// CHECK-SAME:      (%[[X:.*]]: tensor<3x0xf32>, %[[A:.*]]: tensor<3x0xf32>, %[[B:.*]]: tensor<0x5xf32>, %[[Y:.*]]: tensor<3x4xf32>)
// CHECK:         %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<3xf32>
// CHECK:         %[[ACC:.*]] = linalg.fill {{.*}} -> tensor<3x5xf32>
// CHECK:         %[[KEPT:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<3x4xf32>)
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     linalg.matmul
// CHECK:         return %[[ZEROS]], %[[ACC]], %[[KEPT]]
#xy = affine_map<(d0, d1) -> (d0, d1)>
#x = affine_map<(d0, d1) -> (d0)>
func.func @empty(%x: tensor<3x0xf32>, %a: tensor<3x0xf32>, %b: tensor<0x5xf32>, %y: tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3x5xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<3x0xf32>) outs(%zeros : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %e2 = tensor.empty() : tensor<3x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x5xf32>) -> tensor<3x5xf32>
  %prod = linalg.matmul ins(%a, %b : tensor<3x0xf32>, tensor<0x5xf32>) outs(%acc : tensor<3x5xf32>) -> tensor<3x5xf32>
  %kept = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<3x4xf32>) outs(%zeros : tensor<3xf32>) {
  ^bb0(%in: f32, %acc2: f32):
    %v = arith.addf %in, %acc2 : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %sum, %prod, %kept : tensor<3xf32>, tensor<3x5xf32>, tensor<3xf32>
}
