// aotc-complex-pads-as-inserts: a tensor.pad of complex values with a padding value from
// outside becomes a linalg.fill of the padded shape and a tensor.insert_slice at the low
// padding (static, or dynamic with the result's size computed); pads of real values stay.
// Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-complex-pads-as-inserts' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-complex-pads-as-inserts,aotc-complex-pads-as-inserts' | filecheck %s

// CHECK-LABEL: func.func @static_pad
// CHECK-SAME:      (%[[Z:.*]]: tensor<3xcomplex<f64>>, %[[V:.*]]: complex<f64>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<6xcomplex<f64>>
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[V]] : complex<f64>) outs(%[[E]] : tensor<6xcomplex<f64>>)
// CHECK:         %[[R:.*]] = tensor.insert_slice %[[Z]] into %[[F]][1] [3] [1] : tensor<3xcomplex<f64>> into tensor<6xcomplex<f64>>
// CHECK-NOT:     tensor.pad
// CHECK:         return %[[R]]
func.func @static_pad(%z: tensor<3xcomplex<f64>>, %v: complex<f64>) -> tensor<6xcomplex<f64>> {
  %p = tensor.pad %z low[1] high[2] {
  ^bb0(%i: index):
    tensor.yield %v : complex<f64>
  } : tensor<3xcomplex<f64>> to tensor<6xcomplex<f64>>
  return %p : tensor<6xcomplex<f64>>
}

// CHECK-LABEL: func.func @dynamic_pad
// CHECK-SAME:      (%[[Z:.*]]: tensor<1xcomplex<f32>>, %[[LOW:.*]]: index, %[[HIGH:.*]]: index)
// CHECK:         %[[PADS:.*]] = arith.addi %[[LOW]], %[[HIGH]]
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[SIZE:.*]] = arith.addi %[[PADS]], %[[ONE]]
// CHECK:         %[[E:.*]] = tensor.empty(%[[SIZE]]) : tensor<?xcomplex<f32>>
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : complex<f32>) outs(%[[E]] : tensor<?xcomplex<f32>>)
// CHECK:         %[[R:.*]] = tensor.insert_slice %[[Z]] into %[[F]][%[[LOW]]] [1] [1]
// CHECK:         return %[[R]]
func.func @dynamic_pad(%z: tensor<1xcomplex<f32>>, %low: index, %high: index) -> tensor<?xcomplex<f32>> {
  %zero = complex.constant [0.0 : f32, 0.0 : f32] : complex<f32>
  %p = tensor.pad %z low[%low] high[%high] {
  ^bb0(%i: index):
    tensor.yield %zero : complex<f32>
  } : tensor<1xcomplex<f32>> to tensor<?xcomplex<f32>>
  return %p : tensor<?xcomplex<f32>>
}

// CHECK-LABEL: func.func @real_pad
// CHECK:         tensor.pad
func.func @real_pad(%x: tensor<3xf32>) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<3xf32> to tensor<5xf32>
  return %p : tensor<5xf32>
}
