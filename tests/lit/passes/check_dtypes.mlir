// aotc-check-dtypes rejects element types (unsupported=) and ops on an element type
// (unsupported-ops=op:type) that the target cannot compute; anything else passes through
// unchanged. Failing chunks print nothing on stdout and their error on stderr.

// RUN: not %aotc-opt %s --split-input-file --pass-pipeline='aotc-check-dtypes{unsupported=f64,i64 target=gpu}' 2>%t.dtypes.err \
// RUN:   | filecheck %s --check-prefix=DTYPES
// RUN: filecheck %s --check-prefix=DTYPES-ERR --input-file=%t.dtypes.err
// RUN: not %aotc-opt %s --split-input-file --pass-pipeline='aotc-check-dtypes{unsupported-ops=math.sin:f64 target=cpu}' 2>%t.ops.err \
// RUN:   | filecheck %s --check-prefix=OPS
// RUN: filecheck %s --check-prefix=OPS-ERR --input-file=%t.ops.err

// Without unsupported types the IR comes out as it went in.
// DTYPES-LABEL: func.func @no_unsupported_types
// DTYPES-SAME:      (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xi32>) -> tensor<4xf32>
// DTYPES-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// DTYPES-NEXT:    %[[R:.*]] = linalg.generic
// DTYPES-SAME:        ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xi32>) outs(%[[E]] : tensor<4xf32>)
// DTYPES-NEXT:    ^bb0(%[[X:.*]]: f32, %[[I:.*]]: i32, %{{.*}}: f32):
// DTYPES-NEXT:      %[[F:.*]] = arith.sitofp %[[I]] : i32 to f32
// DTYPES-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[F]] : f32
// DTYPES-NEXT:      linalg.yield %[[S]] : f32
// DTYPES-NEXT:    } -> tensor<4xf32>
// DTYPES-NEXT:    return %[[R]] : tensor<4xf32>
// OPS-LABEL: func.func @no_unsupported_types
#map = affine_map<(d0) -> (d0)>
func.func @no_unsupported_types(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xi32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%x: f32, %i: i32, %out: f32):
    %f = arith.sitofp %i : i32 to f32
    %s = arith.addf %x, %f : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// An unsupported element type fails the pass; the error names the target, the function's
// arguments of that type, each source line computing in it (once, not per op), and the
// fix. The ops form accepts f64 arithmetic.
// DTYPES-NOT: func.func @rejects
// DTYPES-ERR:      aotc-check-dtypes: target 'gpu' cannot compute these:
// DTYPES-ERR-NEXT:   rejects_f64: argument 0 is f64
// DTYPES-ERR-NEXT:   {{.*}}check_dtypes.mlir:[[# @LINE + 4]] (in rejects_f64): computes in f64
// DTYPES-ERR-NEXT: Fix: convert the operands to a dtype the target supports with .astype(...)
// OPS-LABEL: func.func @rejects_f64
func.func @rejects_f64(%a: f64) -> f64 {
  %r = arith.mulf %a, %a : f64
  return %r : f64
}

// -----

// Every type in the comma-separated list is rejected.
// DTYPES-ERR:      aotc-check-dtypes: target 'gpu' cannot compute these:
// DTYPES-ERR-NEXT:   rejects_each_listed_type: argument 0 is i64
// DTYPES-ERR-NEXT:   {{.*}}check_dtypes.mlir:[[# @LINE + 3]] (in rejects_each_listed_type): computes in i64
// OPS-LABEL: func.func @rejects_each_listed_type
func.func @rejects_each_listed_type(%a: i64) -> i64 {
  %r = arith.addi %a, %a : i64
  return %r : i64
}

// -----

// unsupported-ops=math.sin:f64 rejects math.sin on f64 and nothing else in the function.
// DTYPES-ERR:      aotc-check-dtypes: target 'gpu' cannot compute these:
// DTYPES-ERR-NEXT:   rejects_sin_f64: argument 0 is f64
// DTYPES-ERR-NEXT:   {{.*}}check_dtypes.mlir:[[# @LINE + 9]] (in rejects_sin_f64): computes in f64
// DTYPES-ERR-NEXT:   {{.*}}check_dtypes.mlir:[[# @LINE + 9]] (in rejects_sin_f64): computes in f64
// OPS-ERR:      aotc-check-dtypes: target 'cpu' cannot compute these:
// OPS-ERR-NEXT:   {{.*}}check_dtypes.mlir:[[# @LINE + 6]] (in rejects_sin_f64): math.sin on f64
// OPS-ERR-NEXT: Fix: convert the operands to a dtype the target supports
// OPS-ERR-NOT:  math.cos
// OPS-ERR-NOT:  func.return
// OPS-ERR-NOT:  on f32
func.func @rejects_sin_f64(%a: f64) -> f64 {
  %s = math.sin %a : f64
  %c = math.cos %s : f64
  return %c : f64
}

// -----

// unsupported-ops is per element type: math.sin on f32 passes.
// DTYPES-LABEL: func.func @accepts_sin_f32
// DTYPES:         math.sin %{{.*}} : f32
// OPS-LABEL:    func.func @accepts_sin_f32
// OPS-NEXT:       %[[S:.*]] = math.sin %{{.*}} : f32
// OPS-NEXT:       return %[[S]] : f32
func.func @accepts_sin_f32(%a: f32) -> f32 {
  %s = math.sin %a : f32
  return %s : f32
}
