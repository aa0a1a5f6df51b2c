//! The engine's manipulation kernels (`optimized/src/kernels/manipulate*`) agree with
//! the oracle's on thousands of random calls per operator: random dtypes and shapes
//! (rank 0, zero-size and huge dimensions), valid and invalid attributes (out of
//! range, negative, i64 extremes, ill-kinded), index tensors of every dtype, wrong
//! argument kinds and counts. Agreement is the same error kind (a `Crash` never
//! agrees), or equal values, bit for bit; a resource error on either side is skipped (poisoned).
//!
//! A mismatch prints the case; `KERNELS_AGREE_SEED` (default below) and
//! `KERNELS_AGREE_CASES` (per operator) choose the cases, so a run is reproducible.

mod agree;

use agree::{
    array_tensor, axis, count, dim, int_list, int_of, int_of_bounds, junk, ranked_shape, set, set_ints, shape_or_huge,
    shape_value, Case, Nans, Rng, DTYPES, EXTREMES,
};
use oracle::eval::Value;
use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, Scalar, TensorData};
use spec_model::ops::Op;
use std::rc::Rc;

const DEFAULT_SEED: u64 = 0x6d61_6e69_7075_6c61;
const DEFAULT_CASES: u64 = 10_000;

/// A slice or split bound for a dimension of `d`.
fn bound(rng: &mut Rng, d: u64) -> i64 {
    let d = d.min(1 << 40) as i64;
    if rng.pct(10) {
        rng.pick(&EXTREMES)
    } else {
        rng.range(-d - 2, d + 2)
    }
}

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
    (vec![array_tensor(rng, d, s), shape_value(&target)], Attrs::default())
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
        set_ints(rng, &mut attrs, "axes", &axes, 50);
    }
    (vec![array_tensor(rng, d, s)], attrs)
}

fn gen_broadcast_to(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let s: Vec<u64> = ranked_shape(rng, 3).into_iter().map(|x| if rng.pct(40) { 1 } else { x }).collect();
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
    (vec![array_tensor(rng, d, s), shape_value(&target)], Attrs::default())
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
        fields.push(array_tensor(rng, dt, s));
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
            // A count of sections: a divisor of the dimension, any count up to it (an
            // uneven last part), or one past where the last part turns negative.
            let divisors: Vec<i64> = (1..=len.clamp(1, 8) as i64).filter(|k| len.is_multiple_of(*k as u64)).collect();
            let k = match rng.below(10) {
                0..=3 => rng.pick(&divisors),
                4..=6 => rng.range(1, len.clamp(1, 9) as i64),
                _ => rng.range(len.min(8) as i64 + 1, len.min(8) as i64 + 4),
            };
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
    (vec![array_tensor(rng, d, s)], attrs)
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
        set_ints(rng, &mut attrs, name, &xs, 30);
    }
    // TVM 0.27's promise that every bound lies in [0, d]: kept or broken.
    if rng.pct(25) {
        attrs.insert("assume_inbound", AttrValue::Bool(rng.pct(70)));
    }
    (vec![array_tensor(rng, d, s)], attrs)
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
    let ishape = ranked_shape(rng, 2);
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
    (vec![array_tensor(rng, d, s), Value::tensor(idx)], attrs)
}

// `KERNELS_AGREE_CASES` random calls of each operator from its generator, each from its
// own seed (printed on a mismatch).
agree::each_op! {
    seed: DEFAULT_SEED, cases: DEFAULT_CASES, nans: Nans::SameBits;
    reshape_agrees: Op::Reshape, gen_reshape; permute_dims_agrees: Op::PermuteDims, gen_permute_dims;
    broadcast_to_agrees: Op::BroadcastTo, gen_broadcast_to; concat_agrees: Op::Concat, gen_concat;
    split_agrees: Op::Split, gen_split; strided_slice_agrees: Op::StridedSlice, gen_strided_slice;
    take_agrees: Op::Take, gen_take;
}
