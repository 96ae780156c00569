// aotc-fold-self-comparisons replaces an integer comparison of a tensor with itself (the
// same value read through the same map) by a dense i1 constant; a comparison of two
// values, of one value read two ways, and a float comparison stay. Running it twice
// changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-fold-self-comparisons' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-fold-self-comparisons,aotc-fold-self-comparisons' | filecheck %s

// CHECK-LABEL: func.func @self
// CHECK-DAG:     %[[T:.*]] = arith.constant dense<true> : tensor<8xi1>
// CHECK-DAG:     %[[F:.*]] = arith.constant dense<false> : tensor<8xi1>
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[T]], %[[F]],
#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (7 - d0)>
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
