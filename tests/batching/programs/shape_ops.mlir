func.func @slices(%x: tensor<6x4xf32>, %i: tensor<i64>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<6x4xf32>, tensor<8x6xf32>) {
  %a = tensor.extract_slice %x[1, 0] [2, 4] [2, 1] : tensor<6x4xf32> to tensor<2x4xf32>
  %ii = tensor.extract %i[] : tensor<i64>
  %idx = arith.index_cast %ii : i64 to index
  %row = tensor.extract_slice %x[%idx, 0] [1, 4] [1, 1] : tensor<6x4xf32> to tensor<4xf32>
  %z = arith.constant dense<0.0> : tensor<1x4xf32>
  %u = tensor.insert_slice %z into %x[%idx, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<6x4xf32>
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%q: index, %r: index):
    tensor.yield %cst : f32
  } : tensor<6x4xf32> to tensor<8x6xf32>
  return %a, %row, %u, %p : tensor<2x4xf32>, tensor<4xf32>, tensor<6x4xf32>, tensor<8x6xf32>
}
func.func @joins(%x: tensor<3xf32>, %y: tensor<2xf32>, %m: tensor<2x3x4xf32>, %n: tensor<2x4x5xf32>) -> (tensor<5xf32>, tensor<2x3xf32>, tensor<2x3x5xf32>) {
  %c = tensor.concat dim(0) %x, %y : (tensor<3xf32>, tensor<2xf32>) -> tensor<5xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %b = linalg.broadcast ins(%x : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %e2 = tensor.empty() : tensor<2x3x5xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %bm = linalg.batch_matmul ins(%m, %n : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%f : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %c, %b, %bm : tensor<5xf32>, tensor<2x3xf32>, tensor<2x3x5xf32>
}
