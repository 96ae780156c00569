// aotc-separate-returned-updates: a returned op result that an op also updates in place
// (scatter outs, insert_slice dest) is returned through a util.optimization_barrier (IREE
// 3.13 gave both one buffer). Arguments and values without such a use are returned as
// they are. Running the pass twice changes nothing.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-separate-returned-updates' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-separate-returned-updates,aotc-separate-returned-updates' | filecheck %s

// CHECK-LABEL: func.func @scatter_into_returned
// CHECK:         %[[V:.*]] = arith.addi
// CHECK:         %[[S:.*]] = iree_linalg_ext.scatter {{.*}} outs(%[[V]] : tensor<4xi64>)
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[V]] : tensor<4xi64>
// CHECK-NEXT:    return %[[B]], %[[S]] : tensor<4xi64>, tensor<4xi64>
func.func @scatter_into_returned(%x: tensor<4xi64>, %u: tensor<2xi64>, %i: tensor<2x1xi32>) -> (tensor<4xi64>, tensor<4xi64>) {
  %v = arith.addi %x, %x : tensor<4xi64>
  %s = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) ins(%u, %i : tensor<2xi64>, tensor<2x1xi32>) outs(%v : tensor<4xi64>) {
  ^bb0(%new: i64, %old: i64):
    %r = arith.addi %old, %new : i64
    iree_linalg_ext.yield %r : i64
  } -> tensor<4xi64>
  return %v, %s : tensor<4xi64>, tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @insert_into_returned
// CHECK:         %[[V:.*]] = arith.addi
// CHECK:         %[[S:.*]] = tensor.insert_slice %{{.*}} into %[[V]]
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[V]] : tensor<4xi64>
// CHECK-NEXT:    return %[[B]], %[[S]] : tensor<4xi64>, tensor<4xi64>
func.func @insert_into_returned(%x: tensor<4xi64>, %u: tensor<2xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %v = arith.addi %x, %x : tensor<4xi64>
  %s = tensor.insert_slice %u into %v[1] [2] [1] : tensor<2xi64> into tensor<4xi64>
  return %v, %s : tensor<4xi64>, tensor<4xi64>
}

// -----

// A returned value read by an elementwise op whose result is updated in place: IREE may
// fold the op to the value itself (x ^ false), so it is returned through a barrier too.
// CHECK-LABEL: func.func @insert_into_an_op_of_returned
// CHECK:         %[[V:.*]] = arith.addi
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:         tensor.insert_slice %{{.*}} into %[[G]]
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[V]] : tensor<4xi64>
// CHECK-NEXT:    return %[[B]], %{{.*}} : tensor<4xi64>, tensor<4xi64>
#id = affine_map<(d0) -> (d0)>
func.func @insert_into_an_op_of_returned(%x: tensor<4xi64>, %u: tensor<2xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %v = arith.addi %x, %x : tensor<4xi64>
  %e = tensor.empty() : tensor<4xi64>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%a: i64, %o: i64):
    %c0 = arith.constant 0 : i64
    %r = arith.xori %a, %c0 : i64
    linalg.yield %r : i64
  } -> tensor<4xi64>
  %s = tensor.insert_slice %u into %g[1] [2] [1] : tensor<2xi64> into tensor<4xi64>
  return %v, %s : tensor<4xi64>, tensor<4xi64>
}

// -----

// An argument updated in place, and a value only read: returned unchanged.
// CHECK-LABEL: func.func @argument_and_read_only
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return %arg0, %{{.*}}, %{{.*}} :
func.func @argument_and_read_only(%x: tensor<4xi64>, %u: tensor<2xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %s = tensor.insert_slice %u into %x[1] [2] [1] : tensor<2xi64> into tensor<4xi64>
  %v = arith.addi %x, %x : tensor<4xi64>
  return %x, %s, %v : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}
