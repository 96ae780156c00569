// aotc-copy-shared-destinations gives an update whose destination is also used otherwise
// a copy made at run time (select(b, int(b), v) per element in a generic, b a false behind
// a barrier), so that IREE never clones it: a constant updated and returned, a computed
// value updated twice. A destination with no other use and an argument's update stay.
// Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-copy-shared-destinations' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-copy-shared-destinations,aotc-copy-shared-destinations' | filecheck %s

#v = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @shared
// CHECK:         %[[C:.*]] = arith.constant dense<1> : tensor<3x4xi64>
// CHECK:         %[[B:.*]] = util.optimization_barrier %false : i1
// CHECK:         %[[ALT:.*]] = arith.extui %[[B]] : i1 to i64
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<3x4xi64>)
// CHECK:           arith.select %[[B]], %[[ALT]], %in : i64
// CHECK:         %[[U:.*]] = tensor.insert_slice %arg0 into %[[COPY]][1, 0]
// CHECK:         %[[D:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<3x4xf32>)
// CHECK:         %[[C1:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<3x4xf32>)
// CHECK:         tensor.insert_slice %arg2 into %[[C1]][0, 0]
// CHECK:         %[[C2:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<3x4xf32>)
// CHECK:         tensor.insert_slice %arg2 into %[[C2]][2, 0]
// CHECK:         tensor.insert_slice %arg2 into %arg1[1, 0]
// CHECK:         return %[[C]], %[[U]],
func.func @shared(%y: tensor<1x4xi64>, %x: tensor<3x4xf32>, %z: tensor<1x4xf32>) -> (tensor<3x4xi64>, tensor<3x4xi64>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %c = arith.constant dense<1> : tensor<3x4xi64>
  %u = tensor.insert_slice %y into %c[1, 0] [1, 4] [1, 1] : tensor<1x4xi64> into tensor<3x4xi64>
  %e = tensor.empty() : tensor<3x4xf32>
  %d = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<3x4xf32>
  %d1 = tensor.insert_slice %z into %d[0, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<3x4xf32>
  %d2 = tensor.insert_slice %z into %d[2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<3x4xf32>
  %a1 = tensor.insert_slice %z into %x[1, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<3x4xf32>
  return %c, %u, %d1, %d2, %a1 : tensor<3x4xi64>, tensor<3x4xi64>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// CHECK-LABEL: func.func @alone
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
func.func @alone(%y: tensor<1x4xi64>) -> tensor<3x4xi64> {
  %c = arith.constant dense<1> : tensor<3x4xi64>
  %u = tensor.insert_slice %y into %c[1, 0] [1, 4] [1, 1] : tensor<1x4xi64> into tensor<3x4xi64>
  return %u : tensor<3x4xi64>
}

// A destination read only by the update's own source (x.at[2].add(u) reads x[2]) keeps
// no copy: IREE orders that read first, and with the copy the update was lost.
// CHECK-LABEL: func.func @read_by_the_update
// CHECK-NOT:     arith.select
// CHECK:         tensor.insert_slice %{{.*}} into %[[B:.*]][2, 0]
func.func @read_by_the_update(%x: tensor<3xf64>, %u: tensor<1x3xf64>) -> tensor<3x3xf64> {
  %e = tensor.empty() : tensor<3x3xf64>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, #v], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3xf64>) outs(%e : tensor<3x3xf64>) {
  ^bb0(%in: f64, %o: f64):
    linalg.yield %in : f64
  } -> tensor<3x3xf64>
  %row = tensor.extract_slice %b[2, 0] [1, 3] [1, 1] : tensor<3x3xf64> to tensor<1x3xf64>
  %e1 = tensor.empty() : tensor<1x3xf64>
  %new = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel", "parallel"]} ins(%row, %u : tensor<1x3xf64>, tensor<1x3xf64>) outs(%e1 : tensor<1x3xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    linalg.yield %s : f64
  } -> tensor<1x3xf64>
  %r = tensor.insert_slice %new into %b[2, 0] [1, 3] [1, 1] : tensor<1x3xf64> into tensor<3x3xf64>
  return %r : tensor<3x3xf64>
}
