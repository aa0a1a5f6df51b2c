use super::run_prim_func;
use crate::eval::value::{ErrorKind, EvalResult, RuntimeError, TensorRef};
use spec_model::grammar::{DataType, NDArray, PrimFunc, Scalar};
use spec_model::Span;
use std::rc::Rc;

const HEADER: &str = "from tvm.script import tir as T\n\n\n";

/// The single PrimFunc of `src` (a `@T.prim_func` definition without the import).
fn prim(src: &str) -> Rc<PrimFunc> {
    let text = format!("{HEADER}{src}");
    let m = spec_model::text::parse_module(&text).unwrap_or_else(|e| panic!("{}", e.render("<test>", &text)));
    let f = m.prim_funcs().next().expect("a PrimFunc").1.clone();
    f
}

fn tensor(dtype: DataType, shape: &[u64], values: &[Scalar]) -> TensorRef {
    Rc::new(crate::eval::memory::Tracked::new(
        NDArray::from_scalars(dtype, shape.to_vec(), values).expect("valid array"),
    ))
}

fn f32s(shape: &[u64], values: &[f64]) -> TensorRef {
    let v: Vec<Scalar> = values.iter().map(|&x| Scalar::Float(x)).collect();
    tensor(DataType::FLOAT32, shape, &v)
}

fn zeros_f32(shape: &[u64]) -> TensorRef {
    let n = shape.iter().product::<u64>() as usize;
    f32s(shape, &vec![0.0; n])
}

fn ints(dtype: DataType, shape: &[u64], values: &[i128]) -> TensorRef {
    let v: Vec<Scalar> = values.iter().map(|&x| Scalar::Int(x)).collect();
    tensor(dtype, shape, &v)
}

fn floats(t: &TensorRef) -> Vec<f64> {
    let a = t.borrow();
    (0..a.data.len()).map(|i| if let Scalar::Float(f) = a.data.get(i) { f } else { panic!("not a float") }).collect()
}

fn int_values(t: &TensorRef) -> Vec<i128> {
    let a = t.borrow();
    (0..a.data.len())
        .map(|i| match a.data.get(i) {
            Scalar::Int(x) => x,
            Scalar::Bool(b) => b as i128,
            Scalar::Float(_) => panic!("not an int"),
        })
        .collect()
}

fn run(f: &PrimFunc, tensors: &[TensorRef], scalars: &[i64]) -> EvalResult<()> {
    let mut fuel = 1_000_000;
    run_prim_func(f, "f", tensors, scalars, Span::SYNTHETIC, &mut fuel)
}

fn err(r: EvalResult<()>) -> RuntimeError {
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
fn elementwise_add() {
    let f = prim(ADD);
    let a = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = f32s(&[2, 3], &[10.0, 20.0, 30.0, 40.0, 50.0, 0.25]);
    let c = zeros_f32(&[2, 3]);
    run(&f, &[a.clone(), b, c.clone()], &[]).unwrap();
    assert_eq!(floats(&c), vec![11.0, 22.0, 33.0, 44.0, 55.0, 6.25]);
    // Aliasing: the same tensor as input and output.
    run(&f, &[a.clone(), a.clone(), a.clone()], &[]).unwrap();
    assert_eq!(floats(&a), vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
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
    assert_eq!(floats(&b), vec![6.0, 15.5]);
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
    let a = ints(DataType::INT32, &[4], &[1000, 1, 2, 3]);
    let b = ints(DataType::INT32, &[1], &[-5]);
    let e = err(run(&f, &[a, b.clone()], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    assert!(e.message.contains("outside its domain"), "{e}");
    assert_eq!(int_values(&b), vec![106]);
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
fn symbolic_matmul() {
    let f = prim(MATMUL);
    // (2x3) @ (3x2)
    let a = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = f32s(&[3, 2], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
    let c = f32s(&[2, 2], &[-1.0; 4]);
    run(&f, &[a, b, c.clone()], &[]).unwrap();
    assert_eq!(floats(&c), vec![58.0, 64.0, 139.0, 154.0]);
}

#[test]
fn inconsistent_symbolic_shape() {
    let f = prim(MATMUL);
    let a = f32s(&[2, 3], &[0.0; 6]);
    let b = f32s(&[4, 2], &[0.0; 8]);
    let c = zeros_f32(&[2, 2]);
    let e = err(run(&f, &[a, b, c], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    assert!(e.message.contains("buffer `B`"), "{e}");
}

#[test]
fn rank_and_dtype_mismatch() {
    let f = prim(ADD);
    let e = err(run(&f, &[zeros_f32(&[6]), zeros_f32(&[2, 3]), zeros_f32(&[2, 3])], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    assert!(e.message.contains("rank"), "{e}");
    let i = ints(DataType::INT32, &[2, 3], &[0; 6]);
    let e = err(run(&f, &[zeros_f32(&[2, 3]), i, zeros_f32(&[2, 3])], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    assert!(e.message.contains("dtype"), "{e}");
    let e = err(run(&f, &[zeros_f32(&[2, 3]), zeros_f32(&[2, 3])], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    let e = err(run(&f, &[zeros_f32(&[2, 3]), zeros_f32(&[3, 2]), zeros_f32(&[2, 3])], &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
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
    let c = zeros_f32(&[4]);
    run(&f, &[a, c.clone()], &[]).unwrap();
    assert_eq!(floats(&c), vec![3.0, 8.0, 15.0, 24.0]);
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
    let a = ints(DataType::INT64, &[4], &[9; 4]);
    run(&f, std::slice::from_ref(&a), &[4, 3]).unwrap();
    assert_eq!(int_values(&a), vec![0, 3, 6, 9]);
    // The scalar disagrees with the buffer's shape.
    let e = err(run(&f, std::slice::from_ref(&a), &[5, 3]));
    assert_eq!(e.kind, ErrorKind::OpError);
    // A scalar that does not fit its parameter's dtype, and a missing scalar.
    let e = err(run(&f, std::slice::from_ref(&a), &[4, 1 << 40]));
    assert_eq!(e.kind, ErrorKind::OpError);
    let e = err(run(&f, &[a], &[4]));
    assert_eq!(e.kind, ErrorKind::OpError);
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
    let a = f32s(&[10], &(0..10).map(|x| x as f64).collect::<Vec<_>>());
    let b = zeros_f32(&[10]);
    run(&f, &[a, b.clone()], &[]).unwrap();
    assert_eq!(floats(&b), (1..11).map(|x| x as f64).collect::<Vec<_>>());
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
    let a = zeros_f32(&[4]);
    let e = err(run(&f, std::slice::from_ref(&a), &[]));
    assert_eq!(e.kind, ErrorKind::OpError);
    assert!(e.message.contains("out of bounds"), "{e}");
    assert_eq!(floats(&a), vec![1.0; 4]);
    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i - 1]
"#,
    );
    let e = err(run(&f, &[zeros_f32(&[4]), zeros_f32(&[4])], &[]));
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
    let a = ints(DataType::INT64, &[1], &[0]);
    let mut fuel = 1000;
    let e = run_prim_func(&f, "spin", std::slice::from_ref(&a), &[], Span::SYNTHETIC, &mut fuel).expect_err("no fuel");
    assert_eq!((e.kind, e.rule.as_str()), (ErrorKind::FuelExhausted, "LIMIT-fuel"));
    assert_eq!(fuel, 0);
    // 1 (loop) + 499 iterations of 2 units; the 500th iteration finds the fuel gone.
    assert_eq!(int_values(&a), vec![498]);
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
    let a = ints(DataType::INT32, &[2], &[7, 0]);
    let b = ints(DataType::INT32, &[2], &[0, 0]);
    let e = err(run(&f, &[a, b], &[]));
    assert_eq!(e.kind, ErrorKind::DivisionByZero);

    let f = prim(
        r#"
@T.prim_func
def g(A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int8")):
    A[0] = A[0] * 2
    B[0] = T.Cast("int8", A[0])
"#,
    );
    let a = ints(DataType::INT32, &[1], &[1 << 30]);
    let e = err(run(&f, &[a, ints(DataType::int(8), &[1], &[0])], &[]));
    assert_eq!(e.kind, ErrorKind::IntegerOverflow);
    let a = ints(DataType::INT32, &[1], &[100]);
    let e = err(run(&f, &[a, ints(DataType::int(8), &[1], &[0])], &[]));
    assert_eq!(e.kind, ErrorKind::IntegerOverflow);
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
    let input: Vec<i128> = (0..16).map(|i| i * 7 - 50).collect();
    let a = ints(DataType::INT32, &[16], &input);
    let b = tensor(DataType::float(16), &[16], &[Scalar::Float(0.0); 16]);
    let c = ints(DataType::INT64, &[16], &[0; 16]);
    run(&f, &[a.clone(), b.clone(), c.clone()], &[]).unwrap();
    let fd = |x: i128, y: i128| spec_model::prim_eval::floor_div(x, y);
    let fm = |x: i128, y: i128| spec_model::prim_eval::floor_mod(x, y);
    for (i, &x) in input.iter().enumerate() {
        let i128_i = i as i128;
        assert_eq!(floats(&b)[i], x as f64 * 0.5);
        assert_eq!(int_values(&c)[i], fd(x, 3) + fm(x, 5) + 1);
        let s = if (i < 8 && i != 3) || i >= 14 { x / 2 } else { x % 7 };
        let mut r = fd(s, 2) + fm(s, 3) - i128_i.max(4);
        if i != 5 && (r <= 10 || r > 100) {
            r = -r;
        }
        assert_eq!(int_values(&a)[i], r, "element {i}");
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
    let b = zeros_f32(&[13]);
    run(&f, &[a, b.clone()], &[]).unwrap();
    let r = floats(&b);
    assert!((r[0] - std::f64::consts::E).abs() < 1e-6);
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
    let e = err(run(&f, &[ints(DataType::INT32, &[1], &[1])], &[]));
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
    let b = ints(DataType::INT32, &[3], &[0; 3]);
    run(&f, &[a, s.clone(), b.clone()], &[]).unwrap();
    assert_eq!(int_values(&b), vec![4, -7, 9]);
    assert_eq!(floats(&s), vec![1.0]);
}

fn rx_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rx") {
            out.push(p);
        }
    }
}

/// Tensors and scalars fitting `f`'s parameters (symbolic dimensions and scalars are 3),
/// with element `i` made by `fill`; `None` if a buffer's shape is not literal or a variable.
fn arguments(f: &PrimFunc, fill: &dyn Fn(DataType, usize) -> Scalar) -> Option<(Vec<TensorRef>, Vec<i64>)> {
    use spec_model::grammar::tir::TirExprKind;
    let (mut tensors, mut scalars) = (Vec::new(), Vec::new());
    for p in &f.params {
        match &p.buffer {
            Some(b) => {
                let mut shape = Vec::new();
                for d in b.shape() {
                    shape.push(match &*d.kind {
                        TirExprKind::IntImm { value, .. } if (0..=64).contains(value) => *value as u64,
                        TirExprKind::Var(_) => 3,
                        _ => return None,
                    });
                }
                let n = shape.iter().product::<u64>() as usize;
                let values: Vec<Scalar> = (0..n).map(|i| fill(b.dtype(), i)).collect();
                tensors.push(tensor(b.dtype(), &shape, &values));
            }
            None if p.var.dtype() == DataType::handle() => tensors.push(zeros_f32(&[1])),
            None => scalars.push(3),
        }
    }
    Some((tensors, scalars))
}

/// Every PrimFunc of the corpus runs on fitting tensors of several contents (including
/// zeros, for the division paths) and ends with a value or an error, never a panic.
#[test]
fn corpus_prim_funcs_never_panic() {
    let mut files = Vec::new();
    rx_files(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus"), &mut files);
    let fills: [&dyn Fn(DataType, usize) -> Scalar; 3] = [
        &|d, i| {
            if d.is_float() {
                Scalar::Float((i % 7) as f64 * 0.5 - 1.0)
            } else if d.is_bool() {
                Scalar::Bool(i % 2 == 0)
            } else {
                Scalar::Int((i % 5) as i128)
            }
        },
        &|d, _| {
            if d.is_float() {
                Scalar::Float(0.0)
            } else if d.is_bool() {
                Scalar::Bool(false)
            } else {
                Scalar::Int(0)
            }
        },
        &|d, i| {
            if d.is_float() {
                Scalar::Float(if i % 2 == 0 { f64::NAN } else { -1e30 })
            } else if d.is_bool() {
                Scalar::Bool(true)
            } else {
                let (_, hi) = spec_model::prim_eval::int_range(d);
                Scalar::Int(hi)
            }
        },
    ];
    let mut ran = 0;
    for path in files {
        let Ok(src) = std::fs::read_to_string(&path) else { continue };
        let Ok(m) = spec_model::text::parse_module(&src) else { continue };
        for (gv, f) in m.prim_funcs() {
            for fill in fills {
                let Some((tensors, scalars)) = arguments(f, fill) else { continue };
                let mut fuel = 100_000;
                let _ = run_prim_func(f, &gv.name, &tensors, &scalars, Span::SYNTHETIC, &mut fuel);
                ran += 1;
            }
        }
    }
    assert!(ran > 20, "only {ran} runs");
}
