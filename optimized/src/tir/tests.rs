//! The engine's TIR executor on hand-written PrimFuncs: the reference interpreter's
//! cases (programs and expected outcomes), plus what only the engine has (memory).

use super::{TirBackend, TirFunc};
use crate::buffer::Memory;
use crate::dtype::{DType, Element};
use crate::error::{Error, ErrorKind, Result};
use crate::tensor::Tensor;
use half::f16;
use spec_model::grammar::tir::{PrimFunc, Stmt, StmtKind, TirExpr, TirExprKind, TirParam};
use spec_model::grammar::{DataType, PrimVar};
use spec_model::Span;
use std::rc::Rc;

const HEADER: &str = "from tvm.script import tir as T\n\n\n";

fn mem() -> Rc<Memory> {
    Memory::new(1 << 30)
}

/// The single PrimFunc of `src` (a `@T.prim_func` definition without the import).
fn parse(src: &str) -> PrimFunc {
    let text = format!("{HEADER}{src}");
    let m = spec_model::text::parse_module(&text).unwrap_or_else(|e| panic!("{}", e.render("<test>", &text)));
    let f = (**m.prim_funcs().next().expect("a PrimFunc").1).clone();
    f
}

fn prim(src: &str) -> TirFunc {
    TirFunc::compile(&parse(src), "f", TirBackend::Native)
}

fn tensor<T: Element>(dtype: DType, shape: &[u64], values: &[T]) -> Rc<Tensor> {
    Rc::new(Tensor::from_slice(dtype, shape, values, &mem()).expect("memory"))
}

fn f32s(shape: &[u64], values: &[f32]) -> Rc<Tensor> {
    tensor(DType::F32, shape, values)
}

fn zeros(dtype: DType, shape: &[u64]) -> Rc<Tensor> {
    Rc::new(Tensor::zeros(dtype, shape, &mem()).expect("memory"))
}

fn get<T: Element>(t: &Tensor) -> Vec<T> {
    t.elements::<T>().expect("not busy").to_vec()
}

fn run_with(f: &TirFunc, tensors: &[Rc<Tensor>], scalars: &[i64], fuel: &mut u64) -> Result<()> {
    f.run(tensors, scalars, fuel, Span::SYNTHETIC, &mem())
}

fn run(f: &TirFunc, tensors: &[Rc<Tensor>], scalars: &[i64]) -> Result<()> {
    run_with(f, tensors, scalars, &mut 1_000_000)
}

fn err(r: Result<()>) -> Error {
    let e = r.expect_err("an error");
    assert_eq!(e.rule, "OP-call_tir", "{e}");
    e
}

const ADD: &str = r#"
@T.prim_func
def add(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32"), C: T.Buffer((2, 3), "float32")):
    for i, j in T.grid(2, 3):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
"#;

#[test]
fn elementwise_add_and_aliasing() {
    let f = prim(ADD);
    let a = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = f32s(&[2, 3], &[10.0, 20.0, 30.0, 40.0, 50.0, 0.25]);
    let c = zeros(DType::F32, &[2, 3]);
    run(&f, &[a.clone(), b, c.clone()], &[]).unwrap();
    assert_eq!(get::<f32>(&c), vec![11.0, 22.0, 33.0, 44.0, 55.0, 6.25]);
    // The same tensor as both inputs and the output: every access sees the last write.
    run(&f, &[a.clone(), a.clone(), a.clone()], &[]).unwrap();
    assert_eq!(get::<f32>(&a), vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    // A tensor the caller is writing is busy: an error, not a panic.
    let guard = a.data_mut().unwrap();
    assert_eq!(err(run(&f, &[a.clone(), c.clone(), c.clone()], &[])).kind, ErrorKind::OpError);
    drop(guard);
}

#[test]
fn row_sum_with_init() {
    let f = prim(
        r#"
@T.prim_func
def row_sum(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2,), "float32")):
    for i, k in T.grid(2, 3):
        with T.block("row_sum"):
            vi = T.axis.spatial(2, i)
            vk = T.axis.reduce((0, 3), k)
            T.reads(A[vi, 0:3])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"#,
    );
    let a = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.5]);
    let b = f32s(&[2], &[100.0, -7.0]);
    run(&f, &[a, b.clone()], &[]).unwrap();
    assert_eq!(get::<f32>(&b), vec![6.0, 15.5]);
}

#[test]
fn init_runs_at_domain_start_of_every_reduce_axis() {
    // The reduce domain starts at 1: init runs when vk == 1, and vk == 0 is out of the domain.
    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((4,), "int32"), B: T.Buffer((1,), "int32")):
    for k in range(1, 4):
        with T.block("s"):
            vk = T.axis.reduce((1, 4), k)
            with T.init():
                B[0] = 100
            B[0] = B[0] + A[vk]
    for k in range(1):
        with T.block("bad"):
            vk = T.axis.reduce((1, 4), k)
            B[0] = 0
"#,
    );
    let a = tensor::<i32>(DType::I32, &[4], &[1000, 1, 2, 3]);
    let b = tensor::<i32>(DType::I32, &[1], &[-5]);
    let e = err(run(&f, &[a, b.clone()], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    assert!(e.message.contains("outside its domain"), "{e}");
    assert_eq!(get::<i32>(&b), vec![106]);
}

const MATMUL: &str = r#"
@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    m = T.int64()
    k = T.int64()
    A = T.match_buffer(a, (n, k), "float32")
    B = T.match_buffer(b, (k, m), "float32")
    C = T.match_buffer(c, (n, m), "float32")
    for i, j, r in T.grid(n, m, k):
        with T.block("matmul"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
"#;

#[test]
fn symbolic_matmul_and_inconsistent_shapes() {
    let f = prim(MATMUL);
    let a = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = f32s(&[3, 2], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
    let c = f32s(&[2, 2], &[-1.0; 4]);
    run(&f, &[a.clone(), b, c.clone()], &[]).unwrap();
    assert_eq!(get::<f32>(&c), vec![58.0, 64.0, 139.0, 154.0]);
    let e = err(run(&f, &[a, zeros(DType::F32, &[4, 2]), c], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    assert!(e.message.contains("buffer `B`"), "{e}");
}

#[test]
fn rank_dtype_and_count_mismatch() {
    let f = prim(ADD);
    let z = || zeros(DType::F32, &[2, 3]);
    let e = err(run(&f, &[zeros(DType::F32, &[6]), z(), z()], &[]));
    assert!(e.message.contains("rank"), "{e}");
    let e = err(run(&f, &[z(), zeros(DType::I32, &[2, 3]), z()], &[]));
    assert!(e.message.contains("dtype"), "{e}");
    for bad in [vec![z(), z()], vec![z(), zeros(DType::F32, &[3, 2]), z()]] {
        assert_eq!(err(run(&f, &bad, &[])).kind, ErrorKind::OpError);
    }
    assert_eq!(err(run(&f, &[z(), z(), z()], &[1])).kind, ErrorKind::OpError);
}

#[test]
fn local_alloc_buffer() {
    let f = prim(
        r#"
@T.prim_func
def two_stage(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    with T.block("root"):
        B = T.alloc_buffer((4,), "float32")
        L = T.alloc_buffer((1,), "float32", scope="local")
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * 2.0
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                L[0] = L[0] + B[vi] + 1.0
                C[vi] = L[0]
"#,
    );
    let a = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let c = zeros(DType::F32, &[4]);
    let memory = mem();
    f.run(&[a, c.clone()], &[], &mut 1000, Span::SYNTHETIC, &memory).unwrap();
    assert_eq!(get::<f32>(&c), vec![3.0, 8.0, 15.0, 24.0]);
    // The local buffers are freed with the frame.
    assert_eq!((memory.live(), memory.peak()), (0, 20));
    // A budget too small for them: MemoryExhausted (a resource limit, not an OpError).
    let small = Memory::new(16);
    let e = f.run(&[f32s(&[4], &[0.0; 4]), c], &[], &mut 1000, Span::SYNTHETIC, &small).unwrap_err();
    assert_eq!((e.kind, e.rule), (ErrorKind::MemoryExhausted, "LIMIT-memory"));
}

#[test]
fn alloc_limits() {
    let f = prim(
        r#"
@T.prim_func
def g(a: T.handle, n: T.int64):
    A = T.match_buffer(a, (1,), "float32")
    B = T.alloc_buffer((n, n), "int8")
    A[0] = T.float32(1)
"#,
    );
    let a = zeros(DType::F32, &[1]);
    // Fuel for the statement and the 100 elements, then for the store.
    let mut fuel = 102;
    run_with(&f, std::slice::from_ref(&a), &[10], &mut fuel).unwrap();
    assert_eq!((fuel, get::<f32>(&a)), (0, vec![1.0]));
    let mut fuel = 100;
    let e = run_with(&f, std::slice::from_ref(&a), &[10], &mut fuel).unwrap_err();
    assert_eq!((e.kind, fuel), (ErrorKind::FuelExhausted, 0));
    let e = err(run(&f, std::slice::from_ref(&a), &[-1]));
    assert_eq!(e.kind, ErrorKind::OpError, "{e}");
    // Past 2^26 elements: a resource limit, as in the oracle.
    let e = run(&f, std::slice::from_ref(&a), &[1 << 14]).unwrap_err();
    assert_eq!((e.kind, e.rule), (ErrorKind::MemoryExhausted, "LIMIT-memory"), "{e}");
}

#[test]
fn scalar_params() {
    let f = prim(
        r#"
@T.prim_func
def iota(a: T.handle, m: T.int64, off: T.int32):
    A = T.match_buffer(a, (m,), "int64")
    for i in range(m):
        A[i] = i * T.Cast("int64", off)
"#,
    );
    let a = tensor::<i64>(DType::I64, &[4], &[9; 4]);
    run(&f, std::slice::from_ref(&a), &[4, 3]).unwrap();
    assert_eq!(get::<i64>(&a), vec![0, 3, 6, 9]);
    // The scalar disagrees with the buffer's shape; a scalar outside its dtype; one missing.
    for scalars in [&[5, 3][..], &[4, 1 << 40], &[4]] {
        assert_eq!(err(run(&f, std::slice::from_ref(&a), scalars)).kind, ErrorKind::OpError, "{scalars:?}");
    }
}

#[test]
fn where_predicate_guards_domain() {
    let f = prim(
        r#"
@T.prim_func
def copy_padded(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for io, ii in T.grid(3, 4):
        with T.block("copy"):
            vi = T.axis.spatial(10, io * 4 + ii)
            T.where(io * 4 + ii < 10)
            B[vi] = A[vi] + T.float32(1)
"#,
    );
    let a = f32s(&[10], &(0..10).map(|x| x as f32).collect::<Vec<_>>());
    let b = zeros(DType::F32, &[10]);
    run(&f, &[a, b.clone()], &[]).unwrap();
    assert_eq!(get::<f32>(&b), (1..11).map(|x| x as f32).collect::<Vec<_>>());
}

#[test]
fn out_of_bounds() {
    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((4,), "float32")):
    for i in range(5):
        A[i] = T.float32(1)
"#,
    );
    let a = zeros(DType::F32, &[4]);
    let e = err(run(&f, std::slice::from_ref(&a), &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    assert!(e.message.contains("out of bounds"), "{e}");
    assert_eq!(get::<f32>(&a), vec![1.0; 4]);
    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i - 1]
"#,
    );
    let e = err(run(&f, &[zeros(DType::F32, &[4]), zeros(DType::F32, &[4])], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
}

#[test]
fn fuel_exhaustion() {
    let f = prim(
        r#"
@T.prim_func
def spin(A: T.Buffer((1,), "int64")):
    for i in range(T.int64(1000000000000)):
        A[0] = i
"#,
    );
    let a = tensor::<i64>(DType::I64, &[1], &[0]);
    let mut fuel = 1000;
    let e = run_with(&f, std::slice::from_ref(&a), &[], &mut fuel).expect_err("no fuel");
    assert_eq!((e.kind, e.rule), (ErrorKind::FuelExhausted, "LIMIT-fuel"));
    assert_eq!(fuel, 0);
    // 1 (loop) + 499 iterations of 2 units; the 500th iteration finds the fuel gone.
    assert_eq!(get::<i64>(&a), vec![498]);
}

#[test]
fn integer_errors() {
    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((2,), "int32"), B: T.Buffer((2,), "int32")):
    for i in range(2):
        B[i] = A[i] // A[1 - i]
"#,
    );
    let a = tensor::<i32>(DType::I32, &[2], &[7, 0]);
    let e = err(run(&f, &[a, zeros(DType::I32, &[2])], &[]));
    assert_eq!(e.kind, ErrorKind::DivisionByZero);

    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int8")):
    A[0] = A[0] * 2
    B[0] = T.Cast("int8", A[0])
"#,
    );
    for x in [1 << 30, 100] {
        let a = tensor::<i32>(DType::I32, &[1], &[x]);
        let e = err(run(&f, &[a, zeros(DType::I8, &[1])], &[]));
        assert_eq!(e.kind, ErrorKind::IntegerOverflow, "{x}");
    }
}

fn floor_div(x: i64, y: i64) -> i64 {
    (x as f64 / y as f64).floor() as i64
}

#[test]
fn integer_arithmetic_and_logic() {
    let f = prim(
        r#"
@T.prim_func
def mixed(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "float16"), C: T.Buffer((16,), "int64")):
    for i in range(16):
        B[i] = T.Cast("float16", A[i]) * T.float16(0.5)
        C[i] = T.Cast("int64", A[i] // 3 + A[i] % 5) + T.int64(1)
        A[i] = T.Select(i < 8 and not i == 3 or i >= 14, T.truncdiv(A[i], 2), T.truncmod(A[i], 7))
        A[i] = T.floordiv(A[i], 2) + T.floormod(A[i], T.int32(3)) - T.max(i, 4)
        if i != 5 and (A[i] <= 10 or A[i] > 100):
            A[i] = -A[i]
"#,
    );
    let input: Vec<i32> = (0..16).map(|i| i * 7 - 50).collect();
    let a = tensor(DType::I32, &[16], &input);
    let b = zeros(DType::F16, &[16]);
    let c = zeros(DType::I64, &[16]);
    run(&f, &[a.clone(), b.clone(), c.clone()], &[]).unwrap();
    let fm = |x: i64, y: i64| x - y * floor_div(x, y);
    let (av, bv, cv) = (get::<i32>(&a), get::<f16>(&b), get::<i64>(&c));
    for (i, &x) in input.iter().enumerate() {
        let (x, ii) = (i64::from(x), i as i64);
        assert_eq!(bv[i].to_f64(), x as f64 * 0.5);
        assert_eq!(cv[i], floor_div(x, 3) + fm(x, 5) + 1);
        let s = if (i < 8 && i != 3) || i >= 14 { x / 2 } else { x % 7 };
        let mut r = floor_div(s, 2) + fm(s, 3) - ii.max(4);
        if i != 5 && (r <= 10 || r > 100) {
            r = -r;
        }
        assert_eq!(i64::from(av[i]), r, "element {i}");
    }
}

#[test]
fn intrinsics_and_lets() {
    let f = prim(
        r#"
@T.prim_func
def intrinsics(A: T.Buffer((13,), "float32"), B: T.Buffer((13,), "float32")):
    for i in range(1):
        B[0] = T.exp(A[0])
        B[1] = T.log(A[1])
        B[2] = T.sqrt(A[2])
        B[3] = T.tanh(A[3])
        B[4] = T.sigmoid(A[4])
        B[5] = T.fabs(A[5])
        B[6] = T.floor(A[6])
        B[7] = T.ceil(A[7])
        B[8] = T.round(A[8])
        B[9] = T.pow(A[9], T.float32(2))
        B[10] = T.if_then_else(A[10] > 0.0, A[10], T.float32(0))
        B[11] = T.max(T.min(A[11], 6.0), T.float32(0))
        x: T.float32 = A[12] * 2.0
        T.evaluate(0)
        B[12] = T.if_then_else(x > 1.0, x, T.Cast("float32", T.int32(1) // T.int32(0)))
"#,
    );
    let a = f32s(&[13], &[1.0, 1.0, 9.0, 0.0, 0.0, -3.5, 2.7, 2.1, 2.5, 3.0, -4.0, 7.5, 1.5]);
    let b = zeros(DType::F32, &[13]);
    run(&f, &[a, b.clone()], &[]).unwrap();
    let r = get::<f32>(&b);
    assert!((f64::from(r[0]) - std::f64::consts::E).abs() < 1e-6);
    assert_eq!(&r[1..], &[0.0, 3.0, 0.0, 0.5, 3.5, 2.0, 3.0, 2.0, 9.0, 0.0, 6.0, 3.0]);
}

#[test]
fn int_intrinsic_needs_float() {
    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((1,), "int32")):
    A[0] = T.exp(A[0])
"#,
    );
    let e = err(run(&f, &[tensor::<i32>(DType::I32, &[1], &[1])], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
}

#[test]
fn zero_dim_buffer_and_float_store_cast() {
    let f = prim(
        r#"
@T.prim_func
def scale(A: T.Buffer((3,), "float32"), S: T.Buffer((), "float32"), B: T.Buffer((3,), "int32")):
    for i in range(3):
        B[i] = T.Cast("int32", A[i] * S[()])
    S[()] = T.float32(1)
"#,
    );
    let a = f32s(&[3], &[1.5, -2.5, 3.0]);
    let s = f32s(&[], &[3.0]);
    let b = zeros(DType::I32, &[3]);
    run(&f, &[a, s.clone(), b.clone()], &[]).unwrap();
    assert_eq!(get::<i32>(&b), vec![4, -7, 9]);
    assert_eq!(get::<f32>(&s), vec![1.0]);
}

#[test]
fn bools_unsigned_and_float_to_int_traps() {
    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "bool"), C: T.Buffer((3,), "uint8")):
    for i in range(3):
        B[i] = A[i] > T.float32(0)
        C[i] = T.Cast("uint8", A[i])
"#,
    );
    let b = zeros(DType::Bool, &[3]);
    let c = zeros(DType::U8, &[3]);
    run(&f, &[f32s(&[3], &[1.5, 0.0, 255.9]), b.clone(), c.clone()], &[]).unwrap();
    assert_eq!((get::<u8>(&b), get::<u8>(&c)), (vec![1, 0, 1], vec![1, 0, 255]));
    for bad in [-1.0, 256.0, f32::NAN, f32::INFINITY] {
        let e = err(run(&f, &[f32s(&[3], &[0.0, 0.0, bad]), b.clone(), c.clone()], &[]));
        assert_eq!(e.kind, ErrorKind::IntegerOverflow, "{bad}");
    }
}

/// A PrimFunc built by hand, outside what the parser produces: the malformed parts are
/// run-time errors, never panics.
#[test]
fn malformed_prim_funcs_are_errors() {
    let sp = Span::SYNTHETIC;
    let mk = |kind| TirExpr::new(kind, sp);
    let n = PrimVar::new("n", DataType::INT64);
    let stmt = |kind| Stmt { kind, span: sp };
    // A variable never bound, a loop over a float, an intrinsic with no argument.
    let bodies = [
        StmtKind::Evaluate(mk(TirExprKind::Var(n.clone()))),
        StmtKind::For {
            var: PrimVar::new("i", DataType::FLOAT32),
            begin: mk(TirExprKind::FloatImm { value: spec_model::grammar::FloatLit(0.0), dtype: DataType::FLOAT32 }),
            end: mk(TirExprKind::IntImm { value: 3, dtype: DataType::INT64 }),
            kind: spec_model::grammar::tir::ForKind::Serial,
            body: vec![],
        },
        StmtKind::Evaluate(mk(TirExprKind::Call { op: spec_model::grammar::tir::Intrinsic::Exp, args: vec![] })),
        StmtKind::Evaluate(mk(TirExprKind::IntImm { value: 300, dtype: DataType::int(8) })),
    ];
    let kinds = [ErrorKind::OpError, ErrorKind::OpError, ErrorKind::OpError, ErrorKind::IntegerOverflow];
    for (body, kind) in bodies.into_iter().zip(kinds) {
        let f = PrimFunc {
            params: vec![TirParam { var: PrimVar::new("a", DataType::handle()), buffer: None }],
            body: vec![stmt(body)],
            attrs: Default::default(),
            span: sp,
        };
        let e = err(run(&TirFunc::compile(&f, "bad", TirBackend::Native), &[zeros(DType::F32, &[1])], &[]));
        assert_eq!(e.kind, kind, "{e}");
    }
}

/// `T.if_then_else`'s result dtype depends on the side taken when the promotion is not
/// symmetric (`int32x4` shape variable beside an `int32`).
#[test]
fn if_then_else_takes_its_sides_dtype() {
    let f = prim(
        r#"
@T.prim_func
def g(a: T.handle, c: T.int32):
    n = T.int32x4()
    A = T.match_buffer(a, (n,), "int32")
    A[0] = T.Cast("int32", T.if_then_else(c > 0, n, T.int32(1)) + T.int32(5))
"#,
    );
    let a = zeros(DType::I32, &[2]);
    run(&f, std::slice::from_ref(&a), &[0]).unwrap();
    assert_eq!(get::<i32>(&a), vec![6, 0]);
    // The `n` side stays int32x4, and int32 converts to it: no storage, an OpError.
    assert_eq!(err(run(&f, std::slice::from_ref(&a), &[1])).kind, ErrorKind::OpError);
}
