//! The reductions `sum`, `mean`, `max`, `min`.

use super::broadcast::{strides, Walk};
use super::elem::{map_data, Elem};
use super::{tensor_value, Cx};
use crate::eval::value::{ErrorKind, EvalResult, Value};
use spec_model::grammar::TensorData;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reduce {
    Sum,
    Mean,
    Max,
    Min,
}

/// OP-sum, OP-mean, OP-max, OP-min: reduce along `axis` (absent or `None`: every axis;
/// an integer or a list; negative axes count from the end; an empty list reduces
/// nothing), keeping reduced dimensions as 1 with `keepdims` (default false). The dtype
/// is the operand's. Each output element folds the reduced elements sequentially in
/// row-major order of the reduced indices, in the dtype: `sum` from 0, `max`/`min`
/// from the first element (integers wrap, `bool` is `uint1`; `max`/`min` give NaN if
/// any element is NaN).
/// `mean` is that sum divided by the count in the dtype (truncating for integers).
/// An empty sum is 0; an empty float mean is NaN.
/// Errors: not a tensor; an axis out of range or repeated; `max`/`min` of zero elements
/// (`OpError`); an integer `mean` of zero elements (`DivisionByZero`).
pub(crate) fn reduce(cx: &Cx, args: &[Value], op: Reduce) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let keepdims = cx.attr_bool("keepdims", false)?;
    let ndim = a.ndim();
    let reduced = match cx.attr_ints("axis")? {
        None => (0..ndim).collect(),
        Some(list) => cx.axes(&list, ndim)?,
    };
    let st = strides(&a.shape);
    let mut out_shape = Vec::new();
    let (mut kept_dims, mut kept_strides, mut red_dims, mut red_strides) = (vec![], vec![], vec![], vec![]);
    for (i, &d) in a.shape.iter().enumerate() {
        if reduced.contains(&i) {
            red_dims.push(d);
            red_strides.push(st[i]);
            if keepdims {
                out_shape.push(1);
            }
        } else {
            kept_dims.push(d);
            kept_strides.push(st[i]);
            out_shape.push(d);
        }
    }
    // The reduced offsets are listed only for a non-empty result (then there are at
    // most as many as the operand's elements).
    let inner: Vec<usize> =
        if cx.numel(&out_shape)? == 0 { Vec::new() } else { Walk::new(0, red_dims, red_strides).collect() };
    let outer = Walk::new(0, kept_dims, kept_strides);
    let data: TensorData = map_data!(&a.data, v => reduce_loop(cx, op, v, outer, &inner)?);
    Ok(tensor_value(a.dtype, out_shape, data))
}

fn reduce_loop<T: Elem>(cx: &Cx, op: Reduce, v: &[T], outer: Walk, inner: &[usize]) -> EvalResult<Vec<T>> {
    outer
        .map(|base| {
            let mut xs = inner.iter().map(|o| v[base + o]);
            match op {
                Reduce::Sum => Ok(xs.fold(T::zero(), T::plus)),
                Reduce::Mean => {
                    let sum = xs.fold(T::zero(), T::plus);
                    T::mean(sum, inner.len())
                        .ok_or_else(|| cx.fail(ErrorKind::DivisionByZero, "the integer mean of zero elements"))
                }
                Reduce::Max | Reduce::Min => {
                    let f = xs.next().ok_or_else(|| cx.error("a reduction of zero elements has no identity"))?;
                    Ok(if op == Reduce::Max { xs.fold(f, T::propagating_max) } else { xs.fold(f, T::propagating_min) })
                }
            }
        })
        .collect()
}
