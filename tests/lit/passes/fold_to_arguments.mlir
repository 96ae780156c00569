// aotc-fold-to-arguments replaces a value by the argument IREE's fusion and folds make it
// (select(x != x, 0, x) on integers is x, so is x & x), whether returned or read by
// another op; a value that stays computed stays. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-fold-to-arguments' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-fold-to-arguments,aotc-fold-to-arguments' | filecheck %s

// CHECK-LABEL: func.func @folds_to_x
// CHECK:         %[[TWICE:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4xi64>)
// CHECK:         return %arg0, %[[TWICE]] : tensor<4xi64>, tensor<4xi64>
#v = affine_map<(d0) -> (d0)>
func.func @folds_to_x(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %c0 = arith.constant 0 : i64
  %c2 = arith.constant 2 : i64
  %e = tensor.empty() : tensor<4xi64>
  %same = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%x, %x : tensor<4xi64>, tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%a: i64, %b: i64, %o: i64):
    %ne = arith.cmpi ne, %a, %b : i64
    %r = arith.select %ne, %c0, %b : i64
    linalg.yield %r : i64
  } -> tensor<4xi64>
  %twice = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%x : tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%a: i64, %o: i64):
    %r = arith.muli %a, %c2 : i64
    linalg.yield %r : i64
  } -> tensor<4xi64>
  return %same, %twice : tensor<4xi64>, tensor<4xi64>
}

// CHECK-LABEL: func.func @read_as_x
// CHECK:         %[[ACOS:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4xi32>)
// CHECK:         %[[MOD:.*]] = linalg.generic {{.*}} ins(%arg0, %arg0 : tensor<4xi32>, tensor<4xi32>)
// CHECK:         return %[[ACOS]], %[[MOD]]
func.func @read_as_x(%x: tensor<4xi32>) -> (tensor<4xf64>, tensor<4xi32>) {
  %e = tensor.empty() : tensor<4xi32>
  %ef = tensor.empty() : tensor<4xf64>
  %and = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%x, %x : tensor<4xi32>, tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %r = arith.andi %a, %b : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  %acos = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%and : tensor<4xi32>) outs(%ef : tensor<4xf64>) {
  ^bb0(%a: i32, %o: f64):
    %f = arith.uitofp %a : i32 to f64
    %r = math.acos %f : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  %mod = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%and, %and : tensor<4xi32>, tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %r = arith.remui %a, %b : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  return %acos, %mod : tensor<4xf64>, tensor<4xi32>
}
