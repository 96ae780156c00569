// aotc-separate-complex-parts (CUDA): every reader of an elementwise generic that makes real
// values from complex ones reads them through a flow.tensor.clone, so IREE cannot fuse the
// complex values into a reduction (its CUDA code generation crashes on those); elementwise
// generics with complex results, or real inputs, keep their readers. Running it twice
// changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-separate-complex-parts' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-separate-complex-parts,aotc-separate-complex-parts' | filecheck %s

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @largest_magnitude
// CHECK:         %[[ABS:.*]] = linalg.generic
// CHECK:           complex.abs
// CHECK:         %[[CLONE:.*]] = flow.tensor.clone %[[ABS]] : tensor<8xf32>
// CHECK-NOT:     flow.tensor.clone
// CHECK:         linalg.generic {{.*}} ins(%[[CLONE]] : tensor<8xf32>)
// CHECK:         %[[SCALED:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8xcomplex<f32>>)
// CHECK-NOT:     flow.tensor.clone
// CHECK:         return {{.*}}, %[[SCALED]]
func.func @largest_magnitude(%z: tensor<8xcomplex<f32>>) -> (tensor<f32>, tensor<8xcomplex<f32>>) {
  %e = tensor.empty() : tensor<8xf32>
  %abs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%z : tensor<8xcomplex<f32>>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: complex<f32>, %out: f32):
    %m = complex.abs %in : complex<f32>
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %s = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %max = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%abs : tensor<8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %ce = tensor.empty() : tensor<8xcomplex<f32>>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%z : tensor<8xcomplex<f32>>) outs(%ce : tensor<8xcomplex<f32>>) {
  ^bb0(%in: complex<f32>, %out: complex<f32>):
    %d = complex.add %in, %in : complex<f32>
    linalg.yield %d : complex<f32>
  } -> tensor<8xcomplex<f32>>
  return %max, %scaled : tensor<f32>, tensor<8xcomplex<f32>>
}
