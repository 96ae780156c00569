// aotc-donate pairs each argument marked `aotc.donate = "<name>"` with a result of the
// same type that can be written into its buffer, sets `iree.abi.output = <result>` on it
// and removes the marker. An argument no result can use keeps no attribute and gets a
// DonationWarning (strict=true: the pass fails). Running the pass again changes nothing.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-donate' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=WARN --input-file=%t.err
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-donate,aotc-donate' 2>%t.rerun.err \
// RUN:   | filecheck %s
// RUN: not %aotc-opt %s --split-input-file --pass-pipeline='aotc-donate{strict=true}' 2>%t.strict.err \
// RUN:   | filecheck %s --check-prefix=STRICT
// RUN: filecheck %s --check-prefix=STRICT-ERR --input-file=%t.strict.err

// One donation: an elementwise update is written in place.
// CHECK-LABEL: func.func @one_donation
// CHECK-SAME:      (%[[S:.*]]: tensor<4xf32> {iree.abi.output = 0 : index}) -> tensor<4xf32>
// CHECK-NOT:     aotc.donate
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<4xf32>)
// CHECK:         return %[[R]]
// STRICT-LABEL: func.func @one_donation
// STRICT-SAME:      iree.abi.output = 0 : index
func.func @one_donation(%state: tensor<4xf32> {aotc.donate = "state"}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%state : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %c2 = arith.constant 2.0 : f32
    %m = arith.mulf %v, %c2 : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Several donations, each paired with the result that updates it (whatever the result
// order); the argument that is not donated gets nothing.
// CHECK-LABEL: func.func @several
// CHECK-SAME:      (%{{.*}}: tensor<4xf32> {iree.abi.output = 1 : index},
// CHECK-SAME:       %{{.*}}: tensor<8xi32> {iree.abi.output = 0 : index},
// CHECK-SAME:       %{{[^:]*}}: tensor<4xf32>) -> (tensor<8xi32>, tensor<4xf32>)
func.func @several(%a: tensor<4xf32> {aotc.donate = "a"}, %b: tensor<8xi32> {aotc.donate = "b"},
                   %x: tensor<4xf32>) -> (tensor<8xi32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %ra = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                         affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %eb = tensor.empty() : tensor<8xi32>
  %rb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%b : tensor<8xi32>) outs(%eb : tensor<8xi32>) {
  ^bb0(%v: i32, %o: i32):
    %one = arith.constant 1 : i32
    %s = arith.addi %v, %one : i32
    linalg.yield %s : i32
  } -> tensor<8xi32>
  return %rb, %ra : tensor<8xi32>, tensor<4xf32>
}

// -----

// Same-type ambiguity: both results have the donated arguments' type. Each argument
// takes the result that updates it in place (a -> result 1, b -> result 0), not the
// first result of its type: writing b + 1 over a would clobber a before a + 1 reads it.
// CHECK-LABEL: func.func @same_type_prefers_in_place
// CHECK-SAME:      (%{{.*}}: tensor<4xf32> {iree.abi.output = 1 : index},
// CHECK-SAME:       %{{.*}}: tensor<4xf32> {iree.abi.output = 0 : index})
func.func @same_type_prefers_in_place(%a: tensor<4xf32> {aotc.donate = "a"},
                                      %b: tensor<4xf32> {aotc.donate = "b"})
    -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %rb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %c = arith.constant 1.0 : f32
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %ra = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %c = arith.constant 1.0 : f32
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %rb, %ra : tensor<4xf32>, tensor<4xf32>
}

// -----

// Same-type ambiguity with nothing to prefer: neither donated buffer is read, so either
// result fits either; arguments are served in order, results taken in order.
// CHECK-LABEL: func.func @same_type_in_order
// CHECK-SAME:      (%{{.*}}: tensor<4xf32> {iree.abi.output = 0 : index},
// CHECK-SAME:       %{{.*}}: tensor<4xf32> {iree.abi.output = 1 : index},
// CHECK-SAME:       %{{[^:]*}}: tensor<4xf32>)
func.func @same_type_in_order(%a: tensor<4xf32> {aotc.donate = "a"},
                              %b: tensor<4xf32> {aotc.donate = "b"}, %x: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                          affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32, %p: f32):
    %s = arith.addf %v, %v : f32
    %m = arith.mulf %v, %v : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Arguments returned unchanged (swapped) keep their own buffers: nothing is written.
// CHECK-LABEL: func.func @swap
// CHECK-SAME:      (%[[A:.*]]: tensor<4xf32> {iree.abi.output = 1 : index},
// CHECK-SAME:       %[[B:.*]]: tensor<4xf32> {iree.abi.output = 0 : index})
// CHECK-NEXT:    return %[[B]], %[[A]]
func.func @swap(%a: tensor<4xf32> {aotc.donate = "a"}, %b: tensor<4xf32> {aotc.donate = "b"})
    -> (tensor<4xf32>, tensor<4xf32>) {
  return %b, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

// A slice update through concatenation writes each piece back where it was read from.
// CHECK-LABEL: func.func @slice_update
// CHECK-SAME:      (%{{.*}}: tensor<4x8xf32> {iree.abi.output = 0 : index}, %{{[^:]*}}: tensor<2x8xf32>)
// CHECK:         tensor.concat
func.func @slice_update(%x: tensor<4x8xf32> {aotc.donate = "x"}, %d: tensor<2x8xf32>)
    -> tensor<4x8xf32> {
  %top = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %new = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%top, %d : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  %rest = tensor.extract_slice %x[2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %r = tensor.concat dim(0) %new, %rest : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Another result reads the donated weights (through a transpose) and the new weights do
// not depend on that read: the update is ordered after it with a barrier over the
// update's computed input and the reader's result, and the update group moves last.
// CHECK-LABEL: func.func @ordered_by_barrier
// CHECK-SAME:      (%[[W:.*]]: tensor<4x4xf32> {iree.abi.output = 0 : index}, %[[G:[^:]*]]: tensor<4x4xf32>)
// CHECK:         %[[M:.*]] = linalg.matmul ins(%[[G]], %[[G]]
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<4x4xf32>)
// CHECK:         %[[B:.*]]:2 = util.optimization_barrier %[[M]], %[[T]]
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[B]]#0 : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK:         return %[[U]], %[[T]]
func.func @ordered_by_barrier(%w: tensor<4x4xf32> {aotc.donate = "w"}, %g: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %gg = linalg.matmul ins(%g, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w, %gg : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %d: f32, %o: f32):
    %s = arith.subf %v, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  return %u, %t : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Unusable donations: no result of the type; a result that reads the donated matrix at
// other positions than it writes (a matmul); a result shifted by a slice. They keep no
// attribute and warn, naming the argument and why; strict=true fails instead.
// CHECK-LABEL: func.func @unusable
// CHECK-SAME:      (%{{.*}}: tensor<3xf32>, %{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<4x4xf32>, %{{[^:]*}}: tensor<4x4xf32>)
// CHECK-NOT:     iree.abi.output
// CHECK-NOT:     aotc.donate
// WARN:      DonationWarning: aotc-donate: @unusable: donated argument 'v' (tensor<3xf32>) cannot be used: no result has its type tensor<3xf32>.
// WARN-SAME: The argument is not donated
// WARN:      DonationWarning: aotc-donate: @unusable: donated argument 'm' (tensor<4x4xf32>) cannot be used:
// WARN-SAME: result 0: its value is computed by linalg.matmul at donation.mlir:[[# @LINE + 14]], which reads 'm' at other positions than it writes
// WARN:      DonationWarning: aotc-donate: @unusable: donated argument 's' (tensor<4x4xf32>) cannot be used:
// WARN-SAME: result 1: it would move elements of 's' to other positions (tensor.concat at donation.mlir:[[# @LINE + 15]])
// STRICT-NOT: func.func @unusable
// STRICT-ERR:      aotc-donate: @unusable: donated argument 'v' (tensor<3xf32>) cannot be used: no result has its type
// STRICT-ERR:      aotc-donate: @unusable: donated argument 'm' (tensor<4x4xf32>) cannot be used:
// STRICT-ERR:      aotc-donate: @unusable: donated argument 's' (tensor<4x4xf32>) cannot be used:
// STRICT-ERR-NEXT: Fix: donate only arguments that a result of the same shape and dtype replaces
func.func @unusable(%v: tensor<3xf32> {aotc.donate = "v"}, %m: tensor<4x4xf32> {aotc.donate = "m"},
                    %s: tensor<4x4xf32> {aotc.donate = "s"}, %w: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.matmul ins(%m, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %lo = tensor.extract_slice %s[1, 0] [3, 4] [1, 1] : tensor<4x4xf32> to tensor<3x4xf32>
  %hi = tensor.extract_slice %s[0, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<1x4xf32>
  %r = tensor.concat dim(0) %lo, %hi : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  return %p, %r : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Rerunning is harmless: an argument that already carries iree.abi.output (and no
// marker) is left alone, and its result is not offered to another donated argument.
// CHECK-LABEL: func.func @already_paired
// CHECK-SAME:      (%{{.*}}: tensor<4xf32> {iree.abi.output = 0 : index}, %{{[^:]*}}: tensor<4xf32>)
// WARN:      DonationWarning: aotc-donate: @already_paired: donated argument 'late' (tensor<4xf32>) cannot be used: every result of its type tensor<4xf32> already holds a donated buffer.
func.func @already_paired(%done: tensor<4xf32> {iree.abi.output = 0 : index},
                          %late: tensor<4xf32> {aotc.donate = "late"}) -> tensor<4xf32> {
  return %done : tensor<4xf32>
}
