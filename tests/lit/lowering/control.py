# RUN: %python %s | filecheck %s
"""Snapshots of aotc.lax control flow: one scf op on tensors per construct, with the
branch or body traced into its regions.

cond is scf.if with tensor results; switch a chain of scf.if on the clamped index;
while_loop scf.while (scf.condition on a tensor.extract'ed i1); fori_loop with static
bounds scf.for over index with the counter rebuilt as a 0-d tensor; scan scf.for whose
iter_args are the carry and then one stacked buffer per y type (ys of one type share it,
a row each), x read with a dynamic-offset tensor.extract_slice and y written with
tensor.insert_slice into the carried buffer.
Every op names the module's one device (stream.affinity): without it IREE 3.13 copies
loop-carried tensors (scan's whole ys) on every iteration.

Each function is traced with aotc.jit(f).lower(...) and printed under "TEST: <name>"."""

import aotc.lax as lax

from snapshot import S, run


# A Python scalar output (1.0) takes the other branch's dtype: cast inside its branch.
# CHECK-LABEL: TEST: cond_pytree
# CHECK:       func.func public @cond_pytree(%[[P:.*]]: tensor<f32>, %[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>)
# CHECK:         %[[GT:.*]] = linalg.generic
# CHECK:           arith.cmpf ogt
# CHECK:         %[[C:.*]] = tensor.extract %[[GT]][] : tensor<i1>
# CHECK:         %[[R:.*]]:2 = scf.if %[[C]] -> (tensor<4xf32>, tensor<f32>) {
# CHECK:           arith.mulf
# CHECK:           %[[FIRST:.*]] = tensor.collapse_shape
# CHECK:           scf.yield %{{.*}}, %[[FIRST]] : tensor<4xf32>, tensor<f32>
# CHECK-NEXT:    } else {
# CHECK:           arith.negf
# CHECK:           arith.constant dense<1.000000e+00> : tensor<f32>
# CHECK:           scf.yield %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<f32>
# CHECK-NEXT:    }
# CHECK-NEXT:    return %[[R]]#0, %[[R]]#1 : tensor<4xf32>, tensor<f32>
@run(S((), "float32"), S((4,), "float32"))
def cond_pytree(p, x):
    return lax.cond(p > 0, lambda v: (v * 2, v[0]), lambda v: (-v, 1.0), x)


# The index is clamped to [0, 2]; branch k runs where it equals k, the last one otherwise.
# CHECK-LABEL: TEST: switch_three
# CHECK:         arith.maxsi %{{.*}}, %[[ZERO:.*]] : i32
# CHECK:         arith.minsi %{{.*}}, %[[TWO:.*]] : i32
# CHECK:         arith.cmpi eq, %{{.*}}, %[[ZERO]] : i32
# CHECK:         %[[IS0:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
# CHECK:         arith.cmpi eq, %{{.*}}, %{{.*}} : i32
# CHECK:         %[[IS1:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
# CHECK:         %[[R:.*]] = scf.if %[[IS0]] -> (tensor<4xf32>) {
# CHECK-NEXT:      scf.yield %arg1 : tensor<4xf32>
# CHECK-NEXT:    } else {
# CHECK-NEXT:      %[[INNER:.*]] = scf.if %[[IS1]] -> (tensor<4xf32>) {
# CHECK:             arith.mulf
# CHECK:           } else {
# CHECK:             arith.addf
# CHECK:             scf.yield %{{.*}} : tensor<4xf32>
# CHECK-NEXT:      }
# CHECK-NEXT:      scf.yield %[[INNER]] : tensor<4xf32>
# CHECK-NEXT:    }
# CHECK-NEXT:    return %[[R]]
@run(S((), "int32"), S((4,), "float32"))
def switch_three(k, x):
    return lax.switch(k, [lambda v: v, lambda v: v * 2, lambda v: v + 1], x)


# The Python int 0 in the carry is a weakly typed int64, as a Python int is in aotc.numpy.
# CHECK-LABEL: TEST: while_count
# CHECK:         %[[ZERO:.*]] = arith.constant dense<0> : tensor<i64>
# CHECK:         %[[R:.*]]:2 = scf.while (%[[I:.*]] = %[[ZERO]], %[[V:.*]] = %arg0) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
# CHECK:           arith.cmpi slt
# CHECK:           %[[GO:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
# CHECK-NEXT:      scf.condition(%[[GO]]) %[[I]], %[[V]] : tensor<i64>, tensor<4xf32>
# CHECK-NEXT:    } do {
# CHECK-NEXT:    ^bb0(%[[I2:.*]]: tensor<i64>, %[[V2:.*]]: tensor<4xf32>):
# CHECK:           arith.addi
# CHECK:           arith.mulf
# CHECK:           scf.yield %{{.*}}, %{{.*}} : tensor<i64>, tensor<4xf32>
# CHECK-NEXT:    }
# CHECK-NEXT:    return %[[R]]#0, %[[R]]#1 : tensor<i64>, tensor<4xf32>
@run(S((4,), "float32"))
def while_count(x):
    return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2), (0, x))


# CHECK-LABEL: TEST: fori_static
# CHECK-DAG:     %[[LB:.*]] = arith.constant 0 : index
# CHECK-DAG:     %[[UB:.*]] = arith.constant 5 : index
# CHECK-DAG:     %[[STEP:.*]] = arith.constant 1 : index
# CHECK:         %[[R:.*]] = scf.for %[[IV:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %arg0) -> (tensor<4xf32>) {
# CHECK-NEXT:      %[[I:.*]] = arith.index_cast %[[IV]] : index to i64
# CHECK-NEXT:      %[[IT:.*]] = tensor.from_elements %[[I]] : tensor<i64>
# CHECK:           linalg.generic {{.*}} ins(%[[ACC]], %[[IT]] : tensor<4xf32>, tensor<i64>)
# CHECK:           scf.yield %{{.*}} : tensor<4xf32>
# CHECK-NEXT:    }
# CHECK-NEXT:    return %[[R]] : tensor<4xf32>
@run(S((4,), "float32"))
def fori_static(x):
    return lax.fori_loop(0, 5, lambda i, a: a + i, x)


# Traced bounds: a while loop counting i (carried) up to the closed-over upper bound.
# CHECK-LABEL: TEST: fori_traced
# CHECK:         scf.while (%[[I:.*]] = %arg0, %[[A:.*]] = %arg2) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
# CHECK:           linalg.generic {{.*}} ins(%[[I]], %arg1 : tensor<i32>, tensor<i32>)
# CHECK:             arith.cmpi slt
# CHECK:           scf.condition
# CHECK:         } do {
# CHECK:           arith.addi
# CHECK:           scf.yield %{{.*}}, %{{.*}} : tensor<i32>, tensor<4xf32>
@run(S((), "int32"), S((), "int32"), S((4,), "float32"))
def fori_traced(lo, hi, x):
    return lax.fori_loop(lo, hi, lambda i, a: a * 2, x)


# ys are written in place into a buffer carried after the carry; reverse reads and
# writes step s at 6 - s.
# CHECK-LABEL: TEST: scan_reverse
# CHECK:       func.func public @scan_reverse(%[[H:.*]]: tensor<4xf32>, %[[XS:.*]]: tensor<7x4xf32>) -> (tensor<4xf32>, tensor<7x4xf32>)
# CHECK-DAG:     %[[LAST:.*]] = arith.constant 6 : index
# CHECK-DAG:     %[[N:.*]] = arith.constant 7 : index
# CHECK-DAG:     %[[YS0:.*]] = tensor.empty() : tensor<7x4xf32>
# CHECK:         %[[R:.*]]:2 = scf.for %[[S:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[C:.*]] = %[[H]], %[[YS:.*]] = %[[YS0]]) -> (tensor<4xf32>, tensor<7x4xf32>) {
# CHECK-NEXT:      %[[T:.*]] = arith.subi %[[LAST]], %[[S]] : index
# CHECK-NEXT:      %[[X:.*]] = tensor.extract_slice %[[XS]][%[[T]], 0] [1, 4] [1, 1] : tensor<7x4xf32> to tensor<4xf32>
# CHECK:           %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[X]] : tensor<4xf32>, tensor<4xf32>)
# CHECK:             arith.addf
# CHECK:           %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[X]] : tensor<4xf32>, tensor<4xf32>)
# CHECK:             arith.mulf
# CHECK:           %[[WRITTEN:.*]] = tensor.insert_slice %[[Y]] into %[[YS]][%[[T]], 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<7x4xf32>
# CHECK-NEXT:      scf.yield %[[NEXT]], %[[WRITTEN]] : tensor<4xf32>, tensor<7x4xf32>
# CHECK-NEXT:    } {stream.affinity = #hal.device.affinity<@__device_0>}
# CHECK-NEXT:    return %[[R]]#0, %[[R]]#1 : tensor<4xf32>, tensor<7x4xf32>
@run(S((4,), "float32"), S((7, 4), "float32"))
def scan_reverse(h, xs):
    return lax.scan(lambda c, x: (c + x, c * x), h, xs, reverse=True)


# Two ys of one type (and one of another): one [2, 7, 4] buffer, a row each, sliced out
# after the loop. (Two buffers from one CSE'd tensor.empty got the same memory in IREE.)
# CHECK-LABEL: TEST: scan_ys_of_one_type
# CHECK-DAG:     %[[PAIR0:.*]] = tensor.empty() : tensor<2x7x4xf32>
# CHECK-DAG:     %[[ONE0:.*]] = tensor.empty() : tensor<7x4xi1>
# CHECK:         %[[R:.*]]:3 = scf.for %[[S:.*]] = %{{.*}} iter_args(%[[C:.*]] = %{{.*}}, %[[PAIR:.*]] = %[[PAIR0]], %[[ONE:.*]] = %[[ONE0]]) -> (tensor<4xf32>, tensor<2x7x4xf32>, tensor<7x4xi1>) {
# CHECK:           %[[W0:.*]] = tensor.insert_slice %[[C]] into %[[PAIR]][0, %[[S]], 0] [1, 1, 4] [1, 1, 1] : tensor<4xf32> into tensor<2x7x4xf32>
# CHECK:           %[[W1:.*]] = tensor.insert_slice %{{.*}} into %[[W0]][1, %[[S]], 0] [1, 1, 4] [1, 1, 1] : tensor<4xf32> into tensor<2x7x4xf32>
# CHECK:           %[[W2:.*]] = tensor.insert_slice %{{.*}} into %[[ONE]][%[[S]], 0] [1, 4] [1, 1] : tensor<4xi1> into tensor<7x4xi1>
# CHECK:           scf.yield %{{.*}}, %[[W1]], %[[W2]] : tensor<4xf32>, tensor<2x7x4xf32>, tensor<7x4xi1>
# CHECK:         %{{.*}} = tensor.extract_slice %[[R]]#1[0, 0, 0] [1, 7, 4] [1, 1, 1] : tensor<2x7x4xf32> to tensor<7x4xf32>
# CHECK:         %{{.*}} = tensor.extract_slice %[[R]]#1[1, 0, 0] [1, 7, 4] [1, 1, 1] : tensor<2x7x4xf32> to tensor<7x4xf32>
@run(S((4,), "float32"), S((7, 4), "float32"))
def scan_ys_of_one_type(h, xs):
    return lax.scan(lambda c, x: (c + x, (c, c * x, x > 0)), h, xs)


# xs=None with length: no slices; a cond inside the body nests an scf.if in the scf.for.
# CHECK-LABEL: TEST: scan_length_with_cond
# CHECK:         scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %arg0, %[[YS:.*]] = %{{.*}}) -> (tensor<f32>, tensor<3xf32>) {
# CHECK-NOT:       tensor.extract_slice
# CHECK:           %[[NEXT:.*]] = scf.if %{{.*}} -> (tensor<f32>) {
# CHECK:             arith.subf
# CHECK:           } else {
# CHECK:             arith.mulf
# CHECK:             scf.yield %{{.*}} : tensor<f32>
# CHECK-NEXT:      }
# CHECK-NEXT:      %[[W:.*]] = tensor.insert_slice %[[C]] into %[[YS]][%[[S]]] [1] [1] : tensor<f32> into tensor<3xf32>
# CHECK-NEXT:      scf.yield %[[NEXT]], %[[W]] : tensor<f32>, tensor<3xf32>
@run(S((), "float32"))
def scan_length_with_cond(h):
    return lax.scan(lambda c, _: (lax.cond(c > 1, lambda: c - 1, lambda: c * 3), c), h, None, length=3)
