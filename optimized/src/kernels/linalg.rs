//! `matmul` (NumPy semantics).

use super::common::{created, layout_bug, operand, read, write};
use super::convert::convert;
use super::layout::{broadcast_shapes, broadcast_strides, for_each_row};
use super::simd::FloatElem;
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::Num;
use crate::stats::{self, Counter};
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;

/// OP-matmul: NumPy's `matmul`. A 1-D first operand is `(1, k)` and a 1-D second
/// operand `(k, 1)`, the added dimension dropped from the result; batch dimensions
/// broadcast (NumPy); `(..., n, k) @ (..., k, m)` is `(..., n, m)` with
/// `out[i, j] = Σ_p a[i, p] * b[p, j]` folded in `p` order from 0, every product and
/// sum rounded to (or wrapping in) the dtype, with no fused multiply-add. With
/// `out_dtype` both operands are first converted to it (as OP-astype) and computed in
/// it. Errors (`OpError`): not two tensors; rank 0; different dtypes without
/// `out_dtype`; `k` differing; batch dimensions that do not broadcast; a result over
/// a result over the memory budget; a conversion error; an ill-kinded `out_dtype` or one without storage.
pub fn matmul(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::dtype(l.attrs, "out_dtype") {
        Err(m) => Box::new(Failing(m)),
        Ok(d) => match d.filter(|d| !d.is_void()) {
            None => Box::new(MatmulKernel { out_dtype: None }),
            Some(d) => match DType::of(d) {
                Some(t) => Box::new(MatmulKernel { out_dtype: Some(t) }),
                None => Box::new(Failing(format!("dtype {d} has no tensor storage"))),
            },
        },
    }
}

struct MatmulKernel {
    out_dtype: Option<DType>,
}

/// The shapes of one call.
struct Plan {
    a_batch: Vec<u64>,
    b_batch: Vec<u64>,
    batch: Vec<u64>,
    n: usize,
    k: usize,
    m: usize,
    out_shape: Vec<u64>,
}

impl Kernel for MatmulKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let a = operand(cx, args, 0, "the first operand")?;
        let b = operand(cx, args, 1, "the second operand")?;
        let dtype = match self.out_dtype {
            Some(d) => d,
            None if a.dtype() == b.dtype() => a.dtype(),
            None => return Err(cx.error(format!("operands have different dtypes {} and {}", a.dtype(), b.dtype()))),
        };
        let plan = plan(cx, a.shape(), b.shape())?;
        // The oracle converts before checking shapes; every error of both is an
        // `OpError`, and checking shapes first allocates nothing for a bad call.
        let a_conv = if a.dtype() != dtype { Some(convert(cx, a, "the first operand", dtype)?) } else { None };
        let b_conv = if b.dtype() != dtype { Some(convert(cx, b, "the second operand", dtype)?) } else { None };
        let (a, b) = (a_conv.as_ref().unwrap_or(a), b_conv.as_ref().unwrap_or(b));
        match dtype {
            DType::F32 => matmul_typed::<f32>(cx, a, b, dtype, &plan, gemm_f32),
            DType::F64 => matmul_typed::<f64>(cx, a, b, dtype, &plan, gemm_f64),
            _ => with_num!(dtype, T => matmul_typed::<T>(cx, a, b, dtype, &plan, gemm_in_order::<T>)),
        }
    }
}

/// The batch, matrix and result shapes of `a @ b`.
fn plan(cx: &KernelCx, a: &[u64], b: &[u64]) -> Result<Plan> {
    if a.is_empty() || b.is_empty() {
        return Err(cx.error("operands must have rank at least 1"));
    }
    let (ar, br) = (a.len(), b.len());
    let (n, k) = if ar == 1 { (1, a[0]) } else { (a[ar - 2], a[ar - 1]) };
    let (k2, m) = if br == 1 { (b[0], 1) } else { (b[br - 2], b[br - 1]) };
    if k != k2 {
        return Err(cx.error(format!("the reduction dimensions {k} and {k2} differ")));
    }
    let (a_batch, b_batch) = (&a[..ar.saturating_sub(2)], &b[..br.saturating_sub(2)]);
    let batch = broadcast_shapes(a_batch, b_batch)
        .ok_or_else(|| cx.error(format!("batch dimensions {a_batch:?} and {b_batch:?} do not broadcast")))?;
    let mut out_shape = batch.clone();
    if ar != 1 {
        out_shape.push(n);
    }
    if br != 1 {
        out_shape.push(m);
    }
    created(cx, &out_shape)?;
    // Each operand exists, so its matrix dimensions' products fit in usize.
    let (n, k, m) = (n as usize, k as usize, m as usize);
    Ok(Plan { a_batch: a_batch.to_vec(), b_batch: b_batch.to_vec(), batch, n, k, m, out_shape })
}

/// One matrix product `out = a @ b` of `(n, k)` by `(k, m)` (out zeroed, k > 0), with
/// the threads it may use (more than one only for at least `parallel_min` multiply-adds).
pub(super) type Gemm<T> = fn(&[T], &[T], &mut [T], Dims, usize);

/// The matrix dimensions of one product.
#[derive(Clone, Copy)]
pub(super) struct Dims {
    pub(super) n: usize,
    pub(super) k: usize,
    pub(super) m: usize,
}

fn matmul_typed<T: Num>(cx: &KernelCx, a: &Tensor, b: &Tensor, dtype: DType, p: &Plan, gemm: Gemm<T>) -> Result<Value> {
    let (x, y) = (read::<T>(cx, a, "the first operand")?, read::<T>(cx, b, "the second operand")?);
    let out = cx.alloc(dtype, &p.out_shape)?;
    let (n, k, m) = (p.n, p.k, p.m);
    // An empty result has nothing to compute; with k = 0 every sum is the empty sum 0.
    if out.numel() > 0 && k > 0 {
        let mut o = write::<T>(cx, &out)?;
        let (sa, sb) = (broadcast_strides(&p.a_batch, &p.batch), broadcast_strides(&p.b_batch, &p.batch));
        let (ask, bsk, osk) = (n * k, k * m, n * m);
        let mut ok = true;
        for_each_row(&p.batch, [&sa, &sb], |start, [oa, ob], len, [da, db]| {
            for j in 0..len {
                let (ia, ib, io) = (oa + j * da, ob + j * db, start + j);
                let am = x.get(ia * ask..(ia + 1) * ask);
                let bm = y.get(ib * bsk..(ib + 1) * bsk);
                let om = o.get_mut(io * osk..(io + 1) * osk);
                match (am, bm, om) {
                    (Some(am), Some(bm), Some(om)) => gemm(am, bm, om, Dims { n, k, m }, cx.threads_for(n * m * k)),
                    _ => ok = false,
                }
            }
        });
        if !ok {
            return Err(layout_bug(cx));
        }
    }
    Ok(Value::tensor(out))
}

/// `out += a @ b` for row-major `a` (n × k), `b` (k × m), `out` (n × m), all of them
/// non-empty. The loop order i, p, j keeps the inner loop contiguous and still adds
/// each `out[i, j]`'s terms in `p` order (the exact result the spec describes).
pub(super) fn gemm_in_order<T: Num>(a: &[T], b: &[T], out: &mut [T], Dims { k, m, .. }: Dims, _threads: usize) {
    for (orow, arow) in out.chunks_exact_mut(m).zip(a.chunks_exact(k)) {
        for (&av, brow) in arow.iter().zip(b.chunks_exact(m)) {
            for (o, &bv) in orow.iter_mut().zip(brow) {
                *o = o.add(av.mul(bv));
            }
        }
    }
}

/// A float product: a row vector (`n = 1`, a layer at batch 1) as `p`-ordered
/// AXPYs over the rows of `b`, which stream through memory once and give the exact
/// in-order result; anything larger through the `matrixmultiply` crate's blocked,
/// vectorized kernels (its sums are reassociated: within the engines' float
/// tolerance, F-8), the rows of `a` split across threads when there are several.
fn gemm_float<T: FloatElem + Blas>(a: &[T], b: &[T], out: &mut [T], d: Dims, threads: usize) {
    stats::record(Counter::Gemm);
    if d.n == 1 {
        super::simd::axpy_rows(a, b, out);
        return;
    }
    // With every element finite and no product sum able to overflow, a reordered sum
    // differs from the in-order one by rounding only (F-8); otherwise the order decides
    // between inf, NaN and a finite result, so the spec's order is kept.
    if !tame(a, b, d.k) {
        gemm_in_order(a, b, out, d, 1);
        return;
    }
    let parts = threads.min(d.m / COLUMN_BLOCK);
    if let Some(pool) = (parts > 1).then(|| super::simd::pool(parts)).flatten() {
        // Each thread computes all rows for a block of columns: every thread's product
        // keeps the full `n` for its blocking (splitting 32 rows in two measured slower
        // than one thread), and the blocks of `out` they write are disjoint.
        let out_cols = SharedOut(out.as_mut_ptr(), out.len());
        pool.scope(|s| {
            for i in 0..parts {
                let lo = d.m * i / parts / COLUMN_BLOCK * COLUMN_BLOCK;
                let hi = if i + 1 == parts { d.m } else { d.m * (i + 1) / parts / COLUMN_BLOCK * COLUMN_BLOCK };
                s.spawn(move |_| {
                    let out_cols = out_cols;
                    // SAFETY: `out_cols` points at `out`, borrowed mutably for this whole
                    // scope; the column ranges `lo..hi` of the threads are disjoint, so no
                    // element is written by two threads or read by any.
                    unsafe { T::gemm_columns(a, b, out_cols, d, lo..hi) }
                });
            }
        });
        stats::record(Counter::Threaded);
        return;
    }
    T::gemm(a, b, out, d);
}

/// Column blocks a threaded product splits into are multiples of this many columns
/// (whole vectors of the widest instruction set).
const COLUMN_BLOCK: usize = 16;

/// `out` shared by the threads of one product, which write disjoint columns of it.
#[derive(Clone, Copy)]
struct SharedOut<T>(*mut T, usize);

// SAFETY: the pointer is only used inside the scope that borrows `out` mutably, by
// threads writing disjoint columns (see `gemm_float`).
unsafe impl<T: Send> Send for SharedOut<T> {}
unsafe impl<T: Send> Sync for SharedOut<T> {}

/// Whether `a @ b` cannot overflow or meet a non-finite value in any summation order:
/// all elements finite and `k * max|a| * max|b|` at most half the dtype's largest value.
fn tame<T: FloatElem + Blas>(a: &[T], b: &[T], k: usize) -> bool {
    match (T::max_abs_finite(a), T::max_abs_finite(b)) {
        (Some(x), Some(y)) => {
            let largest = if T::DTYPE == DType::F32 { f32::MAX as f64 } else { f64::MAX };
            x * y * k as f64 <= largest / 2.0
        }
        _ => false,
    }
}

/// The float types `matrixmultiply` multiplies.
trait Blas: Sized + Sync + Send + 'static {
    /// `out = a @ b` (row-major, exactly n×k, k×m and n×m elements).
    fn gemm(a: &[Self], b: &[Self], out: &mut [Self], d: Dims) {
        let all = SharedOut(out.as_mut_ptr(), out.len());
        // SAFETY: `out` is borrowed mutably for the call, so all its columns are this
        // call's alone.
        unsafe { Self::gemm_columns(a, b, all, d, 0..d.m) }
    }
    /// The largest magnitude among `xs` when every element is finite (a vector loop).
    fn max_abs_finite(xs: &[Self]) -> Option<f64>;
    /// Columns `cols` of `out = a @ b`, `out` given as a pointer to its n×m elements.
    ///
    /// # Safety
    /// `out` must point at n×m elements no one else reads or writes in columns `cols`.
    unsafe fn gemm_columns(a: &[Self], b: &[Self], out: SharedOut<Self>, d: Dims, cols: std::ops::Range<usize>);
}

macro_rules! blas {
    ($t:ty, $f:path) => {
        impl Blas for $t {
            fn max_abs_finite(xs: &[$t]) -> Option<f64> {
                let (m, finite) = super::simd::run(super::simd::level(), super::simd::loops::MaxAbsFinite { xs });
                finite.then_some(m as f64)
            }

            unsafe fn gemm_columns(a: &[$t], b: &[$t], out: SharedOut<$t>, d: Dims, cols: std::ops::Range<usize>) {
                let ok = cols.start <= cols.end && cols.end <= d.m;
                if !ok || a.len() < d.n * d.k || b.len() < d.k * d.m || out.1 < d.n * d.m {
                    return;
                }
                // SAFETY: the lengths and `cols` were just checked: starting at column
                // `cols.start`, every element the strides (m, 1) address over k×w of `b`
                // and n×w of `out` (w = cols.len()) is inside them; the caller
                // guarantees these columns of `out` are this call's alone.
                unsafe {
                    $f(
                        d.n,
                        d.k,
                        cols.len(),
                        1.0,
                        a.as_ptr(),
                        d.k as isize,
                        1,
                        b.as_ptr().add(cols.start),
                        d.m as isize,
                        1,
                        0.0,
                        out.0.add(cols.start),
                        d.m as isize,
                        1,
                    )
                }
            }
        }
    };
}
blas!(f32, matrixmultiply::sgemm);
blas!(f64, matrixmultiply::dgemm);

pub(super) fn gemm_f32(a: &[f32], b: &[f32], out: &mut [f32], d: Dims, threads: usize) {
    gemm_float(a, b, out, d, threads)
}

pub(super) fn gemm_f64(a: &[f64], b: &[f64], out: &mut [f64], d: Dims, threads: usize) {
    gemm_float(a, b, out, d, threads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::run_standalone;
    use crate::Memory;
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;
    use std::rc::Rc;

    fn t(mem: &Rc<Memory>, shape: &[u64], v: &[i32]) -> Value {
        Value::tensor(Tensor::from_slice(DType::I32, shape, v, mem).unwrap())
    }

    fn run(attrs: &Attrs, a: Value, b: Value) -> Result<(Vec<u64>, Vec<f64>)> {
        let mem = Memory::new(1 << 20);
        let Value::Tensor(r) = run_standalone(Op::Matmul, attrs, &[a, b], &mem).unwrap()? else { panic!() };
        Ok((r.shape().to_vec(), (0..r.numel()).map(|i| r.get_f64(i).unwrap()).collect()))
    }

    #[test]
    fn shapes_follow_numpy() {
        let mem = Memory::new(1 << 20);
        let none = Attrs::default();
        let v = t(&mem, &[2], &[1, 2]);
        let m = t(&mem, &[2, 2], &[1, 2, 3, 4]);
        assert_eq!(run(&none, v.clone(), v.clone()).unwrap(), (vec![], vec![5.0]));
        assert_eq!(run(&none, v.clone(), m.clone()).unwrap(), (vec![2], vec![7.0, 10.0]));
        assert_eq!(run(&none, m.clone(), v.clone()).unwrap(), (vec![2], vec![5.0, 11.0]));
        let batch = t(&mem, &[3, 1, 2], &[1, 0, 0, 1, 1, 1]);
        let (shape, vals) = run(&none, batch, m.clone()).unwrap();
        assert_eq!((shape, vals), (vec![3, 1, 2], vec![1.0, 2.0, 3.0, 4.0, 4.0, 6.0]));
        let empty_k = t(&mem, &[2, 0], &[]);
        let k_rows = t(&mem, &[0, 3], &[]);
        assert_eq!(run(&none, empty_k, k_rows).unwrap(), (vec![2, 3], vec![0.0; 6]));
        let e = run(&none, m.clone(), t(&mem, &[3], &[1, 2, 3])).unwrap_err();
        assert_eq!((e.kind, e.rule), (crate::ErrorKind::OpError, "OP-matmul"));
        let mut wide = Attrs::default();
        wide.insert("out_dtype", AttrValue::Str("int8".into()));
        let big = t(&mem, &[1], &[200]);
        assert_eq!(run(&wide, big.clone(), big).unwrap(), (vec![], vec![64.0]), "(-56)^2 wraps in int8");
    }
}
