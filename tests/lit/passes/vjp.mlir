// aotc-vjp (then canonicalize and cse, as the compiler runs them) builds @<func>_vjp:
// @func's arguments, then one cotangent per seeded result; @func's results, then the
// adjoint of each wrt argument. A broadcast operand's contributions are materialized,
// then summed over the loops its map leaves out; a matmul operand's adjoint is a matmul
// with the other operand transposed; a max reduction's adjoint goes to the positions
// holding the max, divided by their count; a slice's adjoint is padded with zeros (two
// slices of one region: their cotangents added, then padded once). A
// loop of static trip count is recorded into a tape, then run backward; a loop with
// traced bounds is refused with a message naming the op and its line.

// RUN: %aotc-opt %s --pass-pipeline='aotc-vjp{func=bias wrt=0,1},canonicalize,cse' | filecheck %s --check-prefix=BIAS
// RUN: %aotc-opt %s --pass-pipeline='aotc-vjp{func=mm wrt=1},canonicalize,cse' | filecheck %s --check-prefix=MM
// RUN: %aotc-opt %s --pass-pipeline='aotc-vjp{func=max},canonicalize,cse' | filecheck %s --check-prefix=MAX
// RUN: %aotc-opt %s --pass-pipeline='aotc-vjp{func=slice},canonicalize,cse' | filecheck %s --check-prefix=SLICE
// RUN: %aotc-opt %s --pass-pipeline='aotc-vjp{func=slice_twice},canonicalize,cse' | filecheck %s --check-prefix=TWICE
// RUN: %aotc-opt %s --pass-pipeline='aotc-vjp{func=loop},canonicalize,cse' | filecheck %s --check-prefix=LOOP
// RUN: not %aotc-opt %s --pass-pipeline='aotc-vjp{func=dynamic_loop}' 2>&1 | filecheck %s --check-prefix=ERR

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> ()>

// BIAS-LABEL: func.func @bias_vjp
// BIAS-SAME:      (%[[X:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>)
// BIAS:         %[[DX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins({{.*}}%[[CT]] : {{.*}}tensor<4x3xf32>)
// BIAS:         %[[FULL:.*]] = flow.tensor.clone
// BIAS:         %[[DB:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[FULL]] : tensor<4x3xf32>)
// BIAS:         return %{{.*}}, %[[DX]], %[[DB]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>
func.func @bias(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// MM-LABEL: func.func @mm_vjp
// MM-SAME:      (%[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3x2xf32>, %[[CT:.*]]: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<3x2xf32>)
// MM:           linalg.matmul
// MM:           %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<4x3xf32>) {{.*}} permutation = [1, 0]
// MM:           %[[DW:.*]] = linalg.matmul ins(%[[XT]], %[[CT]] : tensor<3x4xf32>, tensor<4x2xf32>)
// MM:           return %{{.*}}, %[[DW]] : tensor<4x2xf32>, tensor<3x2xf32>
func.func @mm(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// MAX-LABEL: func.func @max_vjp
// MAX:         %[[COUNT:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// MAX:           arith.cmpf oeq
// MAX:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}}ins({{.*}}%[[COUNT]]
// MAX:           arith.divf
// MAX:           arith.select
func.func @max(%x: tensor<4x3xf32>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<4x3xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// SLICE-LABEL: func.func @slice_vjp
// SLICE-SAME:      (%[[X:.*]]: tensor<4x3xf32>, %[[CT:.*]]: tensor<2x3xf32>)
// SLICE:         %[[D:.*]] = tensor.pad %[[CT]] low[1, 0] high[1, 0]
// SLICE:         return %{{.*}}, %[[D]]
func.func @slice(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %x[1, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// TWICE-LABEL: func.func @slice_twice_vjp
// TWICE-SAME:      (%[[X:.*]]: tensor<4x3xf32>, %[[CT:.*]]: tensor<2x3xf32>)
// TWICE:         %[[PART:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[CT]] :
// TWICE:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[PART]], %[[PART]] :
// TWICE-NEXT:    ^bb0
// TWICE-NEXT:      arith.addf
// TWICE:         %[[D:.*]] = tensor.pad %[[SUM]] low[1, 0] high[1, 0]
// TWICE-NOT:     tensor.pad
// TWICE:         return %{{.*}}, %[[D]]
func.func @slice_twice(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %x[1, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  %t = tensor.extract_slice %x[1, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %t : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// LOOP-LABEL: func.func @loop_vjp
// LOOP:         scf.for {{.*}} -> (tensor<3xf32>, tensor<3x3xf32>)
// LOOP:           tensor.insert_slice {{.*}} : tensor<3xf32> into tensor<3x3xf32>
// LOOP:         scf.for
// LOOP:           arith.subi
// LOOP:           tensor.extract_slice {{.*}} : tensor<3x3xf32> to tensor<3xf32>
func.func @loop(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> tensor<3xf32> {
    %e = tensor.empty() : tensor<3xf32>
    %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%acc : tensor<3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.mulf %a, %a : f32
      linalg.yield %t : f32
    } -> tensor<3xf32>
    scf.yield %d : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// ERR: aotc-vjp: cannot differentiate scf.for at {{.*}}: a loop whose bounds are traced values
func.func @dynamic_loop(%x: tensor<3xf32>, %n: index) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<3xf32> {
    %e = tensor.empty() : tensor<3xf32>
    %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%acc : tensor<3xf32>) outs(%e : tensor<3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.mulf %a, %a : f32
      linalg.yield %t : f32
    } -> tensor<3xf32>
    scf.yield %d : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
