//! Native code against the engine's TIR interpreter on the same PrimFuncs and inputs:
//! the same outcome (value or error kind and message), the same fuel left, and the
//! same buffer contents, bit for bit, whether the call succeeds or fails.

use crate::buffer::Memory;
use crate::dtype::DType;
use crate::tensor::Tensor;
use crate::tir::{TirBackend, TirFunc};
use spec_model::Span;
use std::rc::Rc;

fn parse(src: &str) -> spec_model::grammar::PrimFunc {
    let text = format!("from tvm.script import tir as T\n\n\n{src}");
    let m = spec_model::text::parse_module(&text).unwrap_or_else(|e| panic!("{}", e.render("<test>", &text)));
    let f = (**m.prim_funcs().next().expect("a PrimFunc").1).clone();
    f
}

/// A tensor of `dtype` and `shape` whose bytes come from `seed` (every bit pattern
/// of the integer dtypes; floats from a small set with NaN, infinities and -0).
fn input(dtype: DType, shape: &[u64], seed: u64) -> Tensor {
    let memory = Memory::new(1 << 30);
    let t = Tensor::zeros(dtype, shape, &memory).expect("memory");
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let floats = [0.0, -0.0, 1.5, -2.25, 3.0, 1e30, -7.0, f64::NAN, f64::INFINITY, 0.5, 100.0, -1.0];
    {
        let mut b = t.data_mut().expect("fresh");
        let n = t.numel();
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let small = (x % 19) as i64 - 9;
            match dtype {
                DType::F32 => b.as_mut_slice::<f32>(n)[i] = floats[(x % 12) as usize] as f32,
                DType::F64 => b.as_mut_slice::<f64>(n)[i] = floats[(x % 12) as usize],
                DType::F16 => b.as_mut_slice::<half::f16>(n)[i] = half::f16::from_f64(floats[(x % 12) as usize]),
                DType::I32 => b.as_mut_slice::<i32>(n)[i] = if x.is_multiple_of(5) { x as i32 } else { small as i32 },
                DType::I64 => b.as_mut_slice::<i64>(n)[i] = if x.is_multiple_of(5) { x as i64 } else { small },
                DType::I8 => b.as_mut_slice::<i8>(n)[i] = x as i8,
                DType::U8 | DType::Bool => {
                    b.as_mut_slice::<u8>(n)[i] = if dtype == DType::Bool { (x & 1) as u8 } else { x as u8 }
                }
                _ => b.bytes_mut()[i] = x as u8,
            }
        }
    }
    t
}

fn copy(t: &Tensor) -> Rc<Tensor> {
    let memory = Memory::new(1 << 30);
    Rc::new(t.deep_copy(&memory).expect("memory"))
}

/// Runs `src` natively and interpreted on copies of `tensors` (indices into which
/// parameters take the same tensor: `alias`), with `fuel`, and compares everything.
fn same(src: &str, tensors: &[Tensor], alias: &[usize], scalars: &[i64], fuel: u64) -> String {
    let f = parse(src);
    let native = TirFunc::compile(&f, "f", TirBackend::Native);
    assert!(native.interpreted_because().is_none(), "not compiled: {:?}", native.interpreted_because());
    let interp = TirFunc::compile(&f, "f", TirBackend::Interpreter);
    let mut outs = Vec::new();
    for t in [&native, &interp] {
        let copies: Vec<Rc<Tensor>> = tensors.iter().map(copy).collect();
        let args: Vec<Rc<Tensor>> = alias.iter().map(|&k| copies[k].clone()).collect();
        let mut left = fuel;
        let memory = Memory::new(1 << 30);
        let r = t.run(&args, scalars, &mut left, Span::SYNTHETIC, &memory);
        let r = r.map_err(|e| format!("{:?} {}: {}", e.kind, e.rule, e.message));
        let bytes: Vec<Vec<u8>> = copies.iter().map(|c| c.data().expect("free").bytes().to_vec()).collect();
        outs.push((r, left, bytes, memory.live()));
    }
    assert_eq!(outs[0].0, outs[1].0, "outcome\n{src}");
    assert_eq!(outs[0].1, outs[1].1, "fuel left\n{src}");
    assert_eq!(outs[0].2, outs[1].2, "buffer contents\n{src}");
    assert_eq!(outs[0].3, 0, "scratch storage released");
    format!("{:?}", outs[0].0)
}

const ELEMENTWISE: &str = r#"
@T.prim_func
def add(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (3, n), "DT")
    B = T.match_buffer(b, (n,), "DT")
    C = T.match_buffer(c, (3, n), "DT")
    for i, j in T.grid(3, n):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(A[vi, vj] OP B[vj], A[vi, vj] - B[vj])
"#;

#[test]
fn vectorized_elementwise_every_length_and_dtype() {
    let vector_loops = || crate::stats::snapshot()[crate::stats::Counter::TirVectorLoops as usize].1;
    for dt in [DType::F32, DType::F64, DType::I32] {
        let before = vector_loops();
        let name = dt.data_type().to_string();
        for op in ["+", "*", "-"] {
            if op == "*" && dt == DType::I32 {
                continue;
            }
            let src = ELEMENTWISE.replace("DT", &name).replace("OP", op);
            for n in 0..11u64 {
                for seed in 0..3 {
                    let ts = [input(dt, &[3, n], seed), input(dt, &[n], seed + 7), input(dt, &[3, n], 0)];
                    same(&src, &ts, &[0, 1, 2], &[], 1 << 20);
                    // Too little fuel for the whole loop: the scalar loop's exact stop.
                    same(&src, &ts, &[0, 1, 2], &[], 5 + 3 * n);
                    // The output is an input too: the vector path must not apply.
                    same(&src, &ts, &[0, 1, 0], &[], 1 << 20);
                }
            }
        }
        assert!(vector_loops() > before, "the vector path never ran for {dt:?}");
    }
}

#[test]
fn int32_overflow_in_a_vector_chunk() {
    let src = ELEMENTWISE.replace("DT", "int32").replace("OP", "+");
    let memory = Memory::new(1 << 30);
    let a = Tensor::from_slice(DType::I32, &[3, 9], &[5i32; 27], &memory).unwrap();
    let mut bv = [1i32; 9];
    bv[6] = i32::MAX;
    let b = Tensor::from_slice(DType::I32, &[9], &bv, &memory).unwrap();
    let out = same(&src, &[a, b, input(DType::I32, &[3, 9], 1)], &[0, 1, 2], &[], 1 << 20);
    assert!(out.contains("IntegerOverflow"), "{out}");
}

const KERNELS: &[&str] = &[
    // matmul with T.init
    r#"
@T.prim_func
def mm(A: T.Buffer((5, 7), "float32"), B: T.Buffer((7, 6), "float32"), C: T.Buffer((5, 6), "float32")):
    for i, j, k in T.grid(5, 6, 7):
        with T.block("mm"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"#,
    // integer division family, divisors from the data
    r#"
@T.prim_func
def div(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"), C: T.Buffer((16,), "int32")):
    for i in range(16):
        C[i] = A[i] // B[i] + T.floormod(A[i], B[i]) + T.truncdiv(A[i], B[i]) - T.truncmod(A[i], B[i])
"#,
    // int64 arithmetic that overflows
    r#"
@T.prim_func
def big(A: T.Buffer((8,), "int64"), C: T.Buffer((8,), "int64")):
    for i in range(8):
        C[i] = A[i] * A[i] + A[i] * T.int64(3)
"#,
    // padding with if_then_else, out-of-bounds guarded
    r#"
@T.prim_func
def pad(A: T.Buffer((4, 4), "float32"), C: T.Buffer((6, 6), "float32")):
    for i, j in T.grid(6, 6):
        with T.block("pad"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.if_then_else(1 <= vi and vi < 5 and 1 <= vj and vj < 5, A[vi - 1, vj - 1], T.float32(-1))
"#,
    // an out-of-bounds read
    r#"
@T.prim_func
def oob(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        C[i] = A[i + 1]
"#,
    // casts from floats (NaN, infinities) and the math intrinsics
    r#"
@T.prim_func
def casts(A: T.Buffer((12,), "float32"), C: T.Buffer((12,), "int8"), D: T.Buffer((12,), "float32")):
    for i in range(12):
        D[i] = T.exp(A[i]) + T.sqrt(T.fabs(A[i])) + T.tanh(A[i]) + T.sigmoid(A[i]) + T.round(A[i])
        C[i] = T.Cast("int8", T.floor(A[i]))
"#,
    // float16 and a scratch buffer
    r#"
@T.prim_func
def half(A: T.Buffer((8,), "float16"), C: T.Buffer((8,), "float16")):
    S = T.alloc_buffer((8,), "float16")
    for i in range(8):
        S[i] = A[i] * T.float16(3) + T.float16(0.1)
    for i in range(8):
        C[i] = S[7 - i] / A[i] - T.floor(S[i]) + T.pow(A[i], T.float16(2))
"#,
    // a reduction into a heap scratch buffer with a symbolic shape, and a let
    r#"
@T.prim_func
def red(a: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, 3), "float64")
    C = T.match_buffer(c, (3,), "float64")
    S = T.alloc_buffer((n + 100,), "float64")
    for j in range(3):
        with T.block("init"):
            vj = T.axis.spatial(3, j)
            C[vj] = T.float64(0)
        for i in range(n):
            with T.block("sum"):
                vi = T.axis.spatial(n, i)
                x = A[vi, j] * T.float64(2)
                S[vi] = x
                C[j] = T.max(C[j], S[vi]) + T.min(x, T.float64(1)) % T.float64(3)
"#,
];

#[test]
fn kernels_match_the_interpreter_at_every_fuel() {
    for src in KERNELS {
        let f = parse(src);
        let shapes: Vec<(DType, Vec<u64>)> = f
            .params
            .iter()
            .filter_map(|p| p.buffer.as_ref())
            .map(|b| {
                let dims = b
                    .shape()
                    .iter()
                    .map(|d| match &*d.kind {
                        spec_model::grammar::tir::TirExprKind::IntImm { value, .. } => *value as u64,
                        _ => 4,
                    })
                    .collect();
                (DType::of(b.dtype()).expect("storage"), dims)
            })
            .collect();
        let shapes = if shapes.is_empty() { vec![(DType::F64, vec![4, 3]), (DType::F64, vec![3])] } else { shapes };
        for seed in 0..6 {
            let ts: Vec<Tensor> =
                shapes.iter().enumerate().map(|(k, (d, s))| input(*d, s, seed * 10 + k as u64)).collect();
            let alias: Vec<usize> = (0..ts.len()).collect();
            same(src, &ts, &alias, &[], 1 << 20);
            // Every fuel level up to what the call needs: the same stop, state and rest.
            for fuel in 0..60 {
                same(src, &ts, &alias, &[], fuel);
            }
        }
    }
}
