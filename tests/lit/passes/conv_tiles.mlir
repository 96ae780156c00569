// aotc-tile-convolutions gives a channel-last 2-D convolution (float32 or float64) one
// vector of output channels by the largest divisor of its output columns from 4 to 14,
// one input channel a reduction step, workgroups of whole rows (up to 64 columns and 64
// channels, within 4096 output elements), through IREE's convolution pipeline. A 1x1
// window, fewer input channels than a vector's lanes, output channels that are not a
// multiple of them, and output columns with no divisor from 4 to 14 keep IREE's choice.
// The register size is an option (32 bytes, AVX2, by default). Running it twice changes
// nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-convolutions' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-convolutions,aotc-tile-convolutions' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-tile-convolutions{register-bytes=64}' | filecheck %s --check-prefix=WIDE

// CHECK-DAG: #[[F32:config[0-9]*]] = #iree_cpu.lowering_config<distribution = [1, 7, 14, 32, 0, 0, 0], vector_common_parallel = [1, 1, 14, 8, 0, 0, 0], vector_reduction = [0, 0, 0, 0, 1, 1, 1]>
// CHECK-DAG: #[[F64:config[0-9]*]] = #iree_cpu.lowering_config<distribution = [1, 1, 11, 48, 0, 0, 0], vector_common_parallel = [1, 1, 11, 4, 0, 0, 0], vector_reduction = [0, 0, 0, 0, 1, 1, 1]>
// CHECK-DAG: #[[PIPELINE:translation[0-9]*]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<ConvTileAndDecomposeExpert>>
// CHECK-DAG: #[[F32_INFO:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #[[F32]], translation_info = #[[PIPELINE]]>
// CHECK-DAG: #[[F64_INFO:compilation[0-9]*]] = #iree_codegen.compilation_info<lowering_config = #[[F64]], translation_info = #[[PIPELINE]]>
// WIDE-DAG:  #iree_cpu.lowering_config<distribution = [1, 7, 14, 32, 0, 0, 0], vector_common_parallel = [1, 1, 14, 16, 0, 0, 0], vector_reduction = [0, 0, 0, 0, 1, 1, 1]>

// CHECK-LABEL: func.func @layer
// CHECK:         linalg.conv_2d_nhwc_hwcf {compilation_info = #[[F32_INFO]]
func.func @layer(%x: tensor<32x16x16x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<32x14x14x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x14x14x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32x14x14x32xf32>) -> tensor<32x14x14x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<32x16x16x16xf32>, tensor<3x3x16x32xf32>) outs(%init : tensor<32x14x14x32xf32>) -> tensor<32x14x14x32xf32>
  return %r : tensor<32x14x14x32xf32>
}

// CHECK-LABEL: func.func @float64_eleven_columns
// CHECK:         linalg.conv_2d_nhwc_hwcf {compilation_info = #[[F64_INFO]]
func.func @float64_eleven_columns(%x: tensor<8x13x13x32xf64>, %w: tensor<3x3x32x48xf64>) -> tensor<8x11x11x48xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8x11x11x48xf64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<8x11x11x48xf64>) -> tensor<8x11x11x48xf64>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<8x13x13x32xf64>, tensor<3x3x32x48xf64>) outs(%init : tensor<8x11x11x48xf64>) -> tensor<8x11x11x48xf64>
  return %r : tensor<8x11x11x48xf64>
}

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     compilation_info
// CHECK:         return
func.func @kept(%x: tensor<8x56x56x64xf32>, %w1: tensor<1x1x64x256xf32>,
                %y: tensor<32x30x30x2xf32>, %w2: tensor<3x3x2x16xf32>,
                %z: tensor<16x28x28x8xf32>, %w3: tensor<5x5x8x10xf32>,
                %v: tensor<8x19x19x24xf32>, %w4: tensor<3x3x24x40xf32>)
    -> (tensor<8x56x56x256xf32>, tensor<32x28x28x16xf32>, tensor<16x24x24x10xf32>, tensor<8x17x17x40xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x56x56x256xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x56x56x256xf32>) -> tensor<8x56x56x256xf32>
  %pointwise = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<8x56x56x64xf32>, tensor<1x1x64x256xf32>) outs(%i1 : tensor<8x56x56x256xf32>) -> tensor<8x56x56x256xf32>
  %e2 = tensor.empty() : tensor<32x28x28x16xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x28x28x16xf32>) -> tensor<32x28x28x16xf32>
  %two_channels = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y, %w2 : tensor<32x30x30x2xf32>, tensor<3x3x2x16xf32>) outs(%i2 : tensor<32x28x28x16xf32>) -> tensor<32x28x28x16xf32>
  %e3 = tensor.empty() : tensor<16x24x24x10xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x24x24x10xf32>) -> tensor<16x24x24x10xf32>
  %ten_features = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%z, %w3 : tensor<16x28x28x8xf32>, tensor<5x5x8x10xf32>) outs(%i3 : tensor<16x24x24x10xf32>) -> tensor<16x24x24x10xf32>
  %e4 = tensor.empty() : tensor<8x17x17x40xf32>
  %i4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<8x17x17x40xf32>) -> tensor<8x17x17x40xf32>
  %prime_columns = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%v, %w4 : tensor<8x19x19x24xf32>, tensor<3x3x24x40xf32>) outs(%i4 : tensor<8x17x17x40xf32>) -> tensor<8x17x17x40xf32>
  return %pointwise, %two_channels, %ten_features, %prime_columns
      : tensor<8x56x56x256xf32>, tensor<32x28x28x16xf32>, tensor<16x24x24x10xf32>, tensor<8x17x17x40xf32>
}
