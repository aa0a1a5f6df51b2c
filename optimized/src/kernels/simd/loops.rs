//! The loop bodies [`run`](super::run) instantiates per instruction set. Each `run` is
//! `#[inline(always)]` and calls only `#[inline(always)]` loops (or small closures), so
//! the whole loop is compiled inside the `#[target_feature]` function.

use super::Body;
use crate::kernels::lanes::{row2, row2_acc, row3, Lane};
use crate::scalar::{Num, B8};

/// `out[j] = f(a[j], b[j])` along one row ([`row2`]).
pub struct Row2<'a, A, B, U, F> {
    pub out: &'a mut [U],
    pub a: Lane<'a, A>,
    pub b: Lane<'a, B>,
    pub f: &'a F,
}

impl<A: Copy, B: Copy, U, F: Fn(A, B) -> U> Body for Row2<'_, A, B, U, F> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        row2(self.out, self.a, self.b, self.f)
    }
}

/// `acc[j] = f(acc[j], b[j])` (or `f(b[j], acc[j])`) along one row ([`row2_acc`]).
pub struct Acc2<'a, T, F> {
    pub acc: &'a mut [T],
    pub b: Lane<'a, T>,
    pub left: bool,
    pub f: &'a F,
}

impl<T: Copy, F: Fn(T, T) -> T> Body for Acc2<'_, T, F> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        row2_acc(self.acc, self.b, self.left, self.f)
    }
}

/// `out[j] = c[j] ? a[j] : b[j]` along one row ([`row3`]).
pub struct Row3<'a, T> {
    pub out: &'a mut [T],
    pub c: Lane<'a, B8>,
    pub a: Lane<'a, T>,
    pub b: Lane<'a, T>,
}

impl<T: Copy> Body for Row3<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        row3(self.out, self.c, self.a, self.b)
    }
}

/// `out[j] = f(x[j])`.
pub struct Map<'a, T, U, F> {
    pub out: &'a mut [U],
    pub x: &'a [T],
    pub f: &'a F,
}

impl<T: Copy, U, F: Fn(T) -> U> Body for Map<'_, T, U, F> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        for (o, &v) in self.out.iter_mut().zip(self.x) {
            *o = (self.f)(v);
        }
    }
}

/// `acc[j] = f(acc[j])`.
pub struct MapInPlace<'a, T, F> {
    pub acc: &'a mut [T],
    pub f: &'a F,
}

impl<T: Copy, F: Fn(T) -> T> Body for MapInPlace<'_, T, F> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        for a in self.acc.iter_mut() {
            *a = (self.f)(*a);
        }
    }
}

/// `dst[j] = src[j]` converted (OP-astype): `Err(i)` for the first element `i` without a
/// value in `D`. Blocks of 64 are converted without a branch (a failing element
/// written as 0 and noted), so the conversion vectorizes; a block with a failure is
/// searched again for the first one.
pub struct Cast<'a, S, D> {
    pub src: &'a [S],
    pub dst: &'a mut [D],
}

impl<S: Num, D: Num> Body for Cast<'_, S, D> {
    type Out = Result<(), usize>;
    #[inline(always)]
    fn run(self) -> Result<(), usize> {
        const BLOCK: usize = 64;
        for (b, (d, s)) in self.dst.chunks_mut(BLOCK).zip(self.src.chunks(BLOCK)).enumerate() {
            let mut ok = true;
            for (d, &s) in d.iter_mut().zip(s) {
                let v = s.cast::<D>();
                ok &= v.is_some();
                *d = v.unwrap_or(D::ZERO);
            }
            if !ok {
                let i = s.iter().position(|&s| s.cast::<D>().is_none()).unwrap_or(0);
                return Err(b * BLOCK + i);
            }
        }
        Ok(())
    }
}

/// The number of partial accumulators of [`fold_lanes`].
pub const FOLD_LANES: usize = 32;

/// `row` folded into `init` with `f`. When `reassociate` and the row has at least
/// `2·FOLD_LANES` elements, element `j` is first folded into partial accumulator
/// `j mod FOLD_LANES` (each starting from `id`, the identity of `f`), the partials are
/// folded into `init` in order, then the tail: a fixed order whatever the instruction
/// set (for an associative `f`, such as integer sums, max and min, the same result;
/// for a float sum a reassociated one). Shorter rows fold in order.
#[inline(always)]
pub fn fold_lanes<T: Copy>(init: T, id: T, row: &[T], reassociate: bool, f: &impl Fn(T, T) -> T) -> T {
    if !reassociate || row.len() < 2 * FOLD_LANES {
        return row.iter().fold(init, |v, &x| f(v, x));
    }
    let mut acc = [id; FOLD_LANES];
    let mut chunks = row.chunks_exact(FOLD_LANES);
    for c in &mut chunks {
        let c: &[T; FOLD_LANES] = c.try_into().unwrap_or_else(|_| unreachable!());
        for k in 0..FOLD_LANES {
            acc[k] = f(acc[k], c[k]);
        }
    }
    let v = acc.iter().fold(init, |v, &a| f(v, a));
    chunks.remainder().iter().fold(v, |v, &x| f(v, x))
}

/// A row folded into one accumulator ([`fold_lanes`]).
pub struct FoldRow<'a, T, F> {
    pub init: T,
    pub id: T,
    pub row: &'a [T],
    pub reassociate: bool,
    pub f: &'a F,
}

impl<T: Copy, F: Fn(T, T) -> T> Body for FoldRow<'_, T, F> {
    type Out = T;
    #[inline(always)]
    fn run(self) -> T {
        fold_lanes(self.init, self.id, self.row, self.reassociate, self.f)
    }
}

/// A row folded into as many accumulators, one element each (`acc[j] = f(acc[j], row[j])`).
pub struct FoldColumns<'a, T, F> {
    pub acc: &'a mut [T],
    pub row: &'a [T],
    pub f: &'a F,
}

impl<T: Copy, F: Fn(T, T) -> T> Body for FoldColumns<'_, T, F> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        for (a, &x) in self.acc.iter_mut().zip(self.row) {
            *a = (self.f)(*a, x);
        }
    }
}

/// The side of the square tiles [`Transpose`] copies (16 rows of 16 elements stay in
/// the first-level cache for every width).
const TILE: usize = 16;

/// `dst` (`cols` rows of `rows`) is the transpose of `src` (`rows` rows of `cols`),
/// copied tile by tile so that both are read and written a cache line at a time.
pub struct Transpose<'a, T> {
    pub src: &'a [T],
    pub dst: &'a mut [T],
    pub rows: usize,
    pub cols: usize,
}

impl<T: Copy> Body for Transpose<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let (rows, cols) = (self.rows, self.cols);
        for r0 in (0..rows).step_by(TILE) {
            let r1 = (r0 + TILE).min(rows);
            for c0 in (0..cols).step_by(TILE) {
                for c in c0..(c0 + TILE).min(cols) {
                    let out = &mut self.dst[c * rows + r0..c * rows + r1];
                    let col = &self.src[r0 * cols + c..];
                    for (o, x) in out.iter_mut().zip(col.iter().step_by(cols)) {
                        *o = *x;
                    }
                }
            }
        }
    }
}

/// `dst[j] = block[pos[j]]`, every position below `block.len()` (checked before).
pub struct Gather<'a, T> {
    pub block: &'a [T],
    pub pos: &'a [usize],
    pub dst: &'a mut [T],
}

impl<T: Copy> Body for Gather<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        // The clamp changes nothing (positions are checked) but lets the bounds check go.
        let last = self.block.len().saturating_sub(1);
        for (o, &p) in self.dst.iter_mut().zip(self.pos) {
            *o = self.block[p.min(last)];
        }
    }
}

/// `out[j] += x[p] * w[p, j]` for each row `p` of `w` in order ([`super::axpy_rows`]).
pub struct AxpyRows<'a, T> {
    pub x: &'a [T],
    pub w: &'a [T],
    pub out: &'a mut [T],
}

impl<T: Num> Body for AxpyRows<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let m = self.out.len();
        if m == 0 {
            return;
        }
        // Four rows per pass over `out`: each element still adds its terms in row
        // order, but `out` is loaded and stored once per four rows.
        let mut rows = self.x.iter().zip(self.w.chunks_exact(m));
        while let (Some((&x0, w0)), Some((&x1, w1)), Some((&x2, w2)), Some((&x3, w3))) =
            (rows.next(), rows.next(), rows.next(), rows.next())
        {
            for ((((o, &a), &b), &c), &d) in self.out.iter_mut().zip(w0).zip(w1).zip(w2).zip(w3) {
                *o = o.add(x0.mul(a)).add(x1.mul(b)).add(x2.mul(c)).add(x3.mul(d));
            }
        }
        let done = self.x.len() / 4 * 4;
        for (&xp, row) in self.x[done..].iter().zip(self.w.chunks_exact(m).skip(done)) {
            for (o, &v) in self.out.iter_mut().zip(row) {
                *o = o.add(xp.mul(v));
            }
        }
    }
}

/// The largest magnitude among `xs`, with whether every element is finite (for the
/// check that a reordered matrix product cannot overflow).
pub struct MaxAbsFinite<'a, T> {
    pub xs: &'a [T],
}

macro_rules! max_abs_finite {
    ($t:ty, $u:ty, $sign:expr, $inf:expr) => {
        impl Body for MaxAbsFinite<'_, $t> {
            type Out = ($t, bool);
            #[inline(always)]
            fn run(self) -> ($t, bool) {
                // The magnitude's bits order non-negative floats, with infinity and NaN
                // above every finite value: an integer max, which vectorizes.
                let mut m: $u = 0;
                for &x in self.xs {
                    m = m.max(x.to_bits() & !$sign);
                }
                (<$t>::from_bits(m), m < $inf)
            }
        }
    };
}
max_abs_finite!(f32, u32, 1u32 << 31, 0x7f80_0000u32);
max_abs_finite!(f64, u64, 1u64 << 63, 0x7ff0_0000_0000_0000u64);
