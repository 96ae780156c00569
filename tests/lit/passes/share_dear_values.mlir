// aotc-share-dear-values: an elementwise value computed with a transcendental function
// and read by a reduction and by another generic is read by both through one
// flow.tensor.clone (IREE computes it once, in a dispatch of its own). A dear value read
// by the reduction alone, one also returned, and a cheap value (no transcendental) are
// left alone. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-share-dear-values' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-share-dear-values,aotc-share-dear-values' | filecheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @softmax
// CHECK:         %[[E:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         %[[SHARED:.*]] = flow.tensor.clone %[[E]] : tensor<8x16xf32>
// CHECK-NOT:     flow.tensor.clone
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[SHARED]] : tensor<8x16xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[SHARED]], %[[SUM]] : tensor<8x16xf32>, tensor<8xf32>)
func.func @softmax(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x16xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %s0 = tensor.empty() : tensor<8xf32>
  %s1 = linalg.fill ins(%zero : f32) outs(%s0 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<8x16xf32>) outs(%s1 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<8x16xf32>, tensor<8xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.divf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     flow.tensor.clone
// CHECK:         return
func.func @kept(%x: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x16xf32>
  %s0 = tensor.empty() : tensor<8xf32>
  %s1 = linalg.fill ins(%zero : f32) outs(%s0 : tensor<8xf32>) -> tensor<8xf32>
  // read by a reduction only (a logsumexp)
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<8x16xf32>) outs(%s1 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  // read by a reduction and returned
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %tsum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<8x16xf32>) outs(%s1 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  // cheap: read by a reduction and an elementwise op
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %csum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<8x16xf32>) outs(%s1 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %cr = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %csum : tensor<8x16xf32>, tensor<8xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.divf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %sum, %t, %cr, %tsum : tensor<8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>
}
