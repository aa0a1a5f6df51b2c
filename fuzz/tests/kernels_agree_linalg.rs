//! The engine's `einsum`, `nn.attention` and `one_hot` kernels against the oracle's:
//! random equations (shared, reduced and broadcast labels, diagonals, ellipses, implied
//! and explicit outputs, malformed subscripts, ranks and dimensions that do not fit),
//! attention over random BSNH shapes (grouped heads, biases, masks, windows, scales,
//! empty sequences, ill-fitting shapes and attributes), one_hot over every index dtype
//! with random depths and axes; all dtypes, special values, wrong argument kinds.
//!
//! Tolerance: `one_hot` copies values, so bit for bit. `einsum` and `nn.attention` are
//! bit for bit where the engine keeps the oracle's order (its loop nest, integer and
//! float16 products, non-finite or huge operands); a float matrix product through
//! `matrixmultiply` reassociates its sums, so floats agree within F-8's bound
//! (`4·eps·n·(1 + m)`) with `n` widened by the terms' scale: the largest operand
//! magnitude to the power of the operand count for `einsum` (a reordered sum errs in
//! proportion to its terms), and for attention `(1 + |q|·|k|·h·|scale|)·(1 + |v|)`: a
//! score's rounding error passes through `exp` as a relative error of the weights,
//! which the values then scale.
//!
//! `KERNELS_AGREE_CASES` sets the number of cases per operator (default 10,000) and
//! `KERNELS_AGREE_SEED` the seed.

mod agree;

use agree::{break_args, dtype, literal, random_dtype, tensor, Rng, Rules, Verdict};
use oracle::engine::compare::{values_agree, Tolerance};
use oracle::eval::literal::values_equal;
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, NDArray, Scalar, TensorData};
use spec_model::ops::Op;
use std::rc::Rc;

const OPS: &[Op] = &[Op::Einsum, Op::Attention, Op::OneHot];

const LETTERS: &[u8] = b"ijkAbZ";

/// A random equation and operands for it (sometimes ill-fitting).
fn einsum_case(rng: &mut Rng, attrs: &mut Attrs) -> Vec<Value> {
    let dt = if rng.pct(60) { dtype(rng.pick(&["float32", "float64"])) } else { random_dtype(rng) };
    let extent: Vec<u64> = LETTERS.iter().map(|_| if rng.pct(5) { 0 } else { rng.range(1, 4) as u64 }).collect();
    let ell: Vec<u64> = (0..rng.below(3)).map(|_| rng.range(1, 3) as u64).collect();
    let use_ell = rng.pct(30);
    let count = if rng.pct(70) { 2 } else { rng.range(1, 3) as usize };
    let mut terms = Vec::new();
    let mut args = Vec::new();
    for _ in 0..count {
        let mut term = String::new();
        let mut dims = Vec::new();
        if use_ell && rng.pct(70) {
            term.push_str("...");
            let from = rng.below(ell.len() as u64 + 1) as usize;
            dims.extend(ell[from..].iter().map(|&d| if rng.pct(20) { 1 } else { d }));
        }
        for _ in 0..rng.below(4) {
            let i = rng.below(LETTERS.len() as u64) as usize;
            term.push(LETTERS[i] as char);
            dims.push(if rng.pct(10) { 1 } else { extent[i] });
        }
        if rng.pct(3) {
            dims.push(2);
        }
        terms.push(term);
        args.push(operand(rng, dt, &dims));
    }
    let used: Vec<char> = terms.iter().flat_map(|t| t.chars().filter(|c| c.is_ascii_alphabetic())).collect();
    let mut subscripts = terms.join(",");
    if rng.pct(60) {
        let mut out: Vec<String> = Vec::new();
        for &l in LETTERS {
            if used.contains(&(l as char)) && rng.pct(50) && !out.contains(&(l as char).to_string()) {
                out.push((l as char).to_string());
            }
        }
        if use_ell && rng.pct(70) {
            out.insert(rng.below(out.len() as u64 + 1) as usize, "...".into());
        }
        for i in (1..out.len()).rev() {
            out.swap(i, rng.below(i as u64 + 1) as usize);
        }
        subscripts = format!("{subscripts}->{}", out.concat());
    }
    if rng.pct(3) {
        subscripts = rng.pick(&["i.j", "ij->ii", "ij->q", "i->i->i", "i-j", "1", "ij,", ",", "...i...", "ü"]).into();
    }
    match rng.below(40) {
        0 => {}
        1 => attrs.insert("subscripts", AttrValue::Int(1)),
        _ => attrs.insert("subscripts", AttrValue::Str(subscripts)),
    }
    vec![Value::Tuple(Rc::new(args))]
}

/// A tensor of `dims`: small exact values mostly, [`tensor`]'s (special, huge) sometimes.
fn operand(rng: &mut Rng, dt: DataType, dims: &[u64]) -> Value {
    if dt.is_float() && rng.pct(80) {
        let n = dims.iter().product::<u64>() as usize;
        let v: Vec<f64> = (0..n).map(|_| rng.range(-16, 16) as f64 / 8.0).collect();
        let data = match dt.bits {
            16 => TensorData::F16(v.iter().map(|&x| half::f16::from_f64(x)).collect()),
            32 => TensorData::F32(v.iter().map(|&x| x as f32).collect()),
            _ => TensorData::F64(v),
        };
        Value::tensor(NDArray { dtype: dt, shape: dims.to_vec(), data })
    } else {
        tensor(rng, dt, dims)
    }
}

fn attention_case(rng: &mut Rng, attrs: &mut Attrs) -> Vec<Value> {
    let dt = if rng.pct(90) { agree::float_dtype(rng) } else { random_dtype(rng) };
    let d = |rng: &mut Rng| if rng.pct(5) { 0 } else { rng.range(1, 4) as u64 };
    let (b, s, t, h, hv) = (d(rng), d(rng), d(rng), d(rng), d(rng));
    let n = rng.pick(&[1u64, 2, 4]);
    let heads = |rng: &mut Rng| if rng.pct(95) { rng.pick(&[1, n, (n / 2).max(1)]) } else { rng.range(0, 3) as u64 };
    let (nk, nv) = (heads(rng), heads(rng));
    let bad = |rng: &mut Rng, x: u64| if rng.pct(3) { x + 1 } else { x };
    let k_dims = [bad(rng, b), t, nk, bad(rng, h)];
    let v_dims = [b, bad(rng, t), nv, hv];
    let mut args = vec![operand(rng, dt, &[b, s, n, h]), operand(rng, dt, &k_dims), operand(rng, dt, &v_dims)];
    if rng.pct(30) {
        let pick = |rng: &mut Rng, x: u64| if rng.pct(50) { 1 } else { bad(rng, x) };
        let bias = [pick(rng, b), pick(rng, n), pick(rng, s), bad(rng, t)];
        let bias = if rng.pct(3) { bias[1..].to_vec() } else { bias.to_vec() };
        args.push(operand(rng, dt, &bias));
    }
    match rng.below(10) {
        0..=4 => {}
        5 => attrs.insert("scale", AttrValue::Str("x".into())),
        _ => attrs.insert("scale", AttrValue::Float(FloatLit(rng.pick(&[0.5, 0.125, 1.0, -2.0, 0.0])))),
    }
    match rng.below(10) {
        0..=3 => {}
        4 => attrs.insert("causal_mask", AttrValue::Str("Diagonal".into())),
        5 | 6 => attrs.insert("causal_mask", AttrValue::Str("TopLeft".into())),
        _ => attrs.insert("causal_mask", AttrValue::Str("BottomRight".into())),
    }
    if rng.pct(25) {
        attrs.insert("window_size", AttrValue::Int(rng.range(-1, 3)));
    }
    args
}

fn prim(rng: &mut Rng, dt: DataType) -> Value {
    Value::Prim(if dt.is_float() {
        PrimScalar::Float(rng.pick(&[1.0, 0.0, -2.5, 1e300, f64::NAN]), dt)
    } else if dt.is_bool() {
        PrimScalar::Bool(rng.pct(50))
    } else {
        PrimScalar::Int(rng.range(-300, 300), dt)
    })
}

fn one_hot_case(rng: &mut Rng, attrs: &mut Attrs) -> Vec<Value> {
    let idt = if rng.pct(85) { dtype(rng.pick(&["int32", "int64", "uint8", "int8"])) } else { random_dtype(rng) };
    let s = agree::shape(rng);
    let n = s.iter().product::<u64>() as usize;
    let x = if rng.pct(70) && idt.is_int() {
        let v: Vec<i64> = (0..n).map(|_| rng.range(-2, 5)).collect();
        let data = match idt.bits {
            8 => TensorData::I8(v.iter().map(|&x| x as i8).collect()),
            16 => TensorData::I16(v.iter().map(|&x| x as i16).collect()),
            32 => TensorData::I32(v.iter().map(|&x| x as i32).collect()),
            _ => TensorData::I64(v),
        };
        Value::tensor(NDArray { dtype: idt, shape: s.clone(), data })
    } else {
        tensor(rng, idt, &s)
    };
    let vdt = dtype(rng.pick(&["float32", "float16", "float64", "int32", "int8", "uint8", "bool"]));
    let odt = if rng.pct(95) { vdt } else { dtype("int64") };
    let mut args = vec![x, prim(rng, vdt), prim(rng, odt)];
    if rng.pct(3) {
        args[1] = literal("float32", &[], TensorData::F32(vec![1.0]));
    }
    if rng.pct(95) {
        attrs.insert("depth", AttrValue::Int(if rng.pct(95) { rng.range(1, 5) } else { rng.range(-1, 0) }));
    }
    let r = s.len() as i64;
    match rng.below(10) {
        0..=2 => {}
        3 => attrs.insert("axis", AttrValue::Int(rng.range(-r - 3, r + 2))),
        _ => attrs.insert("axis", AttrValue::Int(rng.range(-r - 1, r))),
    }
    args
}

fn case(rng: &mut Rng, op: Op) -> (Vec<Value>, Attrs) {
    let mut attrs = Attrs::default();
    let mut args = match op {
        Op::Einsum => einsum_case(rng, &mut attrs),
        Op::Attention => attention_case(rng, &mut attrs),
        Op::OneHot => one_hot_case(rng, &mut attrs),
        _ => unreachable!("{op} is not in OPS"),
    };
    break_args(rng, &mut args, 4, true, false);
    (args, attrs)
}

fn elements(v: &Value) -> usize {
    match v {
        Value::Tensor(t) => t.borrow().data.len(),
        Value::Tuple(fs) => fs.iter().map(elements).max().unwrap_or(0),
        _ => 0,
    }
}

/// The largest finite magnitude among a value's elements (a tuple's fields too).
fn largest(v: &Value) -> f64 {
    match v {
        Value::Tensor(t) => {
            let t = t.borrow();
            (0..t.data.len())
                .filter_map(|i| match t.data.get(i) {
                    Scalar::Float(f) => Some(f.abs()),
                    Scalar::Int(i) => Some((i as f64).abs()),
                    Scalar::Bool(_) => None,
                })
                .filter(|m| m.is_finite())
                .fold(0.0, f64::max)
        }
        Value::Tuple(fs) => fs.iter().map(largest).fold(0.0, f64::max),
        _ => 0.0,
    }
}

/// See the module comment.
fn values_match(op: Op, args: &[Value], o: &Value, e: &Value) -> bool {
    let n = args.iter().chain([o, e]).map(elements).max().unwrap_or(1).max(1) as f64;
    let scale = match (op, args) {
        (Op::Einsum, [Value::Tuple(fs)]) => {
            let big = fs.iter().map(largest).fold(0.0, f64::max);
            (1.0 + big).powi(fs.len() as i32)
        }
        (Op::Attention, [q, k, v, ..]) => {
            let h = match q {
                Value::Tensor(t) => t.borrow().shape.get(3).copied().unwrap_or(1) as f64,
                _ => 1.0,
            };
            (1.0 + largest(q) * largest(k) * h * 2.0) * (1.0 + largest(v)) * (1.0 + args.get(3).map_or(0.0, largest))
        }
        _ => return values_equal(o, e, 0.0),
    };
    values_agree(o, e, Tolerance { reduction: n * scale })
}

const RULES: Rules = Rules { oracle_budget: true, same_rule: false, values: values_match };

#[test]
fn kernels_agree_with_the_oracle_on_random_calls() {
    agree::sweep(OPS, 0x1A5, 10_000, 5, case, &RULES);
}

/// Hand-picked corner cases, compared as the random ones are.
#[test]
fn corner_cases_agree() {
    let sub = |s: &str| {
        let mut a = Attrs::default();
        a.insert("subscripts", AttrValue::Str(s.into()));
        a
    };
    let tup = |xs: Vec<Value>| vec![Value::Tuple(Rc::new(xs))];
    let m = literal("float32", &[2, 2], TensorData::F32(vec![1.0, f32::NAN, 3.0, -0.0]));
    let big = literal("float32", &[1, 3], TensorData::F32(vec![1e8, 1.0, -1e8]));
    let ones = literal("float32", &[3, 1], TensorData::F32(vec![1.0; 3]));
    let empty = literal("float32", &[2, 0], TensorData::F32(vec![]));
    let cases: Vec<(Op, Vec<Value>, Attrs)> = vec![
        (Op::Einsum, tup(vec![m.clone(), m.clone()]), sub("ij,jk->ik")),
        (Op::Einsum, tup(vec![m.clone()]), sub("ii")),
        (Op::Einsum, tup(vec![big, ones]), sub("ij,jk")),
        (Op::Einsum, tup(vec![empty.clone(), literal("float32", &[0, 3], TensorData::F32(vec![]))]), sub("ij,jk")),
        (Op::Einsum, tup(vec![m.clone()]), sub("...->...")),
    ];
    for (op, args, attrs) in cases {
        if let Verdict::Mismatch(msg) = agree::compare(op, &args, &attrs, &RULES) {
            panic!("MISMATCH {msg}");
        }
    }
}

/// Known values (NumPy's, by hand): the test can fail.
#[test]
fn known_values() {
    use oracle::eval::literal::print_value;
    use oracle::eval::ops::eval_op_standalone;
    let run = |op: Op, args: Vec<Value>, attrs: &Attrs| {
        print_value(&eval_op_standalone(op, &args, attrs, spec_model::Span::SYNTHETIC).unwrap())
    };
    let mut a = Attrs::default();
    a.insert("subscripts", AttrValue::Str("ij,j".into()));
    let x = literal("float64", &[2, 2], TensorData::F64(vec![1.0, 2.0, 3.0, 4.0]));
    let y = literal("float64", &[2], TensorData::F64(vec![1.0, -1.0]));
    assert_eq!(run(Op::Einsum, vec![Value::Tuple(Rc::new(vec![x, y]))], &a), "R.const([-1.0, -1.0], \"float64\")");
    let mut h = Attrs::default();
    h.insert("depth", AttrValue::Int(3));
    let i = literal("int32", &[2], TensorData::I32(vec![2, -1]));
    let on = Value::Prim(PrimScalar::Int(5, DataType::INT32));
    let off = Value::Prim(PrimScalar::Int(0, DataType::INT32));
    assert_eq!(run(Op::OneHot, vec![i, on, off], &h), "R.const([[0, 0, 5], [0, 0, 0]], \"int32\")");
}
