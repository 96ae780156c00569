// aotc-tile-reductions gives a float32 row max or min of at least 1024 elements a row,
// read row-major, the vector tiles measured fastest (two rows of 128 elements where the
// row divides by 128, four of 64 where by 64) as its compilation_info; where an op as
// large as its input reads its result (x - max), it is read through a flow.tensor.clone.
// Sums, shorter rows and column reads keep IREE's choice. Running it twice changes
// nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-reductions' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-reductions,aotc-tile-reductions' | filecheck %s

// CHECK-DAG: #[[WIDE:config[0-9]*]] = #iree_cpu.lowering_config<distribution = [32, 0], vector_common_parallel = [2, 0], vector_reduction = [0, 128]>
// CHECK-DAG: #[[NARROW:config[0-9]*]] = #iree_cpu.lowering_config<distribution = [8, 0], vector_common_parallel = [4, 0], vector_reduction = [0, 64]>
// CHECK-DAG: #[[WIDE_INFO:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #[[WIDE]],
// CHECK-DAG: #[[NARROW_INFO:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #[[NARROW]],

#id = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @row_max
// CHECK:         linalg.generic {{.*}} attrs = {compilation_info = #[[WIDE_INFO]]}
func.func @row_max(%x: tensor<64x4096xf32>) -> tensor<64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x4096xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// CHECK-LABEL: func.func @row_min_of_1088
// CHECK:         linalg.generic {{.*}} attrs = {compilation_info = #[[NARROW_INFO]]}
func.func @row_min_of_1088(%x: tensor<8x1088xf32>) -> tensor<8xf32> {
  %inf = arith.constant 0x7F800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%inf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x1088xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.minimumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     compilation_info
// CHECK:         return
func.func @kept(%x: tensor<64x4096xf32>, %y: tensor<4096x64xf32>, %z: tensor<64x512xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x4096xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %colmax = linalg.generic {indexing_maps = [#cols, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4096x64xf32>) outs(%minit : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %short = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<64x512xf32>) outs(%minit : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %sum, %colmax, %short : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @shifted
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} attrs = {compilation_info = #[[WIDE_INFO]]}
// CHECK:         %[[APART:.*]] = flow.tensor.clone %[[MAX]]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[APART]] :
func.func @shifted(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<64xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %fused = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x4096xf32>) outs(%minit : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %big = tensor.empty() : tensor<64x4096xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %fused : tensor<64x4096xf32>, tensor<64xf32>) outs(%big : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<64x4096xf32>
  return %shifted : tensor<64x4096xf32>
}
