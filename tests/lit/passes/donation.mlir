// aotc-donate pairs each argument marked `aotc.donate = "<name>"` with a result of the
// same type that can be written into its buffer, sets `iree.abi.output = <result>` on it
// and removes the marker. An argument no result can use keeps no attribute and gets a
// DonationWarning (strict=true: the pass fails). The compiler runs it followed by
// aotc-keep-undonated-arguments, as here: an argument updated in place but not donated
// is read again by a barrier before the return, so that IREE updates a copy (see
// keep_arguments.mlir). Running the passes again changes nothing.

// DEFINE: %{donation} = aotc-donate,aotc-keep-undonated-arguments
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='%{donation}' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=WARN --input-file=%t.err
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='%{donation},%{donation}' \
// RUN:   2>%t.rerun.err | filecheck %s
// RUN: not %aotc-opt %s --split-input-file --pass-pipeline='aotc-donate{strict=true}' \
// RUN:   2>%t.strict.err | filecheck %s --check-prefix=STRICT
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

// Another result reads the donated weights (through a transpose and a matmul) and the new
// weights do not depend on that read: the update is ordered after it with a barrier over
// the update's computed input and the last reader's result (the matmul: the transpose
// only feeds it), and the update group moves last.
// CHECK-LABEL: func.func @ordered_by_barrier
// CHECK-SAME:      (%[[W:.*]]: tensor<4x4xf32> {iree.abi.output = 0 : index}, %[[G:[^:]*]]: tensor<4x4xf32>)
// CHECK:         %[[M:.*]] = linalg.matmul ins(%[[G]], %[[G]]
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<4x4xf32>)
// CHECK:         %[[P:.*]] = linalg.matmul ins(%[[T]], %[[G]]
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<4x4xf32>)
// CHECK:         %[[B:.*]]:2 = util.optimization_barrier %[[M]], %[[P]]
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[B]]#0 : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK:         return %[[U]], %[[S]]
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
  %p = linalg.matmul ins(%t, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                         affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %u, %sq : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The same, but the reader's value is itself returned: the barrier would have to take a
// result, which IREE 3.13 cannot compile (a returned tensor has another storage type than
// the temporaries beside it), so the donation is refused.
// CHECK-LABEL: func.func @reader_returned
// CHECK-SAME:      (%{{.*}}: tensor<4x4xf32>, %{{[^:]*}}: tensor<4x4xf32>)
// CHECK-NOT:     util.optimization_barrier
// WARN:      DonationWarning: aotc-donate: @reader_returned: donated argument 'w' (tensor<4x4xf32>) cannot be used:
// WARN-SAME: result 0: 'w' is also read by linalg.transpose at donation.mlir:[[# @LINE + 18]], which must run before the in-place write, and the barrier that orders it would take the value of linalg.transpose at donation.mlir:[[# @LINE + 18]], which is also returned
// STRICT-NOT: func.func @reader_returned
// STRICT-ERR: aotc-donate: @reader_returned: donated argument 'w' (tensor<4x4xf32>) cannot be used:
func.func @reader_returned(%w: tensor<4x4xf32> {aotc.donate = "w"}, %g: tensor<4x4xf32>)
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

// A generic whose body reads the argument with tensor.extract (np.flip) reads it at
// other positions than it writes: not in place (it gave wrong values from 1000 elements).
// CHECK-LABEL: func.func @flip
// CHECK-NOT:     iree.abi.output
// WARN:      DonationWarning: aotc-donate: @flip: donated argument 'x' (tensor<1000xf32>) cannot be used:
// WARN-SAME: result 0: its value is computed by linalg.generic at donation.mlir:[[# @LINE + 7]], which reads 'x' at other positions than it writes
// STRICT-NOT: func.func @flip
// STRICT-ERR:      aotc-donate: @flip: donated argument 'x' (tensor<1000xf32>) cannot be used:
#flip_map = affine_map<(d0) -> (d0)>
func.func @flip(%x: tensor<1000xf32> {aotc.donate = "x"}) -> tensor<1000xf32> {
  %c999 = arith.constant 999 : index
  %e = tensor.empty() : tensor<1000xf32>
  %r = linalg.generic {indexing_maps = [#flip_map], iterator_types = ["parallel"]} outs(%e : tensor<1000xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = arith.subi %c999, %i : index
    %v = tensor.extract %x[%j] : tensor<1000xf32>
    linalg.yield %v : f32
  } -> tensor<1000xf32>
  return %r : tensor<1000xf32>
}

// -----

// An update in place leaves its value in the buffer: the other reader of that value must
// not see the result written over it (v = x.at[2].set(u); max(v, 0) in x; v / 2 read x).
// CHECK-LABEL: func.func @update_read_elsewhere
// CHECK-NOT:     iree.abi.output
// WARN:      DonationWarning: aotc-donate: @update_read_elsewhere: donated argument 'x' (tensor<4xf32>) cannot be used:
// WARN-SAME: result 0: 'x' is read by linalg.generic at donation.mlir:[[# @LINE + 14]] after its new value is computed
// STRICT-NOT: func.func @update_read_elsewhere
// STRICT-ERR:      aotc-donate: @update_read_elsewhere: donated argument 'x' (tensor<4xf32>) cannot be used:
#held_map = affine_map<(d0) -> (d0)>
func.func @update_read_elsewhere(%x: tensor<4xf32> {aotc.donate = "x"}, %u: tensor<1xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %v = tensor.insert_slice %u into %x[2] [1] [1] : tensor<1xf32> into tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %w = linalg.generic {indexing_maps = [#held_map, #held_map], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %h = linalg.generic {indexing_maps = [#held_map, #held_map], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %d = arith.divf %a, %two : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  return %w, %h : tensor<4xf32>, tensor<4xf32>
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

// -----

// Updates at offsets computed at run time (x.at[i].set(v) with a traced i): the row is
// read and written at the same clamped offset (one SSA value), so the insert_slice writes
// it in place; nothing else reads x.
// CHECK-LABEL: func.func @dynamic_row_set
// CHECK-SAME:      (%[[X:.*]]: tensor<8x4xf32> {iree.abi.output = 0 : index},
// CHECK-NOT:     util.optimization_barrier
// CHECK:         %[[R:.*]] = tensor.insert_slice %{{.*}} into %[[X]][%{{.*}}, 0] [1, 4] [1, 1]
// CHECK-NEXT:    return %[[R]]
func.func @dynamic_row_set(%x: tensor<8x4xf32> {aotc.donate = "x"}, %i: tensor<i32>,
                           %valid: tensor<i1>, %v: tensor<1x4xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %raw = tensor.extract %i[] : tensor<i32>
  %n = arith.index_cast %raw : i32 to index
  %lo = arith.minsi %n, %c7 : index
  %at = arith.maxsi %lo, %c0 : index
  %old = tensor.extract_slice %x[%at, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<1x4xf32>
  %e = tensor.empty() : tensor<1x4xf32>
  %new = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%valid, %v, %old : tensor<i1>, tensor<1x4xf32>, tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
  ^bb0(%ok: i1, %a: f32, %b: f32, %o: f32):
    %s = arith.select %ok, %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x4xf32>
  %r = tensor.insert_slice %new into %x[%at, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// lax.dynamic_update_slice, and a chain of two run-time updates: each writes its window
// and reads x nowhere else. The offset is read from x itself in the chain: that read
// finishes before the offset exists, so it needs no barrier.
// CHECK-LABEL: func.func @dynamic_update_slice
// CHECK-SAME:      (%{{.*}}: tensor<8x4xf32> {iree.abi.output = 0 : index},
// CHECK-LABEL: func.func @dynamic_chain
// CHECK-SAME:      (%[[X:.*]]: tensor<8x4xf32> {iree.abi.output = 0 : index},
// CHECK-NOT:     util.optimization_barrier
// CHECK:         %[[A:.*]] = tensor.insert_slice %{{.*}} into %[[X]][%{{.*}}, 0] [2, 4] [1, 1]
// CHECK:         %[[B:.*]] = tensor.insert_slice %{{.*}} into %[[A]][%{{.*}}, 0] [1, 4] [1, 1]
// CHECK-NEXT:    return %[[B]]
func.func @dynamic_update_slice(%x: tensor<8x4xf32> {aotc.donate = "x"}, %u: tensor<2x4xf32>,
                                %i: tensor<i32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %raw = tensor.extract %i[] : tensor<i32>
  %n = arith.index_cast %raw : i32 to index
  %lo = arith.minsi %n, %c6 : index
  %at = arith.maxsi %lo, %c0 : index
  %r = tensor.insert_slice %u into %x[%at, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
func.func @dynamic_chain(%x: tensor<8x4xf32> {aotc.donate = "x"}, %u: tensor<2x4xf32>,
                         %w: tensor<1x4xf32>, %i: index) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %first = tensor.extract %x[%c0, %c0] : tensor<8x4xf32>
  %f = arith.fptosi %first : f32 to i32
  %n = arith.index_cast %f : i32 to index
  %lo = arith.minsi %n, %c7 : index
  %j = arith.maxsi %lo, %c0 : index
  %a = tensor.insert_slice %u into %x[%i, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
  %b = tensor.insert_slice %w into %a[%j, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %b : tensor<8x4xf32>
}

// -----

// x.at[i].set(x[j]): the new row reads x at another run-time offset than it writes (j is
// not known to equal i), so the row is computed before the in-place write, ordered by a
// barrier; the insert_slice then takes the barrier's value.
// CHECK-LABEL: func.func @dynamic_other_row
// CHECK-SAME:      (%[[X:.*]]: tensor<8x4xf32> {iree.abi.output = 0 : index}, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index,
// CHECK:         %[[ROW:.*]] = linalg.generic
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[ROW]] : tensor<1x4xf32>
// CHECK:         %[[R:.*]] = tensor.insert_slice %[[B]] into %[[X]][%[[I]], 0] [1, 4] [1, 1]
// CHECK-NEXT:    return %[[R]]
func.func @dynamic_other_row(%x: tensor<8x4xf32> {aotc.donate = "x"}, %i: index, %j: index,
                             %valid: tensor<i1>) -> tensor<8x4xf32> {
  %src = tensor.extract_slice %x[%j, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<1x4xf32>
  %old = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<1x4xf32>
  %e = tensor.empty() : tensor<1x4xf32>
  %new = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%valid, %src, %old : tensor<i1>, tensor<1x4xf32>, tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
  ^bb0(%ok: i1, %a: f32, %b: f32, %o: f32):
    %s = arith.select %ok, %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x4xf32>
  %r = tensor.insert_slice %new into %x[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// Constant-index scatters: rows are combined where they are read (repeated indices with
// add included), so the scatter updates x in place; updates computed from x are read at
// any row and go through a barrier first.
// CHECK-LABEL: func.func @scatter_add
// CHECK-SAME:      (%[[X:.*]]: tensor<8x4xf32> {iree.abi.output = 0 : index}, %[[V:[^:]*]]: tensor<3x4xf32>)
// CHECK-NOT:     util.optimization_barrier
// CHECK:         %[[R:.*]] = iree_linalg_ext.scatter {{.*}} ins(%[[V]], %{{.*}} : tensor<3x4xf32>, tensor<3x1xi32>) outs(%[[X]] : tensor<8x4xf32>)
// CHECK-LABEL: func.func @scatter_from_x
// CHECK-SAME:      (%[[X:.*]]: tensor<8x4xf32> {iree.abi.output = 0 : index})
// CHECK:         %[[U:.*]] = linalg.generic
// CHECK:         %[[B:.*]] = util.optimization_barrier %[[U]] : tensor<2x4xf32>
// CHECK:         iree_linalg_ext.scatter {{.*}} ins(%[[B]], %{{.*}} : tensor<2x4xf32>, tensor<2x1xi32>) outs(%[[X]] : tensor<8x4xf32>)
func.func @scatter_add(%x: tensor<8x4xf32> {aotc.donate = "x"}, %v: tensor<3x4xf32>) -> tensor<8x4xf32> {
  %idx = arith.constant dense<[[0], [2], [0]]> : tensor<3x1xi32>
  %r = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false)
      ins(%v, %idx : tensor<3x4xf32>, tensor<3x1xi32>) outs(%x : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    %s = arith.addf %old, %new : f32
    iree_linalg_ext.yield %s : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
func.func @scatter_from_x(%x: tensor<8x4xf32> {aotc.donate = "x"}) -> tensor<8x4xf32> {
  %idx = arith.constant dense<[[1], [3]]> : tensor<2x1xi32>
  %top = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%top : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %r = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true)
      ins(%u, %idx : tensor<2x4xf32>, tensor<2x1xi32>) outs(%x : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    %s = arith.addf %old, %new : f32
    iree_linalg_ext.yield %s : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// Refused: a run-time window of x placed at another run-time offset (clip-mode
// x.at[i].set(x[j])); a scatter whose updates are a view of x; a scatter while another
// result reads x and nothing the scatter computes can be ordered after that read.
// CHECK-LABEL: func.func @dynamic_moved_row
// CHECK-SAME:      (%{{.*}}: tensor<8x4xf32>, %{{.*}}: index, %{{[^:]*}}: index)
// CHECK-LABEL: func.func @scatter_of_view
// CHECK-SAME:      (%{{[^:]*}}: tensor<8x4xf32>)
// CHECK-LABEL: func.func @scatter_and_reader
// CHECK-SAME:      (%{{.*}}: tensor<8x4xf32>, %{{[^:]*}}: tensor<2x4xf32>)
// CHECK-NOT:     iree.abi.output
// WARN:      DonationWarning: aotc-donate: @dynamic_moved_row: donated argument 'x' (tensor<8x4xf32>) cannot be used:
// WARN-SAME: result 0: it would move elements of 'x' to other positions (tensor.insert_slice at donation.mlir:[[# @LINE + 12]])
// WARN:      DonationWarning: aotc-donate: @scatter_of_view: donated argument 'x' (tensor<8x4xf32>) cannot be used:
// WARN-SAME: result 0: its value is computed by iree_linalg_ext.scatter at donation.mlir:[[# @LINE + 16]], which reads 'x' at other positions than it writes
// WARN:      DonationWarning: aotc-donate: @scatter_and_reader: donated argument 'x' (tensor<8x4xf32>) cannot be used:
// WARN-SAME: result 0: 'x' is also read by linalg.transpose at donation.mlir:[[# @LINE + 30]], which its new value does not depend on, and nothing computed orders that read before the in-place write
// STRICT-NOT: func.func @dynamic_moved_row
// STRICT-ERR: aotc-donate: @dynamic_moved_row: donated argument 'x' (tensor<8x4xf32>) cannot be used:
// STRICT-ERR: aotc-donate: @scatter_of_view: donated argument 'x' (tensor<8x4xf32>) cannot be used:
// STRICT-ERR: aotc-donate: @scatter_and_reader: donated argument 'x' (tensor<8x4xf32>) cannot be used:
func.func @dynamic_moved_row(%x: tensor<8x4xf32> {aotc.donate = "x"}, %i: index, %j: index)
    -> tensor<8x4xf32> {
  %src = tensor.extract_slice %x[%j, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<1x4xf32>
  %r = tensor.insert_slice %src into %x[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
func.func @scatter_of_view(%x: tensor<8x4xf32> {aotc.donate = "x"}) -> tensor<8x4xf32> {
  %idx = arith.constant dense<[[1], [3]]> : tensor<2x1xi32>
  %top = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
  %r = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true)
      ins(%top, %idx : tensor<2x4xf32>, tensor<2x1xi32>) outs(%x : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    iree_linalg_ext.yield %new : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
func.func @scatter_and_reader(%x: tensor<8x4xf32> {aotc.donate = "x"}, %v: tensor<2x4xf32>)
    -> (tensor<8x4xf32>, tensor<4x8xf32>) {
  %idx = arith.constant dense<[[1], [3]]> : tensor<2x1xi32>
  %r = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true)
      ins(%v, %idx : tensor<2x4xf32>, tensor<2x1xi32>) outs(%x : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    iree_linalg_ext.yield %new : f32
  } -> tensor<8x4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  return %r, %t : tensor<8x4xf32>, tensor<4x8xf32>
}

// -----

// Arguments that are not donated keep their values. IREE 3.13 would perform the
// insert_slice and the scatter in the storage of %x and %y themselves, the caller's
// arrays, as nothing reads them afterwards: a barrier over a result computed from the
// update and the argument, just before the return, reads each afterwards, so IREE
// updates copies. The donated %a is written in place and needs none; a rerun adds none.
// CHECK-LABEL: func.func @undonated_updates
// CHECK-SAME:      (%[[A:.*]]: tensor<4xf32> {iree.abi.output = 1 : index}, %[[X:[^:]*]]: tensor<8x4xf32>,
// CHECK-SAME:       %[[Y:[^:]*]]: tensor<8x4xf32>, %[[U:[^:]*]]: tensor<2x4xf32>)
// CHECK:         %[[R:.*]] = tensor.insert_slice %[[U]] into %[[X]][2, 0] [2, 4] [1, 1]
// CHECK:         %[[S:.*]] = iree_linalg_ext.scatter {{.*}} outs(%[[Y]] : tensor<8x4xf32>)
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4xf32>)
// CHECK:         %[[KX:.*]]:2 = util.optimization_barrier %[[R]], %[[X]] : tensor<8x4xf32>, tensor<8x4xf32>
// CHECK-NEXT:    %[[KY:.*]]:2 = util.optimization_barrier %[[S]], %[[Y]] : tensor<8x4xf32>, tensor<8x4xf32>
// CHECK-NEXT:    return %[[KX]]#0, %[[N]], %[[KY]]#0
func.func @undonated_updates(%a: tensor<4xf32> {aotc.donate = "a"}, %x: tensor<8x4xf32>,
                             %y: tensor<8x4xf32>, %u: tensor<2x4xf32>)
    -> (tensor<8x4xf32>, tensor<4xf32>, tensor<8x4xf32>) {
  %r = tensor.insert_slice %u into %x[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
  %idx = arith.constant dense<[[1], [3]]> : tensor<2x1xi32>
  %s = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true)
      ins(%u, %idx : tensor<2x4xf32>, tensor<2x1xi32>) outs(%y : tensor<8x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    iree_linalg_ext.yield %new : f32
  } -> tensor<8x4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %v : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r, %n, %s : tensor<8x4xf32>, tensor<4xf32>, tensor<8x4xf32>
}

// -----

// An argument the function writes into (`aotc.written = <result>`: numpy's in-place
// update) is paired with that result only, though result 0 has its type and does not
// read it; the marker is removed.
// CHECK-LABEL: func.func @written_argument
// CHECK-SAME:      (%{{.*}}: tensor<4xf32> {iree.abi.output = 1 : index}, %{{[^:]*}}: tensor<4xf32>)
// CHECK-NOT:     aotc.written
func.func @written_argument(%a: tensor<4xf32> {aotc.written = 1 : index}, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %twice = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.addf %v, %v : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %new = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %c1 = arith.constant 1.0 : f32
    %m = arith.addf %v, %c1 : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %twice, %new : tensor<4xf32>, tensor<4xf32>
}

// -----

// A written argument whose new value cannot go into its buffer (a matmul reads all of it)
// keeps no attribute and gets no warning, even with strict=true: nobody asked for the
// buffer. The runtime gives the caller's array the new buffer instead.
// CHECK-LABEL: func.func @written_not_in_place
// CHECK-SAME:      (%{{[^:]*}}: tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NOT:     aotc.written
// STRICT-LABEL: func.func @written_not_in_place
// STRICT-NOT:   iree.abi.output
// WARN-NOT:     @written
func.func @written_not_in_place(%a: tensor<4x4xf32> {aotc.written = 0 : index}) -> tensor<4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>)
      -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

// The update is a scatter into a computed value (a matmul's result), ordered after
// another result's read of w: the scatter updates a copy made after the barrier rather
// than the barrier's own result, which IREE 3.13 would retype alone as the caller's
// buffer (its verifier then rejects the barrier).
// CHECK-LABEL: func.func @scatter_into_computed
// STRICT-LABEL: func.func @scatter_into_computed
// CHECK-SAME:      (%[[W:.*]]: tensor<4x4xf32> {iree.abi.output = 0 : index},
// CHECK:         %[[C:.*]] = linalg.matmul
// CHECK:         %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK:         %[[B:.*]]:2 = util.optimization_barrier %[[C]], %[[P]]
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[B]]#0 : tensor<4x4xf32>)
// CHECK:         %[[R:.*]] = iree_linalg_ext.scatter {{.*}} outs(%[[COPY]] : tensor<4x4xf32>)
// CHECK:         return %[[R]],
func.func @scatter_into_computed(%w: tensor<4x4xf32> {aotc.donate = "w"}, %g: tensor<4x4xf32>, %u: tensor<1x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = linalg.matmul ins(%g, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %p = linalg.matmul ins(%t, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %idx = arith.constant dense<[[2]]> : tensor<1x1xi32>
  %r = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true)
      ins(%u, %idx : tensor<1x4xf32>, tensor<1x1xi32>) outs(%c : tensor<4x4xf32>) {
  ^bb0(%new: f32, %old: f32):
    iree_linalg_ext.yield %new : f32
  } -> tensor<4x4xf32>
  return %r, %sq : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A reader of w that updates another buffer with it (an insert_slice whose source is w):
// IREE 3.13 can keep that update in the caller's storage, so the barrier that orders
// the reduction written into w takes a copy of it.
// CHECK-LABEL: func.func @reader_updates_a_buffer
// STRICT-LABEL: func.func @reader_updates_a_buffer
// CHECK:         %[[INS:.*]] = tensor.insert_slice %{{.*}} into
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[INS]] : tensor<8xf32>)
// CHECK:         %[[B:.*]]:2 = util.optimization_barrier %{{.*}}, %[[COPY]] : tensor<4x4xf32>, tensor<8xf32>
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[B]]#0 : tensor<4x4xf32>)
// CHECK:         return %[[SUM]],

func.func @reader_updates_a_buffer(%w: tensor<4xf32> {aotc.donate = "w"}, %g: tensor<4x4xf32>, %m: tensor<8xf32>)
    -> (tensor<4xf32>, tensor<6xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %pos = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%pos : tensor<4x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %m2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%m : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %ins = tensor.insert_slice %w into %m2[2] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %tail = tensor.extract_slice %ins[1] [6] [1] : tensor<8xf32> to tensor<6xf32>
  %e6 = tensor.empty() : tensor<6xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%tail : tensor<6xf32>) outs(%e6 : tensor<6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.negf %v : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  return %sum, %neg : tensor<4xf32>, tensor<6xf32>
}
