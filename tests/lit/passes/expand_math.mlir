// aotc-expand-math replaces the float64 math ops IREE's CPU code lacks or gets wrong with
// aotc's arith-only versions (passes/libm), and float32 exp2 with a float32 one;
// aotc-expand-math-f32 computes float32 sin/cos/tan/atan/atan2/cbrt in float64 and rounds
// once. Other ops pass through. Running the passes twice changes nothing.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-expand-math,aotc-expand-math-f32' | filecheck %s
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-expand-math,aotc-expand-math-f32,aotc-expand-math,aotc-expand-math-f32' | filecheck %s

// float64 sin: Cody-Waite and Payne-Hanek (2/pi's words read from a constant table),
// both kernels, a select by quadrant; no math.sin is left and no libm call is needed.
// CHECK-LABEL: func.func @sin_f64
// CHECK-NOT:     math.sin
// CHECK:         arith.constant dense<{{.*}}> : tensor<40xi64>
// CHECK:         tensor.extract
// CHECK:         arith.select
// CHECK-NOT:     math.sin
// CHECK:         return %{{.*}} : f64
func.func @sin_f64(%x: f64) -> f64 {
  %r = math.sin %x : f64
  return %r : f64
}

// -----

// float32 sin: widened, the float64 expansion (its window chosen by selects, no table
// read), rounded back.
// CHECK-LABEL: func.func @sin_f32
// CHECK:         %[[W:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK-NOT:     tensor.extract
// CHECK-NOT:     math.sin
// CHECK:         %[[R:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT:    return %[[R]] : f32
func.func @sin_f32(%x: f32) -> f32 {
  %r = math.sin %x : f32
  return %r : f32
}

// -----

// float32 exp2 stays float32: 2**round(x) (built from bits) times exp(f * ln 2).
// CHECK-LABEL: func.func @exp2_f32
// CHECK-NOT:     arith.extf
// CHECK-NOT:     math.exp2
// CHECK:         math.exp %{{.*}} : f32
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         return %{{.*}} : f32
func.func @exp2_f32(%x: f32) -> f32 {
  %r = math.exp2 %x : f32
  return %r : f32
}

// -----

// What IREE computes well is left alone: float64 exp and log, float32 tanh and exp,
// and vectors (aotc's ops are scalars in linalg bodies).
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    math.exp %{{.*}} : f64
// CHECK-NEXT:    math.log %{{.*}} : f64
// CHECK-NEXT:    math.tanh %{{.*}} : f32
// CHECK-NEXT:    math.exp %{{.*}} : f32
// CHECK-NEXT:    math.sin %{{.*}} : vector<4xf64>
// CHECK-NEXT:    return
func.func @untouched(%a: f64, %b: f32, %v: vector<4xf64>) -> (f64, f64, f32, f32, vector<4xf64>) {
  %e = math.exp %a : f64
  %l = math.log %a : f64
  %t = math.tanh %b : f32
  %x = math.exp %b : f32
  %s = math.sin %v : vector<4xf64>
  return %e, %l, %t, %x, %s : f64, f64, f32, f32, vector<4xf64>
}
