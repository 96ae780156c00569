// aotc-widen-narrow-ints computes 8/16-bit division, shifts, comparisons and min/max on
// i32 (the Vulkan baseline emulates narrow integers without them); other ops pass through.
// Running it twice changes nothing.
// aotc-check-narrow-arguments refuses narrow integer and bool arguments that end in a
// partial 32-bit word.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-widen-narrow-ints' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-widen-narrow-ints,aotc-widen-narrow-ints' | filecheck %s
// RUN: not %aotc-opt %s --split-input-file --pass-pipeline='aotc-check-narrow-arguments' 2>&1 | filecheck %s --check-prefix=ARGS

// Unsigned division: zero-extended operands, the op on i32, truncated back.
// CHECK-LABEL: func.func @divui
// CHECK-SAME:      (%[[A:.*]]: i8, %[[B:.*]]: i8)
// CHECK-NEXT:    %[[WA:.*]] = arith.extui %[[A]] : i8 to i32
// CHECK-NEXT:    %[[WB:.*]] = arith.extui %[[B]] : i8 to i32
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %[[WA]], %[[WB]] : i32
// CHECK-NEXT:    %[[R:.*]] = arith.trunci %[[Q]] : i32 to i8
// CHECK-NEXT:    return %[[R]] : i8
func.func @divui(%a: i8, %b: i8) -> i8 {
  %r = arith.divui %a, %b : i8
  return %r : i8
}

// -----

// Signed ops stay (the emulation has them); an unsigned comparison keeps its predicate
// and its i1 result.
// CHECK-LABEL: func.func @signed_and_compare
// CHECK-SAME:      (%[[A:.*]]: i16, %[[B:.*]]: i16)
// CHECK-NEXT:    %[[M:.*]] = arith.maxsi %[[A]], %[[B]] : i16
// CHECK-NEXT:    %[[UA:.*]] = arith.extui %[[M]] : i16 to i32
// CHECK-NEXT:    %[[UB:.*]] = arith.extui %[[B]] : i16 to i32
// CHECK-NEXT:    %[[C:.*]] = arith.cmpi ugt, %[[UA]], %[[UB]] : i32
// CHECK-NEXT:    return %[[C]] : i1
func.func @signed_and_compare(%a: i16, %b: i16) -> i1 {
  %m = arith.maxsi %a, %b : i16
  %c = arith.cmpi ugt, %m, %b : i16
  return %c : i1
}

// -----

// Ops that read the bits the same either way, i32 ops and equality stay as they are.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    arith.addi %{{.*}}, %{{.*}} : i8
// CHECK-NEXT:    arith.divui %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    arith.cmpi eq, %{{.*}}, %{{.*}} : i8
// CHECK-NOT:     arith.ext
func.func @untouched(%a: i8, %b: i8, %c: i32) -> (i8, i32, i1) {
  %s = arith.addi %a, %b : i8
  %d = arith.divui %c, %c : i32
  %e = arith.cmpi eq, %a, %b : i8
  return %s, %d, %e : i8, i32, i1
}

// -----

// ARGS: aotc-check-narrow-arguments: Vulkan reads 8- and 16-bit integer and bool arguments in 4-byte words
// ARGS-NEXT: f(argument 0: tensor<6xi8>): 6 bytes
// ARGS-NEXT: f(argument 2: tensor<i1>): 1 byte
// ARGS-NEXT: f(argument 3: tensor<?xi16>): its size is known only at run time
// ARGS-NEXT: Fix: pass these arguments as int32
func.func @f(%a: tensor<6xi8>, %b: tensor<8xi8>, %c: tensor<i1>, %d: tensor<?xi16>, %e: tensor<3xi32>) {
  return
}
