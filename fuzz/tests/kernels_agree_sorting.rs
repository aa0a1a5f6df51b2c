//! The engine's sorting kernels (`optimized/src/kernels/sorting.rs`: keys, unstable
//! sorts of key|position, selection for `topk`) agree with the oracle's stable sorts of
//! positions on thousands of random calls per operator: every dtype, many ties (small
//! integers, repeated floats), NaN, ±inf, -0.0 beside 0.0, lines up to a few hundred
//! long, rank 0, zero-size and huge dimensions; valid and invalid axes, `k` (below 1,
//! above the axis, extremes), index dtypes (too small, float, bool, without storage),
//! `ret_type`s and ill-kinded attributes; wrong argument kinds and counts. Values must
//! agree bit for bit (a sort moves elements: `-0.0` stays where it goes, NaN payloads
//! too); errors by kind.
//!
//! `KERNELS_AGREE_SEED` and `KERNELS_AGREE_CASES` (per operator) choose the cases.

mod agree;

use agree::{axis, each_case, int_of, set, shape_or_huge, Case, Nans, Rng, DTYPES, EXTREMES};
use oracle::eval::Value;
use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, Scalar, TensorData};
use spec_model::ops::Op;

const DEFAULT_SEED: u64 = 0x736f_7274_696e_6773;
const DEFAULT_CASES: u64 = 10_000;

/// An operand: a few elements drawn from a small pool (so ties are common), or any of
/// the dtype's values; now and then a long line.
fn operand(rng: &mut Rng) -> (Value, Vec<u64>) {
    let dt = rng.pick(&DTYPES);
    let mut shape = shape_or_huge(rng, 4, false);
    if rng.pct(10) && !shape.is_empty() {
        let k = rng.below(shape.len() as u64) as usize;
        shape.iter_mut().for_each(|d| *d = (*d).min(2));
        shape[k] = rng.range(20, 300) as u64;
    }
    let n = if shape.contains(&0) { 0 } else { shape.iter().product::<u64>() as usize };
    let pool: Vec<Scalar> = (0..rng.range(1, 6)).map(|_| value(rng, dt)).collect();
    let tied = rng.pct(50);
    let values: Vec<Scalar> = (0..n).map(|_| if tied { rng.pick(&pool) } else { value(rng, dt) }).collect();
    let kept = shape.clone();
    let a = if n == 0 {
        NDArray { dtype: dt, shape, data: TensorData::empty(dt).expect("a storage dtype") }
    } else {
        NDArray::from_scalars(dt, shape, &values).expect("values of the dtype")
    };
    (Value::tensor(a), kept)
}

fn value(rng: &mut Rng, dt: DataType) -> Scalar {
    if dt.is_bool() {
        Scalar::Bool(rng.pct(50))
    } else if dt.is_float() {
        Scalar::Float(match rng.below(14) {
            0 => f64::NAN,
            1 => -f64::NAN,
            2 => -0.0,
            3 => 0.0,
            4 => f64::INFINITY,
            5 => f64::NEG_INFINITY,
            6 => 1e-310,
            7 => -1e-310,
            _ => rng.range(-40, 40) as f64 / 4.0,
        })
    } else {
        Scalar::Int(int_of(rng, dt))
    }
}

/// An index dtype: `int32`/`int64` mostly, 8-bit ones (too small for long lines), or
/// ones no index has.
fn index_dtype(rng: &mut Rng, attrs: &mut Attrs) {
    let names = ["int32", "int64", "int8", "uint8", "int16", "uint64", "float32", "bool", "int4", "float16"];
    match rng.below(10) {
        0..=3 => {}
        4 => set(rng, attrs, "dtype", AttrValue::Int(3)),
        _ => {
            let v = AttrValue::Str(rng.pick(&names).into());
            set(rng, attrs, "dtype", v)
        }
    }
}

/// The axis attribute (absent: -1) and its normalized value when in range.
fn common(rng: &mut Rng, attrs: &mut Attrs, r: usize, order: &str) -> Option<usize> {
    let mut written = -1;
    if rng.pct(80) {
        written = axis(rng, r);
        set(rng, attrs, "axis", AttrValue::Int(written));
    }
    if rng.pct(60) {
        let v = AttrValue::Bool(rng.pct(50));
        set(rng, attrs, order, v);
    }
    let a = if written < 0 { written.checked_add(r as i64) } else { Some(written) };
    a.filter(|&a| (0..r as i64).contains(&a)).map(|a| a as usize)
}

/// Now and then another operator's attribute, ill-kinded: ignored at run time (the
/// checker refuses it), by both engines.
fn stray(rng: &mut Rng, attrs: &mut Attrs) {
    if rng.pct(5) {
        let name = rng.pick(&["k", "ret_type", "largest", "dtype"]);
        if attrs.get(name).is_none() {
            attrs.insert(name, AttrValue::List(vec![]));
        }
    }
}

fn gen_sort(rng: &mut Rng) -> Case {
    let (x, shape) = operand(rng);
    let mut attrs = Attrs::default();
    common(rng, &mut attrs, shape.len(), "descending");
    stray(rng, &mut attrs);
    (vec![x], attrs)
}

fn gen_argsort(rng: &mut Rng) -> Case {
    let (x, shape) = operand(rng);
    let mut attrs = Attrs::default();
    common(rng, &mut attrs, shape.len(), "descending");
    index_dtype(rng, &mut attrs);
    stray(rng, &mut attrs);
    (vec![x], attrs)
}

fn gen_topk(rng: &mut Rng) -> Case {
    let (x, shape) = operand(rng);
    let mut attrs = Attrs::default();
    let a = common(rng, &mut attrs, shape.len(), "largest");
    if rng.pct(50) {
        index_dtype(rng, &mut attrs);
    }
    // Within the axis mostly (its length when known), else below 1 (all), past it, extreme.
    let n = a.map_or(4, |a| shape[a].min(1 << 20) as i64);
    if rng.pct(90) {
        let k = match rng.below(20) {
            0 => rng.pick(&EXTREMES),
            1 | 2 => rng.range(-3, 0),
            3 => n + rng.range(1, 3),
            _ => rng.range(1, n.max(1)),
        };
        set(rng, &mut attrs, "k", AttrValue::Int(k));
    }
    if rng.pct(60) {
        let ret = rng.pick(&["both", "values", "indices", "both", "values", "indices", "all"]);
        set(rng, &mut attrs, "ret_type", AttrValue::Str(ret.into()));
    }
    (vec![x], attrs)
}

#[test]
fn sort_agrees() {
    each_case(Op::Sort, gen_sort, DEFAULT_SEED, DEFAULT_CASES, Nans::SameBits);
}

#[test]
fn argsort_agrees() {
    each_case(Op::Argsort, gen_argsort, DEFAULT_SEED, DEFAULT_CASES, Nans::SameBits);
}

#[test]
fn topk_agrees() {
    each_case(Op::Topk, gen_topk, DEFAULT_SEED, DEFAULT_CASES, Nans::SameBits);
}
