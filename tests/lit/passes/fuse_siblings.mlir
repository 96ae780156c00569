// aotc-fuse-returned-siblings merges all-parallel linalg.generics whose results only the
// return uses and whose output shapes are equal into one multi-result generic (inputs
// read the same way are read once); a generic on another domain, one whose result is
// used again, and non-generic ops stay. Running it twice changes nothing more.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-fuse-returned-siblings' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-fuse-returned-siblings,aotc-fuse-returned-siblings' | filecheck %s

// CHECK-LABEL: func.func @siblings
// CHECK-SAME:      (%[[X:.*]]: tensor<4x5xf32>, %[[Y:.*]]: tensor<5xf32>)
// CHECK:         %[[NEG:.*]] = arith.negf %[[Y]] : tensor<5xf32>
// CHECK:         %[[M:.*]]:3 = linalg.generic {indexing_maps = [#map, #map1, #map, #map, #map]
// CHECK-SAME:      ins(%[[X]], %[[Y]] : tensor<4x5xf32>, tensor<5xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[IN2:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[IN]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[IN]], %[[IN2]] : f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[S]], %[[IN]] : f32
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[T:.*]] = tensor.extract %[[X]][%[[I]], %[[J]]] : tensor<4x5xf32>
// CHECK-NEXT:      linalg.yield %[[E]], %[[P]], %[[T]] : f32, f32, f32
// CHECK:         return %[[M]]#0, %[[M]]#1, %[[M]]#2, %[[NEG]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @siblings(%x: tensor<4x5xf32>, %y: tensor<5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<5xf32>) {
  %e = tensor.empty() : tensor<4x5xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x5xf32>
  %b = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x5xf32>, tensor<5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.addf %in, %in2 : f32
    %w = arith.mulf %v, %in : f32
    linalg.yield %w : f32
  } -> tensor<4x5xf32>
  %c = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x5xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %t = tensor.extract %x[%i, %j] : tensor<4x5xf32>
    linalg.yield %t : f32
  } -> tensor<4x5xf32>
  %d = arith.negf %y : tensor<5xf32>
  return %a, %b, %c, %d : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<5xf32>
}

// -----

// A result used again (by %twice) and a generic over another shape are left alone.
// CHECK-LABEL: func.func @not_siblings
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
#id1 = affine_map<(d0) -> (d0)>
func.func @not_siblings(%x: tensor<5xf32>, %z: tensor<3xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<3xf32>) {
  %e = tensor.empty() : tensor<5xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<5xf32>) outs(%e : tensor<5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<5xf32>
  %twice = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%a : tensor<5xf32>) outs(%e : tensor<5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<5xf32>
  %c = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%z : tensor<3xf32>) outs(%e3 : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.sin %in : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %a, %twice, %c : tensor<5xf32>, tensor<5xf32>, tensor<3xf32>
}
