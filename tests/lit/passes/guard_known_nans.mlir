// aotc-guard-known-nans guards a float32 exp whose operand reads a NaN constant once its
// elementwise producers are followed (x * 0 + nan): the exp is fed 0 where its operand
// is NaN and returns the NaN there. An exp of x - max(x) (a reduction's -inf init is
// not followed) stays as it is. Running it twice changes nothing more.

// RUN: %aotc-opt %s --pass-pipeline='aotc-guard-known-nans' | filecheck %s
// RUN: %aotc-opt %s --pass-pipeline='aotc-guard-known-nans,aotc-guard-known-nans' | filecheck %s

// CHECK-LABEL: func.func @known
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %[[X:.*]], %[[X]] : f32
// CHECK:         %[[SAFE:.*]] = arith.select %[[NAN]], %{{.*}}, %[[X]] : f32
// CHECK:         %[[E:.*]] = math.exp %[[SAFE]] {aotc.nan_guarded} : f32
// CHECK:         arith.select %[[NAN]], %[[X]], %[[E]] : f32
// CHECK-LABEL: func.func @softmax_like
// CHECK-NOT:     aotc.nan_guarded
// CHECK:         return
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @known(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %e = tensor.empty() : tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%x : tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %zero : f32
    %n = arith.addf %m, %nan : f32
    linalg.yield %n : f32
  } -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%s : tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x2 = math.exp %a : f32
    linalg.yield %x2 : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

func.func @softmax_like(%x: tensor<3xf32>) -> tensor<3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %max = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]} ins(%x : tensor<3xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#v, #s, #v], iterator_types = ["parallel"]} ins(%x, %max : tensor<3xf32>, tensor<f32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %x2 = math.exp %d : f32
    linalg.yield %x2 : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}
