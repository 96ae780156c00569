// aotc-jvp (then canonicalize and cse, as the compiler runs them) builds @<func>_jvp:
// @func's arguments, then one tangent per wrt argument; @func's results, then the
// tangent of each float result. A generic keeps its primal form and its tangents come
// from a generic of their own (a sum's tangent generic recomputes the products); an
// elementwise generic with a dear body (tanh) also yields the coefficients dy/dx, and
// the tangent generic multiplies them by the tangents; a max reduction, whose tangent
// needs the running maximum, becomes one generic computing both. A matmul's tangent is
// dA B + A dB as named matmuls; a while loop carries the tangents of its active carries
// (a float carry that never meets a tangent carries none).

// RUN: %aotc-opt %s --pass-pipeline='aotc-jvp{func=sumsq},canonicalize,cse' | filecheck %s --check-prefix=SUMSQ
// RUN: %aotc-opt %s --pass-pipeline='aotc-jvp{func=mm},canonicalize,cse' | filecheck %s --check-prefix=MM
// RUN: %aotc-opt %s --pass-pipeline='aotc-jvp{func=loop wrt=0},canonicalize,cse' | filecheck %s --check-prefix=LOOP
// RUN: %aotc-opt %s --pass-pipeline='aotc-jvp{func=tanh},canonicalize,cse' | filecheck %s --check-prefix=TANH
// RUN: %aotc-opt %s --pass-pipeline='aotc-jvp{func=rowmax},canonicalize,cse' | filecheck %s --check-prefix=MAX

#id1 = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>

// SUMSQ-LABEL: func.func @sumsq_jvp
// SUMSQ-SAME:      (%[[X:.*]]: tensor<8xf32>, %[[T:.*]]: tensor<8xf32>) -> (tensor<f32>, tensor<f32>)
// SUMSQ:         %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[X]] : tensor<8xf32>)
// SUMSQ:         ^bb0(%[[XE:.*]]: f32, %[[ACC:.*]]: f32):
// SUMSQ:           %[[SQ:.*]] = arith.mulf %[[XE]], %[[XE]]
// SUMSQ:           %[[SUM:.*]] = arith.addf %[[ACC]], %[[SQ]]
// SUMSQ:           linalg.yield %[[SUM]] : f32
// SUMSQ:         %[[D:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[X]], %[[T]] : tensor<8xf32>, tensor<8xf32>)
// SUMSQ:         ^bb0(%[[XE2:.*]]: f32, %[[TE:.*]]: f32, %[[TACC:.*]]: f32):
// SUMSQ:           %[[P:.*]] = arith.mulf %[[TE]], %[[XE2]]
// SUMSQ:           %[[TWICE:.*]] = arith.addf %[[P]], %[[P]]
// SUMSQ:           %[[TSUM:.*]] = arith.addf %[[TACC]], %[[TWICE]]
// SUMSQ:           linalg.yield %[[TSUM]] : f32
// SUMSQ:         return %[[R]], %[[D]] : tensor<f32>, tensor<f32>
func.func @sumsq(%x: tensor<8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id1, #red], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// MM-LABEL: func.func @mm_jvp
// MM-SAME:      (%[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[TX:.*]]: tensor<4x3xf32>, %[[TW:.*]]: tensor<3x2xf32>)
// MM:           %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] :
// MM:           %[[A:.*]] = linalg.matmul ins(%[[TX]], %[[W]] :
// MM:           %[[B:.*]] = linalg.matmul ins(%[[X]], %[[TW]] : {{.*}} outs(%[[A]] :
// MM:           return %[[Y]], %[[B]] : tensor<4x2xf32>, tensor<4x2xf32>
func.func @mm(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// LOOP-LABEL: func.func @loop_jvp
// LOOP-SAME:      (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[T:.*]]: f32) -> (f32, f32, f32, f32)
// LOOP:         %[[W:.*]]:3 = scf.while (%[[A:.*]] = %[[X]], %[[B:.*]] = %[[Y]], %[[TA:.*]] = %[[T]]) : (f32, f32, f32) -> (f32, f32, f32)
// LOOP:           scf.condition(%{{.*}}) %[[A]], %[[B]], %[[TA]] : f32, f32, f32
// LOOP:         ^bb0(%[[A2:.*]]: f32, %[[B2:.*]]: f32, %[[TA2:.*]]: f32):
// LOOP:           %[[H:.*]] = arith.mulf %[[A2]], %[[A2]]
// LOOP:           scf.yield %[[H]], %{{.*}}, %{{.*}} : f32, f32, f32
// LOOP:         return %[[W]]#0, %[[W]]#1, %[[W]]#2, %{{.*}} : f32, f32, f32, f32
func.func @loop(%x: f32, %y: f32) -> (f32, f32) {
  %limit = arith.constant 100.0 : f32
  %r:2 = scf.while (%a = %x, %b = %y) : (f32, f32) -> (f32, f32) {
    %c = arith.cmpf olt, %a, %limit : f32
    scf.condition(%c) %a, %b : f32, f32
  } do {
  ^bb0(%a: f32, %b: f32):
    %h = arith.mulf %a, %a : f32
    %g = arith.addf %b, %b : f32
    scf.yield %h, %g : f32, f32
  }
  return %r#0, %r#1 : f32, f32
}

// TANH-LABEL: func.func @tanh_jvp
// TANH-SAME:      (%[[X:.*]]: tensor<8xf32>, %[[T:.*]]: tensor<8xf32>)
// TANH:         %[[Y:.*]]:2 = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
// TANH:           %[[TH:.*]] = math.tanh
// TANH:           %[[SQ:.*]] = arith.mulf %[[TH]], %[[TH]]
// TANH:           %[[C:.*]] = arith.subf %{{.*}}, %[[SQ]]
// TANH:           linalg.yield %[[TH]], %[[C]] : f32, f32
// TANH:         %[[D:.*]] = linalg.generic {{.*}} ins(%[[Y]]#1, %[[T]] : tensor<8xf32>, tensor<8xf32>)
// TANH:         ^bb0(%[[CE:.*]]: f32, %[[TE:.*]]: f32, %{{.*}}: f32):
// TANH:           %[[P:.*]] = arith.mulf %[[CE]], %[[TE]]
// TANH:           linalg.yield %[[P]] : f32
// TANH:         return %[[Y]]#0, %[[D]] : tensor<8xf32>, tensor<8xf32>
func.func @tanh(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// MAX-LABEL: func.func @rowmax_jvp
// MAX:         %[[R:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction"]}
// MAX:           arith.cmpf
// MAX:           linalg.yield %{{.*}}, %{{.*}} : f32, f32
// MAX:         return %[[R]]#0, %[[R]]#1 : tensor<f32>, tensor<f32>
func.func @rowmax(%x: tensor<8xf32>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id1, #red], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
