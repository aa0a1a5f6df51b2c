//! The engine's manipulation kernels (`optimized/src/kernels/manipulate*`) agree with
//! the oracle's on thousands of random calls per operator: random dtypes and shapes
//! (rank 0, zero-size and huge dimensions), valid and invalid attributes (out of
//! range, negative, i64 extremes, ill-kinded), index tensors of every dtype, wrong
//! argument kinds and counts. Agreement is the same error kind (a `Crash` never
//! agrees), or equal values, bit for bit; a resource error on either side is skipped (poisoned).
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

/// A slice or split bound for a dimension of `d`.
fn bound(rng: &mut Rng, d: u64) -> i64 {
    let d = d.min(1 << 40) as i64;
    if rng.pct(10) {
        rng.pick(&EXTREMES)
    } else {
        rng.range(-d - 2, d + 2)
    }
}

/// Puts `v` at `name` in `attrs`, or (2%) an ill-kinded value, or (1%) `None`.
fn set(rng: &mut Rng, attrs: &mut Attrs, name: &str, v: AttrValue) {
    let v = match rng.below(100) {
        0..=1 => ill_kinded(rng),
        2 => AttrValue::None,
        _ => v,
    };
    attrs.insert(name, v);
}

type Case = (Vec<Value>, Attrs);

fn gen_reshape(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    let n = count(&s);
    let mut target: Vec<i64> = if n == 0 || rng.pct(20) {
        let t = shape_or_huge(rng, 4, false);
        t.iter().map(|&x| x.min(i64::MAX as u64) as i64).collect()
    } else {
        // A valid factorization of n into a few dimensions, with ones here and there.
        let mut dims = vec![1i64; rng.below(4) as usize + 1];
        let mut rest = n;
        let mut p = 2;
        while rest > 1 {
            while rest.is_multiple_of(p) {
                let k = rng.below(dims.len() as u64) as usize;
                dims[k] *= p as i64;
                rest /= p;
            }
            p += 1;
        }
        dims
    };
    match rng.below(10) {
        0..=3 if !target.is_empty() => {
            let k = rng.below(target.len() as u64) as usize;
            target[k] = -1;
        }
        4 if !target.is_empty() => {
            let k = rng.below(target.len() as u64) as usize;
            target[k] = rng.pick(&[-1, -2, i64::MIN, 0]);
            if rng.pct(50) {
                target.push(-1);
            }
        }
        5 => target.push(rng.pick(&[1, 2, -1])),
        _ => {}
    }
    (vec![tensor(rng, d, s), shape_value(&target)], Attrs::default())
}

fn gen_permute_dims(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    let r = s.len();
    let mut attrs = Attrs::default();
    if rng.pct(75) {
        // A permutation, each axis maybe written from the end.
        let mut axes: Vec<i64> = (0..r as i64).collect();
        for i in (1..axes.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            axes.swap(i, j);
        }
        for a in axes.iter_mut() {
            if rng.pct(30) {
                *a -= r as i64;
            }
        }
        match rng.below(10) {
            0 => axes.push(axis(rng, r)),
            1 if !axes.is_empty() => {
                axes.pop();
            }
            2 if r >= 2 => axes[0] = axes[1],
            3 if !axes.is_empty() => axes[0] = axis(rng, r),
            _ => {}
        }
        let v = if axes.len() == 1 && rng.pct(50) { AttrValue::Int(axes[0]) } else { int_list(&axes) };
        set(rng, &mut attrs, "axes", v);
    }
    (vec![tensor(rng, d, s)], attrs)
}

fn gen_broadcast_to(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s: Vec<u64> = shape(rng, 3).into_iter().map(|x| if rng.pct(40) { 1 } else { x }).collect();
    let mut target: Vec<i64> = (0..rng.below(3)).map(|_| dim(rng) as i64).collect();
    target.extend(s.iter().map(|&x| if x == 1 && rng.pct(60) { dim(rng) as i64 } else { x as i64 }));
    match rng.below(20) {
        0 if !target.is_empty() => {
            let k = rng.below(target.len() as u64) as usize;
            target[k] = rng.pick(&[-1, i64::MIN, 5, 0]);
        }
        1 => {
            target.pop();
        }
        2 => target = [&[1 << 14, 1 << 13], &target[..]].concat(),
        3 => target = [&[i64::MAX, 0, i64::MAX], &target[..]].concat(),
        4 => target = [&[i64::MAX, 3], &target[..]].concat(),
        _ => {}
    }
    (vec![tensor(rng, d, s), shape_value(&target)], Attrs::default())
}

fn gen_concat(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let base = shape_or_huge(rng, 3, true);
    let r = base.len();
    let ax = axis(rng, r);
    let along = if r == 0 { 0 } else { ax.rem_euclid(r as i64) as usize };
    let n = rng.pick(&[0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4]);
    // With a huge dimension, the fields stay empty: a zero off the axis is kept.
    let huge = base.iter().any(|&x| x > 7);
    let free = !huge || base.iter().enumerate().any(|(i, &x)| x == 0 && i != along);
    let mut fields = Vec::new();
    for _ in 0..n {
        let mut s = base.clone();
        if r > 0 && free {
            s[along] = rng.below(4);
        }
        let mut dt = d;
        match rng.below(60) {
            0 => dt = rng.pick(&DTYPES),
            1 => s.push(1),
            2 if r > 0 && !huge => {
                let k = rng.below(r as u64) as usize;
                s[k] += 1;
            }
            3 => {
                fields.push(junk(rng));
                continue;
            }
            _ => {}
        }
        fields.push(tensor(rng, dt, s));
    }
    let mut attrs = Attrs::default();
    if rng.pct(80) {
        set(rng, &mut attrs, "axis", AttrValue::Int(ax));
    }
    let arg = if rng.pct(3) { junk(rng) } else { Value::Tuple(Rc::new(fields)) };
    (vec![arg], attrs)
}

fn gen_split(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 3, false);
    let r = s.len();
    let ax = axis(rng, r);
    let len = if r == 0 { 0 } else { s[ax.rem_euclid(r as i64) as usize] };
    let mut attrs = Attrs::default();
    if rng.pct(85) {
        set(rng, &mut attrs, "axis", AttrValue::Int(ax));
    }
    let cuts = match rng.below(20) {
        0 => None,
        1 => Some(AttrValue::Int(rng.pick(&[0, -1, -3, (1 << 16) + 1, i64::MIN, i64::MAX, 1 << 16]))),
        2..=9 => {
            // A count of sections: a divisor of the dimension mostly.
            let divisors: Vec<i64> = (1..=len.clamp(1, 8) as i64).filter(|k| len.is_multiple_of(*k as u64)).collect();
            let k = if rng.pct(80) { rng.pick(&divisors) } else { rng.range(1, 6) };
            Some(AttrValue::Int(k))
        }
        _ => {
            let k = rng.below(5) as usize;
            let idx: Vec<i64> = (0..k).map(|_| bound(rng, len)).collect();
            Some(int_list(&idx))
        }
    };
    if let Some(c) = cuts {
        set(rng, &mut attrs, "indices_or_sections", c);
    }
    (vec![tensor(rng, d, s)], attrs)
}

fn gen_strided_slice(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 4, false);
    let r = s.len();
    let k = rng.below(r as u64 + 2) as usize;
    let mut pool: Vec<usize> = (0..r).collect();
    let mut axes = Vec::new();
    for _ in 0..k {
        if pool.is_empty() || rng.pct(5) {
            axes.push(axis(rng, r));
        } else {
            let a = pool.swap_remove(rng.below(pool.len() as u64) as usize);
            axes.push(if rng.pct(30) { a as i64 - r as i64 } else { a as i64 });
        }
    }
    let dims: Vec<u64> = axes.iter().map(|&a| if r == 0 { 0 } else { s[a.rem_euclid(r as i64) as usize] }).collect();
    let begin: Vec<i64> = dims.iter().map(|&d| bound(rng, d)).collect();
    let end: Vec<i64> = dims.iter().map(|&d| bound(rng, d)).collect();
    let strides: Vec<i64> = dims
        .iter()
        .map(|_| match rng.below(40) {
            0 => 0,
            1..=3 => rng.pick(&EXTREMES),
            _ => rng.pick(&[1, 1, 1, 2, 3, -1, -1, -2, -3]),
        })
        .collect();
    let mut attrs = Attrs::default();
    let lists = [("axes", axes), ("begin", begin), ("end", end), ("strides", strides)];
    for (name, mut xs) in lists {
        if name == "strides" && rng.pct(30) {
            continue;
        }
        if rng.pct(1) {
            continue; // missing (fatal but for `strides`)
        }
        if rng.pct(2) {
            xs.push(0);
        }
        let v = if xs.len() == 1 && rng.pct(30) { AttrValue::Int(xs[0]) } else { int_list(&xs) };
        set(rng, &mut attrs, name, v);
    }
    (vec![tensor(rng, d, s)], attrs)
}

fn gen_take(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s = shape_or_huge(rng, 3, true);
    let r = s.len();
    let mut attrs = Attrs::default();
    let ax = if rng.pct(30) { None } else { Some(axis(rng, r)) };
    if let Some(a) = ax {
        set(rng, &mut attrs, "axis", AttrValue::Int(a));
    }
    let n = match ax {
        None => count(&s),
        Some(a) if r > 0 => s[a.rem_euclid(r as i64) as usize],
        Some(_) => 1,
    };
    let idt = match rng.below(20) {
        0 => rng.pick(&[DataType::float(16), DataType::float(32), DataType::float(64)]),
        1..=2 => DataType::bool(),
        _ => rng.pick(&DTYPES[1..9]),
    };
    let ishape = shape(rng, 2);
    let values: Vec<Scalar> = (0..count(&ishape))
        .map(|_| {
            if idt.is_bool() {
                Scalar::Bool(rng.pct(50))
            } else if idt.is_float() {
                Scalar::Float(rng.below(3) as f64)
            } else if rng.pct(90) && n > 0 {
                Scalar::Int((rng.below(n.min(1 << 40)) as i128).min(int_of_bounds(idt).1))
            } else {
                // Out of range, or the dtype's extremes, or just inside.
                let any = int_of(rng, idt);
                let v = rng.pick(&[-1, n as i128, n as i128 - 1, n as i128 + 1, any]);
                let (lo, hi) = int_of_bounds(idt);
                Scalar::Int(v.clamp(lo, hi))
            }
        })
        .collect();
    let idx = if count(&ishape) == 0 {
        NDArray { dtype: idt, shape: ishape, data: TensorData::empty(idt).expect("storage") }
    } else {
        NDArray::from_scalars(idt, ishape, &values).expect("indices of the dtype")
    };
    (vec![tensor(rng, d, s), Value::tensor(idx)], attrs)
}

fn int_of_bounds(dtype: DataType) -> (i128, i128) {
    let bits = dtype.bits.min(64);
    if dtype.code == spec_model::grammar::TypeCode::Int {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
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

/// Tensors equal bit for bit (`values_equal` has `-0.0 == 0.0`; a move keeps bits).
fn same_bits(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            (0..x.data.len()).all(|i| match (x.data.get(i), y.data.get(i)) {
                (Scalar::Float(p), Scalar::Float(q)) => p.to_bits() == q.to_bits(),
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
fn reshape_agrees() {
    agree(Op::Reshape, gen_reshape);
}

#[test]
fn permute_dims_agrees() {
    agree(Op::PermuteDims, gen_permute_dims);
}

#[test]
fn broadcast_to_agrees() {
    agree(Op::BroadcastTo, gen_broadcast_to);
}

#[test]
fn concat_agrees() {
    agree(Op::Concat, gen_concat);
}

#[test]
fn split_agrees() {
    agree(Op::Split, gen_split);
}

#[test]
fn strided_slice_agrees() {
    agree(Op::StridedSlice, gen_strided_slice);
}

#[test]
fn take_agrees() {
    agree(Op::Take, gen_take);
}
