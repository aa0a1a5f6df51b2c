//! The engine's dimension manipulation and creation-like kernels
//! (`optimized/src/kernels/manipulate_dims.rs`) agree with the oracle's on thousands of
//! random calls per operator: random dtypes and shapes (rank 0, zero-size and huge
//! dimensions), valid and invalid attributes (out of range, repeated, negative, i64
//! extremes, ill-kinded, missing), fill values and diagonals of every kind, wrong
//! argument kinds and counts. Agreement is the same error kind (a `Crash` never
//! agrees), or equal values, bit for bit; a resource error on either side is skipped.
//!
//! A mismatch prints the case; `KERNELS_AGREE_SEED` (default below) and
//! `KERNELS_AGREE_CASES` (per operator) choose the cases, so a run is reproducible.

use fuzz::convert::{from_oracle, to_oracle};
use optimized::Memory;
use oracle::eval::literal::{print_value, values_equal};
use oracle::eval::ops::eval_op_standalone;
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, NDArray, Scalar, TensorData};
use spec_model::ops::Op;
use spec_model::Span;
use std::collections::BTreeMap;
use std::rc::Rc;

const DEFAULT_SEED: u64 = 0x6d61_6e69_7075_6c61;
const DEFAULT_CASES: u64 = 10_000;

/// SplitMix64: small, seedable, and good enough to spread cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next() as u128 % span) as i128) as i64
    }

    /// True with probability `percent`%.
    fn pct(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize].clone()
    }
}

const DTYPES: [DataType; 12] = [
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
const EXTREMES: [i64; 6] = [i64::MIN, i64::MIN + 1, -(1 << 32), 1 << 32, i64::MAX - 1, i64::MAX];

/// Huge dimensions for empty tensors.
const HUGE: [u64; 4] = [1 << 20, 1 << 40, i64::MAX as u64, u64::MAX];

fn dim(rng: &mut Rng) -> u64 {
    match rng.below(100) {
        0..=11 => 0,
        12..=29 => 1,
        30..=94 => rng.range(2, 4) as u64,
        _ => rng.range(5, 7) as u64,
    }
}

/// Rank 0 one time in ten (an axis is out of range there), else 1 to `max_rank`.
fn shape(rng: &mut Rng, max_rank: u64) -> Vec<u64> {
    let rank = if rng.pct(10) { 0 } else { rng.range(1, max_rank as i64) as u64 };
    (0..rank).map(|_| dim(rng)).collect()
}

/// Sometimes (5%) an empty shape with huge dimensions beside its zero: any number of
/// them, or (`one`) a single one of 2^20, for the oracle's `concat` and `take`, which
/// loop over the dimensions before the axis even for an empty result.
fn shape_or_huge(rng: &mut Rng, max_rank: u64, one: bool) -> Vec<u64> {
    let mut s = shape(rng, max_rank);
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

fn count(shape: &[u64]) -> u64 {
    if shape.contains(&0) {
        0
    } else {
        shape.iter().product()
    }
}

/// An integer value of `dtype`: small ones mostly, its extremes sometimes.
fn int_of(rng: &mut Rng, dtype: DataType) -> i128 {
    let bits = dtype.bits.min(64);
    let (lo, hi) = if dtype.code == spec_model::grammar::TypeCode::Int {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    match rng.below(10) {
        0 => lo,
        1 => hi,
        2 => (rng.next() as i128).rem_euclid(hi - lo + 1) + lo,
        _ => (rng.range(-5, 20) as i128).clamp(lo, hi),
    }
}

fn scalar_of(rng: &mut Rng, dtype: DataType) -> Scalar {
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

fn array(rng: &mut Rng, dtype: DataType, shape: Vec<u64>) -> NDArray {
    let n = count(&shape);
    if n == 0 {
        let data = TensorData::empty(dtype).expect("a storage dtype");
        return NDArray { dtype, shape, data };
    }
    let values: Vec<Scalar> = (0..n).map(|_| scalar_of(rng, dtype)).collect();
    NDArray::from_scalars(dtype, shape, &values).expect("values of the dtype")
}

fn tensor(rng: &mut Rng, dtype: DataType, shape: Vec<u64>) -> Value {
    Value::tensor(array(rng, dtype, shape))
}

fn shape_value(dims: &[i64]) -> Value {
    Value::Shape(Rc::new(dims.to_vec()))
}

/// A value of a kind no operator here accepts where it is passed (usually).
fn junk(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => shape_value(&[2, 1]),
        1 => Value::Prim(PrimScalar::Int(3, DataType::INT64)),
        2 => Value::Prim(PrimScalar::Float(0.5, DataType::FLOAT32)),
        3 => Value::Str("x".into()),
        4 => Value::Null,
        5 => Value::Tuple(Rc::new(vec![])),
        _ => {
            let d = rng.pick(&DTYPES);
            let s = shape(rng, 2);
            tensor(rng, d, s)
        }
    }
}

/// An attribute value of the wrong kind for an integer (list) attribute.
fn ill_kinded(rng: &mut Rng) -> AttrValue {
    match rng.below(5) {
        0 => AttrValue::Str("1".into()),
        1 => AttrValue::Float(FloatLit(1.0)),
        2 => AttrValue::Bool(true),
        3 => AttrValue::List(vec![AttrValue::Int(0), AttrValue::Str("a".into())]),
        _ => AttrValue::Dict(BTreeMap::new()),
    }
}

fn int_list(xs: &[i64]) -> AttrValue {
    AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
}

/// An axis for rank `r`: in range mostly (either sign), else just out, or extreme.
fn axis(rng: &mut Rng, r: usize) -> i64 {
    let r = r as i64;
    match rng.below(10) {
        0 => rng.pick(&[r, -r - 1, r + 3]),
        1 => rng.pick(&EXTREMES),
        _ if r == 0 => rng.pick(&[0, -1]),
        _ => rng.range(-r, r - 1),
    }
}

fn set(rng: &mut Rng, attrs: &mut Attrs, name: &str, v: AttrValue) {
    let v = match rng.below(100) {
        0..=1 => ill_kinded(rng),
        2 => AttrValue::None,
        _ => v,
    };
    attrs.insert(name, v);
}

type Case = (Vec<Value>, Attrs);

/// A dtype attribute: a storage dtype mostly, sometimes one without storage or not a dtype.
fn dtype_attr(rng: &mut Rng, attrs: &mut Attrs) {
    match rng.below(10) {
        0..=3 => {}
        4 => {
            let name: &str = rng.pick(&["handle", "void", "float", "int4"]);
            set(rng, attrs, "dtype", AttrValue::Str(name.into()));
        }
        _ => {
            let d = rng.pick(&DTYPES);
            set(rng, attrs, "dtype", AttrValue::Str(d.to_string()));
        }
    }
}

/// Sometimes (10%) the operand is not a tensor, so every operator meets errors.
fn operand(rng: &mut Rng, d: DataType, s: Vec<u64>) -> Value {
    if rng.pct(10) {
        match rng.below(3) {
            0 => shape_value(&[2]),
            1 => Value::Prim(PrimScalar::Int(1, DataType::INT64)),
            _ => Value::Tuple(Rc::new(vec![])),
        }
    } else {
        tensor(rng, d, s)
    }
}

fn gen_like(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    let mut attrs = Attrs::default();
    dtype_attr(rng, &mut attrs);
    (vec![operand(rng, d, s)], attrs)
}

fn gen_full_like(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    let mut attrs = Attrs::default();
    dtype_attr(rng, &mut attrs);
    let fill = match rng.below(10) {
        0 => Value::Prim(PrimScalar::Int(rng.pick(&EXTREMES), DataType::INT64)),
        1 => Value::Prim(PrimScalar::Float(rng.pick(&[f64::NAN, 0.5, -3.75, 1e300, f64::INFINITY]), DataType::FLOAT32)),
        2 => Value::Prim(PrimScalar::Bool(rng.pct(50))),
        3 => {
            let fd = rng.pick(&DTYPES);
            let n = rng.range(0, 2) as u64;
            tensor(rng, fd, vec![n])
        }
        _ => {
            let fd = rng.pick(&DTYPES);
            tensor(rng, fd, Vec::new())
        }
    };
    (vec![operand(rng, d, s), fill], attrs)
}

fn gen_squeeze(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let mut s = shape_or_huge(rng, 4, false);
    // Ones in place of small dimensions only: a huge one beside a 0 must stay empty.
    if s.iter().all(|&x| x <= 7) {
        s = s.into_iter().map(|x| if rng.pct(40) { 1 } else { x }).collect();
    }
    let r = s.len();
    let mut attrs = Attrs::default();
    match rng.below(10) {
        0..=2 => {}
        3 => attrs.insert("axis", AttrValue::None),
        _ => {
            let ones: Vec<i64> = (0..r as i64).filter(|&i| s[i as usize] == 1).collect();
            let mut axes: Vec<i64> = Vec::new();
            for &a in &ones {
                if rng.pct(70) {
                    axes.push(if rng.pct(30) { a - r as i64 } else { a });
                }
            }
            match rng.below(8) {
                0 => axes.push(axis(rng, r)),
                1 if !axes.is_empty() => axes.push(axes[0]),
                _ => {}
            }
            let v = if axes.len() == 1 && rng.pct(50) { AttrValue::Int(axes[0]) } else { int_list(&axes) };
            set(rng, &mut attrs, "axis", v);
        }
    }
    (vec![operand(rng, d, s)], attrs)
}

fn gen_expand_dims(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 3, false);
    let mut attrs = Attrs::default();
    if rng.pct(95) {
        let k = rng.below(4) as usize;
        let n = s.len() + k;
        let mut axes: Vec<i64> = (0..k).map(|_| axis(rng, n)).collect();
        if k >= 2 && rng.pct(10) {
            axes[1] = axes[0];
        }
        let v = if k == 1 && rng.pct(50) { AttrValue::Int(axes[0]) } else { int_list(&axes) };
        set(rng, &mut attrs, "axis", v);
    }
    (vec![operand(rng, d, s)], attrs)
}

fn gen_flatten(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    (vec![operand(rng, d, s)], Attrs::default())
}

fn gen_flip(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    let mut attrs = Attrs::default();
    if rng.pct(95) {
        let a = axis(rng, s.len());
        set(rng, &mut attrs, "axis", AttrValue::Int(a));
    }
    (vec![operand(rng, d, s)], attrs)
}

fn gen_tri(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    let k = match rng.below(20) {
        0 => Value::Prim(PrimScalar::Float(1.0, DataType::FLOAT32)),
        1 => Value::Prim(PrimScalar::Bool(true)),
        2 => Value::Prim(PrimScalar::Int(rng.pick(&EXTREMES), DataType::INT64)),
        3 => tensor(rng, DataType::INT64, Vec::new()),
        _ => Value::Prim(PrimScalar::Int(rng.range(-6, 6), DataType::INT64)),
    };
    (vec![operand(rng, d, s), k], Attrs::default())
}

fn gen_tile(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 3, false);
    let mut attrs = Attrs::default();
    if rng.pct(97) {
        let mut reps: Vec<i64> = (0..rng.below(5)).map(|_| rng.range(0, 3)).collect();
        match rng.below(20) {
            0 if !reps.is_empty() => reps[0] = rng.pick(&[-1, i64::MIN]),
            1 => reps.push(rng.pick(&[1 << 40, i64::MAX])),
            _ => {}
        }
        let v = if reps.len() == 1 && rng.pct(50) { AttrValue::Int(reps[0]) } else { int_list(&reps) };
        set(rng, &mut attrs, "repeats", v);
    }
    (vec![operand(rng, d, s)], attrs)
}

fn gen_repeat(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 3, false);
    let mut attrs = Attrs::default();
    if rng.pct(97) {
        let r = match rng.below(20) {
            0 => rng.pick(&[-1, i64::MIN]),
            1 => rng.pick(&[1 << 40, i64::MAX]),
            _ => rng.range(0, 3),
        };
        set(rng, &mut attrs, "repeats", AttrValue::Int(r));
    }
    if rng.pct(70) {
        let a = axis(rng, s.len());
        set(rng, &mut attrs, "axis", AttrValue::Int(a));
    }
    (vec![operand(rng, d, s)], attrs)
}

fn gen_collapse_sum_like(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    if s.iter().any(|&x| x > 7) {
        // An empty data tensor with huge dimensions: collapsed to itself, or (a 1 for
        // its 0) refused.
        let mut t = s.clone();
        if rng.pct(30) {
            t = t.into_iter().map(|x| if x == 0 { 1 } else { x }).collect();
        }
        return (vec![operand(rng, d, s), tensor(rng, d, t.iter().map(|&x| x.min(1)).collect())], Attrs::default());
    }
    let drop = rng.below(s.len() as u64 + 1) as usize;
    let mut t: Vec<u64> = s[drop..].iter().map(|&x| if rng.pct(35) { 1 } else { x }).collect();
    match rng.below(12) {
        0 => t.insert(0, rng.range(1, 3) as u64),
        1 if !t.is_empty() => t[0] += 1,
        2 => t = shape(rng, 3),
        _ => {}
    }
    let td = if rng.pct(80) { d } else { rng.pick(&DTYPES) };
    (vec![operand(rng, d, s), tensor(rng, td, t)], Attrs::default())
}

/// Sometimes breaks a case's arguments: a junk value in place of one, one too few or too many.
fn mangle(rng: &mut Rng, args: &mut Vec<Value>) {
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

/// Tensors equal bit for bit, NaNs aside (`values_equal` has `-0.0 == 0.0`; a move keeps bits).
fn same_bits(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            (0..x.data.len()).all(|i| match (x.data.get(i), y.data.get(i)) {
                // A NaN's sign and payload are not specified (`collapse_sum_like`'s
                // `inf + -inf`, an addition whose operands the compiler may swap).
                (Scalar::Float(p), Scalar::Float(q)) => p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()),
                (p, q) => p == q,
            })
        }
        (Value::Tuple(x), Value::Tuple(y)) => x.iter().zip(y.iter()).all(|(p, q)| same_bits(p, q)),
        _ => true,
    }
}

/// Whether an engine result shares a tensor with an argument (results must be new).
fn aliases(result: &optimized::Value, args: &[optimized::Value]) -> bool {
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
fn show(v: &Value) -> String {
    match v {
        Value::Tensor(t) => {
            let a = t.borrow();
            format!("tensor({}, shape {:?}, {:?})", a.dtype, a.shape, a.data)
        }
        Value::Tuple(fs) => format!("({})", fs.iter().map(show).collect::<Vec<_>>().join(", ")),
        other => print_value(other),
    }
}

fn show_case(op: Op, args: &[Value], attrs: &Attrs) -> String {
    let args: Vec<String> = args.iter().map(show).collect();
    format!("R.{op}({}) attrs {:?}", args.join(", "), attrs.0)
}

#[derive(Default)]
struct Tally {
    values: u64,
    errors: u64,
    skipped: u64,
    mismatches: Vec<String>,
    /// How often each kind of error message came (digits elided), for judging the sample.
    messages: BTreeMap<String, u64>,
}

/// Runs one case on both sides and records the outcome.
fn compare(op: Op, args: &[Value], attrs: &Attrs, tally: &mut Tally, label: &str) {
    // A small budget, so a huge result is refused at once (resource errors are skipped).
    let memory = Memory::new(1 << 26);
    let ours: Vec<optimized::Value> =
        args.iter().map(|a| from_oracle(a, &memory).expect("every argument converts")).collect();
    let reference = spec_model::limits::Budgets { memory: 1 << 26, ..spec_model::limits::Budgets::DEFAULT }
        .scope(|| eval_op_standalone(op, args, attrs, Span::SYNTHETIC));
    let engine = optimized::kernels::run_standalone(op, attrs, &ours, &memory).expect("a kernel, not a Notable");
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
            Some(b2) if values_equal(a, &b2, 0.0) && same_bits(a, &b2) => {
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

fn describe(r: Result<String, String>) -> String {
    match r {
        Ok(v) => format!("value {v}"),
        Err(e) => format!("error {e}"),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// `cases` random calls of `op` from `gen`, each from its own seed (printed on a mismatch).
fn agree(op: Op, gen: fn(&mut Rng) -> Case) {
    let seed = env_u64("KERNELS_AGREE_SEED", DEFAULT_SEED);
    let cases = env_u64("KERNELS_AGREE_CASES", DEFAULT_CASES);
    let mut tally = Tally::default();
    for i in 0..cases {
        let case_seed = seed ^ (op as u64).wrapping_mul(0x1000_0001) ^ i.wrapping_mul(0x9E37_79B9);
        let mut rng = Rng(case_seed);
        let (mut args, attrs) = gen(&mut rng);
        mangle(&mut rng, &mut args);
        compare(op, &args, &attrs, &mut tally, &format!("{op} case {i} (KERNELS_AGREE_SEED={seed})"));
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

#[test]
fn zeros_like_agrees() {
    agree(Op::ZerosLike, gen_like);
}

#[test]
fn ones_like_agrees() {
    agree(Op::OnesLike, gen_like);
}

#[test]
fn full_like_agrees() {
    agree(Op::FullLike, gen_full_like);
}

#[test]
fn squeeze_agrees() {
    agree(Op::Squeeze, gen_squeeze);
}

#[test]
fn expand_dims_agrees() {
    agree(Op::ExpandDims, gen_expand_dims);
}

#[test]
fn flatten_agrees() {
    agree(Op::Flatten, gen_flatten);
}

#[test]
fn flip_agrees() {
    agree(Op::Flip, gen_flip);
}

#[test]
fn tril_agrees() {
    agree(Op::Tril, gen_tri);
}

#[test]
fn triu_agrees() {
    agree(Op::Triu, gen_tri);
}

#[test]
fn tile_agrees() {
    agree(Op::Tile, gen_tile);
}

#[test]
fn repeat_agrees() {
    agree(Op::Repeat, gen_repeat);
}

#[test]
fn collapse_sum_like_agrees() {
    agree(Op::CollapseSumLike, gen_collapse_sum_like);
}
