// aotc-tile-matmuls gives a float32 matmul of at most 256 rows, at least 256 reduction
// steps and 128 columns the tile setting measured fastest (workgroups 32x128, register
// tiles 8x32, K step 1) as its compilation_info. A matmul reading a transposed operand,
// a float64 one, a narrow one and a tall one keep IREE's choice. Running it twice
// changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-matmuls' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-matmuls,aotc-tile-matmuls' | filecheck %s

// CHECK:       #[[CONFIG:.*]] = #iree_cpu.lowering_config<distribution = [32, 128, 0], vector_common_parallel = [8, 32, 0], vector_reduction = [0, 0, 1]>
// CHECK:       #[[PIPELINE:.*]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
// CHECK:       #[[SETTING:.*]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG]], translation_info = #[[PIPELINE]]>
// CHECK-LABEL: func.func @layer
// CHECK:         linalg.matmul {compilation_info = #[[SETTING]]} ins(%arg0, %arg1 : tensor<64x784xf32>, tensor<784x512xf32>)
func.func @layer(%x: tensor<64x784xf32>, %w: tensor<784x512xf32>) -> tensor<64x512xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<64x512xf32>) -> tensor<64x512xf32>
  %r = linalg.matmul ins(%x, %w : tensor<64x784xf32>, tensor<784x512xf32>) outs(%f : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %r : tensor<64x512xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     compilation_info
// CHECK:         return
func.func @kept(%x: tensor<64x512xf32>, %w: tensor<784x512xf32>, %d: tensor<64x784xf64>,
                %v: tensor<784x512xf64>, %t: tensor<784x64xf32>, %u: tensor<64x512xf32>,
                %n: tensor<512x10xf32>)
    -> (tensor<64x784xf32>, tensor<64x512xf64>, tensor<784x512xf32>, tensor<64x10xf32>) {
  %c = arith.constant 0.0 : f32
  %c64 = arith.constant 0.0 : f64
  // the transposed weights of a backward pass
  %et = tensor.empty() : tensor<512x784xf32>
  %wt = linalg.transpose ins(%w : tensor<784x512xf32>) outs(%et : tensor<512x784xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<64x784xf32>
  %f1 = linalg.fill ins(%c : f32) outs(%e1 : tensor<64x784xf32>) -> tensor<64x784xf32>
  %r1 = linalg.matmul ins(%x, %wt : tensor<64x512xf32>, tensor<512x784xf32>) outs(%f1 : tensor<64x784xf32>) -> tensor<64x784xf32>
  // float64
  %e2 = tensor.empty() : tensor<64x512xf64>
  %f2 = linalg.fill ins(%c64 : f64) outs(%e2 : tensor<64x512xf64>) -> tensor<64x512xf64>
  %r2 = linalg.matmul ins(%d, %v : tensor<64x784xf64>, tensor<784x512xf64>) outs(%f2 : tensor<64x512xf64>) -> tensor<64x512xf64>
  // tall with a short K (a weight gradient)
  %e3 = tensor.empty() : tensor<784x512xf32>
  %f3 = linalg.fill ins(%c : f32) outs(%e3 : tensor<784x512xf32>) -> tensor<784x512xf32>
  %r3 = linalg.matmul ins(%t, %u : tensor<784x64xf32>, tensor<64x512xf32>) outs(%f3 : tensor<784x512xf32>) -> tensor<784x512xf32>
  // 10 columns
  %e4 = tensor.empty() : tensor<64x10xf32>
  %f4 = linalg.fill ins(%c : f32) outs(%e4 : tensor<64x10xf32>) -> tensor<64x10xf32>
  %r4 = linalg.matmul ins(%u, %n : tensor<64x512xf32>, tensor<512x10xf32>) outs(%f4 : tensor<64x10xf32>) -> tensor<64x10xf32>
  return %r1, %r2, %r3, %r4 : tensor<64x784xf32>, tensor<64x512xf64>, tensor<784x512xf32>, tensor<64x10xf32>
}
