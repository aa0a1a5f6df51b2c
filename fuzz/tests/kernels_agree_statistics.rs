//! The engine's statistics and normalization kernels against the oracle's: random
//! dtypes, shapes (rank 0, zero-size dimensions), values (NaN, ±inf, -0.0, integer
//! extremes), axes (valid, out of range, repeated, ill-kinded), parameter tensors of the
//! right and wrong shapes and dtypes, and wrong argument kinds and counts. Both sides
//! fold in the same order, so values must agree bit for bit (NaN equal to NaN, -0.0 to
//! 0.0); errors by kind; resource exhaustion is poisoned.
//!
//! `KERNELS_AGREE_CASES` sets the number of cases per operator (default 10,000) and
//! `KERNELS_AGREE_SEED` the seed.

use fuzz::convert::{from_oracle, to_oracle};
use half::f16;
use optimized::kernels::run_standalone;
use optimized::Memory;
use oracle::eval::literal::{print_value, values_equal};
use oracle::eval::ops::eval_op_standalone;
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, TensorData};
use spec_model::ops::Op;
use spec_model::Span;
use std::collections::BTreeMap;
use std::rc::Rc;

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

const DTYPE_NAMES: [&str; 12] =
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"];

/// Dtype attributes without tensor storage, or that do not parse.
const BAD_DTYPES: [&str; 7] = ["int4", "float8", "float32x2", "handle", "void", "", "bfloat16"];

/// splitmix64: small, seedable, good enough to draw test cases.
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

    /// True with probability `p` percent.
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

/// A shape: rank 0 to 4, dimensions mostly 1 to 4, sometimes 0.
fn shape(rng: &mut Rng) -> Vec<u64> {
    let rank = rng.pick(&[0, 1, 1, 2, 2, 2, 3, 3, 4]);
    (0..rank)
        .map(|_| {
            if rng.pct(5) {
                0
            } else if rng.pct(30) {
                1
            } else {
                rng.range(2, 4) as u64
            }
        })
        .collect()
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
            1.0,
            -1.0,
            0.5,
            -2.5,
            1e-40,
            -5e-324,
            1e300,
            -1e38,
            65504.0,
            70000.0,
            f32::MAX as f64,
            9.3e18,
            -9.3e18,
            1.8e19,
            255.5,
            -128.5,
            127.99,
            -0.4,
        ]),
        2 => f64::from_bits(rng.next()),
        3 => (rng.next() % 2_000_001) as f64 - 1_000_000.0,
        _ => (rng.range(-1000, 1000) as f64) / 100.0,
    }
}

/// `n` random elements of `dt`.
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

/// A tensor of dtype `dt` (random when `None`) and a random shape.
fn any_tensor(rng: &mut Rng, dt: Option<DataType>) -> Value {
    let dt = dt.unwrap_or_else(|| random_dtype(rng));
    let s = shape(rng);
    tensor(rng, dt, &s)
}

fn tensor(rng: &mut Rng, dt: DataType, shape: &[u64]) -> Value {
    let n = shape.iter().product::<u64>() as usize;
    Value::tensor(NDArray { dtype: dt, shape: shape.to_vec(), data: data(rng, dt, n) })
}

/// A value of each kind but tensor, for argument-kind errors.
fn not_a_tensor(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => Value::Null,
        1 => Value::Shape(Rc::new(vec![2, 1])),
        2 => Value::Prim(PrimScalar::Int(1, DataType::INT64)),
        3 => Value::Str("s".into()),
        4 => Value::Tuple(Rc::new(vec![])),
        _ => Value::DataType(DataType::FLOAT32),
    }
}

/// A dtype attribute: valid mostly, sometimes without storage, ill-kinded or absent.
fn dtype_attr(rng: &mut Rng, attrs: &mut Attrs, name: &str, absent_pct: u64) {
    match rng.below(100) {
        p if p < absent_pct => {}
        p if p < absent_pct + 3 => attrs.insert(name, AttrValue::Int(3)),
        p if p < absent_pct + 8 => attrs.insert(name, AttrValue::Str(rng.pick(&BAD_DTYPES).into())),
        p if p < absent_pct + 10 => attrs.insert(name, AttrValue::None),
        _ => attrs.insert(name, AttrValue::Str(rng.pick(&DTYPE_NAMES).into())),
    }
}

/// An `axis` attribute for a rank-`rank` operand (reductions: `list`).
fn axis_attr(rng: &mut Rng, attrs: &mut Attrs, rank: usize, list: bool) {
    let r = rank as i64;
    let one = |rng: &mut Rng| if rng.pct(90) && r > 0 { rng.range(-r, r - 1) } else { rng.range(-r - 2, r + 1) };
    match rng.below(12) {
        0 | 1 => {}
        2 => attrs.insert("axis", AttrValue::None),
        3 => attrs.insert("axis", AttrValue::Str("0".into())),
        4 if list => attrs.insert("axis", AttrValue::List(vec![AttrValue::Str("x".into())])),
        5 if list => attrs.insert("axis", AttrValue::List(vec![])),
        6..=8 if list => {
            let n = rng.range(1, r.max(1));
            attrs.insert("axis", AttrValue::List((0..n).map(|_| AttrValue::Int(one(rng))).collect()))
        }
        _ => attrs.insert("axis", AttrValue::Int(one(rng))),
    }
}

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
    if rng.pct(5) {
        match rng.below(3) {
            0 if !args.is_empty() => {
                let i = rng.below(args.len() as u64) as usize;
                args[i] = not_a_tensor(rng);
            }
            1 => {
                args.pop();
            }
            _ => args.push(args.first().cloned().unwrap_or(Value::Null)),
        }
    }
    (args, attrs)
}

/// How one call came out on both sides.
enum Verdict {
    Value,
    Error(&'static str),
    Poisoned,
    Mismatch(String),
}

fn show(r: &Result<Value, String>) -> String {
    match r {
        Ok(v) => print_value(v),
        Err(e) => format!("error {e}"),
    }
}

/// Runs `op` on both sides and compares the outcomes.
fn compare(op: Op, args: &[Value], attrs: &Attrs) -> Verdict {
    // A small budget, so a huge result is refused at once (resource errors are poisoned).
    let memory = Memory::new(1 << 26);
    let oracle = spec_model::limits::Budgets { memory: 1 << 26, ..spec_model::limits::Budgets::DEFAULT }
        .scope(|| eval_op_standalone(op, args, attrs, Span::SYNTHETIC));
    if matches!(&oracle, Err(e) if e.kind.is_resource()) {
        return Verdict::Poisoned;
    }
    let Some(eargs) = args.iter().map(|a| from_oracle(a, &memory)).collect::<Option<Vec<_>>>() else {
        return Verdict::Poisoned;
    };
    let engine = run_standalone(op, attrs, &eargs, &memory).expect("a tensor operator lowers to a kernel");
    if let Err(e) = &engine {
        if e.kind.is_resource() {
            return Verdict::Poisoned;
        }
    }
    let agree = match (&oracle, &engine) {
        (Err(o), Err(e)) => o.kind.name() == e.kind.name() && e.kind.name() != "Crash",
        (Ok(o), Ok(e)) => to_oracle(e).is_some_and(|e| values_equal(o, &e, 0.0)),
        _ => false,
    };
    match (agree, &oracle) {
        (true, Ok(_)) => Verdict::Value,
        (true, Err(e)) => Verdict::Error(e.kind.name()),
        (false, _) => {
            let o = oracle.map_err(|e| format!("{} ({}): {}", e.kind.name(), e.rule, e.message));
            let e = engine
                .map(|v| to_oracle(&v).unwrap_or(Value::Null))
                .map_err(|e| format!("{} ({}): {}", e.kind.name(), e.rule, e.message));
            let shown: Vec<String> = args.iter().map(print_value).collect();
            Verdict::Mismatch(format!(
                "{op}\n  attrs: {:?}\n  args:\n    {}\n  oracle: {}\n  engine: {}",
                attrs.0,
                shown.join("\n    "),
                show(&o),
                show(&e)
            ))
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[derive(Default)]
struct Tally {
    values: u64,
    errors: BTreeMap<&'static str, u64>,
    poisoned: u64,
    mismatches: Vec<String>,
}

#[test]
fn kernels_agree_with_the_oracle_on_random_calls() {
    let cases = env_u64("KERNELS_AGREE_CASES", 10_000);
    let seed = env_u64("KERNELS_AGREE_SEED", 0x5EED);
    let mut total_mismatches = 0;
    let mut report = String::new();
    for (i, &op) in OPS.iter().enumerate() {
        let mut tally = Tally::default();
        let started = std::time::Instant::now();
        for c in 0..cases {
            let case_seed = seed ^ ((i as u64) << 40) ^ c;
            let mut rng = Rng(case_seed);
            let (args, attrs) = case(&mut rng, op);
            match compare(op, &args, &attrs) {
                Verdict::Value => tally.values += 1,
                Verdict::Error(k) => *tally.errors.entry(k).or_default() += 1,
                Verdict::Poisoned => tally.poisoned += 1,
                Verdict::Mismatch(m) => tally.mismatches.push(format!("case seed {case_seed:#x}: {m}")),
            }
        }
        report.push_str(&format!(
            "{op:>20}: {} values, errors {:?}, {} poisoned, {} mismatches ({:.1?})\n",
            tally.values,
            tally.errors,
            tally.poisoned,
            tally.mismatches.len(),
            started.elapsed()
        ));
        for m in tally.mismatches.iter().take(3) {
            eprintln!("MISMATCH {m}\n");
        }
        total_mismatches += tally.mismatches.len();
        // Every operator must be exercised on values and on errors, not only one of them.
        assert!(tally.values * 5 >= cases, "{op}: only {} of {cases} cases compared values", tally.values);
        assert!(!tally.errors.is_empty() || cases < 100, "{op}: no error case");
    }
    eprintln!("{report}");
    assert_eq!(total_mismatches, 0, "the engine and the oracle disagree (see MISMATCH above)");
}

/// Hand-picked corner cases, each compared as the random ones are.
#[test]
fn corner_cases_agree() {
    let t = |dt: &str, shape: &[u64], data: TensorData| {
        Value::tensor(NDArray { dtype: dtype(dt), shape: shape.to_vec(), data })
    };
    let mut a = Attrs::default();
    a.insert("axis", AttrValue::Int(1));
    let nan = t("float32", &[2, 3], TensorData::F32(vec![1.0, f32::NAN, 3.0, -0.0, 0.0, -1.0]));
    let cases: Vec<(Op, Vec<Value>, Attrs)> = vec![
        (Op::Argmax, vec![nan.clone()], a.clone()),
        (Op::Argmin, vec![nan.clone()], Attrs::default()),
        (Op::Variance, vec![t("int32", &[0, 2], TensorData::I32(vec![]))], a.clone()),
        (Op::Prod, vec![t("int8", &[2, 0], TensorData::I8(vec![]))], a.clone()),
        (Op::Cumsum, vec![t("int8", &[3], TensorData::I8(vec![100, 100, -56]))], Attrs::default()),
        (Op::LogSoftmax, vec![nan.clone()], Attrs::default()),
    ];
    for (op, args, attrs) in cases {
        if let Verdict::Mismatch(m) = compare(op, &args, &attrs) {
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
