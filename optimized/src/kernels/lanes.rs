//! The loops of the broadcasting kernels. An output is walked one row at a time
//! ([`for_each_row`]); along a row each operand is a [`Lane`]: one element repeated
//! (a broadcast dimension) or a contiguous run. The per-row functions ([`row2`],
//! [`row3`]) are the innermost loops, plain loops over slices, kept apart from the
//! indexing so that they can be vectorized on their own: each row runs through
//! [`simd::run`], compiled for the best instruction set, and a large output is split
//! across threads by rows ([`simd::parallel_chunks_mut`]).

use super::layout::{broadcast_strides, for_each_row_in};
use super::simd::{self, loops, Exec};
use crate::scalar::B8;
use std::sync::atomic::{AtomicBool, Ordering};

/// An operand along one output row.
#[derive(Clone, Copy)]
pub enum Lane<'a, T> {
    /// The same element all along the row (stride 0).
    Splat(T),
    /// A contiguous run of the row's length (stride 1).
    Run(&'a [T]),
}

/// A walk that would read outside an operand: a layout bug, never a property of the
/// arguments (rows of row-major operands have stride 0 or 1 and stay inside them).
#[derive(Debug, PartialEq, Eq)]
pub struct OutOfBounds;

impl<'a, T: Copy> Lane<'a, T> {
    /// `data` along a row of `len` elements from `offset`, with stride `step`.
    #[inline]
    pub fn at(data: &'a [T], offset: usize, len: usize, step: usize) -> Result<Self, OutOfBounds> {
        match step {
            0 => data.get(offset).map(|x| Lane::Splat(*x)),
            1 => offset.checked_add(len).and_then(|end| data.get(offset..end)).map(Lane::Run),
            _ => None,
        }
        .ok_or(OutOfBounds)
    }
}

/// `out[j] = f(a[j], b[j])` along one row.
#[inline(always)]
pub fn row2<A: Copy, B: Copy, U>(out: &mut [U], a: Lane<A>, b: Lane<B>, f: &impl Fn(A, B) -> U) {
    match (a, b) {
        (Lane::Run(x), Lane::Run(y)) => {
            for ((o, &p), &q) in out.iter_mut().zip(x).zip(y) {
                *o = f(p, q);
            }
        }
        (Lane::Run(x), Lane::Splat(q)) => {
            for (o, &p) in out.iter_mut().zip(x) {
                *o = f(p, q);
            }
        }
        (Lane::Splat(p), Lane::Run(y)) => {
            for (o, &q) in out.iter_mut().zip(y) {
                *o = f(p, q);
            }
        }
        (Lane::Splat(p), Lane::Splat(q)) => {
            for o in out.iter_mut() {
                *o = f(p, q);
            }
        }
    }
}

/// `acc[j] = f(acc[j], b[j])` when `left`, else `f(b[j], acc[j])`, along one row.
#[inline(always)]
pub fn row2_acc<T: Copy>(acc: &mut [T], b: Lane<T>, left: bool, f: &impl Fn(T, T) -> T) {
    match (b, left) {
        (Lane::Run(y), true) => {
            for (o, &q) in acc.iter_mut().zip(y) {
                *o = f(*o, q);
            }
        }
        (Lane::Run(y), false) => {
            for (o, &q) in acc.iter_mut().zip(y) {
                *o = f(q, *o);
            }
        }
        (Lane::Splat(q), true) => {
            for o in acc.iter_mut() {
                *o = f(*o, q);
            }
        }
        (Lane::Splat(q), false) => {
            for o in acc.iter_mut() {
                *o = f(q, *o);
            }
        }
    }
}

/// `out[j] = if c[j] { a[j] } else { b[j] }` along one row.
#[inline(always)]
pub fn row3<T: Copy>(out: &mut [T], c: Lane<B8>, a: Lane<T>, b: Lane<T>) {
    let cs = match c {
        Lane::Splat(c) => return row2(out, if c.get() { a } else { b }, Lane::Splat(()), &|x, ()| x),
        Lane::Run(cs) => cs,
    };
    match (a, b) {
        (Lane::Run(x), Lane::Run(y)) => {
            for (((o, c), &p), &q) in out.iter_mut().zip(cs).zip(x).zip(y) {
                *o = if c.get() { p } else { q };
            }
        }
        (Lane::Run(x), Lane::Splat(q)) => {
            for ((o, c), &p) in out.iter_mut().zip(cs).zip(x) {
                *o = if c.get() { p } else { q };
            }
        }
        (Lane::Splat(p), Lane::Run(y)) => {
            for ((o, c), &q) in out.iter_mut().zip(cs).zip(y) {
                *o = if c.get() { p } else { q };
            }
        }
        (Lane::Splat(p), Lane::Splat(q)) => {
            for (o, c) in out.iter_mut().zip(cs) {
                *o = if c.get() { p } else { q };
            }
        }
    }
}

/// Merges adjacent dimensions that every operand walks as one (its stride over the
/// outer one is the inner one's times the inner extent) and drops dimensions of 1, so
/// rows are as long as possible. The walk visits the same offsets in the same order.
fn coalesce<const N: usize>(shape: &[u64], strides: [Vec<usize>; N]) -> (Vec<u64>, [Vec<usize>; N]) {
    let mut dims: Vec<u64> = Vec::with_capacity(shape.len());
    let mut out: [Vec<usize>; N] = std::array::from_fn(|_| Vec::with_capacity(shape.len()));
    for (i, &d) in shape.iter().enumerate() {
        if d == 1 {
            continue;
        }
        let merge = !dims.is_empty()
            && (0..N).all(|k| {
                let outer = out[k][out[k].len() - 1];
                (d as usize).checked_mul(strides[k][i]) == Some(outer)
            });
        if merge {
            let last = dims.len() - 1;
            dims[last] = dims[last].saturating_mul(d);
            for k in 0..N {
                let l = out[k].len() - 1;
                out[k][l] = strides[k][i];
            }
        } else {
            dims.push(d);
            for k in 0..N {
                out[k].push(strides[k][i]);
            }
        }
    }
    (dims, out)
}

/// Runs `walk(start, part)` over `out`: on one thread, or split into contiguous parts
/// across `exec.threads` when `out` is large; counts the kernel call; `Err` when some
/// row was out of bounds (`walk` sets `bad`).
fn split_rows<U: Send>(
    exec: Exec,
    out: &mut [U],
    bad: &AtomicBool,
    walk: impl Fn(usize, &mut [U]) + Sync,
) -> Result<(), OutOfBounds> {
    let n = out.len();
    // `parallel_chunks_mut` runs `walk` on the whole output itself when it does not split.
    let threaded = if exec.splits(n) {
        simd::parallel_chunks_mut(exec.threads, out, exec.parallel_min / 2, walk)
    } else {
        walk(0, out);
        false
    };
    exec.record(n, threaded);
    if bad.load(Ordering::Relaxed) {
        return Err(OutOfBounds);
    }
    Ok(())
}

/// Fills `out`, the row-major elements of `shape`, with `f` of `a` and `b` (each its
/// elements and shape) broadcast to `shape`.
pub fn zip2<A: Copy + Sync, B: Copy + Sync, U: Send>(
    exec: Exec,
    shape: &[u64],
    out: &mut [U],
    a: (&[A], &[u64]),
    b: (&[B], &[u64]),
    f: impl Fn(A, B) -> U + Sync,
) -> Result<(), OutOfBounds> {
    if same_shape(a.1, shape) && same_shape(b.1, shape) {
        // Nothing broadcasts: one flat run (no strides to build, which dominates the
        // cost of small tensors).
        let n = out.len();
        let (Some(x), Some(y)) = (a.0.get(..n), b.0.get(..n)) else { return Err(OutOfBounds) };
        let bad = AtomicBool::new(false);
        return split_rows(exec, out, &bad, |at, part: &mut [U]| {
            let (a, b) = (Lane::Run(&x[at..at + part.len()]), Lane::Run(&y[at..at + part.len()]));
            simd::run(exec.level, loops::Row2 { out: part, a, b, f: &f })
        });
    }
    let strides = [broadcast_strides(a.1, shape), broadcast_strides(b.1, shape)];
    let (dims, strides) = coalesce(shape, strides);
    let bad = AtomicBool::new(false);
    split_rows(exec, out, &bad, |at, part: &mut [U]| {
        let range = at..at + part.len();
        for_each_row_in(&dims, [&strides[0], &strides[1]], range, |start, [oa, ob], len, [sa, sb]| {
            let o = part.get_mut(start - at..start - at + len);
            match (o, Lane::at(a.0, oa, len, sa), Lane::at(b.0, ob, len, sb)) {
                (Some(out), Ok(a), Ok(b)) => simd::run(exec.level, loops::Row2 { out, a, b, f: &f }),
                _ => bad.store(true, Ordering::Relaxed),
            }
        });
    })
}

/// `a == b` for the few dimensions of a shape, without a call to `memcmp` (which
/// measured at 60 ns a call on scalar tensors, a third of a scalar `add`).
#[inline]
pub fn same_shape(a: &[u64], b: &[u64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Fills `out`, the row-major elements of `shape`, with `c ? a : b` broadcast to `shape`.
pub fn select<T: Copy + Send + Sync>(
    exec: Exec,
    shape: &[u64],
    out: &mut [T],
    c: (&[B8], &[u64]),
    a: (&[T], &[u64]),
    b: (&[T], &[u64]),
) -> Result<(), OutOfBounds> {
    let strides = [broadcast_strides(c.1, shape), broadcast_strides(a.1, shape), broadcast_strides(b.1, shape)];
    let (dims, strides) = coalesce(shape, strides);
    let bad = AtomicBool::new(false);
    split_rows(exec, out, &bad, |at, part: &mut [T]| {
        let range = at..at + part.len();
        let strides = [&strides[0][..], &strides[1], &strides[2]];
        for_each_row_in(&dims, strides, range, |start, [oc, oa, ob], len, [sc, sa, sb]| {
            let o = part.get_mut(start - at..start - at + len);
            let lanes = (Lane::at(c.0, oc, len, sc), Lane::at(a.0, oa, len, sa), Lane::at(b.0, ob, len, sb));
            match (o, lanes) {
                (Some(out), (Ok(c), Ok(a), Ok(b))) => simd::run(exec.level, loops::Row3 { out, c, a, b }),
                _ => bad.store(true, Ordering::Relaxed),
            }
        });
    })
}

/// Fills `out` with `f` of each element of `x` (of the same length).
pub fn map<T: Copy + Sync, U: Send>(exec: Exec, out: &mut [U], x: &[T], f: impl Fn(T) -> U + Sync) {
    map_parts(exec, out, x, |out, x| simd::run(exec.level, loops::Map { out, x, f: &f }))
}

/// Runs `part(out_part, x_part)` over matching parts of `out` and `x` (of the same
/// length), split across threads when large; counts the kernel call.
pub fn map_parts<T: Sync, U: Send>(exec: Exec, out: &mut [U], x: &[T], part: impl Fn(&mut [U], &[T]) + Sync) {
    let bad = AtomicBool::new(false);
    let n = out.len().min(x.len());
    let _ = split_rows(exec, &mut out[..n], &bad, |at, o: &mut [U]| part(o, &x[at..at + o.len()]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalescing_keeps_the_walk() {
        let (d, s) = coalesce(&[2, 3, 4], [vec![12, 4, 1], vec![0, 0, 1]]);
        assert_eq!((d, s), (vec![6, 4], [vec![4, 1], vec![0, 1]]));
        let (d, s) = coalesce(&[2, 1, 4], [vec![4, 4, 1]]);
        assert_eq!((d, s), (vec![8], [vec![1]]));
        let (d, s) = coalesce(&[1, 1], [vec![1, 1]]);
        assert_eq!((d, s), (vec![], [vec![]]));
    }

    #[test]
    fn zip_broadcasts() {
        let mut out = [0i32; 6];
        zip2(Exec::serial(), &[2, 3], &mut out, (&[1, 2, 3], &[3]), (&[10, 20], &[2, 1]), |p: i32, q: i32| p + q)
            .unwrap();
        assert_eq!(out, [11, 12, 13, 21, 22, 23]);
        let mut out = [0i32; 1];
        zip2(Exec::serial(), &[], &mut out, (&[4], &[]), (&[5], &[]), |p: i32, q: i32| p * q).unwrap();
        assert_eq!(out, [20]);
        let mut out: [i32; 0] = [];
        zip2(Exec::serial(), &[0, 3], &mut out, (&[], &[0, 3]), (&[1], &[1]), |p: i32, q: i32| p * q).unwrap();
        let mut out = [0i32; 4];
        let err = zip2(Exec::serial(), &[4], &mut out, (&[1, 2], &[4]), (&[1], &[1]), |p: i32, q: i32| p + q);
        assert_eq!(err, Err(OutOfBounds), "an operand shorter than its shape says is never read past its end");
    }

    #[test]
    fn select_broadcasts_each_operand() {
        let (t, f) = (B8::TRUE, B8::FALSE);
        let mut out = [0u8; 4];
        select(Exec::serial(), &[2, 2], &mut out, (&[t, f], &[2, 1]), (&[1, 2], &[2]), (&[9], &[])).unwrap();
        assert_eq!(out, [1, 2, 9, 9]);
        select(Exec::serial(), &[2, 2], &mut out, (&[t, f], &[2]), (&[1, 2, 3, 4], &[2, 2]), (&[7, 8, 9, 10], &[2, 2]))
            .unwrap();
        assert_eq!(out, [1, 8, 3, 10]);
        select(Exec::serial(), &[4], &mut out, (&[f, t, t, f], &[4]), (&[1], &[1]), (&[2], &[1])).unwrap();
        assert_eq!(out, [2, 1, 1, 2]);
        select(Exec::serial(), &[4], &mut out, (&[f, t, t, f], &[4]), (&[1, 2, 3, 4], &[4]), (&[0], &[1])).unwrap();
        assert_eq!(out, [0, 2, 3, 0]);
    }
}
