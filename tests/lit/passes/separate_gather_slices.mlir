// aotc-separate-gather-slices (Vulkan): a tensor.extract inside a generic that reads an
// extract_slice made outside it reads a flow.tensor.clone of the slice instead (one clone per
// slice and generic); reads of unsliced tensors stay. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-separate-gather-slices' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-separate-gather-slices,aotc-separate-gather-slices' | filecheck %s

#m = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @gather_from_a_column_slice
// CHECK:         %[[S:.*]] = tensor.extract_slice %arg0[0, 32] [64, 32] [1, 1]
// CHECK:         %[[C:.*]] = flow.tensor.clone %[[S]] : tensor<64x32xf32>
// CHECK-NOT:     flow.tensor.clone
// CHECK:         linalg.generic
// CHECK:           tensor.extract %[[C]][
// CHECK:           tensor.extract %[[C]][
// CHECK:           tensor.extract %arg0[
func.func @gather_from_a_column_slice(%a: tensor<64x64xf32>, %r: tensor<64x32xi32>, %c: tensor<64x32xi32>) -> tensor<64x32xf32> {
  %s = tensor.extract_slice %a[0, 32] [64, 32] [1, 1] : tensor<64x64xf32> to tensor<64x32xf32>
  %e = tensor.empty() : tensor<64x32xf32>
  %g = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%r, %c : tensor<64x32xi32>, tensor<64x32xi32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%i: i32, %j: i32, %o: f32):
    %ii = arith.index_cast %i : i32 to index
    %jj = arith.index_cast %j : i32 to index
    %x = tensor.extract %s[%ii, %jj] : tensor<64x32xf32>
    %y = tensor.extract %s[%jj, %ii] : tensor<64x32xf32>
    %z = tensor.extract %a[%ii, %jj] : tensor<64x64xf32>
    %t = arith.addf %x, %y : f32
    %u = arith.addf %t, %z : f32
    linalg.yield %u : f32
  } -> tensor<64x32xf32>
  return %g : tensor<64x32xf32>
}
