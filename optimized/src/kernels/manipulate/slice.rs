//! `strided_slice`: Python's `x[begin:end:stride]` along some axes.

use super::{check_size, copy_view_of, distinct_axes, operand, View};
use crate::error::{ErrorKind, Result};
use crate::kernels::layout::strides;
use crate::kernels::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::value::Value;
use spec_model::grammar::{AttrValue, Attrs};

/// `OP-strided_slice`: the lowering. `axes`, `begin`, `end` (required) and `strides`
/// (default all 1) are read and checked once: lists of integers (or one integer) of
/// the same length, no stride 0; otherwise the call fails with `OpError`.
pub fn strided_slice(l: &Lowering) -> Box<dyn Kernel> {
    match StridedSlice::read(l.attrs) {
        Ok(k) => Box::new(k),
        Err(e) => Box::new(Failing(e)),
    }
}

/// `OP-strided_slice`: each of `axes` sliced as Python's `[begin:end:stride]`
/// (negative bounds count from the end and bounds clamp to the dimension). An axis
/// out of range or repeated, or with `assume_inbound` a bound outside `[0, d]`, is an
/// `OpError`.
struct StridedSlice {
    axes: Vec<i64>,
    begin: Vec<i64>,
    end: Vec<i64>,
    steps: Vec<i64>,
    /// `assume_inbound`: every bound must lie in `[0, d]`.
    inbound: bool,
}

impl StridedSlice {
    fn read(a: &Attrs) -> std::result::Result<StridedSlice, String> {
        let need = |name: &str| attrs::ints(a, name)?.ok_or_else(|| format!("needs the attribute `{name}`"));
        let (axes, begin, end) = (need("axes")?, need("begin")?, need("end")?);
        let steps = attrs::ints(a, "strides")?.unwrap_or_else(|| vec![1; axes.len()]);
        if [begin.len(), end.len(), steps.len()].iter().any(|&n| n != axes.len()) {
            return Err("`axes`, `begin`, `end` and `strides` must have the same length".into());
        }
        if steps.contains(&0) {
            return Err("a stride is 0".into());
        }
        let inbound = match a.get("assume_inbound") {
            None | Some(AttrValue::Bool(false)) => false,
            Some(AttrValue::Bool(true)) => true,
            Some(_) => return Err("`assume_inbound` must be a boolean".into()),
        };
        Ok(StridedSlice { axes, begin, end, steps, inbound })
    }
}

/// `range(d)[begin:end:step]` (`step != 0`) as its first index and its length, the
/// way CPython's `PySlice_AdjustIndices` computes them (exact, in `i128`).
pub(super) fn python_slice(d: u64, begin: i64, end: i64, step: i64) -> (u64, u64) {
    let (d, step) = (i128::from(d), i128::from(step));
    // A bound counts from the end when negative, then is clamped to [lo, hi].
    let adjust = |i: i64, lo: i128, hi: i128| {
        let i = i128::from(i);
        (if i < 0 { i + d } else { i }).clamp(lo, hi)
    };
    let (start, len) = if step > 0 {
        let (b, e) = (adjust(begin, 0, d), adjust(end, 0, d));
        (b, if e > b { (e - b - 1) / step + 1 } else { 0 })
    } else {
        let (b, e) = (adjust(begin, -1, d - 1), adjust(end, -1, d - 1));
        (b, if b > e { (b - e - 1) / -step + 1 } else { 0 })
    };
    // A non-empty slice starts inside [0, d); an empty one's start is never read.
    (u64::try_from(start).unwrap_or(0), len as u64)
}

impl Kernel for StridedSlice {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        let axes = distinct_axes(cx, &self.axes, x.rank())?;
        let mut dims = x.shape().to_vec();
        let mut starts = vec![0u64; dims.len()];
        for (k, &ax) in axes.iter().enumerate() {
            let (b, e, d) = (self.begin[k], self.end[k], dims[ax]);
            let within = |i: i64| u64::try_from(i).is_ok_and(|i| i <= d);
            if self.inbound && !(within(b) && within(e)) {
                let m = format!("`assume_inbound` promises bounds in [0, {d}] on axis {ax}, got begin {b} and end {e}");
                return Err(cx.error(m));
            }
            let (start, len) = python_slice(dims[ax], self.begin[k], self.end[k], self.steps[k]);
            (starts[ax], dims[ax]) = (start, len);
        }
        check_size(cx, &dims)?;
        let out = cx.alloc(x.dtype(), &dims)?;
        if out.numel() == 0 {
            return Ok(Value::tensor(out));
        }
        // The result is not empty, so neither is the operand: its strides are exact, a
        // start lies inside its dimension, and a step taken (along an axis of length
        // 2 or more) is shorter than the dimension.
        let st = strides(x.shape());
        let (mut up, mut down) = (st.clone(), vec![0usize; st.len()]);
        for (k, &ax) in axes.iter().enumerate() {
            let step = self.steps[k];
            let stride = if dims[ax] < 2 { Some(0) } else { st[ax].checked_mul(step.unsigned_abs() as usize) };
            let Some(stride) = stride else { return Err(cx.fail(ErrorKind::Crash, "a stride past usize")) };
            (up[ax], down[ax]) = if step > 0 { (stride, 0) } else { (0, stride) };
        }
        let base = starts.iter().zip(&st).try_fold(0usize, |b, (&s, &t)| b.checked_add((s as usize).checked_mul(t)?));
        let Some(base) = base else { return Err(cx.fail(ErrorKind::Crash, "a start past usize")) };
        copy_view_of(cx, x, &out, &View { base, up: &up, down: &down })?;
        Ok(Value::tensor(out))
    }
}

#[cfg(test)]
mod tests {
    use super::python_slice;

    /// Python's own answers: `len(range(d)[b:e:s])` and its first element.
    #[test]
    fn slices_are_pythons() {
        assert_eq!(python_slice(5, 0, 5, 1), (0, 5));
        assert_eq!(python_slice(5, 1, 4, 2), (1, 2));
        assert_eq!(python_slice(5, -1, -6, -1), (4, 5));
        assert_eq!(python_slice(5, 4, 0, -2), (4, 2));
        assert_eq!(python_slice(5, -100, 100, 3), (0, 2));
        assert_eq!(python_slice(5, 100, -100, -3), (4, 2));
        assert_eq!(python_slice(5, 3, 1, 1).1, 0);
        assert_eq!(python_slice(0, 0, 1, 1).1, 0);
        assert_eq!(python_slice(0, -1, -1, -1).1, 0);
        assert_eq!(python_slice(7, i64::MIN, i64::MAX, i64::MAX), (0, 1));
        assert_eq!(python_slice(7, i64::MAX, i64::MIN, i64::MIN), (6, 1));
        assert_eq!(python_slice(u64::MAX, 0, i64::MAX, 1), (0, i64::MAX as u64));
        assert_eq!(python_slice(u64::MAX, -1, i64::MIN, -1), (u64::MAX - 1, i64::MAX as u64));
    }
}
