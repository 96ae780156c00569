// aotc-keep-undonated-arguments: IREE 3.13 performs an insert_slice or a scatter in the
// storage of the argument it updates when nothing reads that argument afterwards, the
// caller's array. For each argument that is not donated (no iree.abi.output) and that
// such an update writes in place, the pass adds that read: a util.optimization_barrier
// over a result computed from the update and the argument, just before the return, so
// that IREE updates a copy. Running the pass again changes nothing.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-keep-undonated-arguments' \
// RUN:   | filecheck %s
// RUN: %aotc-opt %s --split-input-file \
// RUN:   --pass-pipeline='aotc-keep-undonated-arguments,aotc-keep-undonated-arguments' \
// RUN:   | filecheck %s

// An insert_slice and a scatter into arguments: each result keeps its argument.
// CHECK-LABEL: func.func @updates
// CHECK-SAME:      (%[[X:[^:]*]]: tensor<8x4xf32>, %[[Y:[^:]*]]: tensor<8x4xf32>,
// CHECK:         %[[R:.*]] = tensor.insert_slice %{{.*}} into %[[X]][2, 0] [2, 4] [1, 1]
// CHECK:         %[[S:.*]] = iree_linalg_ext.scatter {{.*}} outs(%[[Y]] : tensor<8x4xf32>)
// CHECK:         %[[KX:.*]]:2 = util.optimization_barrier %[[R]], %[[X]]
// CHECK-NEXT:    %[[KY:.*]]:2 = util.optimization_barrier %[[S]], %[[Y]]
// CHECK-NEXT:    return %[[KX]]#0, %[[KY]]#0
// CHECK-NOT:     util.optimization_barrier
func.func @updates(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>, %u: tensor<2x4xf32>)
    -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %r = tensor.insert_slice %u into %x[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
  %idx = arith.constant dense<[[1], [3]]> : tensor<2x1xi32>
  %s = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true)
      ins(%u, %idx : tensor<2x4xf32>, tensor<2x1xi32>) outs(%y : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    iree_linalg_ext.yield %new : f32
  } -> tensor<8x4xf32>
  return %r, %s : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// An update of a reshape of the argument is performed in the argument's storage too;
// one result computed from the updates of two arguments keeps both in one barrier.
// CHECK-LABEL: func.func @reshaped_and_shared
// CHECK-SAME:      (%[[X:[^:]*]]: tensor<32xf32>, %[[Y:[^:]*]]: tensor<8x4xf32>,
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[X]]
// CHECK:         tensor.insert_slice %{{.*}} into %[[V]][0, 0] [2, 4] [1, 1]
// CHECK:         tensor.insert_slice %{{.*}} into %[[Y]][4, 0] [2, 4] [1, 1]
// CHECK:         %[[C:.*]] = tensor.concat
// CHECK-NEXT:    %[[K:.*]]:3 = util.optimization_barrier %[[C]], %[[X]], %[[Y]]
// CHECK-NEXT:    return %[[K]]#0
func.func @reshaped_and_shared(%x: tensor<32xf32>, %y: tensor<8x4xf32>, %u: tensor<2x4xf32>)
    -> tensor<16x4xf32> {
  %v = tensor.expand_shape %x [[0, 1]] output_shape [8, 4] : tensor<32xf32> into tensor<8x4xf32>
  %a = tensor.insert_slice %u into %v[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
  %b = tensor.insert_slice %u into %y[4, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
  %c = tensor.concat dim(0) %a, %b : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %c : tensor<16x4xf32>
}

// -----

// Nothing to keep: the donated %a is meant to be written in place; %x is only read by an
// elementwise op; the update of %y feeds only the result written into %a's buffer (a
// temporary copied there, which no barrier may take).
// CHECK-LABEL: func.func @nothing_to_keep
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
func.func @nothing_to_keep(%a: tensor<8x4xf32> {iree.abi.output = 0 : index},
                           %x: tensor<8x4xf32>, %y: tensor<8x4xf32>, %u: tensor<2x4xf32>)
    -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %r = tensor.insert_slice %u into %a[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r, %x : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  %s = tensor.insert_slice %u into %y[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
  %t = tensor.insert_slice %s into %n[0, 0] [8, 4] [1, 1] : tensor<8x4xf32> into tensor<8x4xf32>
  return %t, %x : tensor<8x4xf32>, tensor<8x4xf32>
}
