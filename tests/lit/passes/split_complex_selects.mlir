// aotc-split-complex-selects (Vulkan): a select of complex scalars becomes a complex.create of
// selects of the real and of the imaginary parts; selects of other types stay. Running it
// twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-split-complex-selects' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-split-complex-selects,aotc-split-complex-selects' | filecheck %s

// CHECK-LABEL: func.func @complex_select
// CHECK-SAME:      (%[[C:.*]]: i1, %[[A:.*]]: complex<f32>, %[[B:.*]]: complex<f32>, %[[X:.*]]: f32)
// CHECK-DAG:     %[[AR:.*]] = complex.re %[[A]] : complex<f32>
// CHECK-DAG:     %[[BR:.*]] = complex.re %[[B]] : complex<f32>
// CHECK-DAG:     %[[AI:.*]] = complex.im %[[A]] : complex<f32>
// CHECK-DAG:     %[[BI:.*]] = complex.im %[[B]] : complex<f32>
// CHECK-DAG:     %[[RE:.*]] = arith.select %[[C]], %[[AR]], %[[BR]] : f32
// CHECK-DAG:     %[[IM:.*]] = arith.select %[[C]], %[[AI]], %[[BI]] : f32
// CHECK:         %[[R:.*]] = complex.create %[[RE]], %[[IM]] : complex<f32>
// CHECK:         %[[F:.*]] = arith.select %[[C]], %[[X]], %[[X]] : f32
// CHECK:         return %[[R]], %[[F]]
func.func @complex_select(%c: i1, %a: complex<f32>, %b: complex<f32>, %x: f32) -> (complex<f32>, f32) {
  %r = arith.select %c, %a, %b : complex<f32>
  %f = arith.select %c, %x, %x : f32
  return %r, %f : complex<f32>, f32
}
