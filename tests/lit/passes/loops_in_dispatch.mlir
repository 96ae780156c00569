// aotc-loops-in-dispatch puts a loop whose ops are all small and whose carries are
// updated in place (or are rank-0) into one flow.dispatch.workgroups, tied to the
// carry's initial value (a function argument is then read again at the return, so IREE
// updates a copy of it); its carry barrier and inner util.optimization_barriers go, a
// rank-0 carry computed afresh is written into its carry by tensor.insert; an initial
// value other ops read is copied first. A loop whose carry is computed afresh, or with
// an op above max-work, keeps its form. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-loops-in-dispatch' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-loops-in-dispatch,aotc-loops-in-dispatch' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-loops-in-dispatch{max-work=0}' | filecheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @updates
// CHECK:         %[[D:.*]]:2 = flow.dispatch.workgroups(%arg0, %{{.*}}) : (tensor<16xf32>, tensor<i32>) -> (%arg0, %{{.*}}) attributes {aotc.loop_dispatch}
// CHECK-NEXT:      (%{{.*}}: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<16xf32>>, %{{.*}}: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<i32>>)
// CHECK-NOT:       util.optimization_barrier
// CHECK:           scf.for
// CHECK:             tensor.insert_slice
// CHECK:             tensor.insert %{{.*}} into %{{.*}}[] : tensor<i32>
// CHECK:             scf.yield
// CHECK:         %[[K:.*]]:2 = util.optimization_barrier %[[D]]#0, %arg0
// CHECK:         return %[[K]]#0, %[[D]]#1
// NONE-LABEL: func.func @updates
// NONE-NOT:     flow.dispatch
func.func @updates(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0> : tensor<i32>
  %start = "util.optimization_barrier"(%zero) {aotc.carry_barrier} : (tensor<i32>) -> tensor<i32>
  %r:2 = scf.for %i = %c1 to %c16 step %c1 iter_args(%a = %x, %n = %start) -> (tensor<16xf32>, tensor<i32>) {
    %prev = tensor.extract %a[%i] : tensor<16xf32>
    %half = arith.mulf %prev, %prev : f32
    %one = tensor.from_elements %half : tensor<1xf32>
    %kept = util.optimization_barrier %one : tensor<1xf32>
    %u = tensor.insert_slice %kept into %a[%i] [1] [1] : tensor<1xf32> into tensor<16xf32>
    %e = tensor.empty() : tensor<i32>
    %m = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%n : tensor<i32>) outs(%e : tensor<i32>) {
    ^bb0(%in: i32, %out: i32):
      %c1_i32 = arith.constant 1 : i32
      %s = arith.addi %in, %c1_i32 : i32
      linalg.yield %s : i32
    } -> tensor<i32>
    scf.yield %u, %m : tensor<16xf32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<16xf32>, tensor<i32>
}

// A carry computed afresh elementwise, reading it only at the element written: one
// dispatch whose scalar loop writes the carry in place (row_loops.pointwise_update), and
// the loop as it was kept after it in an scf.if on false.
// CHECK-LABEL: func.func @computed_afresh
// CHECK:         flow.dispatch.workgroups
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               tensor.extract
// CHECK:               arith.mulf
// CHECK:               tensor.insert
// CHECK:         scf.if %false
// CHECK:           linalg.generic
// CHECK:         } {aotc.original_loop = 0 : i64}
func.func @computed_afresh(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> (tensor<16xf32>) {
    %e = tensor.empty() : tensor<16xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.mulf %in, %in : f32
      linalg.yield %s : f32
    } -> tensor<16xf32>
    scf.yield %m : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// A pointwise update of a carry larger than one tile (pointwise_tiles.TILE_BYTES: 2048
// float32) runs tile by tile: a loop over tiles of 2048 rows around the step loop, whose
// element loop covers [tile, min(tile + 2048, 10000)); the step's index arithmetic is
// repeated per tile. Each of 5 workgroups (one per tile) starts at its tile and steps
// by 5 tiles. The mark of the scalarized loop moves to the tile loop.
// CHECK-LABEL: func.func @tile_by_tile
// CHECK:         %[[D:.*]] = flow.dispatch.workgroups[%c5](%arg1, %arg0) : {{.*}} -> %arg0
// CHECK:           %[[K:.*]] = flow.dispatch.workgroup.id[0] : index
// CHECK:           %[[N:.*]] = flow.dispatch.workgroup.count[0] : index
// CHECK:           %[[FIRST:.*]] = arith.muli %[[K]], %c2048
// CHECK:           %[[STRIDE:.*]] = arith.muli %[[N]], %c2048
// CHECK:           scf.for %[[TILE:[^ ]*]] = %[[FIRST]] to %c10000{{[_0-9]*}} step %[[STRIDE]]
// CHECK:             %[[END:.*]] = arith.addi %[[TILE]], %{{.*}} : index
// CHECK:             %[[LAST:.*]] = arith.minsi %[[END]], %{{.*}} : index
// CHECK:             scf.for %[[STEP:[^ ]*]] =
// CHECK:               arith.index_cast %[[STEP]]
// CHECK:               scf.for %[[E:[^ ]*]] = %[[TILE]] to %[[LAST]]
// CHECK:                 tensor.extract %{{.*}}[%[[E]]]
// CHECK:                 arith.mulf
// CHECK:                 tensor.insert
// CHECK:           } {aotc.scalarized_loop = 1 : i64, aotc.tile_loop}
// CHECK:         } count(%[[W:.*]]: index) -> (index, index, index) {
// CHECK:           flow.return %[[W]], %c1{{.*}}, %c1
// NONE-LABEL: func.func @tile_by_tile
// NONE-NOT:     flow.dispatch
func.func @tile_by_tile(%x: tensor<10000xf32>, %w: tensor<10000xf32>) -> tensor<10000xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> (tensor<10000xf32>) {
    %k = arith.index_cast %i : index to i32
    %f = arith.sitofp %k : i32 to f32
    %e = tensor.empty() : tensor<10000xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %w : tensor<10000xf32>, tensor<10000xf32>) outs(%e : tensor<10000xf32>) {
    ^bb0(%in: f32, %in_w: f32, %out: f32):
      %s = arith.mulf %in, %in_w : f32
      %t = arith.addf %s, %f : f32
      linalg.yield %t : f32
    } -> tensor<10000xf32>
    scf.yield %m : tensor<10000xf32>
  }
  return %r : tensor<10000xf32>
}

// Not tied to its carry's binding (the initial value is a barrier's result), each
// workgroup would store the whole carry: the dispatch runs on one workgroup.
// CHECK-LABEL: func.func @untied_tiles_run_on_one_workgroup
// CHECK:         flow.dispatch.workgroups[%c1{{[_0-9]*}}](%{{.*}}) : (tensor<10000xf32>) -> tensor<10000xf32>
// CHECK:           flow.dispatch.workgroup.id[0]
func.func @untied_tiles_run_on_one_workgroup(%x: tensor<10000xf32>) -> tensor<10000xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = util.optimization_barrier %x : tensor<10000xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %b) -> (tensor<10000xf32>) {
    %e = tensor.empty() : tensor<10000xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<10000xf32>) outs(%e : tensor<10000xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.mulf %in, %in : f32
      linalg.yield %s : f32
    } -> tensor<10000xf32>
    scf.yield %m : tensor<10000xf32>
  }
  return %r : tensor<10000xf32>
}

// Two carries of one shape, each updated pointwise, the second from the first's update:
// one tile loop carries both, and both element loops cover the tile.
// CHECK-LABEL: func.func @two_pointwise_carries
// CHECK:         flow.dispatch.workgroups[%c5]
// CHECK:           scf.for %[[TILE:[^ ]*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<10000xf32>, tensor<10000xf32>)
// CHECK:             %[[LAST:.*]] = arith.minsi
// CHECK:             scf.for
// CHECK:               scf.for %{{.*}} = %[[TILE]] to %[[LAST]]
// CHECK:               scf.for %{{.*}} = %[[TILE]] to %[[LAST]]
// CHECK:           } {aotc.scalarized_loop = {{[0-9]+}} : i64, aotc.tile_loop}
func.func @two_pointwise_carries(%x: tensor<10000xf32>, %v: tensor<10000xf32>) -> (tensor<10000xf32>, tensor<10000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x, %b = %v) -> (tensor<10000xf32>, tensor<10000xf32>) {
    %e = tensor.empty() : tensor<10000xf32>
    %nb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<10000xf32>, tensor<10000xf32>) outs(%e : tensor<10000xf32>) {
    ^bb0(%in_a: f32, %in_b: f32, %out: f32):
      %s = arith.subf %in_b, %in_a : f32
      linalg.yield %s : f32
    } -> tensor<10000xf32>
    %na = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %nb : tensor<10000xf32>, tensor<10000xf32>) outs(%e : tensor<10000xf32>) {
    ^bb0(%in_a: f32, %in_b: f32, %out: f32):
      %s = arith.addf %in_a, %in_b : f32
      linalg.yield %s : f32
    } -> tensor<10000xf32>
    scf.yield %na, %nb : tensor<10000xf32>, tensor<10000xf32>
  }
  return %r#0, %r#1 : tensor<10000xf32>, tensor<10000xf32>
}

// A second carry that is not a pointwise update (a rank-0 value passed on): no tiles,
// and the op, larger than row_loops.ROW_MAX_WORK, keeps one dispatch per op.
// CHECK-LABEL: func.func @two_carries_stay_per_op
// CHECK-NOT:     flow.dispatch
// CHECK:         scf.for
func.func @two_carries_stay_per_op(%x: tensor<100000xf32>, %c: tensor<i32>) -> (tensor<100000xf32>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x, %n = %c) -> (tensor<100000xf32>, tensor<i32>) {
    %e = tensor.empty() : tensor<100000xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<100000xf32>) outs(%e : tensor<100000xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.mulf %in, %in : f32
      linalg.yield %s : f32
    } -> tensor<100000xf32>
    scf.yield %m, %n : tensor<100000xf32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<100000xf32>, tensor<i32>
}

// A float sum over a row (forward substitution's row dot) runs as scalarize.SUM_CHAINS
// = 8 partial sums: a loop over the row in steps of 8 carrying 8 scalars, the first
// starting from the sum's initial element and the others from -0.0; the remainder
// (20 = 16 + 4) is added to the first, then the partial sums pairwise.
// CHECK-LABEL: func.func @row_dot_in_partial_sums
// CHECK:         flow.dispatch.workgroups
// CHECK:           scf.for
// CHECK:             %[[MZ:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:             %[[FIRST:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK:             %[[C16:.*]] = arith.constant 16 : index
// CHECK:             %[[C8:.*]] = arith.constant 8 : index
// CHECK:             %[[P:.*]]:8 = scf.for %[[K:.*]] = %{{.*}} to %[[C16]] step %[[C8]] iter_args(%[[A0:.*]] = %[[FIRST]], %[[A1:.*]] = %[[MZ]], %{{.*}} = %[[MZ]], %{{.*}} = %[[MZ]], %{{.*}} = %[[MZ]], %{{.*}} = %[[MZ]], %{{.*}} = %[[MZ]], %[[A7:.*]] = %[[MZ]]) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:               %[[K1:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK:               tensor.extract %{{.*}}[%[[K1]]] : tensor<20xf32>
// CHECK:               arith.mulf
// CHECK:               arith.addf %[[A1]], %{{.*}} : f32
// CHECK-COUNT-6:       arith.addf
// CHECK:               scf.yield
// CHECK:             %[[C19:.*]] = arith.constant 19 : index
// CHECK:             tensor.extract %{{.*}}[%[[C19]]] : tensor<20xf32>
// CHECK:             %[[R0:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:             %[[S0:.*]] = arith.addf %[[R0]], %[[P]]#1 : f32
// CHECK:             %[[S1:.*]] = arith.addf %[[P]]#2, %[[P]]#3 : f32
// CHECK:             %[[S2:.*]] = arith.addf %[[P]]#4, %[[P]]#5 : f32
// CHECK:             %[[S3:.*]] = arith.addf %[[P]]#6, %[[P]]#7 : f32
// CHECK:             %[[T0:.*]] = arith.addf %[[S0]], %[[S1]] : f32
// CHECK:             %[[T1:.*]] = arith.addf %[[S2]], %[[S3]] : f32
// CHECK:             %[[SUM:.*]] = arith.addf %[[T0]], %[[T1]] : f32
// CHECK:             tensor.insert %[[SUM]] into %{{.*}}[] : tensor<f32>
func.func @row_dot_in_partial_sums(%m: tensor<16x20xf32>, %x: tensor<20xf32>) -> tensor<20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %x) -> (tensor<20xf32>) {
    %row = tensor.extract_slice %m[%i, 0] [1, 20] [1, 1] : tensor<16x20xf32> to tensor<20xf32>
    %e = tensor.empty() : tensor<f32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%row, %a : tensor<20xf32>, tensor<20xf32>) outs(%f : tensor<f32>) {
    ^bb0(%p: f32, %q: f32, %out: f32):
      %t = arith.mulf %p, %q : f32
      %s = arith.addf %out, %t : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %v = tensor.extract %d[] : tensor<f32>
    %one = tensor.from_elements %v : tensor<1xf32>
    %u = tensor.insert_slice %one into %a[%i] [1] [1] : tensor<1xf32> into tensor<20xf32>
    scf.yield %u : tensor<20xf32>
  }
  return %r : tensor<20xf32>
}

// Computed afresh from another element of the carry (element 0 for every element): one
// dispatch per op.
// CHECK-LABEL: func.func @computed_from_another_element
// CHECK-NOT:     flow.dispatch
// CHECK:         scf.for
func.func @computed_from_another_element(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> (tensor<16xf32>) {
    %e = tensor.empty() : tensor<16xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.mulf %in, %in : f32
      linalg.yield %s : f32
    } -> tensor<16xf32>
    scf.yield %m : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func @large_op
// CHECK-NOT:     flow.dispatch
// CHECK:         scf.for
func.func @large_op(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> (tensor<256x256xf32>) {
    %m = linalg.matmul ins(%a, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%a : tensor<256x256xf32>) -> tensor<256x256xf32>
    scf.yield %m : tensor<256x256xf32>
  }
  return %r : tensor<256x256xf32>
}

// A computed initial value another op reads is copied at run time (a generic selecting
// it unless a barrier'd flag holds) and the dispatch runs in the copy: IREE had ordered
// the reader after the loop that overwrote it.
// CHECK-LABEL: func.func @initial_value_read_elsewhere
// CHECK:         %[[M:.*]] = linalg.generic
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<f32>)
// CHECK:         %[[D:.*]] = flow.dispatch.workgroups(%[[COPY]]) : (tensor<f32>) -> %[[COPY]]
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<f32>)
// CHECK:         return %[[D]], %[[R]]
func.func @initial_value_read_elsewhere(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<f32>
  %mean = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%x : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %h = arith.mulf %in, %in : f32
    linalg.yield %h : f32
  } -> tensor<f32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%c = %mean) -> (tensor<f32>) {
    %e2 = tensor.empty() : tensor<f32>
    %n = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%c : tensor<f32>) outs(%e2 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %t = arith.addf %in, %in : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    scf.yield %n : tensor<f32>
  }
  %e3 = tensor.empty() : tensor<f32>
  %after = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%mean : tensor<f32>) outs(%e3 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.negf %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r, %after : tensor<f32>, tensor<f32>
}
