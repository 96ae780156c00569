// aotc-expand-float-minmax rewrites float min/max into compares and selects with numpy's
// NaN rules (for CPUs without scalar min/max instructions: armv7); other ops pass through.
// Running it twice changes nothing.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-expand-float-minmax' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-expand-float-minmax,aotc-expand-float-minmax' | filecheck %s

// np.maximum: NaN if either operand is NaN (a NaN rhs loses the ordered compare).
// CHECK-LABEL: func.func @maximum
// CHECK-SAME:      (%[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK-NEXT:    %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[PICK:.*]] = arith.select %[[GT]], %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[NAN]], %[[A]], %[[PICK]] : f32
// CHECK-NEXT:    return %[[R]] : f32
func.func @maximum(%a: f32, %b: f32) -> f32 {
  %r = arith.maximumf %a, %b : f32
  return %r : f32
}

// -----

// np.minimum on vectors: the same with olt.
// CHECK-LABEL: func.func @minimum_vector
// CHECK-SAME:      (%[[A:.*]]: vector<4xf32>, %[[B:.*]]: vector<4xf32>)
// CHECK-NEXT:    %[[LT:.*]] = arith.cmpf olt, %[[A]], %[[B]] : vector<4xf32>
// CHECK-NEXT:    %[[PICK:.*]] = arith.select %[[LT]], %[[A]], %[[B]] : vector<4xi1>, vector<4xf32>
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : vector<4xf32>
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[NAN]], %[[A]], %[[PICK]] : vector<4xi1>, vector<4xf32>
// CHECK-NEXT:    return %[[R]] : vector<4xf32>
func.func @minimum_vector(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<4xf32> {
  %r = arith.minimumf %a, %b : vector<4xf32>
  return %r : vector<4xf32>
}

// -----

// np.fmax: a NaN operand loses (a NaN rhs is replaced by lhs).
// CHECK-LABEL: func.func @maxnum
// CHECK-SAME:      (%[[A:.*]]: f64, %[[B:.*]]: f64)
// CHECK-NEXT:    %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f64
// CHECK-NEXT:    %[[PICK:.*]] = arith.select %[[GT]], %[[A]], %[[B]] : f64
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[B]], %[[B]] : f64
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[NAN]], %[[A]], %[[PICK]] : f64
// CHECK-NEXT:    return %[[R]] : f64
func.func @maxnum(%a: f64, %b: f64) -> f64 {
  %r = arith.maxnumf %a, %b : f64
  return %r : f64
}

// -----

// np.fmin inside a reduction body; integer max and other float ops are untouched.
// CHECK-LABEL: func.func @in_a_reduction
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpf olt, %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:      %[[PICK:.*]] = arith.select %[[LT]], %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:      %[[NAN:.*]] = arith.cmpf uno, %[[ACC]], %[[ACC]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[NAN]], %[[IN]], %[[PICK]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[R]], %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         arith.maxsi
// CHECK-NOT:     arith.minnumf
#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0) -> ()>
func.func @in_a_reduction(%x: tensor<8xf32>, %init: tensor<f32>, %i: i32, %j: i32) -> (tensor<f32>, i32) {
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.minnumf %in, %acc : f32
    %s = arith.addf %m, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %k = arith.maxsi %i, %j : i32
  return %r, %k : tensor<f32>, i32
}
