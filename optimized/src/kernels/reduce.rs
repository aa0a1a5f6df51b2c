//! Reductions along axes: `sum`, `mean`, `max`, `min`.
//!
//! The operand is walked once in row-major order (adjacent dimensions both reduced or
//! both kept merged into one, so rows are long), each element folded into the
//! accumulator of its output element. For a fixed output element that visits its
//! reduced elements in row-major order of the reduced indices: the oracle's order.
//! The loops are vectorized ([`simd`](super::simd)); a contiguous row folded into one
//! accumulator is folded in partial accumulators ([`loops::fold_lanes`]): exact for
//! integers, `bool`, `max` and `min` (up to which NaN or which zero sign is kept), a
//! reassociated sum for float32 and float64 (float16 sums stay in order).

use super::common::{count, created, layout_bug, operand, read, write};
use super::lanes::OutOfBounds;
use super::layout::for_each_row;
use super::simd::{self, loops, Exec, Level};
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::scalar::Num;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    Sum,
    Mean,
    Max,
    Min,
}

/// OP-sum, OP-mean, OP-max, OP-min: reduce along `axis` (absent or `None`: every axis;
/// an integer or a list; negative axes count from the end; an empty list reduces
/// nothing), keeping reduced dimensions as 1 with `keepdims` (default false). The dtype
/// is the operand's. Each output element folds its elements sequentially in row-major
/// order of the reduced indices, in the dtype: `sum` from 0, `max`/`min` from the first
/// element (integers wrap, `bool` is `uint1`, NaN propagates). `mean` is that sum
/// divided by the count in the dtype (truncating for integers); an empty float mean
/// is NaN. (The engine reassociates float32/float64 sums of long contiguous rows; see
/// the module's doc.) Errors: not a tensor; an axis out of range or repeated, or attributes of the
/// wrong kind (`OpError`); `max`/`min` of zero elements (`OpError`); an integer `mean`
/// of zero elements (`DivisionByZero`).
pub fn reduce(l: &Lowering, op: Reduce) -> Box<dyn Kernel> {
    let keepdims = match attrs::bool(l.attrs, "keepdims", false) {
        Ok(k) => k,
        Err(m) => return Box::new(Failing(m)),
    };
    match attrs::ints(l.attrs, "axis") {
        Ok(axes) => Box::new(ReduceKernel { op, axes, keepdims }),
        Err(m) => Box::new(Failing(m)),
    }
}

struct ReduceKernel {
    op: Reduce,
    axes: Option<Vec<i64>>,
    keepdims: bool,
}

impl ReduceKernel {
    /// Which dimensions of a rank-`rank` operand are reduced.
    fn reduced(&self, cx: &KernelCx, rank: usize) -> Result<Vec<bool>> {
        let Some(axes) = &self.axes else { return Ok(vec![true; rank]) };
        let mut reduced = vec![false; rank];
        for &a in axes {
            let i = cx.axis(a, rank)?;
            if reduced[i] {
                return Err(cx.error(format!("axis {a} is repeated")));
            }
            reduced[i] = true;
        }
        Ok(reduced)
    }
}

impl Kernel for ReduceKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        let reduced = self.reduced(cx, a.rank())?;
        let mut out_shape = Vec::with_capacity(a.rank());
        for (&d, &r) in a.shape().iter().zip(&reduced) {
            match (r, self.keepdims) {
                (false, _) => out_shape.push(d),
                (true, true) => out_shape.push(1),
                (true, false) => {}
            }
        }
        let n_out = created(cx, &out_shape)?;
        // With a non-empty result, every output element folds the same number of elements.
        let n_red = a.numel().checked_div(n_out).unwrap_or(0);
        if n_out > 0 && n_red == 0 {
            match self.op {
                Reduce::Max | Reduce::Min => return Err(cx.error("a reduction of zero elements has no identity")),
                Reduce::Mean if !a.dtype().is_float() => {
                    return Err(cx.fail(ErrorKind::DivisionByZero, "the integer mean of zero elements"))
                }
                _ => {}
            }
        }
        let plan = Plan { reduced: &reduced, out_shape: &out_shape, n_red };
        with_num!(a.dtype(), T => reduce_typed::<T>(cx, self.op, a, &plan))
    }
}

struct Plan<'a> {
    reduced: &'a [bool],
    out_shape: &'a [u64],
    /// The number of elements each output element folds.
    n_red: usize,
}

fn reduce_typed<T: Num>(cx: &KernelCx, op: Reduce, a: &Tensor, p: &Plan) -> Result<Value> {
    let x = read::<T>(cx, a, "the operand")?;
    let out = cx.alloc(a.dtype(), p.out_shape)?;
    if count(p.out_shape) != Some(0) {
        let mut o = write::<T>(cx, &out)?;
        // Each operand dimension's stride in the output: 0 along the reduced ones.
        let mut strides = vec![0usize; a.rank()];
        let mut step = 1usize;
        for i in (0..a.rank()).rev() {
            if !p.reduced[i] {
                strides[i] = step;
                step = step.saturating_mul(a.shape()[i] as usize);
            }
        }
        let (shape, strides) = coalesce(a.shape(), &strides);
        let exec = Exec::of(cx);
        let walked = match op {
            Reduce::Sum | Reduce::Mean => fold(exec.level, &shape, &strides, &x, &mut o, T::ZERO, T::add),
            Reduce::Max => fold(exec.level, &shape, &strides, &x, &mut o, T::LOWEST, T::max_nan),
            Reduce::Min => fold(exec.level, &shape, &strides, &x, &mut o, T::HIGHEST, T::min_nan),
        };
        exec.record(x.len(), false);
        walked.map_err(|_| layout_bug(cx))?;
        if op == Reduce::Mean {
            for v in o.iter_mut() {
                *v = T::mean(*v, p.n_red).unwrap_or(*v);
            }
        }
    }
    Ok(Value::tensor(out))
}

/// `shape` with dimensions of 1 dropped and each dimension merged into the one before
/// it when that one's output stride is its own times its extent (both reduced: both 0;
/// both kept and adjacent), with the merged strides: the same walk in longer rows.
fn coalesce(shape: &[u64], strides: &[usize]) -> (Vec<u64>, Vec<usize>) {
    let (mut dims, mut st): (Vec<u64>, Vec<usize>) = (Vec::new(), Vec::new());
    for (&d, &s) in shape.iter().zip(strides) {
        if d == 1 {
            continue;
        }
        match (dims.last_mut(), st.last_mut()) {
            (Some(ld), Some(ls)) if (d as usize).checked_mul(s) == Some(*ls) => {
                *ld = ld.saturating_mul(d);
                *ls = s;
            }
            _ => {
                dims.push(d);
                st.push(s);
            }
        }
    }
    (dims, st)
}

/// Folds every element of `x` (of `shape`) into its accumulator in `acc` (at the
/// offset `strides` give), each accumulator starting from `init`: with `init` the
/// identity of `f`, the same as folding from the first element.
fn fold<T: Num>(
    level: Level,
    shape: &[u64],
    strides: &[usize],
    x: &[T],
    acc: &mut [T],
    init: T,
    f: impl Fn(T, T) -> T,
) -> std::result::Result<(), OutOfBounds> {
    acc.fill(init);
    let mut result = Ok(());
    let reassociate = T::DTYPE != DType::F16;
    for_each_row(shape, [strides], |start, [at], len, [step]| {
        let row = x.get(start..start + len);
        let done = match (row, step) {
            (Some(row), 0) => acc.get_mut(at).map(|a| {
                *a = simd::run(level, loops::FoldRow { init: *a, id: init, row, reassociate, f: &f });
            }),
            (Some(row), 1) => {
                acc.get_mut(at..at + len).map(|acc| simd::run(level, loops::FoldColumns { acc, row, f: &f }))
            }
            _ => None,
        };
        if done.is_none() {
            result = Err(OutOfBounds);
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::run_standalone;
    use crate::Memory;
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;

    fn t(shape: &[u64], v: &[f32]) -> Value {
        Value::tensor(Tensor::from_slice(crate::DType::F32, shape, v, &Memory::new(1 << 20)).unwrap())
    }

    fn run(op: Op, axis: Option<AttrValue>, x: Value) -> Result<Vec<f64>> {
        let mut attrs = Attrs::default();
        if let Some(a) = axis {
            attrs.insert("axis", a);
        }
        let Value::Tensor(r) = run_standalone(op, &attrs, &[x], &Memory::new(1 << 20)).unwrap()? else { panic!() };
        Ok((0..r.numel()).map(|i| r.get_f64(i).unwrap()).collect())
    }

    #[test]
    fn folds_in_row_major_order_of_the_reduced_indices() {
        let x = t(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(run(Op::Sum, Some(AttrValue::Int(0)), x.clone()).unwrap(), [5.0, 7.0, 9.0]);
        assert_eq!(run(Op::Sum, Some(AttrValue::Int(-1)), x.clone()).unwrap(), [6.0, 15.0]);
        assert_eq!(run(Op::Max, None, x.clone()).unwrap(), [6.0]);
        assert_eq!(run(Op::Mean, Some(AttrValue::List(vec![])), x.clone()).unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        // 1e8 + 1 + ... in order loses each 1; a pairwise sum would not.
        let y = t(&[4], &[1e8, 1.0, 1.0, -1e8]);
        assert_eq!(run(Op::Sum, None, y).unwrap(), [0.0]);
        let n = t(&[3], &[1.0, f32::NAN, 2.0]);
        assert!(run(Op::Min, None, n).unwrap()[0].is_nan());
    }

    #[test]
    fn empty_reductions() {
        let e = t(&[0, 2], &[]);
        assert_eq!(run(Op::Sum, Some(AttrValue::Int(0)), e.clone()).unwrap(), [0.0, 0.0]);
        assert!(run(Op::Mean, Some(AttrValue::Int(0)), e.clone()).unwrap().iter().all(|v| v.is_nan()));
        assert_eq!(run(Op::Max, Some(AttrValue::Int(1)), e.clone()).unwrap(), [] as [f64; 0]);
        let err = run(Op::Max, Some(AttrValue::Int(0)), e.clone()).unwrap_err();
        assert_eq!((err.kind, err.rule), (ErrorKind::OpError, "OP-max"));
        let err = run(Op::Sum, Some(AttrValue::List(vec![AttrValue::Int(0), AttrValue::Int(-2)])), e).unwrap_err();
        assert_eq!(err.kind, ErrorKind::OpError);
    }
}
