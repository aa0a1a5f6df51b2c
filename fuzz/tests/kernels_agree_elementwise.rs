//! The engine's elementwise, reduction, matmul and creation kernels against the
//! oracle's, operator by operator: random dtypes, shapes (rank 0, zero-size
//! dimensions, broadcasting and incompatible pairs), values (NaN, ±inf, -0.0, integer
//! extremes), attributes (valid and ill-kinded) and argument lists (wrong kinds and
//! counts). Outcomes must be the same value, or errors of the same kind; a memory
//! exhaustion on the engine's side is "poisoned" and skipped, a `Crash` on either side
//! is always a mismatch (DESIGN.md, "Errors are values").
//!
//! Values are compared bit for bit (NaN equal to NaN, -0.0 equal to 0.0, as
//! `values_equal` compares), except the operators whose engine kernels may round
//! differently — `exp` and `sigmoid` (a vector `exp` within 1 ulp), `softmax`, `sum`,
//! `mean` (partial sums) and `matmul` (a blocked GEMM) — which must agree within the
//! differential tester's tolerance (F-8, `oracle::engine::compare::values_agree`).
//!
//! `KERNELS_AGREE_CASES` sets the number of cases per operator (default 10,000) and
//! `KERNELS_AGREE_SEED` the seed; a mismatch prints the operator, attributes and
//! arguments as `.rx` literals.

mod agree;

use agree::{
    any_tensor, axis_attr, break_args, dtype, dtype_attr, float_dtype, float_value, int_value, random_dtype, shape,
    tensor, Rng, Rules, Verdict,
};
use fuzz::convert::from_oracle;
use half::f16;
use optimized::kernels::run_standalone;
use optimized::Memory;
use oracle::engine::compare::{values_agree, Tolerance};
use oracle::eval::literal::values_equal;
use oracle::eval::ops::eval_op_standalone;
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, TensorData};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

/// The operators whose kernels this file checks.
const OPS: &[Op] = &[
    Op::Add,
    Op::Subtract,
    Op::Multiply,
    Op::Divide,
    Op::FloorDivide,
    Op::Power,
    Op::Maximum,
    Op::Minimum,
    Op::Equal,
    Op::NotEqual,
    Op::Less,
    Op::LessEqual,
    Op::Greater,
    Op::GreaterEqual,
    Op::LogicalAnd,
    Op::LogicalOr,
    Op::LogicalNot,
    Op::Negative,
    Op::Abs,
    Op::Exp,
    Op::Log,
    Op::Sqrt,
    Op::Tanh,
    Op::Sigmoid,
    Op::Relu,
    Op::Softmax,
    Op::Where,
    Op::Astype,
    Op::Matmul,
    Op::Sum,
    Op::Mean,
    Op::Max,
    Op::Min,
    Op::Zeros,
    Op::Ones,
    Op::Full,
    Op::Arange,
];

/// A shape that usually broadcasts with `s` (leading dimensions dropped, some
/// dimensions 1, or extra leading dimensions), sometimes an unrelated one.
fn related(rng: &mut Rng, s: &[u64]) -> Vec<u64> {
    match rng.below(10) {
        0 => shape(rng),
        1 => {
            let mut t: Vec<u64> = (0..rng.range(1, 2)).map(|_| rng.range(1, 3) as u64).collect();
            t.extend_from_slice(s);
            t
        }
        _ => {
            let drop = rng.below(s.len() as u64 + 1) as usize;
            s[drop..].iter().map(|&d| if rng.pct(30) { 1 } else { d }).collect()
        }
    }
}

fn prim(rng: &mut Rng) -> Value {
    Value::Prim(match rng.below(10) {
        0 => PrimScalar::Bool(rng.pct(50)),
        1..=2 => PrimScalar::Float(float_value(rng), float_dtype(rng)),
        3 => PrimScalar::Int(int_value(rng, 64, true) as i64, dtype(rng.pick(&["int8", "uint16", "int4", "bool"]))),
        _ => PrimScalar::Int(rng.range(-300, 300), dtype(rng.pick(&["int64", "int32"]))),
    })
}

fn shape_value(rng: &mut Rng) -> Value {
    let dims: Vec<i64> = match rng.below(40) {
        0 => vec![-1, 2],
        1 => vec![1 << 14, 1 << 13],
        2 => vec![0, 1 << 40],
        _ => shape(rng).into_iter().map(|d| d as i64).collect(),
    };
    Value::Shape(Rc::new(dims))
}

/// Two operands of mostly equal dtype and broadcasting shapes (in either order).
fn operand_pair(rng: &mut Rng, dt: DataType) -> (Value, Value) {
    let s = shape(rng);
    let t = related(rng, &s);
    let (s, t) = if rng.pct(50) { (s, t) } else { (t, s) };
    let dt2 = if rng.pct(93) { dt } else { random_dtype(rng) };
    (tensor(rng, dt, &s), tensor(rng, dt2, &t))
}

/// A random call of `op`: its arguments and attributes.
fn case(rng: &mut Rng, op: Op) -> (Vec<Value>, Attrs) {
    let mut attrs = Attrs::default();
    let mut args = match op {
        Op::LogicalAnd | Op::LogicalOr => {
            let dt = if rng.pct(90) { DataType::BOOL } else { random_dtype(rng) };
            let (a, b) = operand_pair(rng, dt);
            vec![a, b]
        }
        Op::LogicalNot => {
            let dt = if rng.pct(85) { DataType::BOOL } else { random_dtype(rng) };
            vec![any_tensor(rng, Some(dt))]
        }
        Op::Negative | Op::Abs | Op::Relu => vec![any_tensor(rng, None)],
        Op::Exp | Op::Log | Op::Sqrt | Op::Tanh | Op::Sigmoid => {
            let dt = if rng.pct(85) { float_dtype(rng) } else { random_dtype(rng) };
            vec![any_tensor(rng, Some(dt))]
        }
        Op::Softmax => {
            let dt = if rng.pct(90) { float_dtype(rng) } else { random_dtype(rng) };
            let s = shape(rng);
            axis_attr(rng, &mut attrs, s.len(), false);
            vec![tensor(rng, dt, &s)]
        }
        Op::Where => {
            let dt = random_dtype(rng);
            let (a, b) = operand_pair(rng, dt);
            let s = match rng.below(3) {
                0 => shape(rng),
                1 => related(rng, &[]),
                _ => {
                    let s = shape(rng);
                    related(rng, &s)
                }
            };
            let cdt = if rng.pct(92) { DataType::BOOL } else { random_dtype(rng) };
            vec![tensor(rng, cdt, &s), a, b]
        }
        Op::Astype => {
            dtype_attr(rng, &mut attrs, "dtype", 3);
            vec![any_tensor(rng, None)]
        }
        Op::Sum | Op::Mean | Op::Max | Op::Min => {
            let s = if rng.pct(3) { vec![0, 1 << 40] } else { shape(rng) };
            axis_attr(rng, &mut attrs, s.len(), true);
            match rng.below(10) {
                0 => attrs.insert("keepdims", AttrValue::Int(1)),
                1..=5 => attrs.insert("keepdims", AttrValue::Bool(rng.pct(50))),
                _ => {}
            }
            let dt = random_dtype(rng);
            vec![tensor(rng, dt, &s)]
        }
        Op::Matmul => matmul_case(rng, &mut attrs),
        Op::Zeros | Op::Ones => {
            dtype_attr(rng, &mut attrs, "dtype", 4);
            vec![shape_value(rng)]
        }
        Op::Full => {
            dtype_attr(rng, &mut attrs, "dtype", 40);
            let fill = match rng.below(10) {
                0..=4 => prim(rng),
                5..=8 => {
                    let dt = random_dtype(rng);
                    tensor(rng, dt, &[])
                }
                _ => any_tensor(rng, None),
            };
            vec![shape_value(rng), fill]
        }
        Op::Arange => {
            dtype_attr(rng, &mut attrs, "dtype", 50);
            arange_args(rng)
        }
        _ => {
            let dt = random_dtype(rng);
            let (a, b) = operand_pair(rng, dt);
            vec![a, b]
        }
    };
    if rng.pct(2) {
        // A result over 2^26 elements from small operands: an `OpError` before allocating.
        let big = |rng: &mut Rng, s: &[u64]| tensor(rng, DataType::BOOL, s);
        if matches!(args.len(), 2 | 3) && args.iter().all(|a| matches!(a, Value::Tensor(_))) {
            let n = args.len();
            args[n - 2] = big(rng, &[1 << 14, 1]);
            args[n - 1] = big(rng, &[1, 1 << 13]);
        }
    }
    // A wrong argument kind, or a wrong count.
    break_args(rng, &mut args, 5, true, false);
    (args, attrs)
}

fn matmul_case(rng: &mut Rng, attrs: &mut Attrs) -> Vec<Value> {
    let dim = |rng: &mut Rng| if rng.pct(5) { 0 } else { rng.range(1, 4) as u64 };
    let (n, k, m) = (dim(rng), dim(rng), dim(rng));
    let k2 = if rng.pct(8) { k + 1 } else { k };
    let batch: Vec<u64> = (0..rng.range(0, 2)).map(|_| dim(rng)).collect();
    let other = related(rng, &batch);
    let (ba, bb) = if rng.pct(50) { (batch, other) } else { (other, batch) };
    let mut a_shape = if rng.pct(20) { vec![k] } else { [ba, vec![n, k]].concat() };
    let b_shape = if rng.pct(20) { vec![k2] } else { [bb, vec![k2, m]].concat() };
    if rng.pct(3) {
        a_shape.clear();
    }
    let dt = random_dtype(rng);
    let dt2 = if rng.pct(90) { dt } else { random_dtype(rng) };
    if rng.pct(30) {
        dtype_attr(rng, attrs, "out_dtype", 0);
    }
    vec![tensor(rng, dt, &a_shape), tensor(rng, dt2, &b_shape)]
}

/// `arange` arguments whose result is small, or over the limit (refused before any
/// work): a legal result of millions of elements would only make the test slow.
fn arange_args(rng: &mut Rng) -> Vec<Value> {
    loop {
        let args = arange_try(rng);
        let num = |v: &Value| match v {
            Value::Prim(PrimScalar::Int(i, _)) => *i as f64,
            Value::Prim(PrimScalar::Float(f, _)) => *f,
            Value::Prim(PrimScalar::Bool(b)) => *b as u8 as f64,
            _ => 0.0,
        };
        let len = ((num(&args[1]) - num(&args[0])) / num(&args[2])).ceil();
        if !(1e5..=(1u64 << 26) as f64).contains(&len) {
            return args;
        }
    }
}

fn arange_try(rng: &mut Rng) -> Vec<Value> {
    let int = |v: i64| Value::Prim(PrimScalar::Int(v, DataType::INT64));
    let float = |v: f64| Value::Prim(PrimScalar::Float(v, DataType::FLOAT32));
    match rng.below(10) {
        0..=4 => {
            let step = rng.pick(&[1, 1, 2, 3, -1, -2, 0]);
            vec![int(rng.range(-5, 5)), int(rng.range(-10, 20)), int(step)]
        }
        5..=6 => {
            let step = rng.pick(&[0.5, 0.25, -0.5, 1.0, 0.1, 0.0, -0.0]);
            vec![float(rng.range(-20, 20) as f64 / 4.0), float(rng.range(-20, 20) as f64 / 4.0), float(step)]
        }
        7 => vec![int(rng.range(-5, 5)), float(rng.range(-5, 20) as f64 / 3.0), int(rng.pick(&[1, 2]))],
        8 => vec![prim(rng), prim(rng), prim(rng)],
        _ => {
            // Exact integer lengths at the edges of i64 (2^27 elements is over the limit).
            let (a, b, c) = rng.pick(&[
                (i64::MIN, i64::MAX, i64::MAX),
                (i64::MIN, i64::MAX, 1 << 37),
                (i64::MAX, i64::MIN, -(1 << 50)),
                (0, 1 << 62, 1 << 50),
                (1 << 40, -(1 << 62), -1),
                (i64::MIN, i64::MAX, 1),
                (-(1 << 62), 1 << 62, 1 << 62),
                (i64::MAX, i64::MIN, i64::MIN),
                (i64::MAX - 2, i64::MAX, 1),
            ]);
            vec![int(a), int(b), int(c)]
        }
    }
}

/// Values bit for bit, or within the differential tester's tolerance for the
/// operators whose engine kernels may round differently.
fn values_match(op: Op, args: &[Value], o: &Value, e: &Value) -> bool {
    match op {
        Op::Exp | Op::Sigmoid | Op::Softmax | Op::Sum | Op::Mean | Op::Matmul => {
            // A reordered sum errs in proportion to its terms, which a cancelling
            // sum can make far larger than its result: the terms' scale (the
            // largest finite operand, squared for a product) widens the bound.
            let n = args.iter().chain([o, e]).map(elements).max().unwrap_or(1);
            let big = args.iter().map(largest).fold(0.0, f64::max);
            let scale = if op == Op::Matmul { big * big } else { big };
            values_agree(o, e, Tolerance { reduction: n.max(1) as f64 * (1.0 + scale) })
        }
        _ => values_equal(o, e, 0.0),
    }
}

/// The oracle under the engine's memory budget; errors agree by kind.
const RULES: Rules = Rules { oracle_budget: true, same_rule: false, values: values_match };

#[test]
fn kernels_agree_with_the_oracle_on_random_calls() {
    agree::sweep(OPS, 0x5EED, 10_000, 5, case, &RULES);
}

/// Hand-picked corner cases, each compared as the random ones are.
#[test]
fn corner_cases_agree() {
    let t = agree::literal;
    let i64s = |v: &[i64]| t("int64", &[v.len() as u64], TensorData::I64(v.to_vec()));
    let f32s = |v: &[f32]| t("float32", &[v.len() as u64], TensorData::F32(v.to_vec()));
    let f16s =
        |v: &[f32]| t("float16", &[v.len() as u64], TensorData::F16(v.iter().map(|x| f16::from_f32(*x)).collect()));
    let with = |k: &str, v: AttrValue| {
        let mut a = Attrs::default();
        a.insert(k, v);
        a
    };
    let none = Attrs::default();
    let calls: Vec<(Op, Vec<Value>, Attrs)> = vec![
        (Op::Divide, vec![i64s(&[i64::MIN, 7, -7]), i64s(&[-1, -2, 2])], none.clone()),
        (Op::FloorDivide, vec![i64s(&[i64::MIN, 7, -7]), i64s(&[-1, -2, 2])], none.clone()),
        (Op::Divide, vec![i64s(&[1, 2]), i64s(&[0])], none.clone()),
        (
            Op::FloorDivide,
            vec![t("bool", &[1], TensorData::Bool(vec![true])), t("bool", &[], TensorData::Bool(vec![false]))],
            none.clone(),
        ),
        (Op::Divide, vec![i64s(&[]), i64s(&[0])], none.clone()),
        (Op::Power, vec![i64s(&[3, 2]), i64s(&[40, -1])], none.clone()),
        (Op::Power, vec![i64s(&[3, 0]), i64s(&[41, 0])], none.clone()),
        (Op::Negative, vec![i64s(&[i64::MIN])], none.clone()),
        (Op::Abs, vec![t("int8", &[2], TensorData::I8(vec![i8::MIN, -3]))], none.clone()),
        (Op::Maximum, vec![f32s(&[f32::NAN, 1.0, -0.0]), f32s(&[1.0, f32::NAN, 0.0])], none.clone()),
        (Op::Relu, vec![f32s(&[f32::NAN, -1.0, -0.0])], none.clone()),
        (Op::Add, vec![f16s(&[1.0, 60000.0]), f16s(&[0.00048828125, 60000.0])], none.clone()),
        (Op::Sum, vec![f32s(&[-0.0])], none.clone()),
        (Op::Sum, vec![f16s(&[2048.0, 1.0, 1.0, 1.0])], none.clone()),
        (Op::Mean, vec![t("int32", &[2], TensorData::I32(vec![-3, -4]))], none.clone()),
        (Op::Mean, vec![t("int32", &[0, 3], TensorData::I32(vec![]))], with("axis", AttrValue::Int(0))),
        (Op::Mean, vec![f16s(&[1.0; 3000])], none.clone()),
        (Op::Max, vec![f32s(&[])], none.clone()),
        (Op::Softmax, vec![f32s(&[1000.0, 1000.0, f32::NEG_INFINITY])], none.clone()),
        (Op::Softmax, vec![f32s(&[f32::NEG_INFINITY, f32::NEG_INFINITY])], none.clone()),
        (Op::Softmax, vec![t("float32", &[], TensorData::F32(vec![1.0]))], none.clone()),
        (Op::Astype, vec![f32s(&[127.9, -128.9])], with("dtype", AttrValue::Str("int8".into()))),
        (Op::Astype, vec![f32s(&[128.0])], with("dtype", AttrValue::Str("int8".into()))),
        (Op::Astype, vec![f32s(&[f32::NAN])], with("dtype", AttrValue::Str("bool".into()))),
        (Op::Astype, vec![i64s(&[(1 << 62) + 1, 16_777_217])], with("dtype", AttrValue::Str("float32".into()))),
        (Op::Astype, vec![i64s(&[70000])], with("dtype", AttrValue::Str("float16".into()))),
        (Op::Astype, vec![f32s(&[-0.5])], with("dtype", AttrValue::Str("uint8".into()))),
        (
            Op::Matmul,
            vec![t("int8", &[2], TensorData::I8(vec![100, 100])), t("int8", &[2], TensorData::I8(vec![3, 3]))],
            none.clone(),
        ),
        (Op::Matmul, vec![f32s(&[1e8, 1.0, -1e8]), f32s(&[1.0, 1.0, 1.0])], none.clone()),
        (Op::Matmul, vec![f32s(&[1.5, 2.5]), f32s(&[1.0, 1.0])], with("out_dtype", AttrValue::Str("int32".into()))),
        (
            Op::Arange,
            vec![
                Value::Prim(PrimScalar::Int(0, DataType::INT64)),
                Value::Prim(PrimScalar::Int(300, DataType::INT64)),
                Value::Prim(PrimScalar::Int(100, DataType::INT64)),
            ],
            with("dtype", AttrValue::Str("int8".into())),
        ),
        (
            Op::Full,
            vec![Value::Shape(Rc::new(vec![2])), Value::Prim(PrimScalar::Int(300, dtype("int8")))],
            none.clone(),
        ),
        (
            Op::Full,
            vec![Value::Shape(Rc::new(vec![2])), Value::Prim(PrimScalar::Float(2.7, DataType::FLOAT32))],
            with("dtype", AttrValue::Str("uint8".into())),
        ),
        (Op::Zeros, vec![Value::Shape(Rc::new(vec![1 << 27]))], with("dtype", AttrValue::Str("int8".into()))),
        (Op::Ones, vec![Value::Shape(Rc::new(vec![0, 1 << 40]))], with("dtype", AttrValue::Str("bool".into()))),
    ];
    let mut bad = Vec::new();
    for (op, args, attrs) in calls {
        if let Verdict::Mismatch(m) = agree::compare(op, &args, &attrs, &RULES) {
            bad.push(m);
        }
    }
    assert!(bad.is_empty(), "mismatches:\n{}", bad.join("\n\n"));
}

/// A tensor that something is writing is an `OpError` on both sides.
#[test]
fn a_tensor_being_written_is_an_op_error_on_both_sides() {
    let memory = Memory::new(1 << 20);
    let x = Value::tensor(NDArray { dtype: DataType::INT32, shape: vec![2], data: TensorData::I32(vec![1, 0]) });
    let ex = from_oracle(&x, &memory).expect("converts");
    let (Value::Tensor(ot), optimized::Value::Tensor(et)) = (&x, &ex) else { panic!() };
    let _held = (ot.borrow_mut(), et.data_mut().expect("not borrowed yet"));
    let mean = {
        let mut a = Attrs::default();
        a.insert("axis", AttrValue::List(vec![]));
        a
    };
    for (op, attrs) in [(Op::Add, Attrs::default()), (Op::Divide, Attrs::default()), (Op::Mean, mean)] {
        let args: Vec<Value> = if op == Op::Mean { vec![x.clone()] } else { vec![x.clone(), x.clone()] };
        let eargs: Vec<optimized::Value> = if op == Op::Mean { vec![ex.clone()] } else { vec![ex.clone(), ex.clone()] };
        let Err(o) = eval_op_standalone(op, &args, &attrs, Span::SYNTHETIC) else { panic!("the oracle accepts") };
        let e = run_standalone(op, &attrs, &eargs, &memory).expect("a kernel").expect_err("the engine refuses");
        assert_eq!((o.kind.name(), e.kind.name()), ("OpError", "OpError"), "{op}");
    }
}

/// The element count of a tensor value (0 for anything else): the reduction length the
/// tolerance allows for.
fn elements(v: &Value) -> usize {
    match v {
        Value::Tensor(t) => t.borrow().data.len(),
        _ => 0,
    }
}

/// The largest finite magnitude among a tensor value's elements (0 for anything else).
fn largest(v: &Value) -> f64 {
    match v {
        Value::Tensor(t) => {
            let t = t.borrow();
            (0..t.data.len())
                .filter_map(|i| match t.data.get(i) {
                    spec_model::grammar::Scalar::Float(f) => Some(f.abs()),
                    spec_model::grammar::Scalar::Int(i) => Some((i as f64).abs()),
                    _ => None,
                })
                .filter(|m| m.is_finite())
                .fold(0.0, f64::max)
        }
        _ => 0.0,
    }
}
