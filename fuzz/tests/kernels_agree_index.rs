//! The engine's element indexing kernels (`optimized/src/kernels/index.rs`: an odometer
//! gather, a block-by-block scatter) agree with the oracle's plain loops on thousands
//! of random calls per operator: every data dtype, indices of every integer dtype (and
//! float or bool ones), negative indices, indices just out of range or extreme, indices
//! shorter or longer than `data` along the other axes, duplicate targets under every
//! reduction, updates of another shape or dtype, rank 0, zero-size and huge dimensions,
//! invalid axes and reductions, wrong argument kinds and counts. Values must agree bit
//! for bit (NaN payloads aside where a reduction computes one); errors by kind.
//!
//! `KERNELS_AGREE_SEED` and `KERNELS_AGREE_CASES` (per operator) choose the cases.

mod agree;

use agree::{array_tensor, axis, dim, each_case, int_of_bounds, ranked_shape, set, Case, Nans, Rng, DTYPES, EXTREMES};
use oracle::eval::Value;
use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, Scalar};
use spec_model::ops::Op;

const DEFAULT_SEED: u64 = 0x696e_6465_7869_6e67;
const DEFAULT_CASES: u64 = 10_000;

const INDEX_DTYPES: [DataType; 8] = [
    DataType::int(8),
    DataType::int(16),
    DataType::int(32),
    DataType::int(64),
    DataType::uint(8),
    DataType::uint(16),
    DataType::uint(32),
    DataType::uint(64),
];

/// `data`, the normalized axis it will be indexed along (if any), and the attributes.
fn data_and_axis(rng: &mut Rng) -> (NDArray, Option<usize>, Attrs) {
    let dt = rng.pick(&DTYPES);
    let shape = if rng.pct(3) { vec![0, 1 << 40] } else { ranked_shape(rng, 3) };
    let Value::Tensor(t) = array_tensor(rng, dt, shape) else { unreachable!("a tensor") };
    let a = t.borrow().clone();
    let r = a.shape.len();
    let mut attrs = Attrs::default();
    let ax = if rng.pct(85) { axis(rng, r) } else { 0 };
    if ax != 0 || rng.pct(50) {
        set(rng, &mut attrs, "axis", AttrValue::Int(ax));
    }
    let norm = if ax < 0 { ax.checked_add(r as i64) } else { Some(ax) };
    let norm = norm.filter(|&a| (0..r as i64).contains(&a)).map(|a| a as usize);
    (a, norm, attrs)
}

/// Indices for `data` along `axis`: of its rank, no longer along the other axes (mostly),
/// values in `[-d, d)` (mostly), of an integer dtype (mostly).
fn indices(rng: &mut Rng, data: &NDArray, axis: Option<usize>) -> NDArray {
    let r = data.shape.len();
    let rank = if rng.pct(95) { r } else { rng.below(4) as usize };
    let shape: Vec<u64> = (0..rank)
        .map(|j| match (Some(j) == axis, data.shape.get(j)) {
            (true, _) => {
                if rng.pct(10) {
                    0
                } else {
                    rng.range(1, 5) as u64
                }
            }
            (false, Some(&d)) if rng.pct(95) => rng.range(0, d.min(4) as i64) as u64,
            _ => dim(rng),
        })
        .collect();
    let dt = if rng.pct(95) {
        rng.pick(&INDEX_DTYPES)
    } else {
        rng.pick(&[DataType::FLOAT32, DataType::bool(), DataType::float(16)])
    };
    let n = if shape.contains(&0) { 0 } else { shape.iter().product::<u64>() as usize };
    let d = axis.map_or(3, |a| data.shape[a].min(1 << 20) as i128);
    let (lo, hi) = if dt.is_float() || dt.is_bool() { (0, 1) } else { int_of_bounds(dt) };
    let values: Vec<Scalar> = (0..n)
        .map(|_| {
            let v = match rng.below(40) {
                0 => d,
                1 => -d - 1,
                2 => *[EXTREMES[0] as i128, EXTREMES[5] as i128, lo, hi].get(rng.below(4) as usize).unwrap_or(&0),
                _ => rng.range(-(d as i64), d as i64 - 1) as i128,
            };
            let v = v.clamp(lo, hi);
            if dt.is_bool() {
                Scalar::Bool(v != 0)
            } else if dt.is_float() {
                Scalar::Float(v as f64)
            } else {
                Scalar::Int(v)
            }
        })
        .collect();
    NDArray::from_scalars(dt, shape, &values).expect("values of the dtype")
}

fn gen_gather(rng: &mut Rng) -> Case {
    let (data, ax, attrs) = data_and_axis(rng);
    let idx = indices(rng, &data, ax);
    (vec![Value::tensor(data), Value::tensor(idx)], attrs)
}

fn gen_scatter(rng: &mut Rng) -> Case {
    let (data, ax, mut attrs) = data_and_axis(rng);
    let idx = indices(rng, &data, ax);
    let udt = if rng.pct(95) { data.dtype } else { rng.pick(&DTYPES) };
    let ushape = if rng.pct(95) { idx.shape.clone() } else { ranked_shape(rng, 3) };
    let upd = array_tensor(rng, udt, ushape);
    if rng.pct(80) {
        let r = rng.pick(&["update", "add", "mul", "mean", "max", "min", "sum", ""]);
        set(rng, &mut attrs, "reduction", AttrValue::Str(r.into()));
    }
    (vec![Value::tensor(data), Value::tensor(idx), upd], attrs)
}

#[test]
fn gather_elements_agrees() {
    each_case(Op::GatherElements, gen_gather, DEFAULT_SEED, DEFAULT_CASES, Nans::SameBits);
}

#[test]
fn scatter_elements_agrees() {
    // A reduction of NaNs makes a NaN whose payload the spec does not fix.
    each_case(Op::ScatterElements, gen_scatter, DEFAULT_SEED, DEFAULT_CASES, Nans::AnyNan);
}
