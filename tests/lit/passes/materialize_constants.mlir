// aotc-materialize-constants gives a use of a constant IREE cannot splat there a copy made
// at run time: select(b, 0, c) per element in a generic, b a false behind a barrier. The
// destination of an update of an 8-byte constant that is also used otherwise, and every
// stored use of a complex128 splat (not an input of a generic) get one; a 4-byte constant,
// an 8-byte constant updated once, and a complex128 splat read by a generic stay.
// Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-materialize-constants' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-materialize-constants,aotc-materialize-constants' | filecheck %s

#v = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @shared_wide
// CHECK:         %[[C:.*]] = arith.constant dense<1> : tensor<3x4xi64>
// CHECK:         %[[B:.*]] = util.optimization_barrier %false : i1
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<3x4xi64>)
// CHECK:           arith.select %[[B]], %{{.*}}, %in : i64
// CHECK:         tensor.insert_slice %{{.*}} into %[[COPY]][1, 0]
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return %[[C]],
func.func @shared_wide(%y: tensor<1x4xi64>) -> (tensor<3x4xi64>, tensor<3x4xi64>) {
  %c = arith.constant dense<1> : tensor<3x4xi64>
  %u = tensor.insert_slice %y into %c[1, 0] [1, 4] [1, 1] : tensor<1x4xi64> into tensor<3x4xi64>
  return %c, %u : tensor<3x4xi64>, tensor<3x4xi64>
}

// CHECK-LABEL: func.func @stays
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
func.func @stays(%y: tensor<1x4xi32>, %z: tensor<1x4xi64>) -> (tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi64>) {
  %c = arith.constant dense<1> : tensor<3x4xi32>
  %u = tensor.insert_slice %y into %c[1, 0] [1, 4] [1, 1] : tensor<1x4xi32> into tensor<3x4xi32>
  %w = arith.constant dense<2> : tensor<3x4xi64>
  %v = tensor.insert_slice %z into %w[0, 0] [1, 4] [1, 1] : tensor<1x4xi64> into tensor<3x4xi64>
  return %c, %u, %v : tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi64>
}

// CHECK-LABEL: func.func @complex128
// CHECK:         %[[Z:.*]] = arith.constant dense<(1.000000e+00,2.000000e+00)> : tensor<4xcomplex<f64>>
// CHECK:         linalg.generic {{.*}} ins(%[[Z]], %arg0 :
// CHECK:         %[[B:.*]] = util.optimization_barrier %false : i1
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[Z]] : tensor<4xcomplex<f64>>)
// CHECK:           arith.select %[[B]], %{{.*}}, %in : complex<f64>
// CHECK:         return %[[COPY]], %{{.*}} :
func.func @complex128(%x: tensor<4xcomplex<f64>>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) {
  %z = arith.constant dense<(1.0, 2.0)> : tensor<4xcomplex<f64>>
  %e = tensor.empty() : tensor<4xcomplex<f64>>
  %p = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%z, %x : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) outs(%e : tensor<4xcomplex<f64>>) {
  ^bb0(%a: complex<f64>, %b: complex<f64>, %o: complex<f64>):
    %m = complex.mul %a, %b : complex<f64>
    linalg.yield %m : complex<f64>
  } -> tensor<4xcomplex<f64>>
  return %z, %p : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>
}
