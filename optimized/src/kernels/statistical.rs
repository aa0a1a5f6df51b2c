//! Statistics: `prod`, `variance`, `std`, `argmax`, `argmin`, `cumsum`.
//!
//! A reduction first lays the operand out as rows ([`rows`]): the kept dimensions
//! outside, the reduced ones inside, each in its original order, so every output
//! element folds one contiguous row in row-major order of its reduced indices (no copy
//! when the reduced dimensions already are the trailing ones). Rows fold in order, in
//! the dtype (no reassociation: `variance` subtracts a mean that a reordered sum would
//! move, and the differential tolerance does not bound that), and large outputs split
//! their rows across threads.

use super::common::{created, operand, read, write};
use super::simd::parallel_chunks_mut;
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::scalar::{Num, Real};
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use std::borrow::Cow;

/// `x` (of `shape`) with the `reduced` dimensions moved inside, both groups in their
/// order: row `i` holds output element `i`'s elements.
pub(super) fn rows<'a, T: Copy>(x: &'a [T], shape: &[u64], reduced: &[bool]) -> Cow<'a, [T]> {
    let first_reduced = reduced.iter().position(|&r| r).unwrap_or(reduced.len());
    if reduced[first_reduced..].iter().all(|&r| r) {
        return Cow::Borrowed(x);
    }
    let mut st = vec![0usize; shape.len()];
    let mut acc = 1usize;
    for i in (0..shape.len()).rev() {
        st[i] = acc;
        acc *= shape[i] as usize;
    }
    let order: Vec<usize> =
        (0..shape.len()).filter(|&i| !reduced[i]).chain((0..shape.len()).filter(|&i| reduced[i])).collect();
    let dims: Vec<usize> = order.iter().map(|&i| shape[i] as usize).collect();
    let strides: Vec<usize> = order.iter().map(|&i| st[i]).collect();
    let mut out = Vec::with_capacity(x.len());
    let mut idx = vec![0usize; dims.len()];
    let mut at = 0usize;
    for _ in 0..x.len() {
        out.push(x[at]);
        for d in (0..dims.len()).rev() {
            idx[d] += 1;
            at += strides[d];
            if idx[d] < dims[d] {
                break;
            }
            at -= strides[d] * dims[d];
            idx[d] = 0;
        }
    }
    Cow::Owned(out)
}

/// Which dimensions `axes` (`None`: all) reduce, and the result shape.
fn reduction(cx: &KernelCx, shape: &[u64], axes: &Option<Vec<i64>>, keepdims: bool) -> Result<(Vec<bool>, Vec<u64>)> {
    let mut reduced = vec![axes.is_none(); shape.len()];
    for &a in axes.iter().flatten() {
        let i = cx.axis(a, shape.len())?;
        if reduced[i] {
            return Err(cx.error(format!("axis {a} is repeated")));
        }
        reduced[i] = true;
    }
    let out = shape
        .iter()
        .zip(&reduced)
        .filter_map(|(&d, &r)| match (r, keepdims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    Ok((reduced, out))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    Prod,
    Variance,
    Std,
    Argmax,
    Argmin,
}

/// OP-prod, OP-variance, OP-std, OP-argmax, OP-argmin (the oracle's semantics:
/// `operator-semantics.md`). `prod` folds from 1; `variance` is `Σ(x - Σx/n)²/n` in the
/// dtype (integer `n = 0`: `DivisionByZero`); `std` its `sqrt` (floats only); the
/// arg-reductions take one integer axis (or none: the flattened tensor) and give the
/// `int64` index of the first extreme, the first NaN winning; zero elements are an
/// `OpError`. Attributes of the wrong kind: a failing kernel.
pub fn stat(l: &Lowering, op: Stat) -> Box<dyn Kernel> {
    let keepdims = match attrs::bool(l.attrs, "keepdims", false) {
        Ok(k) => k,
        Err(m) => return Box::new(Failing(m)),
    };
    let axes = match op {
        Stat::Argmax | Stat::Argmin => attrs::opt_int(l.attrs, "axis").map(|a| a.map(|a| vec![a])),
        _ => attrs::ints(l.attrs, "axis"),
    };
    match axes {
        Ok(axes) => Box::new(StatKernel { op, axes, keepdims }),
        Err(m) => Box::new(Failing(m)),
    }
}

struct StatKernel {
    op: Stat,
    axes: Option<Vec<i64>>,
    keepdims: bool,
}

impl Kernel for StatKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        let (reduced, out_shape) = reduction(cx, a.shape(), &self.axes, self.keepdims)?;
        let n_out = created(cx, &out_shape)?;
        let n = a.numel().checked_div(n_out).unwrap_or(0);
        let arg = matches!(self.op, Stat::Argmax | Stat::Argmin);
        if n_out > 0 && n == 0 {
            if arg {
                return Err(cx.error("the arg-reduction of zero elements has no index"));
            }
            if self.op == Stat::Variance && !a.dtype().is_float() {
                return Err(cx.fail(ErrorKind::DivisionByZero, "the integer variance of zero elements"));
            }
        }
        let job = Job { reduced: &reduced, out_shape: &out_shape, n };
        match self.op {
            Stat::Std => match a.dtype() {
                DType::F16 => std_typed::<half::f16>(cx, a, &job),
                DType::F32 => std_typed::<f32>(cx, a, &job),
                DType::F64 => std_typed::<f64>(cx, a, &job),
                d => Err(cx.error(format!("needs a floating-point tensor, not {}", d.data_type()))),
            },
            op => with_num!(a.dtype(), T => stat_typed::<T>(cx, op, a, &job)),
        }
    }
}

struct Job<'a> {
    reduced: &'a [bool],
    out_shape: &'a [u64],
    /// Elements per row.
    n: usize,
}

/// Runs `f` on each row of `a` into its output element, rows split across threads.
fn per_row<T: Num + Send + Sync, O: Num + Send>(
    cx: &KernelCx,
    a: &Tensor,
    job: &Job,
    dtype: DType,
    f: impl Fn(&[T]) -> O + Sync,
) -> Result<Value> {
    let x = read::<T>(cx, a, "the operand")?;
    let out = cx.alloc_for_overwrite(dtype, job.out_shape)?;
    {
        let mut o = write::<O>(cx, &out)?;
        if !o.is_empty() {
            let laid = rows(&x, a.shape(), job.reduced);
            let n = job.n;
            let min_rows = (1usize << 14) / n.max(1) + 1;
            parallel_chunks_mut(cx.threads_for(x.len()), &mut o, min_rows, |start, part| {
                for (i, slot) in part.iter_mut().enumerate() {
                    let r = start + i;
                    *slot = f(&laid[r * n..r * n + n]);
                }
            });
        }
    }
    Ok(Value::tensor(out))
}

fn variance_row<T: Num>(row: &[T]) -> T {
    let n = row.len();
    let mean = T::mean(row.iter().fold(T::ZERO, |s, &x| s.add(x)), n).unwrap_or(T::ZERO);
    let sq = row.iter().fold(T::ZERO, |s, &x| {
        let d = x.sub(mean);
        s.add(d.mul(d))
    });
    T::mean(sq, n).unwrap_or(T::ZERO)
}

fn arg_row<T: Num>(row: &[T], max: bool) -> i64 {
    let mut at = 0usize;
    #[allow(clippy::eq_op)]
    let nan = |x: T| x != x;
    for (j, &x) in row.iter().enumerate().skip(1) {
        let b = row[at];
        if nan(b) {
            break;
        }
        if nan(x) || if max { x > b } else { x < b } {
            at = j;
        }
    }
    at as i64
}

fn stat_typed<T: Num + Send + Sync>(cx: &KernelCx, op: Stat, a: &Tensor, job: &Job) -> Result<Value> {
    match op {
        Stat::Prod => per_row::<T, T>(cx, a, job, a.dtype(), |r| r.iter().fold(T::ONE, |p, &x| p.mul(x))),
        Stat::Variance => per_row::<T, T>(cx, a, job, a.dtype(), variance_row),
        Stat::Argmax => per_row::<T, i64>(cx, a, job, DType::I64, |r| arg_row(r, true)),
        Stat::Argmin => per_row::<T, i64>(cx, a, job, DType::I64, |r| arg_row(r, false)),
        Stat::Std => Err(cx.fail(ErrorKind::Crash, "std reached the generic path")),
    }
}

fn std_typed<T: Real + Send + Sync>(cx: &KernelCx, a: &Tensor, job: &Job) -> Result<Value> {
    per_row::<T, T>(cx, a, job, a.dtype(), |r| variance_row(r).sqrt())
}

/// OP-cumsum: each element converted to `dtype` (default: the operand's) as OP-astype
/// converts it, then running sums from 0 along `axis` (none: the flattened tensor, a
/// 1-D result), inclusive or `exclusive`, in that dtype. Errors: not a tensor; `axis`
/// out of range; a dtype without storage; a failed conversion (`OpError`).
pub fn cumsum(l: &Lowering) -> Box<dyn Kernel> {
    let read = || -> std::result::Result<CumsumKernel, String> {
        Ok(CumsumKernel {
            axis: attrs::opt_int(l.attrs, "axis")?,
            dtype: attrs::dtype(l.attrs, "dtype")?,
            exclusive: attrs::bool(l.attrs, "exclusive", false)?,
        })
    };
    match read() {
        Ok(k) => Box::new(k),
        Err(m) => Box::new(Failing(m)),
    }
}

struct CumsumKernel {
    axis: Option<i64>,
    dtype: Option<spec_model::grammar::DataType>,
    exclusive: bool,
}

impl Kernel for CumsumKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        let to = match self.dtype {
            None => a.dtype(),
            Some(d) => DType::of(d).ok_or_else(|| cx.error(format!("dtype {d} has no tensor storage")))?,
        };
        let (shape, axis) = match self.axis {
            None => (vec![a.numel() as u64], 0),
            Some(ax) => (a.shape().to_vec(), cx.axis(ax, a.rank())?),
        };
        created(cx, &shape)?;
        with_num!(a.dtype(), S => with_num!(to, D => cumsum_typed::<S, D>(cx, a, &shape, axis, self.exclusive, to)))
    }
}

fn cumsum_typed<S: Num, D: Num>(
    cx: &KernelCx,
    a: &Tensor,
    shape: &[u64],
    axis: usize,
    exclusive: bool,
    to: DType,
) -> Result<Value> {
    let x = read::<S>(cx, a, "the operand")?;
    let converted: Vec<D> = x
        .iter()
        .map(|v| v.cast::<D>())
        .collect::<Option<_>>()
        .ok_or_else(|| cx.error("a value does not convert to the dtype"))?;
    let out = cx.alloc_for_overwrite(to, shape)?;
    {
        let mut o = write::<D>(cx, &out)?;
        let len = shape[axis] as usize;
        let inner: usize = shape[axis + 1..].iter().map(|&d| d as usize).product();
        if len > 0 && inner > 0 {
            // Blocks of `len` rows of `inner`: each column is one running sum, the
            // columns advance together (contiguous inner loops).
            for (xb, ob) in converted.chunks_exact(len * inner).zip(o.chunks_exact_mut(len * inner)) {
                let mut acc = vec![D::ZERO; inner];
                for (xr, or) in xb.chunks_exact(inner).zip(ob.chunks_exact_mut(inner)) {
                    for ((s, &v), y) in acc.iter_mut().zip(xr).zip(or.iter_mut()) {
                        if exclusive {
                            *y = *s;
                            *s = s.add(v);
                        } else {
                            *s = s.add(v);
                            *y = *s;
                        }
                    }
                }
            }
        }
    }
    Ok(Value::tensor(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_put_the_reduced_dimensions_inside_in_order() {
        let x: Vec<u32> = (0..6).collect();
        assert_eq!(&*rows(&x, &[2, 3], &[true, false]), &[0, 3, 1, 4, 2, 5]);
        assert!(matches!(rows(&x, &[2, 3], &[false, true]), Cow::Borrowed(_)));
        assert_eq!(&*rows(&x, &[3, 1, 2], &[false, true, false]), &[0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn arg_rows_pick_the_first_extreme_and_the_first_nan() {
        assert_eq!(arg_row(&[1.0f32, 3.0, 3.0, -1.0], true), 1);
        assert_eq!(arg_row(&[1.0f32, 3.0, -1.0, -1.0], false), 2);
        assert_eq!(arg_row(&[1.0f32, f32::NAN, 9.0, f32::NAN], true), 1);
        assert_eq!(arg_row(&[1.0f32, f32::NAN, -9.0], false), 1);
        assert_eq!(variance_row(&[1i32, 2, 4]), 1);
        assert_eq!(variance_row(&[1.0f64, 2.0, 3.0, 4.0]), 1.25);
    }
}
