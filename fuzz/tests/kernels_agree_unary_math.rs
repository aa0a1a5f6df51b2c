//! The engine's unary math and activation kernels (issue 19: `erf` … `clip`) against
//! the oracle's, operator by operator: random dtypes, shapes (rank 0, zero-size
//! dimensions, long rows that the vector loops split), values (NaN, ±inf, -0.0, ties
//! at .5, integer extremes), attributes (`alpha`: numbers, ill-kinded), bounds (every
//! PrimValue kind, NaN and out-of-range ones, non-PrimValues) and argument lists
//! (wrong kinds and counts). Outcomes must be the same value bit for bit (the engine
//! computes the same IEEE operations and calls the same C library functions; NaN
//! equal to NaN, -0.0 to 0.0), or errors of the same kind; a resource error is
//! skipped. Every instruction set this CPU has is tried.
//!
//! `KERNELS_AGREE_CASES` sets the number of cases per operator (default 4,000) and
//! `KERNELS_AGREE_SEED` the seed; a mismatch prints the call as `.rx` literals.

use fuzz::convert::{from_oracle, to_oracle};
use half::f16;
use optimized::kernels::run_standalone;
use optimized::kernels::simd::{available, with_isa};
use optimized::Memory;
use oracle::eval::literal::{print_value, values_equal};
use oracle::eval::ops::eval_op_standalone;
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, NDArray, TensorData};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

const OPS: &[Op] = &[
    Op::Erf,
    Op::Rsqrt,
    Op::Sin,
    Op::Cos,
    Op::Floor,
    Op::Ceil,
    Op::Round,
    Op::Sign,
    Op::Square,
    Op::IsNan,
    Op::IsInf,
    Op::Gelu,
    Op::GeluTanh,
    Op::Silu,
    Op::LeakyRelu,
    Op::Clip,
];

const DTYPE_NAMES: [&str; 12] =
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"];

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pct(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

fn dtype(name: &str) -> DataType {
    DataType::parse(name).expect("a dtype")
}

fn random_dtype(rng: &mut Rng) -> DataType {
    dtype(rng.pick(&DTYPE_NAMES))
}

fn float_dtype(rng: &mut Rng) -> DataType {
    dtype(rng.pick(&["float16", "float32", "float64"]))
}

/// Rank 0 to 4, dimensions mostly 1 to 4, sometimes 0; now and then one long row.
fn shape(rng: &mut Rng) -> Vec<u64> {
    if rng.pct(3) {
        return vec![rng.range(60, 300) as u64];
    }
    let rank = rng.pick(&[0, 1, 1, 2, 2, 3, 4]);
    (0..rank).map(|_| if rng.pct(5) { 0 } else { rng.range(1, 4) as u64 }).collect()
}

fn int_value(rng: &mut Rng, bits: u32, signed: bool) -> i128 {
    let (min, max) =
        if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    let v = match rng.below(10) {
        0 => rng.pick(&[min, max, 0, 1, -1, min + 1, max - 1, 2, 7]),
        1 | 2 => (rng.next() as i128).rem_euclid(max - min + 1) + min,
        _ => rng.range(-9, 9) as i128,
    };
    v.clamp(min, max)
}

fn float_value(rng: &mut Rng) -> f64 {
    match rng.below(12) {
        0 | 1 => rng.pick(&[
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            1e-40,
            -5e-324,
            1e300,
            -1e38,
            65504.0,
            70000.0,
            8388608.5,
            4503599627370497.0,
            6.0,
            -6.0,
            27.0,
            1e6,
        ]),
        2 => f64::from_bits(rng.next()),
        3 => (rng.next() % 2_000_001) as f64 / 1000.0 - 1000.0,
        _ => (rng.range(-1000, 1000) as f64) / 100.0,
    }
}

fn data(rng: &mut Rng, dt: DataType, n: usize) -> TensorData {
    let mut ints = |bits, signed| (0..n).map(|_| int_value(rng, bits, signed)).collect::<Vec<i128>>();
    match DTYPE_NAMES.iter().position(|d| dtype(d) == dt).expect("a dtype with storage") {
        0 => TensorData::Bool(ints(1, false).into_iter().map(|v| v != 0).collect()),
        1 => TensorData::I8(ints(8, true).into_iter().map(|v| v as i8).collect()),
        2 => TensorData::I16(ints(16, true).into_iter().map(|v| v as i16).collect()),
        3 => TensorData::I32(ints(32, true).into_iter().map(|v| v as i32).collect()),
        4 => TensorData::I64(ints(64, true).into_iter().map(|v| v as i64).collect()),
        5 => TensorData::U8(ints(8, false).into_iter().map(|v| v as u8).collect()),
        6 => TensorData::U16(ints(16, false).into_iter().map(|v| v as u16).collect()),
        7 => TensorData::U32(ints(32, false).into_iter().map(|v| v as u32).collect()),
        8 => TensorData::U64(ints(64, false).into_iter().map(|v| v as u64).collect()),
        9 => TensorData::F16((0..n).map(|_| f16::from_f64(float_value(rng))).collect()),
        10 => TensorData::F32((0..n).map(|_| float_value(rng) as f32).collect()),
        _ => TensorData::F64((0..n).map(|_| float_value(rng)).collect()),
    }
}

fn tensor(rng: &mut Rng, dt: DataType) -> Value {
    let s = shape(rng);
    let n = s.iter().product::<u64>() as usize;
    Value::tensor(NDArray { dtype: dt, shape: s, data: data(rng, dt, n) })
}

fn not_a_tensor(rng: &mut Rng) -> Value {
    match rng.below(5) {
        0 => Value::Null,
        1 => Value::Shape(Rc::new(vec![2, 1])),
        2 => Value::Str("s".into()),
        3 => Value::Tuple(Rc::new(vec![])),
        _ => Value::DataType(DataType::FLOAT32),
    }
}

/// A bound of `clip`: every PrimValue kind, sometimes NaN, infinite or huge.
fn bound(rng: &mut Rng) -> Value {
    Value::Prim(match rng.below(10) {
        0 => PrimScalar::Bool(rng.pct(50)),
        1..=4 => PrimScalar::Float(float_value(rng), float_dtype(rng)),
        5 => PrimScalar::Int(int_value(rng, 64, true) as i64, DataType::INT64),
        _ => PrimScalar::Int(rng.range(-300, 300), dtype(rng.pick(&["int64", "int32"]))),
    })
}

fn case(rng: &mut Rng, op: Op) -> (Vec<Value>, Attrs) {
    let mut attrs = Attrs::default();
    let float_only = !matches!(op, Op::Floor | Op::Ceil | Op::Round | Op::Sign | Op::Square | Op::IsNan | Op::IsInf);
    let dt = if (float_only && rng.pct(85)) || rng.pct(40) { float_dtype(rng) } else { random_dtype(rng) };
    let mut args = vec![tensor(rng, dt)];
    match op {
        Op::LeakyRelu => match rng.below(10) {
            0 => {}
            1 => attrs.insert("alpha", AttrValue::Int(rng.range(-3, 3))),
            2 => attrs.insert("alpha", AttrValue::Str("0.1".into())),
            3 => attrs.insert("alpha", AttrValue::None),
            _ => attrs.insert("alpha", AttrValue::Float(FloatLit(float_value(rng)))),
        },
        Op::Clip => {
            let (lo, hi) = if rng.pct(85) {
                let lo = rng.range(-5, 3);
                let hi = lo + rng.range(0, 8);
                let f = |v: i64, rng: &mut Rng| {
                    Value::Prim(if rng.pct(50) {
                        PrimScalar::Int(v, DataType::INT64)
                    } else {
                        PrimScalar::Float(v as f64 + rng.pick(&[0.0, 0.5, -0.25]), DataType::float(64))
                    })
                };
                (f(lo, rng), f(hi, rng))
            } else {
                (bound(rng), bound(rng))
            };
            args.extend([lo, hi]);
            if rng.pct(3) {
                let i = rng.range(1, 2) as usize;
                args[i] = if rng.pct(50) { not_a_tensor(rng) } else { tensor(rng, DataType::FLOAT32) };
            }
        }
        _ => {}
    }
    if rng.pct(4) {
        match rng.below(3) {
            0 => args[0] = not_a_tensor(rng),
            1 => {
                args.pop();
            }
            _ => args.push(args[0].clone()),
        }
    }
    (args, attrs)
}

enum Verdict {
    Value,
    Error,
    Poisoned,
    Mismatch(String),
}

fn compare(op: Op, args: &[Value], attrs: &Attrs) -> Verdict {
    let memory = Memory::new(1 << 26);
    let oracle = eval_op_standalone(op, args, attrs, Span::SYNTHETIC);
    if matches!(&oracle, Err(e) if e.kind.is_resource()) {
        return Verdict::Poisoned;
    }
    let Some(eargs) = args.iter().map(|a| from_oracle(a, &memory)).collect::<Option<Vec<_>>>() else {
        return Verdict::Poisoned;
    };
    let engine = run_standalone(op, attrs, &eargs, &memory).expect("a tensor operator lowers to a kernel");
    if matches!(&engine, Err(e) if e.kind.is_resource()) {
        return Verdict::Poisoned;
    }
    let agree = match (&oracle, &engine) {
        (Err(o), Err(e)) => o.kind.name() == e.kind.name() && e.kind.name() != "Crash" && o.rule == e.rule,
        (Ok(o), Ok(e)) => to_oracle(e).is_some_and(|e| values_equal(o, &e, 0.0)),
        _ => false,
    };
    match (agree, &oracle) {
        (true, Ok(_)) => Verdict::Value,
        (true, Err(_)) => Verdict::Error,
        (false, _) => {
            let show = |r: Result<Value, String>| match r {
                Ok(v) => print_value(&v),
                Err(e) => format!("error {e}"),
            };
            let o = oracle.map_err(|e| format!("{} ({}): {}", e.kind.name(), e.rule, e.message));
            let e = engine
                .map(|v| to_oracle(&v).unwrap_or(Value::Null))
                .map_err(|e| format!("{} ({}): {}", e.kind.name(), e.rule, e.message));
            let shown: Vec<String> = args.iter().map(print_value).collect();
            Verdict::Mismatch(format!(
                "{op}\n  attrs: {:?}\n  args:\n    {}\n  oracle: {}\n  engine: {}",
                attrs.0,
                shown.join("\n    "),
                show(o),
                show(e)
            ))
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn kernels_agree_with_the_oracle_on_random_calls() {
    let cases = env_u64("KERNELS_AGREE_CASES", 4_000);
    let seed = env_u64("KERNELS_AGREE_SEED", 0x0A11_5EED);
    let mut mismatches = Vec::new();
    for isa in available() {
        for (i, &op) in OPS.iter().enumerate() {
            let (mut values, mut errors) = (0, 0);
            for c in 0..cases {
                let case_seed = seed ^ ((i as u64) << 40) ^ c;
                let (args, attrs) = case(&mut Rng(case_seed), op);
                match with_isa(isa, || compare(op, &args, &attrs)) {
                    Verdict::Value => values += 1,
                    Verdict::Error => errors += 1,
                    Verdict::Poisoned => {}
                    Verdict::Mismatch(m) => mismatches.push(format!("{isa:?}, case seed {case_seed:#x}: {m}")),
                }
            }
            eprintln!("{isa:?} {op:>18}: {values} values, {errors} errors");
            assert!(values * 2 >= cases, "{op}: only {values} of {cases} cases compared values");
            assert!(errors > 0 || cases < 100, "{op}: no error case");
        }
    }
    for m in mismatches.iter().take(5) {
        eprintln!("MISMATCH {m}\n");
    }
    assert!(mismatches.is_empty(), "{} mismatches (see MISMATCH above)", mismatches.len());
}

/// Hand-picked values with known results, checked on both sides (not only agreement).
#[test]
fn corner_cases_have_the_documented_values() {
    let f32s = |v: &[f32]| {
        Value::tensor(NDArray {
            dtype: DataType::FLOAT32,
            shape: vec![v.len() as u64],
            data: TensorData::F32(v.to_vec()),
        })
    };
    let none = Attrs::default();
    let run = |op: Op, args: &[Value], attrs: &Attrs| -> TensorData {
        let memory = Memory::new(1 << 20);
        let Ok(o) = eval_op_standalone(op, args, attrs, Span::SYNTHETIC) else { panic!("{op}: the oracle refuses") };
        let eargs: Vec<_> = args.iter().map(|a| from_oracle(a, &memory).unwrap()).collect();
        let e = to_oracle(&run_standalone(op, attrs, &eargs, &memory).unwrap().expect("the engine computes")).unwrap();
        assert!(values_equal(&o, &e, 0.0), "{op}: {} vs {}", print_value(&o), print_value(&e));
        let Value::Tensor(t) = o else { panic!("a tensor") };
        let d = t.borrow().data.clone();
        d
    };
    let ties = f32s(&[0.5, 1.5, 2.5, -0.5, -2.5, 8388609.0]);
    assert_eq!(
        run(Op::Round, std::slice::from_ref(&ties), &none),
        TensorData::F32(vec![0.0, 2.0, 2.0, -0.0, -2.0, 8388609.0])
    );
    assert_eq!(
        run(Op::Floor, std::slice::from_ref(&ties), &none),
        TensorData::F32(vec![0.0, 1.0, 2.0, -1.0, -3.0, 8388609.0])
    );
    assert_eq!(run(Op::Ceil, &[ties], &none), TensorData::F32(vec![1.0, 2.0, 3.0, -0.0, -2.0, 8388609.0]));
    let TensorData::F32(s) = run(Op::Sign, &[f32s(&[-3.0, -0.0, f32::NAN, f32::INFINITY])], &none) else { panic!() };
    assert!(s[0] == -1.0 && s[1] == 0.0 && s[2].is_nan() && s[3] == 1.0);
    let i8s = Value::tensor(NDArray { dtype: dtype("int8"), shape: vec![3], data: TensorData::I8(vec![-128, 12, -7]) });
    assert_eq!(run(Op::Square, std::slice::from_ref(&i8s), &none), TensorData::I8(vec![0, -112, 49]));
    assert_eq!(run(Op::Sign, std::slice::from_ref(&i8s), &none), TensorData::I8(vec![-1, 1, -1]));
    assert_eq!(run(Op::Round, std::slice::from_ref(&i8s), &none), TensorData::I8(vec![-128, 12, -7]));
    assert_eq!(run(Op::IsNan, &[i8s], &none), TensorData::Bool(vec![false; 3]));
    let TensorData::F32(e) = run(Op::Erf, &[f32s(&[0.0, 1.0, f32::INFINITY, -f32::INFINITY, f32::NAN])], &none) else {
        panic!()
    };
    assert!(e[0] == 0.0 && (e[1] - 0.842_700_8).abs() < 1e-6 && e[2] == 1.0 && e[3] == -1.0 && e[4].is_nan());
    let TensorData::F32(g) = run(Op::Gelu, &[f32s(&[1.0, -10.0, 10.0])], &none) else { panic!() };
    assert!((g[0] - 0.841_344_7).abs() < 1e-6 && g[1].abs() < 1e-20 && g[2] == 10.0);
    let TensorData::F32(g) = run(Op::GeluTanh, &[f32s(&[1.0, f32::INFINITY, f32::NEG_INFINITY])], &none) else {
        panic!()
    };
    assert!((g[0] - 0.841_192).abs() < 1e-5 && g[1] == f32::INFINITY);
    assert!(g[2].is_nan(), "0.5 * -inf * (1 + tanh(-inf)) is -inf * 0");
    let TensorData::F32(g) = run(Op::Silu, &[f32s(&[1.0, -200.0])], &none) else { panic!() };
    assert!((g[0] - 0.731_058_6).abs() < 1e-6 && g[1] == -0.0);
    let TensorData::F32(r) = run(Op::Rsqrt, &[f32s(&[4.0, 0.0, -1.0])], &none) else { panic!() };
    assert!(r[0] == 0.5 && r[1] == f32::INFINITY && r[2].is_nan());
    let mut alpha = Attrs::default();
    alpha.insert("alpha", AttrValue::Float(FloatLit(0.25)));
    assert_eq!(run(Op::LeakyRelu, &[f32s(&[-4.0, 0.0, 3.0])], &alpha), TensorData::F32(vec![-1.0, 0.0, 3.0]));
    let p = |f: f64| Value::Prim(PrimScalar::Float(f, DataType::float(64)));
    let x = f32s(&[-7.0, 0.3, 7.0]);
    assert_eq!(run(Op::Clip, &[x.clone(), p(0.0), p(6.0)], &none), TensorData::F32(vec![0.0, 0.3, 6.0]));
    assert_eq!(run(Op::Clip, &[x, p(5.0), p(1.0)], &none), TensorData::F32(vec![5.0, 5.0, 5.0]), "min wins");
    let u8s = Value::tensor(NDArray { dtype: dtype("uint8"), shape: vec![2], data: TensorData::U8(vec![0, 255]) });
    let i = |v: i64| Value::Prim(PrimScalar::Int(v, DataType::INT64));
    assert_eq!(run(Op::Clip, &[u8s, i(3), p(100.9)], &none), TensorData::U8(vec![3, 100]));
}

/// Errors: the same kind and rule on both sides.
#[test]
fn errors_agree() {
    let f32s = Value::tensor(NDArray { dtype: DataType::FLOAT32, shape: vec![1], data: TensorData::F32(vec![1.0]) });
    let i32s = Value::tensor(NDArray { dtype: DataType::INT32, shape: vec![1], data: TensorData::I32(vec![1]) });
    let p = |f: f64| Value::Prim(PrimScalar::Float(f, DataType::float(64)));
    let mut bad_alpha = Attrs::default();
    bad_alpha.insert("alpha", AttrValue::Str("x".into()));
    let none = Attrs::default();
    let calls: Vec<(Op, Vec<Value>, &Attrs)> = vec![
        (Op::Erf, vec![i32s.clone()], &none),
        (Op::Gelu, vec![i32s.clone()], &none),
        (Op::LeakyRelu, vec![i32s.clone()], &none),
        (Op::LeakyRelu, vec![f32s.clone()], &bad_alpha),
        (Op::Clip, vec![i32s.clone(), p(f64::NAN), p(1.0)], &none),
        (Op::Clip, vec![i32s.clone(), p(0.0), p(1e30)], &none),
        (Op::Clip, vec![f32s.clone(), f32s.clone(), p(1.0)], &none),
        (Op::Clip, vec![f32s.clone(), p(1.0)], &none),
        (Op::IsNan, vec![Value::Null], &none),
        (Op::Floor, vec![f32s.clone(), f32s], &none),
    ];
    for (op, args, attrs) in calls {
        let memory = Memory::new(1 << 20);
        let Err(o) = eval_op_standalone(op, &args, attrs, Span::SYNTHETIC) else { panic!("{op}: the oracle accepts") };
        let eargs: Vec<_> = args.iter().map(|a| from_oracle(a, &memory).unwrap()).collect();
        let Some(Err(e)) = run_standalone(op, attrs, &eargs, &memory) else { panic!("{op}: the engine accepts") };
        assert_eq!((o.kind.name(), o.rule.as_str()), ("OpError", op.def().rule), "{op}");
        assert_eq!((e.kind.name(), e.rule), ("OpError", op.def().rule), "{op}");
    }
}
