// aotc-unroll-loops runs k steps of a loop kept at one dispatch per op in each of its
// iterations: the body cloned k - 1 times, each copy on the previous one's values and
// the induction variable advanced by its steps, the step multiplied by k. k is the
// factor up to 10 leaving the fewest loop iterations (a remainder runs in a copy of the
// loop after it) with at most 32 working ops in the unrolled body and at most 1 MiB
// made by them. Loops in a dispatch, or with a branch or loop inside, stay. Running it
// twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-unroll-loops' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-unroll-loops,aotc-unroll-loops' | filecheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @steps
// CHECK:         %[[TEN:.*]] = arith.constant 10 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[TEN]] iter_args(%[[H:.*]] = %{{.*}})
// CHECK:           %[[M0:.*]] = linalg.matmul ins(%[[H]], %{{.*}} : tensor<8x32xf32>, tensor<32x32xf32>)
// CHECK:           %[[T0:.*]] = linalg.generic {{.*}} ins(%[[M0]] : tensor<8x32xf32>)
// CHECK:           %[[I1:.*]] = arith.addi %[[I]], %c1{{.*}} : index
// CHECK:           %[[M1:.*]] = linalg.matmul ins(%[[T0]], %{{.*}} : tensor<8x32xf32>, tensor<32x32xf32>)
// CHECK:           arith.index_cast %[[I1]]
// CHECK-COUNT-8:   linalg.matmul
// CHECK:           scf.yield
// CHECK:         } {aotc.unrolled = 10 : i64}
func.func @steps(%h: tensor<8x32xf32>, %w: tensor<32x32xf32>) -> tensor<8x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c50 = arith.constant 50 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c50 step %c1 iter_args(%a = %h) -> (tensor<8x32xf32>) {
    %e = tensor.empty() : tensor<8x32xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    %m = linalg.matmul ins(%a, %w : tensor<8x32xf32>, tensor<32x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
    %k = arith.index_cast %i : index to i32
    %f = arith.sitofp %k : i32 to f32
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %f : f32
      %y = math.tanh %s : f32
      linalg.yield %y : f32
    } -> tensor<8x32xf32>
    scf.yield %t : tensor<8x32xf32>
  }
  return %r : tensor<8x32xf32>
}

// 11 trips: one iteration of 10 steps, then the remainder's step in a copy of the loop
// as it was, from 10 on, starting at the unrolled loop's result.
// CHECK-LABEL: func.func @prime_trips
// CHECK:         %[[TEN:.*]] = arith.constant 10 : index
// CHECK:         %[[MAIN:.*]] = scf.for %{{.*}} = %{{.*}} to %[[TEN]] step %[[TEN]]
// CHECK-COUNT-10:  math.tanh
// CHECK:         } {aotc.unrolled = 10 : i64}
// CHECK:         %[[LAST:.*]] = scf.for %{{.*}} = %[[TEN]] to %c11 step %c1 iter_args(%{{.*}} = %[[MAIN]])
// CHECK:           math.tanh
// CHECK-NOT:       math.tanh
// CHECK:         } {aotc.unrolled = 1 : i64}
// CHECK:         return %[[LAST]]
func.func @prime_trips(%h: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c11 = arith.constant 11 : index
  %r = scf.for %i = %c0 to %c11 step %c1 iter_args(%a = %h) -> (tensor<8x32xf32>) {
    %e = tensor.empty() : tensor<8x32xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %y = math.tanh %in : f32
      linalg.yield %y : f32
    } -> tensor<8x32xf32>
    scf.yield %t : tensor<8x32xf32>
  }
  return %r : tensor<8x32xf32>
}

// A branch in the body: the loop stays.
// CHECK-LABEL: func.func @branch_inside
// CHECK-NOT:     aotc.unrolled
// CHECK:         return
func.func @branch_inside(%h: tensor<8x32xf32>, %p: i1) -> tensor<8x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %h) -> (tensor<8x32xf32>) {
    %e = tensor.empty() : tensor<8x32xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %y = math.tanh %in : f32
      linalg.yield %y : f32
    } -> tensor<8x32xf32>
    %b = scf.if %p -> tensor<8x32xf32> {
      scf.yield %t : tensor<8x32xf32>
    } else {
      scf.yield %a : tensor<8x32xf32>
    }
    scf.yield %b : tensor<8x32xf32>
  }
  return %r : tensor<8x32xf32>
}

// A step making 1 MiB: unrolled, k steps' transients would be live together (IREE packs
// an iteration's), so the loop stays (MAX_UNROLLED_BYTES).
// CHECK-LABEL: func.func @large_steps
// CHECK-NOT:     aotc.unrolled
// CHECK:         return
func.func @large_steps(%h: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %h) -> (tensor<512x512xf32>) {
    %e = tensor.empty() : tensor<512x512xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<512x512xf32>) outs(%e : tensor<512x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      %y = math.tanh %in : f32
      linalg.yield %y : f32
    } -> tensor<512x512xf32>
    scf.yield %t : tensor<512x512xf32>
  }
  return %r : tensor<512x512xf32>
}
