// aotc-drop-carry-barriers drops a marked carry barrier over an update that is also
// returned (through a reshape too); a carry barrier over an update that is not returned,
// and an unmarked barrier, stay. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-drop-carry-barriers' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-drop-carry-barriers,aotc-drop-carry-barriers' | filecheck %s

// CHECK-LABEL: func.func @carries
// CHECK:         %[[U:.*]] = tensor.insert_slice
// CHECK:         %[[V:.*]] = tensor.insert_slice
// CHECK:         %[[B:.*]] = util.optimization_barrier {aotc.carry_barrier} %[[V]]
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[U]], %{{.*}} = %[[B]])
// CHECK:         return %[[U]],
func.func @carries(%x: tensor<4xf32>, %y: tensor<4xf32>, %r: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %u = tensor.insert_slice %r into %x[1] [1] [1] : tensor<1xf32> into tensor<4xf32>
  %v = tensor.insert_slice %r into %y[2] [1] [1] : tensor<1xf32> into tensor<4xf32>
  %bu = "util.optimization_barrier"(%u) {aotc.carry_barrier} : (tensor<4xf32>) -> tensor<4xf32>
  %bv = "util.optimization_barrier"(%v) {aotc.carry_barrier} : (tensor<4xf32>) -> tensor<4xf32>
  %l:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %bu, %b = %bv) -> (tensor<4xf32>, tensor<4xf32>) {
    scf.yield %b, %a : tensor<4xf32>, tensor<4xf32>
  }
  return %u, %l#0, %l#1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A returned update also read together with the loop's result (through `all`) keeps its
// barrier: without it IREE 3.13 fails with "circular dependency" (fuzz program 9700).
// CHECK-LABEL: func.func @read_with_the_loop
// CHECK:         %[[U:.*]] = tensor.insert_slice
// CHECK:         %[[B:.*]] = util.optimization_barrier {aotc.carry_barrier} %[[U]]
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[B]])
func.func @read_with_the_loop(%x: tensor<4xf32>, %r: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %u = tensor.insert_slice %r into %x[1] [1] [1] : tensor<1xf32> into tensor<4xf32>
  %bu = "util.optimization_barrier"(%u) {aotc.carry_barrier} : (tensor<4xf32>) -> tensor<4xf32>
  %l = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %bu) -> (tensor<4xf32>) {
    %d = arith.addf %a, %a : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  }
  %s = arith.addf %l, %u : tensor<4xf32>
  return %u, %s : tensor<4xf32>, tensor<4xf32>
}

// So does one whose update and loop result are each read by another op (fuzz 95552:
// argmax of the update, roll of the loop's result).
// CHECK-LABEL: func.func @read_beside_the_loop
// CHECK:         %[[U:.*]] = tensor.insert_slice
// CHECK:         %[[B:.*]] = util.optimization_barrier {aotc.carry_barrier} %[[U]]
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[B]])
func.func @read_beside_the_loop(%x: tensor<4xf32>, %r: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %u = tensor.insert_slice %r into %x[1] [1] [1] : tensor<1xf32> into tensor<4xf32>
  %bu = "util.optimization_barrier"(%u) {aotc.carry_barrier} : (tensor<4xf32>) -> tensor<4xf32>
  %l = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %bu) -> (tensor<4xf32>) {
    %d = arith.addf %a, %a : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  }
  %s = arith.mulf %l, %l : tensor<4xf32>
  %t = arith.negf %u : tensor<4xf32>
  return %u, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A carry barrier over an argument (the cleanup folded its computed carry away) goes.
// CHECK-LABEL: func.func @over_an_argument
// CHECK-NOT:     util.optimization_barrier
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %arg0)
func.func @over_an_argument(%x: tensor<4xi32>) -> tensor<4xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %b = "util.optimization_barrier"(%x) {aotc.carry_barrier} : (tensor<4xi32>) -> tensor<4xi32>
  %l = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %b) -> (tensor<4xi32>) {
    %d = arith.addi %a, %a : tensor<4xi32>
    scf.yield %d : tensor<4xi32>
  }
  return %l : tensor<4xi32>
}
