//! The engine's statistics and normalization kernels against the oracle's: random
//! dtypes, shapes (rank 0, zero-size dimensions), values (NaN, ±inf, -0.0, integer
//! extremes), axes (valid, out of range, repeated, ill-kinded), parameter tensors of the
//! right and wrong shapes and dtypes, and wrong argument kinds and counts. Both sides
//! fold in the same order, so values must agree bit for bit (NaN equal to NaN, -0.0 to
//! 0.0); errors by kind; resource exhaustion is poisoned.
//!
//! `KERNELS_AGREE_CASES` sets the number of cases per operator (default 10,000) and
//! `KERNELS_AGREE_SEED` the seed.

mod agree;

use agree::{
    any_tensor, axis_attr, break_args, dtype, dtype_attr, float_dtype, literal, random_dtype, shape, tensor, Rng,
    Verdict,
};
use half::f16;
use oracle::eval::literal::print_value;
use oracle::eval::ops::eval_op_standalone;
use oracle::eval::Value;
use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, TensorData};
use spec_model::ops::Op;
use spec_model::Span;

/// The operators whose kernels this file checks.
const OPS: &[Op] = &[
    Op::Prod,
    Op::Argmax,
    Op::Argmin,
    Op::Variance,
    Op::Std,
    Op::Cumsum,
    Op::LogSoftmax,
    Op::LayerNorm,
    Op::RmsNorm,
    Op::GroupNorm,
    Op::BatchNorm,
    Op::Dropout,
];

fn float_attr(rng: &mut Rng, attrs: &mut Attrs, name: &str) {
    match rng.below(10) {
        0..=4 => {}
        5 => attrs.insert(name, AttrValue::Str("x".into())),
        6 => attrs.insert(name, AttrValue::Int(rng.range(0, 2))),
        _ => {
            attrs.insert(name, AttrValue::Float(spec_model::grammar::FloatLit(rng.pick(&[1e-5, 0.1, 0.0, 1.0, 1e-3]))))
        }
    }
}

fn bool_attr(rng: &mut Rng, attrs: &mut Attrs, name: &str) {
    match rng.below(10) {
        0..=4 => {}
        5 => attrs.insert(name, AttrValue::Int(1)),
        _ => attrs.insert(name, AttrValue::Bool(rng.pct(50))),
    }
}

/// Distinct axes of a rank-`r` tensor (sometimes out of range or repeated).
fn axes_list(rng: &mut Rng, r: usize) -> Vec<i64> {
    let ri = r as i64;
    let mut out = Vec::new();
    for a in 0..ri {
        if rng.pct(50) {
            out.push(if rng.pct(30) { a - ri } else { a });
        }
    }
    if out.is_empty() && r > 0 {
        out.push(rng.range(-ri, ri - 1));
    }
    if rng.pct(5) {
        out.push(rng.range(-ri - 2, ri + 1));
    }
    out
}

/// A parameter tensor: of `shape` and `dt` mostly, sometimes of another shape or dtype.
fn param(rng: &mut Rng, dt: DataType, shape: &[u64]) -> Value {
    let dt = if rng.pct(95) { dt } else { random_dtype(rng) };
    let s = if rng.pct(95) { shape.to_vec() } else { shape_of_rank(rng, shape.len()) };
    tensor(rng, dt, &s)
}

fn shape_of_rank(rng: &mut Rng, r: usize) -> Vec<u64> {
    (0..r).map(|_| rng.range(0, 4) as u64).collect()
}

/// Norm data: values small enough that the moments stay finite mostly.
fn norm_data(rng: &mut Rng, dt: DataType, shape: &[u64]) -> Value {
    if rng.pct(80) && dt.is_float() {
        let n = shape.iter().product::<u64>() as usize;
        let v: Vec<f64> = (0..n).map(|_| rng.range(-400, 400) as f64 / 16.0).collect();
        let data = match dt.bits {
            16 => TensorData::F16(v.iter().map(|&x| f16::from_f64(x)).collect()),
            32 => TensorData::F32(v.iter().map(|&x| x as f32).collect()),
            _ => TensorData::F64(v),
        };
        Value::tensor(NDArray { dtype: dt, shape: shape.to_vec(), data })
    } else {
        tensor(rng, dt, shape)
    }
}

/// A random call of `op`: its arguments and attributes.
fn case(rng: &mut Rng, op: Op) -> (Vec<Value>, Attrs) {
    let mut attrs = Attrs::default();
    let fdt = |rng: &mut Rng| if rng.pct(90) { float_dtype(rng) } else { random_dtype(rng) };
    let mut args = match op {
        Op::Prod | Op::Variance | Op::Std | Op::Argmax | Op::Argmin => {
            let dt = if op == Op::Std { fdt(rng) } else { random_dtype(rng) };
            let s = shape(rng);
            axis_attr(rng, &mut attrs, s.len(), !matches!(op, Op::Argmax | Op::Argmin));
            if rng.pct(60) {
                attrs.insert("keepdims", AttrValue::Bool(rng.pct(50)));
            }
            vec![tensor(rng, dt, &s)]
        }
        Op::Cumsum => {
            let dt = random_dtype(rng);
            let s = shape(rng);
            axis_attr(rng, &mut attrs, s.len(), false);
            if rng.pct(40) {
                dtype_attr(rng, &mut attrs, "dtype", 0);
            }
            bool_attr(rng, &mut attrs, "exclusive");
            vec![tensor(rng, dt, &s)]
        }
        Op::LogSoftmax => {
            let s = shape(rng);
            axis_attr(rng, &mut attrs, s.len(), false);
            let dt = fdt(rng);
            vec![norm_data(rng, dt, &s)]
        }
        Op::LayerNorm | Op::RmsNorm => {
            let dt = fdt(rng);
            let s = shape(rng);
            let axes = axes_list(rng, s.len());
            if op == Op::LayerNorm || rng.pct(70) {
                attrs.insert("axes", AttrValue::List(axes.iter().map(|&a| AttrValue::Int(a)).collect()));
            }
            let ps: Vec<u64> = if op == Op::RmsNorm && attrs.get("axes").is_none() {
                s.last().map(|&d| vec![d]).unwrap_or_default()
            } else {
                axes.iter()
                    .map(|&a| s.get(a.rem_euclid(s.len().max(1) as i64) as usize).copied().unwrap_or(1))
                    .collect()
            };
            float_attr(rng, &mut attrs, "epsilon");
            bool_attr(rng, &mut attrs, "center");
            bool_attr(rng, &mut attrs, "scale");
            let mut args = vec![norm_data(rng, dt, &s), param(rng, dt, &ps)];
            if op == Op::LayerNorm {
                args.push(param(rng, dt, &ps));
            } else {
                attrs.0.retain(|k, _| k != "center" && k != "scale");
            }
            args
        }
        Op::GroupNorm => {
            let dt = fdt(rng);
            let mut s = shape(rng);
            if s.is_empty() {
                s.push(4);
            }
            let r = s.len() as i64;
            let c = rng.range(0, r - 1);
            let divisors: Vec<u64> = [1, 2, 3, 4].into_iter().filter(|&g| s[c as usize].is_multiple_of(g)).collect();
            let groups = if divisors.is_empty() { 1 } else { rng.pick(&divisors) };
            let groups = if rng.pct(90) { groups as i64 } else { rng.range(-1, 5) };
            attrs.insert("num_groups", AttrValue::Int(groups));
            attrs.insert("channel_axis", AttrValue::Int(if rng.pct(30) { c - r } else { c }));
            let axes: Vec<i64> = (0..r).filter(|&i| i != c && rng.pct(50)).collect();
            let axes = if rng.pct(5) { vec![c] } else { axes };
            attrs.insert("axes", AttrValue::List(axes.iter().map(|&a| AttrValue::Int(a)).collect()));
            float_attr(rng, &mut attrs, "epsilon");
            bool_attr(rng, &mut attrs, "center");
            bool_attr(rng, &mut attrs, "scale");
            let ch = [s[c as usize]];
            vec![norm_data(rng, dt, &s), param(rng, dt, &ch), param(rng, dt, &ch)]
        }
        Op::BatchNorm => {
            let dt = fdt(rng);
            let s = shape(rng);
            let r = s.len() as i64;
            let axis = if rng.pct(90) && r > 0 { rng.range(-r, r - 1) } else { rng.range(-r - 1, r + 1) };
            attrs.insert("axis", AttrValue::Int(axis));
            float_attr(rng, &mut attrs, "epsilon");
            float_attr(rng, &mut attrs, "momentum");
            bool_attr(rng, &mut attrs, "center");
            bool_attr(rng, &mut attrs, "scale");
            bool_attr(rng, &mut attrs, "training");
            let ch = [s.get(axis.rem_euclid(r.max(1)) as usize).copied().unwrap_or(1)];
            let mut args = vec![norm_data(rng, dt, &s)];
            for _ in 0..4 {
                let p = param(rng, dt, &ch);
                args.push(p);
            }
            args
        }
        Op::Dropout => {
            float_attr(rng, &mut attrs, "rate");
            vec![any_tensor(rng, None)]
        }
        _ => unreachable!("{op} is not in OPS"),
    };
    break_args(rng, &mut args, 5, true, false);
    (args, attrs)
}

#[test]
fn kernels_agree_with_the_oracle_on_random_calls() {
    agree::sweep(OPS, 0x5EED, 10_000, 5, case, &agree::BIT_FOR_BIT);
}

/// Hand-picked corner cases, each compared as the random ones are.
#[test]
fn corner_cases_agree() {
    let mut a = Attrs::default();
    a.insert("axis", AttrValue::Int(1));
    let nan = literal("float32", &[2, 3], TensorData::F32(vec![1.0, f32::NAN, 3.0, -0.0, 0.0, -1.0]));
    let cases: Vec<(Op, Vec<Value>, Attrs)> = vec![
        (Op::Argmax, vec![nan.clone()], a.clone()),
        (Op::Argmin, vec![nan.clone()], Attrs::default()),
        (Op::Variance, vec![literal("int32", &[0, 2], TensorData::I32(vec![]))], a.clone()),
        (Op::Prod, vec![literal("int8", &[2, 0], TensorData::I8(vec![]))], a.clone()),
        (Op::Cumsum, vec![literal("int8", &[3], TensorData::I8(vec![100, 100, -56]))], Attrs::default()),
        (Op::LogSoftmax, vec![nan.clone()], Attrs::default()),
    ];
    for (op, args, attrs) in cases {
        if let Verdict::Mismatch(m) = agree::compare(op, &args, &attrs, &agree::BIT_FOR_BIT) {
            panic!("MISMATCH {m}");
        }
    }
}

/// The reference values of a few calls (NumPy's, by hand): the test can fail.
#[test]
fn known_values() {
    let x = Value::tensor(NDArray {
        dtype: dtype("float64"),
        shape: vec![2, 2],
        data: TensorData::F64(vec![1.0, 2.0, 3.0, 5.0]),
    });
    let mut a = Attrs::default();
    a.insert("axis", AttrValue::Int(1));
    let run = |op: Op, attrs: &Attrs| {
        let v = eval_op_standalone(op, std::slice::from_ref(&x), attrs, Span::SYNTHETIC).unwrap();
        print_value(&v)
    };
    assert_eq!(run(Op::Variance, &a), "R.const([0.25, 1.0], \"float64\")");
    assert_eq!(run(Op::Prod, &Attrs::default()), "R.const(30.0, \"float64\")");
    assert_eq!(run(Op::Argmax, &Attrs::default()), "R.const(3, \"int64\")");
    assert_eq!(run(Op::Cumsum, &Attrs::default()), "R.const([1.0, 3.0, 6.0, 11.0], \"float64\")");
}
