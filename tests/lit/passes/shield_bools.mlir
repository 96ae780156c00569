// aotc-shield-constant-bools puts an i1 input of a reduction that no function argument
// reaches through a util.optimization_barrier; bools computed from an argument and
// non-bool constants stay as they are. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-shield-constant-bools' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-shield-constant-bools,aotc-shield-constant-bools' | filecheck %s

// CHECK-LABEL: func.func @sums
// CHECK:         %[[FILL:.*]] = linalg.fill
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[FILL]] : tensor<8xi1>
// CHECK-NOT:     util.optimization_barrier
// CHECK:         linalg.generic {{.*}} ins(%[[B]] : tensor<8xi1>)
// CHECK:         linalg.generic {{.*}} ins(%arg0 : tensor<8xi1>)
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @sums(%b: tensor<8xi1>) -> (tensor<i64>, tensor<i64>) {
  %t = arith.constant true
  %z = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8xi1>
  %ones = linalg.fill ins(%t : i1) outs(%e : tensor<8xi1>) -> tensor<8xi1>
  %es = tensor.empty() : tensor<i64>
  %acc = linalg.fill ins(%z : i64) outs(%es : tensor<i64>) -> tensor<i64>
  %c = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%ones : tensor<8xi1>) outs(%acc : tensor<i64>) {
  ^bb0(%in: i1, %o: i64):
    %w = arith.extui %in : i1 to i64
    %r = arith.addi %w, %o : i64
    linalg.yield %r : i64
  } -> tensor<i64>
  %d = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%b : tensor<8xi1>) outs(%acc : tensor<i64>) {
  ^bb0(%in: i1, %o: i64):
    %w = arith.extui %in : i1 to i64
    %r = arith.addi %w, %o : i64
    linalg.yield %r : i64
  } -> tensor<i64>
  return %c, %d : tensor<i64>, tensor<i64>
}
