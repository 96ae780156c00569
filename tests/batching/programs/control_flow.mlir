#id = affine_map<(d0) -> (d0)>
#s = affine_map<() -> ()>
func.func @branch(%p: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.negf %a : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func @loop(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %n2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%acc : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.addf %a, %a : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    scf.yield %n2 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func @count(%limit: tensor<i32>) -> tensor<i32> {
  %zero = arith.constant dense<0> : tensor<i32>
  %r = scf.while (%k = %zero) : (tensor<i32>) -> tensor<i32> {
    %kv = tensor.extract %k[] : tensor<i32>
    %lv = tensor.extract %limit[] : tensor<i32>
    %go = arith.cmpi slt, %kv, %lv : i32
    scf.condition(%go) %k : tensor<i32>
  } do {
  ^bb0(%k2: tensor<i32>):
    %e = tensor.empty() : tensor<i32>
    %n = linalg.generic {indexing_maps = [#s, #s], iterator_types = []} ins(%k2 : tensor<i32>) outs(%e : tensor<i32>) {
    ^bb0(%a: i32, %o: i32):
      %one = arith.constant 1 : i32
      %m = arith.addi %a, %one : i32
      linalg.yield %m : i32
    } -> tensor<i32>
    scf.yield %n : tensor<i32>
  }
  return %r : tensor<i32>
}
func.func @pick(%i: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %iv = tensor.extract %i[] : tensor<i32>
  %idx = arith.index_cast %iv : i32 to index
  %r = scf.index_switch %idx -> tensor<4xf32>
  case 0 {
    %e = tensor.empty() : tensor<4xf32>
    %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.negf %a : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  default {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
