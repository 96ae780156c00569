# RUN: %python %s | filecheck %s
"""Snapshots of elementwise lowering: broadcasting, numpy's dtype promotion, Python and
numpy constants, and the integer and float64 rules that differ from a plain arith op.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>";
the CHECK lines below each header describe the MLIR that IREE receives."""

import numpy as np

import aotc.numpy as anp

from snapshot import S, run


# A size-1 dim is collapsed away, not broadcast through a map with a constant 0; each
# operand is read through a projected permutation of the loops. The Python scalar 2.0
# is weak: it becomes an f32 scalar constant used in the body, not an f64 or a tensor.
# CHECK-LABEL: TEST: add_broadcast
# CHECK-DAG:   #[[ROWS:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
# CHECK-DAG:   #[[COLS:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
# CHECK-DAG:   #[[ALL:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
# CHECK:       func.func public @add_broadcast(%[[X:.*]]: tensor<3x1xf32>, %[[Y:.*]]: tensor<4xf32>) -> tensor<3x4xf32>
# CHECK:         %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
# CHECK:         %[[SCALED:.*]] = linalg.generic
# CHECK-SAME:        ins(%[[Y]] : tensor<4xf32>)
# CHECK:           arith.mulf %{{.*}}, %[[TWO]] : f32
# CHECK:         %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<3x1xf32> into tensor<3xf32>
# CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[COLS]], #[[ALL]]], iterator_types = ["parallel", "parallel"]}
# CHECK-SAME:        ins(%[[XC]], %[[SCALED]] : tensor<3xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
# CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
# CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
# CHECK-NEXT:      linalg.yield %[[SUM]] : f32
# CHECK:         return %[[R]] : tensor<3x4xf32>
@run(S((3, 1), "float32"), S((4,), "float32"))
def add_broadcast(x, y):
    return x + y * 2.0


# int8 + float32 is float32 (numpy's promotion); the cast happens inside the one generic,
# on the int8 element, not in a separate pass over a converted tensor.
# CHECK-LABEL: TEST: promote_int8_float32
# CHECK:       func.func public @promote_int8_float32(%[[A:.*]]: tensor<4xi8>, %[[B:.*]]: tensor<4xf32>) -> tensor<4xf32>
# CHECK:         %[[R:.*]] = linalg.generic
# CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<4xi8>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
# CHECK-NEXT:    ^bb0(%[[I:.*]]: i8, %[[F:.*]]: f32, %{{.*}}: f32):
# CHECK-NEXT:      %[[IF:.*]] = arith.sitofp %[[I]] : i8 to f32
# CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[IF]], %[[F]] : f32
# CHECK-NEXT:      linalg.yield %[[SUM]] : f32
# CHECK-NOT:     linalg.generic
# CHECK:         return %[[R]] : tensor<4xf32>
@run(S((4,), "int8"), S((4,), "float32"))
def promote_int8_float32(a, b):
    return a + b


W = np.arange(6, dtype=np.float32).reshape(2, 3)


# A numpy array captured by the function is embedded as a dense constant of its dtype.
# CHECK-LABEL: TEST: add_numpy_constant
# CHECK:       func.func public @add_numpy_constant(%[[X:.*]]: tensor<2x3xf32>) -> tensor<2x3xf32>
# CHECK:         %[[W:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00, 5.000000e+00]]> : tensor<2x3xf32>
# CHECK:         linalg.generic
# CHECK-SAME:        ins(%[[X]], %[[W]] : tensor<2x3xf32>, tensor<2x3xf32>)
# CHECK:           arith.addf
@run(S((2, 3), "float32"))
def add_numpy_constant(x):
    return x + W


# numpy's integer floor division gives 0 for a zero divisor and wraps for MIN // -1;
# arith.floordivsi is undefined for both, so the divisor is replaced by 1 before the
# division and the two cases are selected afterwards.
# CHECK-LABEL: TEST: floor_divide_int32
# CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
# CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
# CHECK-DAG:     %[[MINUS_ONE:.*]] = arith.constant -1 : i32
# CHECK:         linalg.generic
# CHECK-NEXT:    ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
# CHECK-NEXT:      %[[B_ZERO:.*]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i32
# CHECK-NEXT:      %[[B_MINUS_ONE:.*]] = arith.cmpi eq, %[[B]], %[[MINUS_ONE]] : i32
# CHECK-NEXT:      %[[UNSAFE:.*]] = arith.ori %[[B_ZERO]], %[[B_MINUS_ONE]] : i1
# CHECK-NEXT:      %[[DIVISOR:.*]] = arith.select %[[UNSAFE]], %[[ONE]], %[[B]] : i32
# CHECK-NEXT:      %[[QUOTIENT:.*]] = arith.floordivsi %[[A]], %[[DIVISOR]] : i32
# CHECK-NEXT:      %[[NEGATED:.*]] = arith.subi %[[ZERO]], %[[A]] : i32
# CHECK-NEXT:      %[[NOT_ZERO:.*]] = arith.select %[[B_MINUS_ONE]], %[[NEGATED]], %[[QUOTIENT]] : i32
# CHECK-NEXT:      %[[R:.*]] = arith.select %[[B_ZERO]], %[[ZERO]], %[[NOT_ZERO]] : i32
# CHECK-NEXT:      linalg.yield %[[R]] : i32
@run(S((4,), "int32"), S((4,), "int32"))
def floor_divide_int32(a, b):
    return a // b


# IREE's CPU code computes float64 tanh poorly (its expm1 is 10**15 ulps off near 0): the
# cpu target's aotc-expand-math pass rewrites math.tanh into aotc's expansion, from
# math.exp and math.log (tests/lit/passes/expand_math.mlir); the tracer emits math.tanh.
# CHECK-LABEL: TEST: tanh_float64
# CHECK:       func.func public @tanh_float64(%{{.*}}: tensor<4xf64>) -> tensor<4xf64>
# CHECK-NOT:     math.tanh
# CHECK:         linalg.generic
# CHECK:           math.exp %{{.*}} : f64
# CHECK:           math.log %{{.*}} : f64
# CHECK:           math.copysign %{{.*}} : f64
# CHECK-NOT:     math.tanh
# CHECK:         return
@run(S((4,), "float64"))
def tanh_float64(x):
    return anp.tanh(x)


# float32 too.
# CHECK-LABEL: TEST: tanh_float32
# CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
# CHECK-NEXT:      %[[R:.*]] = math.tanh %[[X]] : f32
# CHECK-NEXT:      linalg.yield %[[R]] : f32
@run(S((4,), "float32"))
def tanh_float32(x):
    return anp.tanh(x)
