// aotc-tile-matmuls gives a float32 matmul of at least 64 reduction steps and 64 columns
// the tile setting measured fastest (register tiles 8x32, K step 1) as its
// compilation_info, with workgroups of 128 columns and the first of 32, 16, 8 rows that
// divides the matmul's; a float64 one gets register tiles 8x16 and workgroups of 64
// columns, and its readers read it through a flow.tensor.clone; a batch matmul the same
// with one batch element per workgroup. A transposed operand is
// copied through a flow.tensor.clone when the matmul does at least 512 flops per element
// copied, and the matmul is tiled; otherwise, as for few columns, few reduction steps or
// float64 rows not a multiple of 8, the matmul keeps IREE's choice. A matrix-vector
// product gets one row at a time and a K step of 32, peeled. A K of 1024 or more runs
// in blocks of 256 where they and the workgroups divide it. A float32 matmul
// whose rows alone are dynamic gets the 32-row setting with loop peeling. Running it
// twice changes nothing more. For 32-byte vector registers (register-bytes=32, AVX2)
// float32 tiles are 4x16 in workgroups of 64 columns, 64 register columns for a batch-1
// row; float64's are 4x8 in workgroups of 32 columns, and matrix-vector products keep
// IREE's choice. There a float64 matmul of at least 64 rows (float32: 100) and 2 * 256^3
// flops runs on packed panels: each operand copied (through clones, apart from its
// producer) into [M/4, K, 4] and [N/8, K, 8] (float32 16) panels, their product a
// generic over (row block, row, panel, column, k) collapsed back to [M, N] (a batch
// matmul's batch dimension in front).

// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-matmuls' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-matmuls,aotc-tile-matmuls' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-matmuls{register-bytes=32}' | filecheck %s --check-prefix=AVX2
// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-matmuls{register-bytes=32},aotc-tile-matmuls{register-bytes=32}' | filecheck %s --check-prefix=AVX2

// AVX2-DAG:    #[[NARROW:.*]] = #iree_cpu.lowering_config<distribution = [32, 64, 0], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>
// AVX2-DAG:    #[[VNARROW:.*]] = #iree_cpu.lowering_config<distribution = [128, 0], vector_common_parallel = [64, 0], vector_reduction = [0, 1]>
// AVX2-DAG:    #[[NSETTING:.*]] = #iree_codegen.compilation_info<lowering_config = #[[NARROW]]
// AVX2-DAG:    #[[VNSETTING:.*]] = #iree_codegen.compilation_info<lowering_config = #[[VNARROW]]
// AVX2-DAG:    #[[PANELS64_CONFIG:.*]] = #iree_cpu.lowering_config<distribution = [8, 4, 4, 8, 0], vector_common_parallel = [1, 4, 1, 8, 0], vector_reduction = [0, 0, 0, 0, 1]>
// AVX2-LABEL:  func.func @layer
// AVX2:          linalg.matmul {compilation_info = #[[NSETTING]]} ins(%arg0, %arg1 : tensor<64x784xf32>, tensor<784x512xf32>)
// AVX2-LABEL:  func.func @float64_layer
// AVX2:          %[[X:.*]] = flow.tensor.clone %arg0 : tensor<64x784xf64>
// AVX2:          %[[W:.*]] = flow.tensor.clone %arg1 : tensor<784x512xf64>
// AVX2:          %[[XE:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [16, 4, 784]
// AVX2:          %[[XT:.*]] = linalg.transpose ins(%[[XE]] : tensor<16x4x784xf64>) outs(%{{.*}} : tensor<16x784x4xf64>) permutation = [0, 2, 1]
// AVX2:          %[[XP:.*]] = flow.tensor.clone %[[XT]] : tensor<16x784x4xf64>
// AVX2:          %[[WE:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1, 2]] output_shape [784, 64, 8]
// AVX2:          %[[WT:.*]] = linalg.transpose ins(%[[WE]] : tensor<784x64x8xf64>) outs(%{{.*}} : tensor<64x784x8xf64>) permutation = [1, 0, 2]
// AVX2:          %[[WP:.*]] = flow.tensor.clone %[[WT]] : tensor<64x784x8xf64>
// AVX2:          %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[XP]], %[[WP]] : tensor<16x784x4xf64>, tensor<64x784x8xf64>) outs(%{{.*}} : tensor<16x4x64x8xf64>) attrs =  {compilation_info = #[[PANELS64:.*]]}
// AVX2:          %[[C:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1], [2, 3]] : tensor<16x4x64x8xf64> into tensor<64x512xf64>
// AVX2:          %[[S:.*]] = flow.tensor.clone %[[C]] : tensor<64x512xf64>
// AVX2:          linalg.generic {{.*}} ins(%[[S]], %arg2 : tensor<64x512xf64>, tensor<512xf64>)
// AVX2-LABEL:  func.func @vector_products
// AVX2:          linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<784xf32>, tensor<784x512xf32>) {{.*}} attrs =  {compilation_info = #[[VNSETTING]]}

// CHECK-DAG:   #[[CONFIG32:.*]] = #iree_cpu.lowering_config<distribution = [32, 128, 0], vector_common_parallel = [8, 32, 0], vector_reduction = [0, 0, 1]>
// CHECK-DAG:   #[[CONFIG16:.*]] = #iree_cpu.lowering_config<distribution = [16, 128, 0], vector_common_parallel = [8, 32, 0], vector_reduction = [0, 0, 1]>
// CHECK-DAG:   #[[CONFIG8:.*]] = #iree_cpu.lowering_config<distribution = [8, 128, 0], vector_common_parallel = [8, 32, 0], vector_reduction = [0, 0, 1]>
// CHECK-DAG:   #[[PIPELINE:.*]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
// CHECK-DAG:   #[[SETTING32:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG32]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[SETTING16:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG16]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[SETTING8:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG8]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[DEEPCONFIG:.*]] = #iree_cpu.lowering_config<cache_reduction = [0, 0, 256], distribution = [32, 128, 0], vector_common_parallel = [8, 32, 0], vector_reduction = [0, 0, 1]>
// CHECK-DAG:   #[[DEEPSETTING:.*]] = #iree_codegen.compilation_info<lowering_config = #[[DEEPCONFIG]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[PEELED:.*]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>
// CHECK-DAG:   #[[SETTINGD:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG32]], translation_info = #[[PEELED]]>
// CHECK-DAG:   #[[CONFIG64:.*]] = #iree_cpu.lowering_config<distribution = [32, 64, 0], vector_common_parallel = [8, 16, 0], vector_reduction = [0, 0, 1]>
// CHECK-DAG:   #[[SETTING64:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG64]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[CONFIGB:.*]] = #iree_cpu.lowering_config<distribution = [1, 32, 64, 0], vector_common_parallel = [1, 8, 16, 0], vector_reduction = [0, 0, 0, 1]>
// CHECK-DAG:   #[[SETTINGB:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIGB]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[CONFIG100:.*]] = #iree_cpu.lowering_config<distribution = [20, 128, 0], vector_common_parallel = [4, 64, 0], vector_reduction = [0, 0, 1]>
// CHECK-DAG:   #[[SETTING100:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG100]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[CONFIG5:.*]] = #iree_cpu.lowering_config<distribution = [5, 256, 0], vector_common_parallel = [5, 64, 0], vector_reduction = [0, 0, 1]>
// CHECK-DAG:   #[[SETTING5:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG5]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[CONFIG60:.*]] = #iree_cpu.lowering_config<distribution = [20, 64, 0], vector_common_parallel = [4, 32, 0], vector_reduction = [0, 0, 1]>
// CHECK-DAG:   #[[SETTING60:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG60]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[VCONFIG128:.*]] = #iree_cpu.lowering_config<distribution = [256, 0], vector_common_parallel = [128, 0], vector_reduction = [0, 1]>
// CHECK-DAG:   #[[VSETTING128:.*]] = #iree_codegen.compilation_info<lowering_config = #[[VCONFIG128]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[VCONFIG64:.*]] = #iree_cpu.lowering_config<distribution = [128, 0], vector_common_parallel = [64, 0], vector_reduction = [0, 1]>
// CHECK-DAG:   #[[VSETTING64:.*]] = #iree_codegen.compilation_info<lowering_config = #[[VCONFIG64]], translation_info = #[[PIPELINE]]>
// CHECK-DAG:   #[[MVCONFIG:.*]] = #iree_cpu.lowering_config<distribution = [64, 0], vector_common_parallel = [1, 0], vector_reduction = [0, 32]>
// CHECK-DAG:   #[[MVSETTING:.*]] = #iree_codegen.compilation_info<lowering_config = #[[MVCONFIG]], translation_info = #[[PEELED]]>

// CHECK-LABEL: func.func @layer
// CHECK:         linalg.matmul {compilation_info = #[[SETTING32]]} ins(%arg0, %arg1 : tensor<64x784xf32>, tensor<784x512xf32>)
func.func @layer(%x: tensor<64x784xf32>, %w: tensor<784x512xf32>) -> tensor<64x512xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<64x512xf32>) -> tensor<64x512xf32>
  %r = linalg.matmul ins(%x, %w : tensor<64x784xf32>, tensor<784x512xf32>) outs(%f : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %r : tensor<64x512xf32>
}

// The weight gradient x.T @ d of a batch of 64: 784 rows take workgroups of 16, the
// transposed input is copied (784 * 64 elements for 2 * 784 * 64 * 512 flops).
// CHECK-LABEL: func.func @weight_gradient
// CHECK:         %[[T:.*]] = linalg.transpose
// CHECK:         %[[COPY:.*]] = flow.tensor.clone %[[T]] : tensor<784x64xf32>
// CHECK-NOT:     flow.tensor.clone
// CHECK:         linalg.matmul {compilation_info = #[[SETTING16]]} ins(%[[COPY]], %arg1 : tensor<784x64xf32>, tensor<64x512xf32>)
func.func @weight_gradient(%x: tensor<64x784xf32>, %d: tensor<64x512xf32>) -> tensor<784x512xf32> {
  %c = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<784x64xf32>
  %xt = linalg.transpose ins(%x : tensor<64x784xf32>) outs(%et : tensor<784x64xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<784x512xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<784x512xf32>) -> tensor<784x512xf32>
  %r = linalg.matmul ins(%xt, %d : tensor<784x64xf32>, tensor<64x512xf32>) outs(%f : tensor<784x512xf32>) -> tensor<784x512xf32>
  return %r : tensor<784x512xf32>
}

// The cotangent d @ W.T of a batch of 256 copies the transposed weight (512 flops per
// element): as d is the smaller matrix, it runs as (W @ d.T).T, the copy d's and the
// product read back through a clone and a transpose. Where W.T is the smaller, it is
// copied as it is.
// CHECK-LABEL: func.func @cotangents
// CHECK:         %[[DT:.*]] = linalg.transpose ins(%arg0 : tensor<256x512xf32>)
// CHECK:         %[[INIT:.*]] = linalg.transpose ins(%{{.*}} : tensor<256x512xf32>)
// CHECK:         %[[COPY:.*]] = flow.tensor.clone %[[DT]] : tensor<512x256xf32>
// CHECK:         %[[P:.*]] = linalg.matmul {compilation_info = #[[SETTING32]]} ins(%arg1, %[[COPY]] : tensor<512x512xf32>, tensor<512x256xf32>) outs(%[[INIT]] : tensor<512x256xf32>)
// CHECK:         %[[PC:.*]] = flow.tensor.clone %[[P]] : tensor<512x256xf32>
// CHECK:         %[[BACK:.*]] = linalg.transpose ins(%[[PC]] : tensor<512x256xf32>)
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%arg3 : tensor<128x128xf32>)
// CHECK:         %[[WCOPY:.*]] = flow.tensor.clone %[[WT]] : tensor<128x128xf32>
// CHECK:         %[[Q:.*]] = linalg.matmul {compilation_info = #[[SETTING32]]} ins(%arg2, %[[WCOPY]] : tensor<512x128xf32>, tensor<128x128xf32>)
// CHECK:         return %[[BACK]], %[[Q]]
func.func @cotangents(%d: tensor<256x512xf32>, %w: tensor<512x512xf32>, %e: tensor<512x128xf32>,
                      %v: tensor<128x128xf32>) -> (tensor<256x512xf32>, tensor<512x128xf32>) {
  %c = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<512x512xf32>
  %wt = linalg.transpose ins(%w : tensor<512x512xf32>) outs(%et : tensor<512x512xf32>) permutation = [1, 0]
  %e0 = tensor.empty() : tensor<256x512xf32>
  %f = linalg.fill ins(%c : f32) outs(%e0 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul ins(%d, %wt : tensor<256x512xf32>, tensor<512x512xf32>) outs(%f : tensor<256x512xf32>) -> tensor<256x512xf32>
  %et2 = tensor.empty() : tensor<128x128xf32>
  %vt = linalg.transpose ins(%v : tensor<128x128xf32>) outs(%et2 : tensor<128x128xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<512x128xf32>
  %f1 = linalg.fill ins(%c : f32) outs(%e1 : tensor<512x128xf32>) -> tensor<512x128xf32>
  %q = linalg.matmul ins(%e, %vt : tensor<512x128xf32>, tensor<128x128xf32>) outs(%f1 : tensor<512x128xf32>) -> tensor<512x128xf32>
  return %r, %q : tensor<256x512xf32>, tensor<512x128xf32>
}

// 24 rows take workgroups of 8.
// CHECK-LABEL: func.func @rows_of_8
// CHECK:         linalg.matmul {compilation_info = #[[SETTING8]]}
func.func @rows_of_8(%x: tensor<24x512xf32>, %w: tensor<512x128xf32>) -> tensor<24x128xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x128xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<24x128xf32>) -> tensor<24x128xf32>
  %r = linalg.matmul ins(%x, %w : tensor<24x512xf32>, tensor<512x128xf32>) outs(%f : tensor<24x128xf32>) -> tensor<24x128xf32>
  return %r : tensor<24x128xf32>
}

// Dynamic rows (an exported batch left open): the 32-row setting with loop peeling. A
// float64 one, or one whose depth is dynamic too, keeps IREE's choice.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK:         linalg.matmul {compilation_info = #[[SETTINGD]]} ins(%arg0, %arg1 : tensor<?x784xf32>, tensor<784x512xf32>)
// CHECK:         linalg.matmul ins(%arg2, %arg3 : tensor<?x784xf64>, tensor<784x512xf64>)
// CHECK:         linalg.matmul ins(%arg4, %arg5 : tensor<?x?xf32>, tensor<?x512xf32>)
func.func @dynamic_rows(%x: tensor<?x784xf32>, %w: tensor<784x512xf32>, %x64: tensor<?x784xf64>,
                        %w64: tensor<784x512xf64>, %y: tensor<?x?xf32>, %v: tensor<?x512xf32>)
    -> (tensor<?x512xf32>, tensor<?x512xf64>, tensor<?x512xf32>) {
  %c0 = arith.constant 0 : index
  %c = arith.constant 0.0 : f32
  %c64 = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?x784xf32>
  %e = tensor.empty(%n) : tensor<?x512xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x784xf32>, tensor<784x512xf32>) outs(%f : tensor<?x512xf32>) -> tensor<?x512xf32>
  %n64 = tensor.dim %x64, %c0 : tensor<?x784xf64>
  %e64 = tensor.empty(%n64) : tensor<?x512xf64>
  %f64 = linalg.fill ins(%c64 : f64) outs(%e64 : tensor<?x512xf64>) -> tensor<?x512xf64>
  %r64 = linalg.matmul ins(%x64, %w64 : tensor<?x784xf64>, tensor<784x512xf64>) outs(%f64 : tensor<?x512xf64>) -> tensor<?x512xf64>
  %ny = tensor.dim %y, %c0 : tensor<?x?xf32>
  %ey = tensor.empty(%ny) : tensor<?x512xf32>
  %fy = linalg.fill ins(%c : f32) outs(%ey : tensor<?x512xf32>) -> tensor<?x512xf32>
  %ry = linalg.matmul ins(%y, %v : tensor<?x?xf32>, tensor<?x512xf32>) outs(%fy : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %r, %r64, %ry : tensor<?x512xf32>, tensor<?x512xf64>, tensor<?x512xf32>
}

// A float64 layer: tiled, its bias read through a clone.
// CHECK-LABEL: func.func @float64_layer
// CHECK:         %[[M:.*]] = linalg.matmul {compilation_info = #[[SETTING64]]} ins(%arg0, %arg1 : tensor<64x784xf64>, tensor<784x512xf64>)
// CHECK-NEXT:    %[[SEPARATE:.*]] = flow.tensor.clone %[[M]] : tensor<64x512xf64>
// CHECK:         linalg.generic {{.*}} ins(%[[SEPARATE]], %arg2 : tensor<64x512xf64>, tensor<512xf64>)
func.func @float64_layer(%x: tensor<64x784xf64>, %w: tensor<784x512xf64>, %b: tensor<512xf64>) -> tensor<64x512xf64> {
  %c = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<64x512xf64>
  %f = linalg.fill ins(%c : f64) outs(%e : tensor<64x512xf64>) -> tensor<64x512xf64>
  %r = linalg.matmul ins(%x, %w : tensor<64x784xf64>, tensor<784x512xf64>) outs(%f : tensor<64x512xf64>) -> tensor<64x512xf64>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%r, %b : tensor<64x512xf64>, tensor<512xf64>) outs(%e : tensor<64x512xf64>) {
  ^bb0(%p: f64, %q: f64, %o: f64):
    %v = arith.addf %p, %q : f64
    linalg.yield %v : f64
  } -> tensor<64x512xf64>
  return %s : tensor<64x512xf64>
}

// A float64 batch matmul: one batch element a workgroup.
// CHECK-LABEL: func.func @float64_batch
// CHECK:         linalg.batch_matmul {compilation_info = #[[SETTINGB]]}
func.func @float64_batch(%a: tensor<8x256x256xf64>, %b: tensor<8x256x256xf64>) -> tensor<8x256x256xf64> {
  %c = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8x256x256xf64>
  %f = linalg.fill ins(%c : f64) outs(%e : tensor<8x256x256xf64>) -> tensor<8x256x256xf64>
  %r = linalg.batch_matmul ins(%a, %b : tensor<8x256x256xf64>, tensor<8x256x256xf64>) outs(%f : tensor<8x256x256xf64>) -> tensor<8x256x256xf64>
  return %r : tensor<8x256x256xf64>
}

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     compilation_info
// CHECK-NOT:     flow.tensor.clone
// CHECK:         return
func.func @kept(%x: tensor<64x512xf32>, %w: tensor<784x512xf32>, %d: tensor<13x784xf64>,
                %v: tensor<784x512xf64>, %t: tensor<784x32xf32>, %u: tensor<64x512xf32>,
                %n: tensor<512x10xf32>, %s: tensor<32x512xf32>)
    -> (tensor<64x784xf32>, tensor<13x512xf64>, tensor<784x512xf32>, tensor<64x10xf32>) {
  %c = arith.constant 0.0 : f32
  %c64 = arith.constant 0.0 : f64
  // the transposed weights of a backward pass at batch 64: 128 flops per element copied
  %et = tensor.empty() : tensor<512x784xf32>
  %wt = linalg.transpose ins(%w : tensor<784x512xf32>) outs(%et : tensor<512x784xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<64x784xf32>
  %f1 = linalg.fill ins(%c : f32) outs(%e1 : tensor<64x784xf32>) -> tensor<64x784xf32>
  %r1 = linalg.matmul ins(%x, %wt : tensor<64x512xf32>, tensor<512x784xf32>) outs(%f1 : tensor<64x784xf32>) -> tensor<64x784xf32>
  // float64 of 13 rows (no register tile's rows divide them; float64 is not padded)
  %e2 = tensor.empty() : tensor<13x512xf64>
  %f2 = linalg.fill ins(%c64 : f64) outs(%e2 : tensor<13x512xf64>) -> tensor<13x512xf64>
  %r2 = linalg.matmul ins(%d, %v : tensor<13x784xf64>, tensor<784x512xf64>) outs(%f2 : tensor<13x512xf64>) -> tensor<13x512xf64>
  // 32 reduction steps
  %e3 = tensor.empty() : tensor<784x512xf32>
  %f3 = linalg.fill ins(%c : f32) outs(%e3 : tensor<784x512xf32>) -> tensor<784x512xf32>
  %r3 = linalg.matmul ins(%t, %s : tensor<784x32xf32>, tensor<32x512xf32>) outs(%f3 : tensor<784x512xf32>) -> tensor<784x512xf32>
  // 10 columns
  %e4 = tensor.empty() : tensor<64x10xf32>
  %f4 = linalg.fill ins(%c : f32) outs(%e4 : tensor<64x10xf32>) -> tensor<64x10xf32>
  %r4 = linalg.matmul ins(%u, %n : tensor<64x512xf32>, tensor<512x10xf32>) outs(%f4 : tensor<64x10xf32>) -> tensor<64x10xf32>
  return %r1, %r2, %r3, %r4 : tensor<64x784xf32>, tensor<13x512xf64>, tensor<784x512xf32>, tensor<64x10xf32>
}

// float32 rows not a multiple of 8: register tiles whose rows divide them (4 of 100, in
// workgroups of 20 rows; 5 rows whole, 256 columns a workgroup); a prime 97 rows runs at
// 104, zero rows below, and its readers read its 97 rows through a clone; float64 takes
// half the register columns (60 rows: 4x32 in workgroups of 20 rows and 64 columns).
// CHECK-LABEL: func.func @odd_rows
// CHECK:         linalg.matmul {compilation_info = #[[SETTING100]]} ins(%arg0, %arg1 : tensor<100x784xf32>
// CHECK:         linalg.matmul {compilation_info = #[[SETTING5]]} ins(%arg2, %arg1 : tensor<5x784xf32>
// CHECK:         %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<104x784xf32>
// CHECK:         %[[ROWS:.*]] = tensor.insert_slice %arg3 into %[[ZEROS]][0, 0] [97, 784] [1, 1]
// CHECK:         %[[PADDED:.*]] = flow.tensor.clone %[[ROWS]] : tensor<104x784xf32>
// CHECK:         %[[INIT:.*]] = flow.tensor.clone %{{.*}} : tensor<104x512xf32>
// CHECK:         %[[P:.*]] = linalg.matmul {compilation_info = #[[SETTING8]]} ins(%[[PADDED]], %arg1 : tensor<104x784xf32>, tensor<784x512xf32>) outs(%[[INIT]] : tensor<104x512xf32>)
// CHECK:         %[[COPY:.*]] = flow.tensor.clone %[[P]] : tensor<104x512xf32>
// CHECK:         %[[CUT:.*]] = tensor.extract_slice %[[COPY]][0, 0] [97, 512] [1, 1]
// CHECK:         %[[F64:.*]] = linalg.matmul {compilation_info = #[[SETTING60]]} ins(%arg4, %arg5 : tensor<60x784xf64>
// CHECK:         %[[F64COPY:.*]] = flow.tensor.clone %[[F64]]
// CHECK:         return %{{.*}}, %{{.*}}, %[[CUT]], %[[F64COPY]]
func.func @odd_rows(%o: tensor<100x784xf32>, %w: tensor<784x512xf32>, %p: tensor<5x784xf32>,
                    %q: tensor<97x784xf32>, %d: tensor<60x784xf64>, %v: tensor<784x512xf64>)
    -> (tensor<100x512xf32>, tensor<5x512xf32>, tensor<97x512xf32>, tensor<60x512xf64>) {
  %c = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<100x512xf32>
  %f1 = linalg.fill ins(%c : f32) outs(%e1 : tensor<100x512xf32>) -> tensor<100x512xf32>
  %r1 = linalg.matmul ins(%o, %w : tensor<100x784xf32>, tensor<784x512xf32>) outs(%f1 : tensor<100x512xf32>) -> tensor<100x512xf32>
  %e2 = tensor.empty() : tensor<5x512xf32>
  %f2 = linalg.fill ins(%c : f32) outs(%e2 : tensor<5x512xf32>) -> tensor<5x512xf32>
  %r2 = linalg.matmul ins(%p, %w : tensor<5x784xf32>, tensor<784x512xf32>) outs(%f2 : tensor<5x512xf32>) -> tensor<5x512xf32>
  %e3 = tensor.empty() : tensor<97x512xf32>
  %f3 = linalg.fill ins(%c : f32) outs(%e3 : tensor<97x512xf32>) -> tensor<97x512xf32>
  %r3 = linalg.matmul ins(%q, %w : tensor<97x784xf32>, tensor<784x512xf32>) outs(%f3 : tensor<97x512xf32>) -> tensor<97x512xf32>
  %c64 = arith.constant 0.0 : f64
  %e4 = tensor.empty() : tensor<60x512xf64>
  %f4 = linalg.fill ins(%c64 : f64) outs(%e4 : tensor<60x512xf64>) -> tensor<60x512xf64>
  %r4 = linalg.matmul ins(%d, %v : tensor<60x784xf64>, tensor<784x512xf64>) outs(%f4 : tensor<60x512xf64>) -> tensor<60x512xf64>
  return %r1, %r2, %r3, %r4 : tensor<100x512xf32>, tensor<5x512xf32>, tensor<97x512xf32>, tensor<60x512xf64>
}

// A one-row matmul (a batch-1 layer) becomes the vector-matrix generic over (n, k) of its
// row, with 128 register columns, workgroups of 256 and a K step of 1; a 1-D x @ W
// already in that form gets the setting too, 64 columns below 128 (96 here), float64
// alike; a transposed W, 10 columns or 32 reduction steps keep IREE's choice.
// CHECK-LABEL: func.func @vector_products
// CHECK:         %[[ROW:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<1x784xf32> into tensor<784xf32>
// CHECK:         %[[ACC:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x512xf32> into tensor<512xf32>
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[ROW]], %arg1 : tensor<784xf32>, tensor<784x512xf32>) outs(%[[ACC]] : tensor<512xf32>) attrs =  {compilation_info = #[[VSETTING128]]}
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         tensor.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [1, 512] : tensor<512xf32> into tensor<1x512xf32>
// CHECK:         linalg.generic {{.*}} ins(%arg2, %arg3 : tensor<784xf64>, tensor<784x96xf64>) {{.*}} attrs =  {compilation_info = #[[VSETTING64]]}
// CHECK-NOT:     compilation_info
// CHECK:         return
func.func @vector_products(%x: tensor<1x784xf32>, %w: tensor<784x512xf32>, %v: tensor<784xf64>,
                           %u: tensor<784x96xf64>, %n: tensor<512x10xf32>, %t: tensor<512x784xf32>,
                           %s: tensor<1x32xf32>, %q: tensor<32x512xf32>)
    -> (tensor<1x512xf32>, tensor<96xf64>, tensor<1x10xf32>, tensor<1x512xf32>, tensor<1x512xf32>) {
  %c = arith.constant 0.0 : f32
  %c64 = arith.constant 0.0 : f64
  %e1 = tensor.empty() : tensor<1x512xf32>
  %f1 = linalg.fill ins(%c : f32) outs(%e1 : tensor<1x512xf32>) -> tensor<1x512xf32>
  %r1 = linalg.matmul ins(%x, %w : tensor<1x784xf32>, tensor<784x512xf32>) outs(%f1 : tensor<1x512xf32>) -> tensor<1x512xf32>
  %e2 = tensor.empty() : tensor<96xf64>
  %f2 = linalg.fill ins(%c64 : f64) outs(%e2 : tensor<96xf64>) -> tensor<96xf64>
  %r2 = linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]} ins(%v, %u : tensor<784xf64>, tensor<784x96xf64>) outs(%f2 : tensor<96xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %s2 = arith.addf %acc, %p : f64
    linalg.yield %s2 : f64
  } -> tensor<96xf64>
  // 10 columns
  %e3 = tensor.empty() : tensor<1x10xf32>
  %f3 = linalg.fill ins(%c : f32) outs(%e3 : tensor<1x10xf32>) -> tensor<1x10xf32>
  %r1f = tensor.collapse_shape %r1 [[0, 1]] : tensor<1x512xf32> into tensor<512xf32>
  %r1r = tensor.expand_shape %r1f [[0, 1]] output_shape [1, 512] : tensor<512xf32> into tensor<1x512xf32>
  %r3 = linalg.matmul ins(%r1r, %n : tensor<1x512xf32>, tensor<512x10xf32>) outs(%f3 : tensor<1x10xf32>) -> tensor<1x10xf32>
  // a transposed W
  %et = tensor.empty() : tensor<784x512xf32>
  %tt = linalg.transpose ins(%t : tensor<512x784xf32>) outs(%et : tensor<784x512xf32>) permutation = [1, 0]
  %r4 = linalg.matmul ins(%x, %tt : tensor<1x784xf32>, tensor<784x512xf32>) outs(%f1 : tensor<1x512xf32>) -> tensor<1x512xf32>
  // 32 reduction steps
  %r5 = linalg.matmul ins(%s, %q : tensor<1x32xf32>, tensor<32x512xf32>) outs(%f1 : tensor<1x512xf32>) -> tensor<1x512xf32>
  return %r1, %r2, %r3, %r4, %r5 : tensor<1x512xf32>, tensor<96xf64>, tensor<1x10xf32>, tensor<1x512xf32>, tensor<1x512xf32>
}

// A matrix-vector product A @ v, float64 or float32, gets one row at a time, a K step of
// 32 and peeling; 32 reduction steps keep IREE's choice.
// CHECK-LABEL: func.func @matrix_vector_products
// AVX2-LABEL:  func.func @matrix_vector_products
// AVX2-NOT:      compilation_info
// AVX2:          return
// CHECK:         linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2048x1000xf64>, tensor<1000xf64>) {{.*}} attrs =  {compilation_info = #[[MVSETTING]]}
// CHECK:         linalg.generic {{.*}} ins(%arg2, %arg3 : tensor<100x512xf32>, tensor<512xf32>) {{.*}} attrs =  {compilation_info = #[[MVSETTING]]}
// CHECK-NOT:     compilation_info
// CHECK:         return
func.func @matrix_vector_products(%a: tensor<2048x1000xf64>, %v: tensor<1000xf64>,
                                  %b: tensor<100x512xf32>, %u: tensor<512xf32>,
                                  %c: tensor<100x32xf32>, %w: tensor<32xf32>)
    -> (tensor<2048xf64>, tensor<100xf32>, tensor<100xf32>) {
  %z64 = arith.constant 0.0 : f64
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2048xf64>
  %f1 = linalg.fill ins(%z64 : f64) outs(%e1 : tensor<2048xf64>) -> tensor<2048xf64>
  %r1 = linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (k)>, affine_map<(m, k) -> (m)>], iterator_types = ["parallel", "reduction"]} ins(%a, %v : tensor<2048x1000xf64>, tensor<1000xf64>) outs(%f1 : tensor<2048xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %p = arith.mulf %x, %y : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<2048xf64>
  %e2 = tensor.empty() : tensor<100xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<100xf32>) -> tensor<100xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (k)>, affine_map<(m, k) -> (m)>], iterator_types = ["parallel", "reduction"]} ins(%b, %u : tensor<100x512xf32>, tensor<512xf32>) outs(%f2 : tensor<100xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<100xf32>
  %r3 = linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (k)>, affine_map<(m, k) -> (m)>], iterator_types = ["parallel", "reduction"]} ins(%c, %w : tensor<100x32xf32>, tensor<32xf32>) outs(%f2 : tensor<100xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<100xf32>
  return %r1, %r2, %r3 : tensor<2048xf64>, tensor<100xf32>, tensor<100xf32>
}

// A K of 1024 or more, in whole blocks of 256 and N in whole workgroups, runs its K in
// blocks of 256 (cache_reduction); K = 1200 keeps the plain setting.
// CHECK-LABEL: func.func @deep
// CHECK:         linalg.matmul {compilation_info = #[[DEEPSETTING]]} ins(%arg0, %arg1 : tensor<64x1024xf32>, tensor<1024x512xf32>)
// CHECK:         linalg.matmul {compilation_info = #[[SETTING32]]} ins(%arg2, %arg3 : tensor<64x1200xf32>, tensor<1200x512xf32>)
func.func @deep(%a: tensor<64x1024xf32>, %b: tensor<1024x512xf32>, %c: tensor<64x1200xf32>,
                %d: tensor<1200x512xf32>) -> (tensor<64x512xf32>, tensor<64x512xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x512xf32>) -> tensor<64x512xf32>
  %r1 = linalg.matmul ins(%a, %b : tensor<64x1024xf32>, tensor<1024x512xf32>) outs(%f : tensor<64x512xf32>) -> tensor<64x512xf32>
  %r2 = linalg.matmul ins(%c, %d : tensor<64x1200xf32>, tensor<1200x512xf32>) outs(%f : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %r1, %r2 : tensor<64x512xf32>, tensor<64x512xf32>
}
