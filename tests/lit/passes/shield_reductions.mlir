// aotc-shield-reductions puts an input of a reduction through a
// util.optimization_barrier when it is a splat constant or an op computes it from
// constants only (any element type), or when the reduction's body reads no input once
// IREE's elementwise fusion has run (a copy of the module is probed): here x * 0 + 1 on
// integers. A reduction of an argument, of a table (a dense constant of several values)
// or of a product that depends on the argument stays as it is. Running it twice changes
// nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-shield-reductions' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-shield-reductions,aotc-shield-reductions' | filecheck %s

// CHECK-LABEL: func.func @constant_inputs
// CHECK:         %[[TABLE:.*]] = arith.constant dense<[1.0
// CHECK:         %[[SPLAT:.*]] = arith.constant dense<2.0
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%{{.*}} : i1)
// CHECK:         %[[REV:.*]] = linalg.generic
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[FILL]] : tensor<8xi1>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[B]] : tensor<8xi1>)
// CHECK:         linalg.generic {{.*}} ins(%arg0 : tensor<8xi1>)
// CHECK:         %[[BR:.*]] = util.optimization_barrier %[[REV]] : tensor<8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[BR]] : tensor<8xf32>)
// CHECK:         %[[BS:.*]] = util.optimization_barrier %[[SPLAT]] : tensor<8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[BS]] : tensor<8xf32>)
// CHECK-NOT:     util.optimization_barrier
// CHECK:         linalg.generic {{.*}} ins(%[[TABLE]] : tensor<8xf32>)
#v = affine_map<(d0) -> (d0)>
#r = affine_map<(d0) -> (7 - d0)>
#s = affine_map<(d0) -> ()>
#xy = affine_map<(d0, d1) -> (d0, d1)>
#x_ = affine_map<(d0, d1) -> (d0)>
#_y = affine_map<(d0, d1) -> (d1)>
func.func @constant_inputs(%b: tensor<8xi1>) -> (tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %t = arith.constant true
  %z = arith.constant 0 : i64
  %zf = arith.constant 0.0 : f32
  %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %splat = arith.constant dense<2.0> : tensor<8xf32>
  %e = tensor.empty() : tensor<8xi1>
  %ones = linalg.fill ins(%t : i1) outs(%e : tensor<8xi1>) -> tensor<8xi1>
  %ef = tensor.empty() : tensor<8xf32>
  %reversed = linalg.generic {indexing_maps = [#r, #v], iterator_types = ["parallel"]} ins(%table : tensor<8xf32>) outs(%ef : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  %es = tensor.empty() : tensor<i64>
  %acc = linalg.fill ins(%z : i64) outs(%es : tensor<i64>) -> tensor<i64>
  %esf = tensor.empty() : tensor<f32>
  %accf = linalg.fill ins(%zf : f32) outs(%esf : tensor<f32>) -> tensor<f32>
  %c = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%ones : tensor<8xi1>) outs(%acc : tensor<i64>) {
  ^bb0(%in: i1, %o: i64):
    %w = arith.extui %in : i1 to i64
    %r = arith.addi %w, %o : i64
    linalg.yield %r : i64
  } -> tensor<i64>
  %d = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%b : tensor<8xi1>) outs(%acc : tensor<i64>) {
  ^bb0(%in: i1, %o: i64):
    %w = arith.extui %in : i1 to i64
    %r = arith.addi %w, %o : i64
    linalg.yield %r : i64
  } -> tensor<i64>
  %f = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%reversed : tensor<8xf32>) outs(%accf : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %h = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%splat : tensor<8xf32>) outs(%accf : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %g = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%table : tensor<8xf32>) outs(%accf : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %c, %d, %f, %h, %g : tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @folded_to_constant
// CHECK:         %[[ONE:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<31xi32>)
// CHECK:         %[[TWICE:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<31xi32>)
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[ONE]] : tensor<31xi32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[B]] : tensor<31xi32>)
// CHECK-NOT:     util.optimization_barrier
// CHECK:         linalg.generic {{.*}} ins(%[[TWICE]] : tensor<31xi32>)
func.func @folded_to_constant(%x: tensor<31xi32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %e = tensor.empty() : tensor<31xi32>
  %one = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%x : tensor<31xi32>) outs(%e : tensor<31xi32>) {
  ^bb0(%in: i32, %o: i32):
    %m = arith.muli %in, %c0 : i32
    %a = arith.addi %m, %c1 : i32
    linalg.yield %a : i32
  } -> tensor<31xi32>
  %twice = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%x : tensor<31xi32>) outs(%e : tensor<31xi32>) {
  ^bb0(%in: i32, %o: i32):
    %m = arith.muli %in, %c2 : i32
    linalg.yield %m : i32
  } -> tensor<31xi32>
  %es = tensor.empty() : tensor<i32>
  %acc = linalg.fill ins(%c0 : i32) outs(%es : tensor<i32>) -> tensor<i32>
  %s = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%one : tensor<31xi32>) outs(%acc : tensor<i32>) {
  ^bb0(%in: i32, %o: i32):
    %r = arith.addi %in, %o : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %t = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%twice : tensor<31xi32>) outs(%acc : tensor<i32>) {
  ^bb0(%in: i32, %o: i32):
    %r = arith.addi %in, %o : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  return %s, %t : tensor<i32>, tensor<i32>
}

// A reduction read twice by one consumer, through two views (n[:, None] + n[None, :]):
// both reads go through barriers; a single broadcast read (x - n[:, None]) stays.
// CHECK-LABEL: func.func @pairwise
// CHECK:         %[[N:.*]] = linalg.generic
// CHECK:         %[[B0:.*]] = util.optimization_barrier %[[N]]
// CHECK:         %[[B1:.*]] = util.optimization_barrier %[[N]]
// CHECK:         linalg.generic {{.*}} ins(%[[B0]], %[[B1]] :
// CHECK-NOT:     util.optimization_barrier
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[N]] :
func.func @pairwise(%x: tensor<4x3xf32>) -> (tensor<4x4xf32>, tensor<4x3xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#xy, #x_], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x3xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %p = linalg.generic {indexing_maps = [#x_, #_y, #xy], iterator_types = ["parallel", "parallel"]} ins(%n, %n : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e3 = tensor.empty() : tensor<4x3xf32>
  %c = linalg.generic {indexing_maps = [#xy, #x_, #xy], iterator_types = ["parallel", "parallel"]} ins(%x, %n : tensor<4x3xf32>, tensor<4xf32>) outs(%e3 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %p, %c : tensor<4x4xf32>, tensor<4x3xf32>
}
