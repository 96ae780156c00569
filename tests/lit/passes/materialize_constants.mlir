// aotc-materialize-constants gives every stored use of a complex128 splat (not an input
// of a generic) a copy made at run time: select(b, float(b), c) per element in a generic,
// b a false behind a barrier (the alternative is computed from b: a constant one equal to
// the splat would fold the copy back into it). The splat read by a generic stays. Running it twice changes
// nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-materialize-constants' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-materialize-constants,aotc-materialize-constants' | filecheck %s

#v = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @complex128
// CHECK:         %[[Z:.*]] = arith.constant dense<(1.000000e+00,2.000000e+00)> : tensor<4xcomplex<f64>>
// CHECK:         linalg.generic {{.*}} ins(%[[Z]], %arg0 :
// CHECK:         %[[B:.*]] = util.optimization_barrier %false : i1
// CHECK:         %[[F:.*]] = arith.uitofp %[[B]] : i1 to f64
// CHECK:         %[[ALT:.*]] = complex.create %[[F]], %[[F]] : complex<f64>
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[Z]] : tensor<4xcomplex<f64>>)
// CHECK:           arith.select %[[B]], %[[ALT]], %in : complex<f64>
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

// A complex128 fill (a derivative's zero tape through a loop) is a splat to IREE too: a loop
// carrying it gets the run-time copy; a complex64 fill stays.
// CHECK-LABEL: func.func @complex128_fill
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : complex<f64>)
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[F]] : tensor<4xcomplex<f64>>)
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[COPY]])
// CHECK:         %[[NARROW:.*]] = linalg.fill ins(%{{.*}} : complex<f32>)
// CHECK-NOT:     linalg.generic
// CHECK:         return %{{.*}}, %[[NARROW]]
func.func @complex128_fill(%v: complex<f64>, %w: complex<f32>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f32>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<4xcomplex<f64>>
  %f = linalg.fill ins(%v : complex<f64>) outs(%e : tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%t = %f) -> (tensor<4xcomplex<f64>>) {
    %u = tensor.insert %v into %t[%i] : tensor<4xcomplex<f64>>
    scf.yield %u : tensor<4xcomplex<f64>>
  }
  %e2 = tensor.empty() : tensor<4xcomplex<f32>>
  %n = linalg.fill ins(%w : complex<f32>) outs(%e2 : tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %r, %n : tensor<4xcomplex<f64>>, tensor<4xcomplex<f32>>
}
