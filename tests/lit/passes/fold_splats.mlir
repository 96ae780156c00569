// aotc-fold-splats replaces a bool result that IREE's fusion and folds compute
// from no input by a dense i1 constant: an integer comparison of a tensor with itself
// (the same value read through the same map), with a broadcast of itself, or of x * 0
// with 0. A comparison of two values, of one value read two ways, and a float
// comparison stay. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-fold-splats' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-fold-splats,aotc-fold-splats' | filecheck %s

// CHECK-LABEL: func.func @self
// CHECK-DAG:     %[[T:.*]] = arith.constant dense<true> : tensor<8xi1>
// CHECK-DAG:     %[[F:.*]] = arith.constant dense<false> : tensor<8xi1>
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[T]], %[[F]],
#id = affine_map<(d0) -> (d0)>
#row = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> (d0, d1)>
#rev = affine_map<(d0) -> (7 - d0)>
#point = affine_map<() -> ()>
func.func @self(%x: tensor<8xi16>, %y: tensor<8xi16>, %z: tensor<8xf32>) -> (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>) {
  %e = tensor.empty() : tensor<8xi1>
  %le = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %x : tensor<8xi16>, tensor<8xi16>) outs(%e : tensor<8xi1>) {
  ^bb0(%a: i16, %b: i16, %o: i1):
    %c = arith.cmpi sle, %a, %b : i16
    linalg.yield %c : i1
  } -> tensor<8xi1>
  %lt = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %x : tensor<8xi16>, tensor<8xi16>) outs(%e : tensor<8xi1>) {
  ^bb0(%a: i16, %b: i16, %o: i1):
    %c = arith.cmpi ult, %a, %b : i16
    linalg.yield %c : i1
  } -> tensor<8xi1>
  %two = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %y : tensor<8xi16>, tensor<8xi16>) outs(%e : tensor<8xi1>) {
  ^bb0(%a: i16, %b: i16, %o: i1):
    %c = arith.cmpi eq, %a, %b : i16
    linalg.yield %c : i1
  } -> tensor<8xi1>
  %flipped = linalg.generic {indexing_maps = [#id, #rev, #id], iterator_types = ["parallel"]} ins(%x, %x : tensor<8xi16>, tensor<8xi16>) outs(%e : tensor<8xi1>) {
  ^bb0(%a: i16, %b: i16, %o: i1):
    %c = arith.cmpi eq, %a, %b : i16
    linalg.yield %c : i1
  } -> tensor<8xi1>
  %nan = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%z, %z : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xi1>) {
  ^bb0(%a: f32, %b: f32, %o: i1):
    %c = arith.cmpf oeq, %a, %b : f32
    linalg.yield %c : i1
  } -> tensor<8xi1>
  return %le, %lt, %two, %flipped, %nan : tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>
}

// CHECK-LABEL: func.func @folded
// CHECK:         %[[B:.*]] = linalg.generic
// CHECK-DAG:     %[[T:.*]] = arith.constant dense<true> : tensor<3x8xi1>
// CHECK-DAG:     %[[Z:.*]] = arith.constant dense<true> : tensor<8xi1>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[T]], %[[Z]], %[[B]]
func.func @folded(%x: tensor<8xi32>) -> (tensor<3x8xi1>, tensor<8xi1>, tensor<3x8xi32>) {
  %c0 = arith.constant 0 : i32
  %eb = tensor.empty() : tensor<3x8xi32>
  %b = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8xi32>) outs(%eb : tensor<3x8xi32>) {
  ^bb0(%a: i32, %o: i32):
    linalg.yield %a : i32
  } -> tensor<3x8xi32>
  %e = tensor.empty() : tensor<3x8xi1>
  %eq = linalg.generic {indexing_maps = [#row, #all, #all], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<8xi32>, tensor<3x8xi32>) outs(%e : tensor<3x8xi1>) {
  ^bb0(%a: i32, %c: i32, %o: i1):
    %r = arith.cmpi eq, %a, %c : i32
    linalg.yield %r : i1
  } -> tensor<3x8xi1>
  %e8 = tensor.empty() : tensor<8xi1>
  %zero = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xi32>) outs(%e8 : tensor<8xi1>) {
  ^bb0(%a: i32, %o: i1):
    %m = arith.muli %a, %c0 : i32
    %r = arith.cmpi eq, %m, %c0 : i32
    linalg.yield %r : i1
  } -> tensor<8xi1>
  return %eq, %zero, %b : tensor<3x8xi1>, tensor<8xi1>, tensor<3x8xi32>
}

// A comparison of x[0] of a (1, 3) tensor with x: the same values once IREE drops the
// unit dimension (the probe drops it too), so a constant of the (1, 3) type.
// CHECK-LABEL: func.func @unit
// CHECK:         %[[T:.*]] = arith.constant dense<true> : tensor<1x3xi1>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[T]]
func.func @unit(%x: tensor<1x3xi16>) -> tensor<1x3xi1> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<1x3xi16> into tensor<3xi16>
  %e = tensor.empty() : tensor<1x3xi1>
  %ge = linalg.generic {indexing_maps = [#row, #all, #all], iterator_types = ["parallel", "parallel"]} ins(%c, %x : tensor<3xi16>, tensor<1x3xi16>) outs(%e : tensor<1x3xi1>) {
  ^bb0(%a: i16, %b: i16, %o: i1):
    %r = arith.cmpi sge, %a, %b : i16
    linalg.yield %r : i1
  } -> tensor<1x3xi1>
  return %ge : tensor<1x3xi1>
}

// (x != 0) xor (x != 0) of a 0-d x read twice: the fused body repeats the comparison,
// which the probe merges as IREE does, so the result is a constant.
// CHECK-LABEL: func.func @repeated
// CHECK:         %[[F:.*]] = arith.constant dense<false> : tensor<i1>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]
func.func @repeated(%x: tensor<i64>) -> tensor<i1> {
  %z = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i1>
  %r = linalg.generic {indexing_maps = [#point, #point, #point], iterator_types = []} ins(%x, %x : tensor<i64>, tensor<i64>) outs(%e : tensor<i1>) {
  ^bb0(%a: i64, %b: i64, %o: i1):
    %p = arith.cmpi ne, %a, %z : i64
    %q = arith.cmpi ne, %b, %z : i64
    %s = arith.xori %p, %q : i1
    linalg.yield %s : i1
  } -> tensor<i1>
  return %r : tensor<i1>
}

// A value fused into its consumer's multi-result generic has no counterpart of its own:
// returned, it is found at the return (tanh of a value computed from nothing is not
// folded; isnan of it is false once fused: both are returned, the isnan as a constant).
// CHECK-LABEL: func.func @fused_and_returned
// CHECK:         %[[F:.*]] = arith.constant dense<false> : tensor<i1>
// CHECK:         return %{{.*}}, %[[F]]
func.func @fused_and_returned(%x: tensor<i64>) -> (tensor<f32>, tensor<i1>) {
  %z = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i1>
  %ef = tensor.empty() : tensor<f32>
  %b = linalg.generic {indexing_maps = [#point, #point, #point], iterator_types = []} ins(%x, %x : tensor<i64>, tensor<i64>) outs(%e : tensor<i1>) {
  ^bb0(%a: i64, %c: i64, %o: i1):
    %p = arith.cmpi ne, %a, %z : i64
    %q = arith.cmpi ne, %c, %z : i64
    %s = arith.xori %p, %q : i1
    linalg.yield %s : i1
  } -> tensor<i1>
  %t = linalg.generic {indexing_maps = [#point, #point], iterator_types = []} ins(%b : tensor<i1>) outs(%ef : tensor<f32>) {
  ^bb0(%a: i1, %o: f32):
    %f = arith.uitofp %a : i1 to f32
    %h = math.tanh %f : f32
    linalg.yield %h : f32
  } -> tensor<f32>
  %n = linalg.generic {indexing_maps = [#point, #point], iterator_types = []} ins(%t : tensor<f32>) outs(%e : tensor<i1>) {
  ^bb0(%a: f32, %o: i1):
    %u = arith.cmpf uno, %a, %a : f32
    linalg.yield %u : i1
  } -> tensor<i1>
  return %t, %n : tensor<f32>, tensor<i1>
}
