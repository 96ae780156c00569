"""Test artifacts for the runtime: hand-written linalg MLIR with aotc metadata, and the
compile helper (the runtime itself never imports the compiler; only tests do)."""

from __future__ import annotations

from aotc.runtime import FunctionMetadata, TensorSpec, TreeDef

LEAF = TreeDef("leaf")
CPU_FLAGS = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
    # Keep float64/int64 as written (IREE narrows them to 32 bits by default).
    "--iree-input-demote-f64-to-f32=false",
    "--iree-input-demote-i64-to-i32=false",
]
AARCH64_FLAGS = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-triple=aarch64-unknown-linux-gnu",
    "--iree-llvmcpu-target-cpu=generic",
]

# dtype name -> MLIR element type (integers are signless: uint8 is i8)
ELEMENT = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "i8", "uint16": "i16", "uint32": "i32", "uint64": "i64",
    "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
}


def tup(*children: TreeDef) -> TreeDef:
    return TreeDef("tuple", tuple(children))


def flat(n: int) -> TreeDef:
    return tup(*([LEAF] * n))


def meta(name: str, args: list[tuple], results: list[tuple], in_tree: TreeDef | None = None,
         out_tree: TreeDef | None = None, work: float = 16.0,
         target: str = "cpu") -> FunctionMetadata:
    """FunctionMetadata from (name, shape, dtype) triples; flat trees by default."""
    return FunctionMetadata(
        name=name,
        args=tuple(TensorSpec(n, tuple(s), d) for n, s, d in args),
        results=tuple(TensorSpec(n, tuple(s), d) for n, s, d in results),
        in_tree=in_tree if in_tree is not None else flat(len(args)),
        out_tree=out_tree if out_tree is not None else (
            LEAF if len(results) == 1 else flat(len(results))),
        target=target,
        aotc_version="0.1.0",
        iree_version="3.13.0",
        source_hash="test",
        work_estimate=work,
    )


def reflection(m: FunctionMetadata) -> str:
    """The ``attributes {...}`` clause carrying the metadata: JSON in an MLIR string, with
    backslashes and quotes escaped."""
    text = m.to_json().replace("\\", "\\\\").replace('"', '\\"')
    return f'attributes {{iree.reflection = {{aotc = "{text}"}}}}'


def unary(name: str, ty: str, elem: str, body: str, m: FunctionMetadata | None) -> str:
    """An elementwise function of one 1-d static tensor; ``body`` maps %v to %r."""
    attrs = reflection(m) if m is not None else ""
    return f"""
func.func @{name}(%x: {ty}) -> {ty} {attrs} {{
  %e = tensor.empty() : {ty}
  %r0 = linalg.generic {{indexing_maps = [#m1, #m1], iterator_types = ["parallel"]}}
      ins(%x : {ty}) outs(%e : {ty}) {{
  ^bb0(%v: {elem}, %o: {elem}):
    {body}
    linalg.yield %r : {elem}
  }} -> {ty}
  return %r0 : {ty}
}}"""


def plus_one(dtype: str) -> str:
    elem = ELEMENT[dtype]
    if dtype == "bool":
        return f"%c = arith.constant true\n    %r = arith.xori %v, %c : {elem}"
    if elem.startswith("f"):
        return f"%c = arith.constant 1.0 : {elem}\n    %r = arith.addf %v, %c : {elem}"
    if elem.startswith("complex"):
        return f"%c = complex.constant [1.0 : {elem[8:-1]}, 0.0 : {elem[8:-1]}] : {elem}\n" \
               f"    %r = complex.add %v, %c : {elem}"
    return f"%c = arith.constant 1 : {elem}\n    %r = arith.addi %v, %c : {elem}"


def main_mlir() -> str:
    f4 = "tensor<4xf32>"
    parts = ["#m1 = affine_map<(d0) -> (d0)>",
             "#m2 = affine_map<(d0, d1) -> (d0, d1)>",
             "#r2 = affine_map<(d0, d1) -> (d0)>",
             "#s1 = affine_map<(d0) -> ()>"]
    # add(x, y): the tiny call.
    parts.append(f"""
func.func @add(%x: {f4}, %y: {f4}) -> {f4} {reflection(meta(
        "add", [("x", [4], "float32"), ("y", [4], "float32")], [("out0", [4], "float32")]))} {{
  %e = tensor.empty() : {f4}
  %r = linalg.generic {{indexing_maps = [#m1, #m1, #m1], iterator_types = ["parallel"]}}
      ins(%x, %y : {f4}, {f4}) outs(%e : {f4}) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }} -> {f4}
  return %r : {f4}
}}""")
    # inc_<dtype>(x: dtype[4]) -> x + 1 (bool: not x), for every supported dtype.
    for dtype, elem in ELEMENT.items():
        m = meta(f"inc_{dtype}", [("x", [4], dtype)], [("out0", [4], dtype)])
        parts.append(unary(f"inc_{dtype}", f"tensor<4x{elem}>", elem, plus_one(dtype), m))
    # addn(x: f32[n,3], y: f32[n,3]): a named dynamic dimension shared by both.
    d3 = "tensor<?x3xf32>"
    parts.append(f"""
func.func @addn(%x: {d3}, %y: {d3}) -> {d3} {reflection(meta(
        "addn", [("x", ["n", 3], "float32"), ("y", ["n", 3], "float32")],
        [("out0", ["n", 3], "float32")]))} {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : {d3}
  %e = tensor.empty(%n) : {d3}
  %r = linalg.generic {{indexing_maps = [#m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %y : {d3}, {d3}) outs(%e : {d3}) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }} -> {d3}
  return %r : {d3}
}}""")
    # rowsum(x: f32[?,4]) -> f32[?]: an anonymous dynamic dimension.
    d4, d1 = "tensor<?x4xf32>", "tensor<?xf32>"
    parts.append(f"""
func.func @rowsum(%x: {d4}) -> {d1} {reflection(meta(
        "rowsum", [("x", [None, 4], "float32")], [("out0", [None], "float32")]))} {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : {d4}
  %e = tensor.empty(%n) : {d1}
  %z = linalg.fill ins(%zero : f32) outs(%e : {d1}) -> {d1}
  %r = linalg.generic {{indexing_maps = [#m2, #r2], iterator_types = ["parallel", "reduction"]}}
      ins(%x : {d4}) outs(%z : {d1}) {{
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }} -> {d1}
  return %r : {d1}
}}""")
    # axpy(a: f32[], x: f32[4]) -> a * x: a 0-d argument that takes Python scalars.
    parts.append(f"""
func.func @axpy(%a: tensor<f32>, %x: {f4}) -> {f4} {reflection(meta(
        "axpy", [("a", [], "float32"), ("x", [4], "float32")], [("out0", [4], "float32")]))} {{
  %e = tensor.empty() : {f4}
  %r = linalg.generic {{indexing_maps = [#s1, #m1, #m1], iterator_types = ["parallel"]}}
      ins(%a, %x : tensor<f32>, {f4}) outs(%e : {f4}) {{
  ^bb0(%s: f32, %v: f32, %o: f32):
    %p = arith.mulf %s, %v : f32
    linalg.yield %p : f32
  }} -> {f4}
  return %r : {f4}
}}""")
    # shift(k: i32[], x: i32[3]) -> x + k: an int 0-d argument (floats are refused).
    i3 = "tensor<3xi32>"
    parts.append(f"""
func.func @shift(%k: tensor<i32>, %x: {i3}) -> {i3} {reflection(meta(
        "shift", [("k", [], "int32"), ("x", [3], "int32")], [("out0", [3], "int32")]))} {{
  %e = tensor.empty() : {i3}
  %r = linalg.generic {{indexing_maps = [#s1, #m1, #m1], iterator_types = ["parallel"]}}
      ins(%k, %x : tensor<i32>, {i3}) outs(%e : {i3}) {{
  ^bb0(%s: i32, %v: i32, %o: i32):
    %p = arith.addi %s, %v : i32
    linalg.yield %p : i32
  }} -> {i3}
  return %r : {i3}
}}""")
    # tree(pair: (a, b), d: {"u": f32[2], "v": i32[2]}) -> {"pair": (u, v), "sum": a + b}
    f2, i2 = "tensor<2xf32>", "tensor<2xi32>"
    in_tree = tup(tup(LEAF, LEAF), TreeDef("dict", (LEAF, LEAF), ("u", "v")))
    out_tree = TreeDef("dict", (tup(LEAF, LEAF), LEAF), ("pair", "sum"))
    tree_meta = meta(
        "tree",
        [("a", [2], "float32"), ("b", [2], "float32"), ("u", [2], "float32"), ("v", [2], "int32")],
        [("pair0", [2], "float32"), ("pair1", [2], "int32"), ("sum", [2], "float32")],
        in_tree, out_tree)
    parts.append(f"""
func.func @tree(%a: {f2}, %b: {f2}, %u: {f2}, %v: {i2}) -> ({f2}, {i2}, {f2})
    {reflection(tree_meta)} {{
  %e = tensor.empty() : {f2}
  %r = linalg.generic {{indexing_maps = [#m1, #m1, #m1], iterator_types = ["parallel"]}}
      ins(%a, %b : {f2}, {f2}) outs(%e : {f2}) {{
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }} -> {f2}
  return %u, %v, %r : {f2}, {i2}, {f2}
}}""")
    # big(x: f32[8192]) -> x + 1: a 32 KiB result, read zero-copy.
    parts.append(unary("big", "tensor<8192xf32>", "f32", plus_one("float32"), meta(
        "big", [("x", [8192], "float32")], [("out0", [8192], "float32")])))
    # plain_neg: no aotc metadata (a plain IREE function).
    parts.append(unary("plain_neg", f4, "f32", "%r = arith.negf %v : f32", None))
    return "\n".join(parts)


def compile_mlir(source: str, flags: list[str] = CPU_FLAGS) -> bytes:
    import iree.compiler

    return iree.compiler.compile_str(source, extra_args=flags)


