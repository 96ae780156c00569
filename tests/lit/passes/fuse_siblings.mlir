// aotc-fuse-siblings merges independent linalg.generics over one iteration domain into
// one multi-result generic (inputs read the same way are read once): reductions, and
// all-parallel generics whose results only the return uses. A generic on another domain,
// an elementwise one whose result is used again, one that depends on another and
// non-generic ops stay; the block is reordered so that every op follows what it reads.
// Running it twice changes nothing more.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-fuse-siblings' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-fuse-siblings,aotc-fuse-siblings' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-fuse-siblings{reductions=false}' | filecheck %s --check-prefix=GPU

// CHECK-LABEL: func.func @siblings
// CHECK-SAME:      (%[[X:.*]]: tensor<4x5xf32>, %[[Y:.*]]: tensor<5xf32>)
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
// CHECK:         %[[NEG:.*]] = arith.negf %[[Y]] : tensor<5xf32>
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

// -----

// Reductions over one domain merge whatever uses their results (IREE fuses the division
// into the merged dispatch); the fill of the later one is moved above the merged op.
// The sum of the maximum depends on the maximum and stays; so does the reduction over
// the other axis (another output map) and the empty one (IREE cannot tile it merged).
// CHECK-LABEL: func.func @reductions
// CHECK-SAME:      (%[[X:.*]]: tensor<4x5xf32>, %[[E0:.*]]: tensor<3x0xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = linalg.fill
// CHECK-DAG:     %[[NINF:.*]] = linalg.fill
// CHECK:         %[[M:.*]]:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]] : tensor<4x5xf32>) outs(%[[ZERO]], %[[NINF]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32, %[[ACC2:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:      %[[MX:.*]] = arith.maximumf %[[IN]], %[[ACC2]] : f32
// CHECK-NEXT:      linalg.yield %[[S]], %[[MX]] : f32, f32
// CHECK:         arith.divf %[[M]]#0
// CHECK:         linalg.generic {{.*}} ins(%[[M]]#1 : tensor<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<4x5xf32>) outs({{.*}} : tensor<5xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[E0]] : tensor<3x0xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[E0]] : tensor<3x0xf32>)
#xy = affine_map<(d0, d1) -> (d0, d1)>
#x = affine_map<(d0, d1) -> (d0)>
#y = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @reductions(%x: tensor<4x5xf32>, %e0: tensor<3x0xf32>) -> (tensor<4xf32>, tensor<f32>, tensor<5xf32>, tensor<3xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %five = arith.constant dense<5.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x5xf32>) outs(%zeros : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %mean = arith.divf %sum, %five : tensor<4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %ninfs = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x5xf32>) outs(%ninfs : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %summax = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%max : tensor<4xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %e5 = tensor.empty() : tensor<5xf32>
  %zeros5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<5xf32>) -> tensor<5xf32>
  %cols = linalg.generic {indexing_maps = [#xy, #y], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x5xf32>) outs(%zeros5 : tensor<5xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<5xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %zeros3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %esum = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]} ins(%e0 : tensor<3x0xf32>) outs(%zeros3 : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.addf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %emax = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]} ins(%e0 : tensor<3x0xf32>) outs(%zeros3 : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %v = arith.maximumf %in, %acc : f32
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %mean, %summax, %cols, %esum, %emax : tensor<4xf32>, tensor<f32>, tensor<5xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// %b and %c (one domain) merge; %a and %d (another) would too by the reads of their own
// ops, but %d reads %c, merged with %b, which reads %a: the two merged ops would read
// each other's results. %a and %d stay apart.
// CHECK-LABEL: func.func @no_cycle
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x5xf32>)
// CHECK:         %[[BC:.*]]:2 = linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[BC]]#1 : tensor<4x5xf32>, tensor<f32>)
// CHECK-NOT:     linalg.generic
#xy2 = affine_map<(d0, d1) -> (d0, d1)>
#x2 = affine_map<(d0, d1) -> (d0)>
#none2 = affine_map<(d0, d1) -> ()>
#v2 = affine_map<(d0) -> (d0)>
#s2 = affine_map<(d0) -> ()>
func.func @no_cycle(%x: tensor<4x5xf32>, %y: tensor<4xf32>, %acc: tensor<4xf32>, %acc0: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [#xy2, #x2], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x5xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.addf %in, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#v2, #s2], iterator_types = ["reduction"]} ins(%a : tensor<4xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.maximumf %in, %o : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %c = linalg.generic {indexing_maps = [#v2, #s2], iterator_types = ["reduction"]} ins(%y : tensor<4xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.minimumf %in, %o : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %d = linalg.generic {indexing_maps = [#xy2, #none2, #x2], iterator_types = ["parallel", "reduction"]} ins(%x, %c : tensor<4x5xf32>, tensor<f32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %k: f32, %o: f32):
    %p = arith.mulf %in, %k : f32
    %v = arith.addf %p, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %b, %d : tensor<f32>, tensor<4xf32>
}

// -----

// Reductions merge by default; with reductions=false (GPU code) they stay apart.
// CHECK-LABEL: func.func @gpu
// CHECK:         %{{.*}}:2 = linalg.generic
// GPU-LABEL:   func.func @gpu
// GPU-COUNT-2:   } -> tensor<4xf32>
#xy3 = affine_map<(d0, d1) -> (d0, d1)>
#x3 = affine_map<(d0, d1) -> (d0)>
func.func @gpu(%x: tensor<4x5xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [#xy3, #x3], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x5xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.addf %in, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#xy3, #x3], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x5xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.maximumf %in, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// A reduction whose result a transpose reads (here through an elementwise op) stays
// apart: IREE 3.13's transpose propagation crashes on a multi-result producer.
// CHECK-LABEL: func.func @transposed
// CHECK-COUNT-2: } -> tensor<4x3xf32>
// CHECK:         linalg.transpose
#r3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#o3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#e2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposed(%x: tensor<4x3x5xf32>, %acc: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3x4xf32>) {
  %a = linalg.generic {indexing_maps = [#r3, #o3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x3x5xf32>) outs(%acc : tensor<4x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.addf %in, %o : f32
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  %b = linalg.generic {indexing_maps = [#r3, #o3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x3x5xf32>) outs(%acc : tensor<4x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.maximumf %in, %o : f32
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  %neg = linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x3xf32>) outs(%acc : tensor<4x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%neg : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  return %a, %t : tensor<4x3xf32>, tensor<3x4xf32>
}

// -----

// Returned elementwise results merge, except one that reads another returned value
// (merged, IREE 3.13 returned wrong values for the returned input).
// CHECK-LABEL: func.func @reads_a_returned_value
// CHECK:         %[[M:.*]]:2 = linalg.generic
// CHECK:         %[[C:.*]] = linalg.generic
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[C]] :
// CHECK:         return %[[M]]#0, %[[C]], %[[R]], %[[M]]#1
#e1 = affine_map<(d0) -> (d0)>
func.func @reads_a_returned_value(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#e1, #e1], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.sin %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#e1, #e1], iterator_types = ["parallel"]} ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.cos %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#e1, #e1], iterator_types = ["parallel"]} ins(%c : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#e1, #e1], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %a, %c, %r, %b : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
