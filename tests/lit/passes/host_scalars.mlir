// aotc-host-scalars computes a rank-0 integer generic whose inputs the host holds (a
// loop counter's from_elements, a constant) with scalar ops; canonicalization then folds
// the element reads. A rank-0 generic reading a tensor's element, or a float one, stays.

// RUN: %aotc-opt %s --pass-pipeline='aotc-host-scalars,canonicalize' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-host-scalars,aotc-host-scalars,canonicalize' | filecheck %s

#scalar = affine_map<() -> ()>

// CHECK-LABEL: func.func @counter
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[X:.*]] =
// CHECK:           %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           %[[PREV:.*]] = arith.subi %[[I64]], %{{.*}} : i64
// CHECK:           %[[AT:.*]] = arith.index_cast %[[PREV]] : i64 to index
// CHECK:           tensor.extract %[[X]][%[[AT]]] : tensor<16xf32>
// CHECK-NOT:       linalg.generic
// CHECK:           tensor.insert
func.func @counter(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant dense<1> : tensor<i64>
  %r = scf.for %i = %c1 to %c16 step %c1 iter_args(%acc = %x) -> (tensor<16xf32>) {
    %i64 = arith.index_cast %i : index to i64
    %t = tensor.from_elements %i64 : tensor<i64>
    %e = tensor.empty() : tensor<i64>
    %prev = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []} ins(%t, %one : tensor<i64>, tensor<i64>) outs(%e : tensor<i64>) {
    ^bb0(%a: i64, %b: i64, %o: i64):
      %d = arith.subi %a, %b : i64
      linalg.yield %d : i64
    } -> tensor<i64>
    %p = tensor.extract %prev[] : tensor<i64>
    %at = arith.index_cast %p : i64 to index
    %v = tensor.extract %acc[%at] : tensor<16xf32>
    %new = tensor.insert %v into %acc[%i] : tensor<16xf32>
    scf.yield %new : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: linalg.generic
func.func @kept(%x: tensor<4xi64>, %f: tensor<f32>) -> (tensor<i64>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<4xi64>
  %t = tensor.from_elements %v : tensor<i64>
  %e = tensor.empty() : tensor<i64>
  %r = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%t : tensor<i64>) outs(%e : tensor<i64>) {
  ^bb0(%a: i64, %o: i64):
    %d = arith.addi %a, %a : i64
    linalg.yield %d : i64
  } -> tensor<i64>
  %ef = tensor.empty() : tensor<f32>
  %g = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%f : tensor<f32>) outs(%ef : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  return %r, %g : tensor<i64>, tensor<f32>
}

// A bool computed on the host and read whole by a float select: the select reads it
// through a rank-0 generic from a byte tensor (IREE makes bool tensors bytes inside a
// dispatch and left a from_elements of an i1 making a byte tensor); the branch condition
// (an scf.if, folded to a select) reads the scalar itself. The second run leaves the
// byte generic alone.
// CHECK-LABEL: func.func @bool_read_whole
// CHECK:         %[[B:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : i64
// CHECK:         %[[BYTE:.*]] = arith.extui %[[B]] : i1 to i8
// CHECK:         %[[T8:.*]] = tensor.from_elements %[[BYTE]] : tensor<i8>
// CHECK:         %[[T1:.*]] = linalg.generic {{.*}} ins(%[[T8]] : tensor<i8>) outs(%{{.*}} : tensor<i1>) attrs = {aotc.byte_to_bool}
// CHECK:           arith.trunci %{{.*}} : i8 to i1
// CHECK:         linalg.generic {{.*}} ins(%[[T1]], %{{.*}} : tensor<i1>, tensor<f32>)
// CHECK:         arith.select %[[B]], %{{.*}}, %{{.*}} : tensor<f32>
// CHECK-NOT:     tensor.from_elements %{{.*}} : tensor<i1>
func.func @bool_read_whole(%n: i64, %f: tensor<f32>) -> tensor<f32> {
  %t = tensor.from_elements %n : tensor<i64>
  %zero = arith.constant dense<0> : tensor<i64>
  %e = tensor.empty() : tensor<i1>
  %gt = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []} ins(%t, %zero : tensor<i64>, tensor<i64>) outs(%e : tensor<i1>) {
  ^bb0(%a: i64, %b: i64, %o: i1):
    %c = arith.cmpi sgt, %a, %b : i64
    linalg.yield %c : i1
  } -> tensor<i1>
  %ef = tensor.empty() : tensor<f32>
  %sel = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []} ins(%gt, %f : tensor<i1>, tensor<f32>) outs(%ef : tensor<f32>) {
  ^bb0(%c: i1, %a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %s = arith.select %c, %a, %z : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %cond = tensor.extract %gt[] : tensor<i1>
  %r = scf.if %cond -> tensor<f32> {
    scf.yield %sel : tensor<f32>
  } else {
    scf.yield %f : tensor<f32>
  }
  return %r : tensor<f32>
}
