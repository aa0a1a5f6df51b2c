//! The harness the `kernels_agree_*` tests share: a seedable random source, random
//! dtypes, shapes, tensors and attributes, and the run of one operator call in the
//! oracle (`eval_op_standalone`) and in the engine (`run_standalone`) with the
//! comparison of the two outcomes.
//!
//! Two styles of test use it:
//! - the sweeps over a list of operators (`kernels_agree_elementwise`, `_statistics`,
//!   `_unary_math`): values from [`tensor`] and [`data`], one call compared by
//!   [`compare`] under the test's [`Rules`] into a [`Verdict`], all operators run by
//!   [`random_calls`];
//! - the one-test-per-operator runs (`kernels_agree_manipulate`, `_manipulate_dims`):
//!   values from [`array_tensor`], a call compared bit for bit by [`compare_exact`]
//!   (also: no aliasing of an argument, no leaked bytes), run by [`each_case`].
//!
//! Each test binary uses a subset of it.

#![allow(dead_code)]

use fuzz::convert::{from_oracle, to_oracle};
use half::f16;
use optimized::kernels::run_standalone;
use optimized::Memory;
use oracle::eval::literal::{print_value, values_equal};
use oracle::eval::ops::eval_op_standalone;
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, NDArray, Scalar, TensorData};
use spec_model::ops::Op;
use spec_model::Span;
use std::collections::BTreeMap;
use std::rc::Rc;

/// SplitMix64: small, seedable, and good enough to spread cases.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Uniform in `lo..=hi` (any `i64` bounds; `lo` when the range is empty).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1).max(1) as u128;
        (lo as i128 + (self.next() as u128 % span) as i128) as i64
    }

    /// True with probability `percent`%.
    pub fn pct(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize].clone()
    }
}

/// The variable `name` as a number, or `default` (unset or not a number).
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// `KERNELS_AGREE_SEED` and `KERNELS_AGREE_CASES` (cases per operator), or the test's defaults.
pub fn seed_and_cases(default_seed: u64, default_cases: u64) -> (u64, u64) {
    (env_u64("KERNELS_AGREE_SEED", default_seed), env_u64("KERNELS_AGREE_CASES", default_cases))
}

/// One call: its arguments and attributes.
pub type Case = (Vec<Value>, Attrs);

// ---------------------------------------------------------------------------------
// Sweeps over a list of operators: values, a verdict per call.

pub const DTYPE_NAMES: [&str; 12] =
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"];

/// Dtype attributes without tensor storage, or that do not parse.
pub const BAD_DTYPES: [&str; 7] = ["int4", "float8", "float32x2", "handle", "void", "", "bfloat16"];

pub fn dtype(name: &str) -> DataType {
    DataType::parse(name).expect("a dtype")
}

pub fn random_dtype(rng: &mut Rng) -> DataType {
    dtype(rng.pick(&DTYPE_NAMES))
}

pub fn float_dtype(rng: &mut Rng) -> DataType {
    dtype(rng.pick(&["float16", "float32", "float64"]))
}

/// A shape: rank 0 to 4, dimensions mostly 1 to 4, sometimes 0.
pub fn shape(rng: &mut Rng) -> Vec<u64> {
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

/// An integer of `bits` bits: small mostly, the type's extremes or any sometimes.
pub fn int_value(rng: &mut Rng, bits: u32, signed: bool) -> i128 {
    let (min, max) =
        if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    let v = match rng.below(10) {
        0 => rng.pick(&[min, max, 0, 1, -1, min + 1, max - 1, 2, 7]),
        1 | 2 => (rng.next() as i128).rem_euclid(max - min + 1) + min,
        _ => rng.range(-9, 9) as i128,
    };
    v.clamp(min, max)
}

/// A float: small mostly, sometimes NaN, ±inf, -0.0, subnormal, huge or any bits.
pub fn float_value(rng: &mut Rng) -> f64 {
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

/// `n` random elements of `dt`, the float ones drawn by `float`.
pub fn data(rng: &mut Rng, dt: DataType, n: usize, float: fn(&mut Rng) -> f64) -> TensorData {
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
        9 => TensorData::F16((0..n).map(|_| f16::from_f64(float(rng))).collect()),
        10 => TensorData::F32((0..n).map(|_| float(rng) as f32).collect()),
        _ => TensorData::F64((0..n).map(|_| float(rng)).collect()),
    }
}

/// A tensor of `dt` and `shape`, its elements from [`data`] (floats: [`float_value`]).
pub fn tensor(rng: &mut Rng, dt: DataType, shape: &[u64]) -> Value {
    let n = shape.iter().product::<u64>() as usize;
    Value::tensor(NDArray { dtype: dt, shape: shape.to_vec(), data: data(rng, dt, n, float_value) })
}

/// A tensor of dtype `dt` (random when `None`) and a random shape.
pub fn any_tensor(rng: &mut Rng, dt: Option<DataType>) -> Value {
    let dt = dt.unwrap_or_else(|| random_dtype(rng));
    let s = shape(rng);
    tensor(rng, dt, &s)
}

/// A value of each kind but tensor, for argument-kind errors; a PrimValue among them
/// only if `prim`.
pub fn not_a_tensor(rng: &mut Rng, prim: bool) -> Value {
    let k = if prim { rng.below(6) } else { rng.below(5) };
    match if !prim && k >= 2 { k + 1 } else { k } {
        0 => Value::Null,
        1 => Value::Shape(Rc::new(vec![2, 1])),
        2 => Value::Prim(PrimScalar::Int(1, DataType::INT64)),
        3 => Value::Str("s".into()),
        4 => Value::Tuple(Rc::new(vec![])),
        _ => Value::DataType(DataType::FLOAT32),
    }
}

/// A dtype attribute: valid mostly, sometimes without storage, ill-kinded or absent.
pub fn dtype_attr(rng: &mut Rng, attrs: &mut Attrs, name: &str, absent_pct: u64) {
    match rng.below(100) {
        p if p < absent_pct => {}
        p if p < absent_pct + 3 => attrs.insert(name, AttrValue::Int(3)),
        p if p < absent_pct + 8 => attrs.insert(name, AttrValue::Str(rng.pick(&BAD_DTYPES).into())),
        p if p < absent_pct + 10 => attrs.insert(name, AttrValue::None),
        _ => attrs.insert(name, AttrValue::Str(rng.pick(&DTYPE_NAMES).into())),
    }
}

/// An `axis` attribute for a rank-`rank` operand (reductions: `list`).
pub fn axis_attr(rng: &mut Rng, attrs: &mut Attrs, rank: usize, list: bool) {
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

/// Sometimes (`percent`%) breaks a call: a non-tensor (`not_a_tensor(rng, prim)`) in
/// place of an argument (any one, or the first if `first_only`), one argument too few,
/// or the first one again.
pub fn break_args(rng: &mut Rng, args: &mut Vec<Value>, percent: u64, prim: bool, first_only: bool) {
    if rng.pct(percent) {
        match rng.below(3) {
            0 if !args.is_empty() => {
                let i = if first_only { 0 } else { rng.below(args.len() as u64) as usize };
                args[i] = not_a_tensor(rng, prim);
            }
            1 => {
                args.pop();
            }
            _ => args.push(args.first().cloned().unwrap_or(Value::Null)),
        }
    }
}

/// How one call came out on both sides.
pub enum Verdict {
    Value,
    Error(&'static str),
    Poisoned,
    Mismatch(String),
}

/// What agreement means for a test's calls.
pub struct Rules {
    /// The oracle runs under the engine's memory budget (2^26 bytes), so a huge result
    /// is refused at once on both sides.
    pub oracle_budget: bool,
    /// Two errors agree only with the same rule, not only the same kind.
    pub same_rule: bool,
    /// Whether the oracle's value and the engine's (the call's `op` and arguments given) agree.
    pub values: fn(Op, &[Value], &Value, &Value) -> bool,
}

/// The oracle under the engine's memory budget; errors agree by kind, values bit for bit.
pub const BIT_FOR_BIT: Rules = Rules { oracle_budget: true, same_rule: false, values: values_equal_exactly };

/// Values agree bit for bit (NaN equal to NaN, -0.0 to 0.0, as `values_equal` compares).
pub fn values_equal_exactly(_: Op, _: &[Value], o: &Value, e: &Value) -> bool {
    values_equal(o, e, 0.0)
}

fn show_outcome(r: &Result<Value, String>) -> String {
    match r {
        Ok(v) => print_value(v),
        Err(e) => format!("error {e}"),
    }
}

/// Runs `op` on both sides and compares the outcomes under `rules`; a resource error on
/// either side is poisoned, a `Crash` never agrees.
pub fn compare(op: Op, args: &[Value], attrs: &Attrs, rules: &Rules) -> Verdict {
    let memory = Memory::new(1 << 26);
    let oracle = if rules.oracle_budget {
        spec_model::limits::Budgets { memory: 1 << 26, ..spec_model::limits::Budgets::DEFAULT }
            .scope(|| eval_op_standalone(op, args, attrs, Span::SYNTHETIC))
    } else {
        eval_op_standalone(op, args, attrs, Span::SYNTHETIC)
    };
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
        (Err(o), Err(e)) => {
            o.kind.name() == e.kind.name() && e.kind.name() != "Crash" && (!rules.same_rule || o.rule == e.rule)
        }
        (Ok(o), Ok(e)) => to_oracle(e).is_some_and(|e| (rules.values)(op, args, o, &e)),
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
                show_outcome(&o),
                show_outcome(&e)
            ))
        }
    }
}

#[derive(Default)]
struct Tally {
    values: u64,
    errors: BTreeMap<&'static str, u64>,
    poisoned: u64,
    mismatches: Vec<String>,
}

/// `cases` random calls of each of `ops` from `case`, compared by `check`; case `c` of
/// the `i`-th operator comes from the seed `seed ^ (i << 40) ^ c`. Each operator must
/// compare values in at least one case of `value_share` and meet an error (from 100
/// cases on). Returns the mismatches, each with `tag` and its case seed.
pub fn random_calls(
    ops: &[Op],
    seed: u64,
    cases: u64,
    value_share: u64,
    tag: &str,
    case: fn(&mut Rng, Op) -> Case,
    check: &dyn Fn(Op, &[Value], &Attrs) -> Verdict,
) -> Vec<String> {
    let mut mismatches = Vec::new();
    for (i, &op) in ops.iter().enumerate() {
        let mut tally = Tally::default();
        let started = std::time::Instant::now();
        for c in 0..cases {
            let case_seed = seed ^ ((i as u64) << 40) ^ c;
            let (args, attrs) = case(&mut Rng(case_seed), op);
            match check(op, &args, &attrs) {
                Verdict::Value => tally.values += 1,
                Verdict::Error(k) => *tally.errors.entry(k).or_default() += 1,
                Verdict::Poisoned => tally.poisoned += 1,
                Verdict::Mismatch(m) => tally.mismatches.push(format!("{tag}case seed {case_seed:#x}: {m}")),
            }
        }
        eprintln!(
            "{tag}{op:>20}: {} values, errors {:?}, {} poisoned, {} mismatches ({:.1?})",
            tally.values,
            tally.errors,
            tally.poisoned,
            tally.mismatches.len(),
            started.elapsed()
        );
        // Every operator must be exercised on values and on errors, not only one of them.
        assert!(tally.values * value_share >= cases, "{op}: only {} of {cases} cases compared values", tally.values);
        assert!(!tally.errors.is_empty() || cases < 100, "{op}: no error case");
        mismatches.append(&mut tally.mismatches);
    }
    mismatches
}

/// `random_calls` of `ops` with `KERNELS_AGREE_SEED` and `KERNELS_AGREE_CASES` (or
/// the defaults), compared by [`compare`] under `rules`; fails on any mismatch.
pub fn sweep(
    ops: &[Op],
    default_seed: u64,
    default_cases: u64,
    value_share: u64,
    case: fn(&mut Rng, Op) -> Case,
    rules: &Rules,
) {
    let (seed, cases) = seed_and_cases(default_seed, default_cases);
    let check = |op: Op, args: &[Value], attrs: &Attrs| compare(op, args, attrs, rules);
    assert_no_mismatches(&random_calls(ops, seed, cases, value_share, "", case, &check));
}

/// A tensor literal of dtype `dt` (by name), `shape` and `data`, for hand-picked cases.
pub fn literal(dt: &str, shape: &[u64], data: TensorData) -> Value {
    Value::tensor(NDArray { dtype: dtype(dt), shape: shape.to_vec(), data })
}

/// Fails with the first few of `mismatches`, if any.
pub fn assert_no_mismatches(mismatches: &[String]) {
    for m in mismatches.iter().take(5) {
        eprintln!("MISMATCH {m}\n");
    }
    let n = mismatches.len();
    assert!(n == 0, "{n} mismatches: the engine and the oracle disagree (see MISMATCH above)");
}

// ---------------------------------------------------------------------------------
// One test per operator: bit-for-bit values, no aliasing, no leaks.

pub const DTYPES: [DataType; 12] = [
    DataType::bool(),
    DataType::int(8),
    DataType::int(16),
    DataType::int(32),
    DataType::int(64),
    DataType::uint(8),
    DataType::uint(16),
    DataType::uint(32),
    DataType::uint(64),
    DataType::float(16),
    DataType::float(32),
    DataType::float(64),
];

/// Extreme attribute integers.
pub const EXTREMES: [i64; 6] = [i64::MIN, i64::MIN + 1, -(1 << 32), 1 << 32, i64::MAX - 1, i64::MAX];

/// Huge dimensions for empty tensors.
pub const HUGE: [u64; 4] = [1 << 20, 1 << 40, i64::MAX as u64, u64::MAX];

/// A dimension: 2 to 4 mostly, sometimes 0, 1 or up to 7.
pub fn dim(rng: &mut Rng) -> u64 {
    match rng.below(100) {
        0..=11 => 0,
        12..=29 => 1,
        30..=94 => rng.range(2, 4) as u64,
        _ => rng.range(5, 7) as u64,
    }
}

/// Rank 0 one time in ten (an axis is out of range there), else 1 to `max_rank`.
pub fn ranked_shape(rng: &mut Rng, max_rank: u64) -> Vec<u64> {
    let rank = if rng.pct(10) { 0 } else { rng.range(1, max_rank as i64) as u64 };
    (0..rank).map(|_| dim(rng)).collect()
}

/// Sometimes (5%) an empty shape with huge dimensions beside its zero: any number of
/// them, or (`one`) a single one of 2^20, for the oracle's `concat` and `take`, which
/// loop over the dimensions before the axis even for an empty result.
pub fn shape_or_huge(rng: &mut Rng, max_rank: u64, one: bool) -> Vec<u64> {
    let mut s = ranked_shape(rng, max_rank);
    if s.len() >= 2 && rng.pct(5) {
        let zero = rng.below(s.len() as u64) as usize;
        s[zero] = 0;
        if one {
            let next = (zero + 1) % s.len();
            s[next] = 1 << 20;
        } else {
            for (i, d) in s.iter_mut().enumerate() {
                if i != zero && rng.pct(60) {
                    *d = rng.pick(&HUGE);
                }
            }
        }
    }
    s
}

/// The element count of `shape` (0 for any 0 among huge dimensions).
pub fn count(shape: &[u64]) -> u64 {
    if shape.contains(&0) {
        0
    } else {
        shape.iter().product()
    }
}

/// The least and greatest value of the integer `dtype`.
pub fn int_of_bounds(dtype: DataType) -> (i128, i128) {
    let bits = dtype.bits.min(64);
    if dtype.code == spec_model::grammar::TypeCode::Int {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// An integer value of `dtype`: small ones mostly, its extremes sometimes.
pub fn int_of(rng: &mut Rng, dtype: DataType) -> i128 {
    let (lo, hi) = int_of_bounds(dtype);
    match rng.below(10) {
        0 => lo,
        1 => hi,
        2 => (rng.next() as i128).rem_euclid(hi - lo + 1) + lo,
        _ => (rng.range(-5, 20) as i128).clamp(lo, hi),
    }
}

pub fn scalar_of(rng: &mut Rng, dtype: DataType) -> Scalar {
    if dtype.is_bool() {
        Scalar::Bool(rng.pct(50))
    } else if dtype.is_float() {
        Scalar::Float(match rng.below(12) {
            0 => f64::NAN,
            1 => -0.0,
            2 => f64::INFINITY,
            3 => f64::NEG_INFINITY,
            4 => 1e-310,
            _ => rng.range(-1000, 1000) as f64 / 8.0,
        })
    } else {
        Scalar::Int(int_of(rng, dtype))
    }
}

pub fn array(rng: &mut Rng, dtype: DataType, shape: Vec<u64>) -> NDArray {
    let n = count(&shape);
    if n == 0 {
        let data = TensorData::empty(dtype).expect("a storage dtype");
        return NDArray { dtype, shape, data };
    }
    let values: Vec<Scalar> = (0..n).map(|_| scalar_of(rng, dtype)).collect();
    NDArray::from_scalars(dtype, shape, &values).expect("values of the dtype")
}

/// A tensor of `dtype` and `shape` (huge dimensions allowed beside a 0), its elements
/// from [`scalar_of`].
pub fn array_tensor(rng: &mut Rng, dtype: DataType, shape: Vec<u64>) -> Value {
    Value::tensor(array(rng, dtype, shape))
}

pub fn shape_value(dims: &[i64]) -> Value {
    Value::Shape(Rc::new(dims.to_vec()))
}

/// A value of a kind no operator here accepts where it is passed (usually).
pub fn junk(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => shape_value(&[2, 1]),
        1 => Value::Prim(PrimScalar::Int(3, DataType::INT64)),
        2 => Value::Prim(PrimScalar::Float(0.5, DataType::FLOAT32)),
        3 => Value::Str("x".into()),
        4 => Value::Null,
        5 => Value::Tuple(Rc::new(vec![])),
        _ => {
            let d = rng.pick(&DTYPES);
            let s = ranked_shape(rng, 2);
            array_tensor(rng, d, s)
        }
    }
}

/// An attribute value of the wrong kind for an integer (list) attribute.
pub fn ill_kinded(rng: &mut Rng) -> AttrValue {
    match rng.below(5) {
        0 => AttrValue::Str("1".into()),
        1 => AttrValue::Float(FloatLit(1.0)),
        2 => AttrValue::Bool(true),
        3 => AttrValue::List(vec![AttrValue::Int(0), AttrValue::Str("a".into())]),
        _ => AttrValue::Dict(BTreeMap::new()),
    }
}

pub fn int_list(xs: &[i64]) -> AttrValue {
    AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
}

/// A single integer attribute `xs[0]` (`percent`% of the time when there is one), else
/// the list `xs`.
pub fn int_or_list(rng: &mut Rng, xs: &[i64], percent: u64) -> AttrValue {
    if xs.len() == 1 && rng.pct(percent) {
        AttrValue::Int(xs[0])
    } else {
        int_list(xs)
    }
}

/// An axis for rank `r`: in range mostly (either sign), else just out, or extreme.
pub fn axis(rng: &mut Rng, r: usize) -> i64 {
    let r = r as i64;
    match rng.below(10) {
        0 => rng.pick(&[r, -r - 1, r + 3]),
        1 => rng.pick(&EXTREMES),
        _ if r == 0 => rng.pick(&[0, -1]),
        _ => rng.range(-r, r - 1),
    }
}

/// Puts `v` at `name` in `attrs`, or (2%) an ill-kinded value, or (1%) `None`.
pub fn set(rng: &mut Rng, attrs: &mut Attrs, name: &str, v: AttrValue) {
    let v = match rng.below(100) {
        0..=1 => ill_kinded(rng),
        2 => AttrValue::None,
        _ => v,
    };
    attrs.insert(name, v);
}

/// [`set`]s `name` to [`int_or_list`]`(rng, xs, percent)`.
pub fn set_ints(rng: &mut Rng, attrs: &mut Attrs, name: &str, xs: &[i64], percent: u64) {
    let v = int_or_list(rng, xs, percent);
    set(rng, attrs, name, v);
}

/// Sometimes breaks a case's arguments: a junk value in place of one, one too few or too many.
pub fn mangle(rng: &mut Rng, args: &mut Vec<Value>) {
    match rng.below(100) {
        0..=3 if !args.is_empty() => {
            let k = rng.below(args.len() as u64) as usize;
            args[k] = junk(rng);
        }
        4 => {
            args.pop();
        }
        5 => args.push(junk(rng)),
        6 if args.len() == 2 => args.swap(0, 1),
        _ => {}
    }
}

/// How [`same_bits`] compares two NaNs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Nans {
    /// Bit for bit, as every other float.
    SameBits,
    /// Any NaN equals any NaN: where a NaN's sign and payload are not specified.
    AnyNan,
}

/// Tensors equal bit for bit, NaNs as `nans` says (`values_equal` has `-0.0 == 0.0`; a
/// move keeps bits).
pub fn same_bits(a: &Value, b: &Value, nans: Nans) -> bool {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            (0..x.data.len()).all(|i| match (x.data.get(i), y.data.get(i)) {
                (Scalar::Float(p), Scalar::Float(q)) => {
                    p.to_bits() == q.to_bits() || (nans == Nans::AnyNan && p.is_nan() && q.is_nan())
                }
                (p, q) => p == q,
            })
        }
        (Value::Tuple(x), Value::Tuple(y)) => x.iter().zip(y.iter()).all(|(p, q)| same_bits(p, q, nans)),
        _ => true,
    }
}

/// Whether an engine result shares a tensor with an argument (results must be new).
pub fn aliases(result: &optimized::Value, args: &[optimized::Value]) -> bool {
    use optimized::Value as E;
    fn tensors(v: &E, out: &mut Vec<*const optimized::Tensor>) {
        match v {
            E::Tensor(t) => out.push(Rc::as_ptr(t)),
            E::Tuple(fs) => fs.iter().for_each(|f| tensors(f, out)),
            _ => {}
        }
    }
    let (mut r, mut a) = (Vec::new(), Vec::new());
    tensors(result, &mut r);
    args.iter().for_each(|v| tensors(v, &mut a));
    r.iter().any(|p| a.contains(p))
}

/// A value for a report. Tensors are written out here: the oracle's printer fails on
/// an empty tensor with a huge dimension (capacity overflow).
pub fn show(v: &Value) -> String {
    match v {
        Value::Tensor(t) => {
            let a = t.borrow();
            format!("tensor({}, shape {:?}, {:?})", a.dtype, a.shape, a.data)
        }
        Value::Tuple(fs) => format!("({})", fs.iter().map(show).collect::<Vec<_>>().join(", ")),
        other => print_value(other),
    }
}

pub fn show_case(op: Op, args: &[Value], attrs: &Attrs) -> String {
    let args: Vec<String> = args.iter().map(show).collect();
    format!("R.{op}({}) attrs {:?}", args.join(", "), attrs.0)
}

#[derive(Default)]
pub struct OpTally {
    pub values: u64,
    pub errors: u64,
    pub skipped: u64,
    pub mismatches: Vec<String>,
    /// How often each kind of error message came (digits elided), for judging the sample.
    pub messages: BTreeMap<String, u64>,
}

fn describe(r: Result<String, String>) -> String {
    match r {
        Ok(v) => format!("value {v}"),
        Err(e) => format!("error {e}"),
    }
}

/// Runs one case on both sides and records the outcome: the same error kind (a `Crash`
/// never agrees), or values equal bit for bit (NaNs as `nans` says) in a new tensor; a
/// resource error on either side is skipped. The engine must not leak tensor bytes.
pub fn compare_exact(op: Op, args: &[Value], attrs: &Attrs, nans: Nans, tally: &mut OpTally, label: &str) {
    // A small budget, so a huge result is refused at once (resource errors are skipped).
    let memory = Memory::new(1 << 26);
    let ours: Vec<optimized::Value> =
        args.iter().map(|a| from_oracle(a, &memory).expect("every argument converts")).collect();
    let reference = spec_model::limits::Budgets { memory: 1 << 26, ..spec_model::limits::Budgets::DEFAULT }
        .scope(|| eval_op_standalone(op, args, attrs, Span::SYNTHETIC));
    let engine = run_standalone(op, attrs, &ours, &memory).expect("a kernel, not a Notable");
    let problem = match (&reference, &engine) {
        (_, Err(e)) if e.kind.is_resource() => {
            tally.skipped += 1;
            None
        }
        (Err(e), _) if e.kind.is_resource() => {
            tally.skipped += 1;
            None
        }
        (Err(a), Err(b)) if a.kind.name() == b.kind.name() && b.kind != optimized::ErrorKind::Crash => {
            tally.errors += 1;
            let gist: String = a.message.chars().filter(|c| !c.is_ascii_digit()).take(60).collect();
            *tally.messages.entry(format!("{}: {gist}", a.kind.name())).or_default() += 1;
            None
        }
        (Ok(a), Ok(b)) => match to_oracle(b) {
            Some(b2) if values_equal(a, &b2, 0.0) && same_bits(a, &b2, nans) => {
                if aliases(b, &ours) {
                    Some("the engine's result aliases an argument".to_string())
                } else {
                    tally.values += 1;
                    None
                }
            }
            Some(b2) => Some(format!("values differ:\n  oracle {}\n  engine {}", show(a), show(&b2))),
            None => Some("the engine's result does not convert".to_string()),
        },
        _ => Some(format!(
            "outcomes differ:\n  oracle {}\n  engine {}",
            describe(reference.as_ref().map(show).map_err(|e| format!("{}: {}", e.kind.name(), e.message))),
            describe(engine.as_ref().map(|v| format!("{v:?}")).map_err(|e| format!(
                "{}: {}",
                e.kind.name(),
                e.message
            )))
        )),
    };
    if let Some(p) = problem {
        tally.mismatches.push(format!("{label}: {}\n  {p}", show_case(op, args, attrs)));
    }
    drop(ours);
    drop(engine);
    assert_eq!(memory.live(), 0, "{label}: the engine leaked tensor bytes");
}

/// `cases` random calls of `op` from `gen` (then [`mangle`]d), each from its own seed
/// (printed on a mismatch), compared by [`compare_exact`]. The sample must compare
/// values in a fifth of the cases and meet errors in a twentieth.
pub fn each_case(op: Op, gen: fn(&mut Rng) -> Case, default_seed: u64, default_cases: u64, nans: Nans) {
    let (seed, cases) = seed_and_cases(default_seed, default_cases);
    let mut tally = OpTally::default();
    for i in 0..cases {
        let case_seed = seed ^ (op as u64).wrapping_mul(0x1000_0001) ^ i.wrapping_mul(0x9E37_79B9);
        let mut rng = Rng(case_seed);
        let (mut args, attrs) = gen(&mut rng);
        mangle(&mut rng, &mut args);
        compare_exact(op, &args, &attrs, nans, &mut tally, &format!("{op} case {i} (KERNELS_AGREE_SEED={seed})"));
    }
    eprintln!(
        "{op}: {cases} cases: {} equal values, {} same errors, {} skipped (a resource limit), {} mismatches",
        tally.values,
        tally.errors,
        tally.skipped,
        tally.mismatches.len()
    );
    if std::env::var_os("KERNELS_AGREE_VERBOSE").is_some() {
        for (m, n) in &tally.messages {
            eprintln!("  {n:5}  {m}");
        }
    }
    if !tally.mismatches.is_empty() {
        let shown: Vec<&String> = tally.mismatches.iter().take(5).collect();
        panic!(
            "{} of {cases} cases of {op} disagree; the first:\n{}",
            tally.mismatches.len(),
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n\n")
        );
    }
    // The generator must reach both outcomes, or the test says little.
    assert!(tally.values >= cases / 5 && tally.errors >= cases / 20, "{op}: too one-sided a sample");
}

/// One `#[test]` per operator: `name: op, gen;` runs [`each_case`]`(op, gen, seed,
/// cases, nans)`.
#[allow(unused_macros)]
macro_rules! each_op {
    (seed: $seed:expr, cases: $cases:expr, nans: $nans:expr; $($name:ident: $op:expr, $gen:expr;)*) => {
        $(
            #[test]
            fn $name() {
                $crate::agree::each_case($op, $gen, $seed, $cases, $nans);
            }
        )*
    };
}
#[allow(unused_imports)]
pub(crate) use each_op;
