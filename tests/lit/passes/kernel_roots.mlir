// aotc-root-kernels-for-gpu: the first tensor.empty a sequential kernel writes into (a loop's
// start, or an insert where one-trip loops were folded; canonicalization may have shared it
// with other users) becomes a zero fill of its own carrying a one-thread GPU compilation_info;
// every kernel records its loop-iteration bound: a triangle counted exactly (j < i: 6 trips
// for n=4, plus 4 outer, plus the 16 elements of the result), a loop bounded by a carried
// search result by its hull. Unmarked regions stay. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-root-kernels-for-gpu' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-root-kernels-for-gpu,aotc-root-kernels-for-gpu' | filecheck %s

// CHECK:       #translation = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<BaseLowering> workgroup_size = [1, 1, 1]>
// CHECK:       #compilation = #iree_codegen.compilation_info<lowering_config = #config, translation_info = #translation>

// CHECK-LABEL: func.func @triangle
// CHECK:         %[[SHARED:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK:         flow.dispatch.region -> (tensor<4x4xf32>) attributes {aotc.kernel = "example", aotc.loop_trips = 26 : i64}
// CHECK:           %[[OWN:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK:           %[[ROOT:.*]] = linalg.fill {compilation_info = #compilation} ins(%{{.*}} : f32) outs(%[[OWN]] : tensor<4x4xf32>)
// CHECK-NOT:       linalg.fill
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[ROOT]])
// CHECK:         return %{{.*}}, %[[SHARED]]
func.func @triangle(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4x4xf32>
  %k = flow.dispatch.region -> (tensor<4x4xf32>) attributes {aotc.kernel = "example"} {
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %e) -> (tensor<4x4xf32>) {
      %s = scf.for %j = %c0 to %i step %c1 iter_args(%u = %t) -> (tensor<4x4xf32>) {
        %x = tensor.extract %a[%i, %j] : tensor<4x4xf32>
        %v = tensor.insert %x into %u[%i, %j] : tensor<4x4xf32>
        scf.yield %v : tensor<4x4xf32>
      }
      scf.yield %s : tensor<4x4xf32>
    }
    flow.return %r : tensor<4x4xf32>
  }
  return %k, %e : tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @searched_bound
// CHECK:         attributes {aotc.kernel = "example", aotc.loop_trips = 15 : i64}
// CHECK:         linalg.fill {compilation_info
func.func @searched_bound(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %k = flow.dispatch.region -> (tensor<8xf32>) attributes {aotc.kernel = "example"} {
    %e = tensor.empty() : tensor<8xf32>
    // m: the last i in [2, 5) where a[i] > 0, else 2: within [2, 4]
    %m = scf.for %i = %c2 to %c5 step %c1 iter_args(%best = %c2) -> (index) {
      %x = tensor.extract %a[%i] : tensor<8xf32>
      %hit = arith.cmpf ogt, %x, %zero : f32
      %next = arith.select %hit, %i, %best : index
      scf.yield %next : index
    }
    // at most 4 trips (0..m, m <= 4) besides the search's 3, and the result's 8 elements
    %r = scf.for %i = %c0 to %m step %c1 iter_args(%t = %e) -> (tensor<8xf32>) {
      %v = tensor.insert %zero into %t[%i] : tensor<8xf32>
      scf.yield %v : tensor<8xf32>
    }
    flow.return %r : tensor<8xf32>
  }
  return %k : tensor<8xf32>
}

// A sum in partial sums (sequential._sums) over row i's first i elements, n = 20: steps
// of 8 up to end = i - (i mod 8), then one by one from end to i. The remainder
// (arith.remui) is taken to be in [0, min(i, 7)], so each i counts ceil(i / 8) steps of
// 8 and min(i, 7) of one: 33 + 112, plus 20 outer trips and the 20 result elements.
// CHECK-LABEL: func.func @partial_sums
// CHECK:         attributes {aotc.kernel = "example", aotc.loop_trips = 185 : i64}
func.func @partial_sums(%a: tensor<20x20xf32>) -> tensor<20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c20 = arith.constant 20 : index
  %zero = arith.constant 0.0 : f32
  %k = flow.dispatch.region -> (tensor<20xf32>) attributes {aotc.kernel = "example"} {
    %e = tensor.empty() : tensor<20xf32>
    %r = scf.for %i = %c0 to %c20 step %c1 iter_args(%t = %e) -> (tensor<20xf32>) {
      %count = arith.maxsi %i, %c0 : index
      %rest = arith.remui %count, %c8 : index
      %cut = arith.subi %i, %rest : index
      %end = arith.maxsi %cut, %c0 : index
      %s = scf.for %j = %c0 to %end step %c8 iter_args(%acc = %zero) -> (f32) {
        %x = tensor.extract %a[%i, %j] : tensor<20x20xf32>
        %y = arith.addf %acc, %x : f32
        scf.yield %y : f32
      }
      %s2 = scf.for %j = %end to %i step %c1 iter_args(%acc = %s) -> (f32) {
        %x = tensor.extract %a[%i, %j] : tensor<20x20xf32>
        %y = arith.addf %acc, %x : f32
        scf.yield %y : f32
      }
      %v = tensor.insert %s2 into %t[%i] : tensor<20xf32>
      scf.yield %v : tensor<20xf32>
    }
    flow.return %r : tensor<20xf32>
  }
  return %k : tensor<20xf32>
}

// CHECK-LABEL: func.func @folded_loops
// CHECK:         aotc.loop_trips = 1 : i64
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x1xf32>
// CHECK:         %[[ROOT:.*]] = linalg.fill {compilation_info
// CHECK:         tensor.insert %{{.*}} into %[[ROOT]][%{{.*}}, %{{.*}}] : tensor<1x1xf32>
func.func @folded_loops(%a: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %c0 = arith.constant 0 : index
  %k = flow.dispatch.region -> (tensor<1x1xf32>) attributes {aotc.kernel = "example"} {
    %e = tensor.empty() : tensor<1x1xf32>
    %x = tensor.extract %a[%c0, %c0] : tensor<1x1xf32>
    %v = tensor.insert %x into %e[%c0, %c0] : tensor<1x1xf32>
    flow.return %v : tensor<1x1xf32>
  }
  return %k : tensor<1x1xf32>
}

// CHECK-LABEL: func.func @dynamic_batch
// CHECK:         aotc.loop_trips = -1 : i64
func.func @dynamic_batch(%a: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %k = flow.dispatch.region[%n] -> (tensor<?xf32>{%n}) attributes {aotc.kernel = "example"} {
    %e = tensor.empty(%n) : tensor<?xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %e) -> (tensor<?xf32>) {
      %x = tensor.extract %a[%i] : tensor<?xf32>
      %v = tensor.insert %x into %t[%i] : tensor<?xf32>
      scf.yield %v : tensor<?xf32>
    }
    flow.return %r : tensor<?xf32>
  }
  return %k : tensor<?xf32>
}

// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     aotc.loop_trips
func.func @not_a_kernel(%a: tensor<4xf32>) -> tensor<4xf32> {
  %k = flow.dispatch.region -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    flow.return %e : tensor<4xf32>
  }
  return %k : tensor<4xf32>
}
