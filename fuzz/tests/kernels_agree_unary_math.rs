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

mod agree;

use agree::{break_args, dtype, float_dtype, int_value, not_a_tensor, random_dtype, Rng, Rules};
use fuzz::convert::{from_oracle, to_oracle};
use optimized::kernels::run_standalone;
use optimized::kernels::simd::{available, with_isa};
use optimized::Memory;
use oracle::eval::literal::{print_value, values_equal};
use oracle::eval::ops::eval_op_standalone;
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, NDArray, TensorData};
use spec_model::ops::Op;
use spec_model::Span;

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

/// Rank 0 to 4, dimensions mostly 1 to 4, sometimes 0; now and then one long row.
fn shape(rng: &mut Rng) -> Vec<u64> {
    if rng.pct(3) {
        return vec![rng.range(60, 300) as u64];
    }
    let rank = rng.pick(&[0, 1, 1, 2, 2, 3, 4]);
    (0..rank).map(|_| if rng.pct(5) { 0 } else { rng.range(1, 4) as u64 }).collect()
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

/// A tensor of `dt`, a shape from `shape` and floats from `float_value`.
fn tensor(rng: &mut Rng, dt: DataType) -> Value {
    let s = shape(rng);
    let n = s.iter().product::<u64>() as usize;
    Value::tensor(NDArray { dtype: dt, shape: s, data: agree::data(rng, dt, n, float_value) })
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
                args[i] = if rng.pct(50) { not_a_tensor(rng, false) } else { tensor(rng, DataType::FLOAT32) };
            }
        }
        _ => {}
    }
    break_args(rng, &mut args, 4, false, true);
    (args, attrs)
}

/// The oracle without a memory budget; errors agree by kind and rule, values bit for bit.
const RULES: Rules = Rules { oracle_budget: false, same_rule: true, values: agree::values_equal_exactly };

#[test]
fn kernels_agree_with_the_oracle_on_random_calls() {
    let (seed, cases) = agree::seed_and_cases(0x0A11_5EED, 4_000);
    let mut mismatches = Vec::new();
    for isa in available() {
        let check = |op: Op, args: &[Value], attrs: &Attrs| with_isa(isa, || agree::compare(op, args, attrs, &RULES));
        mismatches.extend(agree::random_calls(OPS, seed, cases, 2, &format!("{isa:?}, "), case, &check));
    }
    agree::assert_no_mismatches(&mismatches);
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
