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

mod agree;

use agree::{
    array_tensor, axis, ranked_shape, set, set_ints, shape_or_huge, shape_value, Case, Nans, Rng, DTYPES, EXTREMES,
};
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType};
use spec_model::ops::Op;
use std::rc::Rc;

const DEFAULT_SEED: u64 = 0x6d61_6e69_7075_6c61;
const DEFAULT_CASES: u64 = 10_000;

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
        array_tensor(rng, d, s)
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
            array_tensor(rng, fd, vec![n])
        }
        _ => {
            let fd = rng.pick(&DTYPES);
            array_tensor(rng, fd, Vec::new())
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
            set_ints(rng, &mut attrs, "axis", &axes, 50);
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
        set_ints(rng, &mut attrs, "axis", &axes, 50);
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
        3 => array_tensor(rng, DataType::INT64, Vec::new()),
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
        set_ints(rng, &mut attrs, "repeats", &reps, 50);
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
        return (
            vec![operand(rng, d, s), array_tensor(rng, d, t.iter().map(|&x| x.min(1)).collect())],
            Attrs::default(),
        );
    }
    let drop = rng.below(s.len() as u64 + 1) as usize;
    let mut t: Vec<u64> = s[drop..].iter().map(|&x| if rng.pct(35) { 1 } else { x }).collect();
    match rng.below(12) {
        0 => t.insert(0, rng.range(1, 3) as u64),
        1 if !t.is_empty() => t[0] += 1,
        2 => t = ranked_shape(rng, 3),
        _ => {}
    }
    let td = if rng.pct(80) { d } else { rng.pick(&DTYPES) };
    (vec![operand(rng, d, s), array_tensor(rng, td, t)], Attrs::default())
}

// `KERNELS_AGREE_CASES` random calls of each operator from its generator, each from its
// own seed (printed on a mismatch).
agree::each_op! {
    seed: DEFAULT_SEED, cases: DEFAULT_CASES, nans: Nans::AnyNan;
    zeros_like_agrees: Op::ZerosLike, gen_like; ones_like_agrees: Op::OnesLike, gen_like;
    full_like_agrees: Op::FullLike, gen_full_like; collapse_sum_like_agrees: Op::CollapseSumLike, gen_collapse_sum_like;
    squeeze_agrees: Op::Squeeze, gen_squeeze; expand_dims_agrees: Op::ExpandDims, gen_expand_dims;
    flatten_agrees: Op::Flatten, gen_flatten; flip_agrees: Op::Flip, gen_flip; tril_agrees: Op::Tril, gen_tri;
    triu_agrees: Op::Triu, gen_tri; tile_agrees: Op::Tile, gen_tile; repeat_agrees: Op::Repeat, gen_repeat;
}
