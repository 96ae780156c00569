// aotc-cleanup is CLEANUP, the pipeline run on every traced module before IREE
// (canonicalize, cse): it folds constants, merges duplicates and drops dead ops.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline=aotc-cleanup | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='canonicalize,cse' | filecheck %s

// CHECK-LABEL: func.func @merges_duplicate_constants
// CHECK-SAME:      (%[[A:.*]]: tensor<4xf32>)
// CHECK:         %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NOT:     arith.constant
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[A]], %[[C]], %[[C]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:        outs(%[[E]] : tensor<4xf32>)
#map = affine_map<(d0) -> (d0)>
func.func @merges_duplicate_constants(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant dense<2.0> : tensor<4xf32>
  %c1 = arith.constant dense<2.0> : tensor<4xf32>
  %empty = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %c0, %c1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.mulf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Two identical elementwise ops on the same operands become one, used twice.
// CHECK-LABEL: func.func @merges_duplicate_ops
// CHECK-SAME:      (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:           arith.subf
// CHECK:         } -> tensor<4xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]], %[[R]] : tensor<4xf32>, tensor<4xf32>
#map = affine_map<(d0) -> (d0)>
func.func @merges_duplicate_ops(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e0 = tensor.empty() : tensor<4xf32>
  %r0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %d = arith.subf %x, %y : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %r1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %d = arith.subf %x, %y : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  return %r0, %r1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Arithmetic on constants folds to a constant; an unused result disappears.
// CHECK-LABEL: func.func @folds_constant_arithmetic
// CHECK-NEXT:    %[[C:.*]] = arith.constant 5 : i32
// CHECK-NEXT:    return %[[C]] : i32
func.func @folds_constant_arithmetic() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %unused = arith.muli %a, %b : i32
  %s = arith.addi %a, %b : i32
  return %s : i32
}
