// aotc-fold-returned-arguments returns the argument itself where IREE's fusion and folds
// make a returned value one (select(x != x, 0, x) on integers is x); a value that stays
// computed is returned as it is. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-fold-returned-arguments' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-fold-returned-arguments,aotc-fold-returned-arguments' | filecheck %s

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
