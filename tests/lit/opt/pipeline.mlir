// The --pass-pipeline syntax of aotc-opt: aotc passes with {key=value ...} options mixed
// with upstream passes, in order, optionally inside builtin.module(...); mistakes in the
// pipeline are reported before any input is read.

// RUN: %aotc-opt %s --pass-pipeline='canonicalize,aotc-check-dtypes{unsupported=f64 target=gpu},cse' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='builtin.module(aotc-cleanup,aotc-check-dtypes{unsupported=f64})' | filecheck %s
// RUN: not %aotc-opt %s --pass-pipeline='aotc-check-dtypes{unsupported=f64},canonicalize' 2>&1 | filecheck %s --check-prefix=REJECTED
// RUN: not %aotc-opt %s --pass-pipeline='aotc-check-dtypes{unsuported=f64}' 2>&1 | filecheck %s --check-prefix=BAD-OPTION
// RUN: not %aotc-opt %s --pass-pipeline='canonicalize,no-such-pass' 2>&1 | filecheck %s --check-prefix=BAD-PASS

// Run after canonicalize, the check sees only the folded f32 constant; run before it,
// it rejects the f64 arithmetic.
// CHECK-LABEL: func.func @checks_after_folding
// CHECK-NEXT:    %[[C:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:    return %[[C]] : f32
// REJECTED:    aotc-check-dtypes: target 'this target' cannot compute these:
// REJECTED:      pipeline.mlir:[[# @LINE + 5]] (in checks_after_folding): computes in f64
// BAD-OPTION:  error: aotc-check-dtypes: unknown option 'unsuported'. Valid options: target, unsupported, unsupported-ops
// BAD-PASS:    'no-such-pass' does not refer to a registered pass or pass pipeline
// BAD-PASS:    aotc passes: {{.*}}aotc-check-dtypes{{.*}}; pipelines: aotc-cleanup
func.func @checks_after_folding() -> f32 {
  %a = arith.constant 2.0 : f64
  %b = arith.addf %a, %a : f64
  %c = arith.truncf %b : f64 to f32
  return %c : f32
}
