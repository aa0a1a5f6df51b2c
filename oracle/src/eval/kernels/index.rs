//! Element indexing: `gather_elements` and `scatter_elements` (ONNX GatherElements and
//! ScatterElements). A position `p` of `indices` names the position of `data` that is
//! `p` with its coordinate along `axis` replaced by `indices[p]`; an index `v` in
//! `[-d, 0)` counts from the end once (`v + d`), one outside `[-d, d)` is an `OpError`.

use super::broadcast::strides;
use super::elem::{map_data2, Elem};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{AttrValue, NDArray, Scalar};

/// The checks both operators make: `axis` (default 0) in range for `data`; `indices` of
/// an integer dtype and `data`'s rank, along every other axis no longer than `data`.
/// Returns the normalized axis.
fn pair(cx: &Cx, data: &NDArray, indices: &NDArray) -> EvalResult<usize> {
    let axis = cx.axis(cx.attr_int("axis", 0)?, data.ndim())?;
    if !(indices.dtype.is_int() || indices.dtype.is_uint()) || indices.dtype.is_bool() {
        return Err(cx.error(format!("indices must have an integer dtype, not {}", indices.dtype)));
    }
    if indices.ndim() != data.ndim() {
        return Err(cx.error(format!(
            "data (rank {}) and indices (rank {}) must have the same rank",
            data.ndim(),
            indices.ndim()
        )));
    }
    for (j, (&i, &d)) in indices.shape.iter().zip(&data.shape).enumerate() {
        if j != axis && i > d {
            return Err(cx.error(format!("indices have length {i} along axis {j}, where data has only {d}")));
        }
    }
    Ok(axis)
}

/// For each position of `indices` in row-major order, the flat offset in `data` it
/// names (the index along `axis` wrapped once, checked to be in range).
fn targets(cx: &Cx, data: &NDArray, indices: &NDArray, axis: usize) -> EvalResult<Vec<usize>> {
    let ds = strides(&data.shape);
    let d = data.shape[axis] as i128;
    let mut idx = vec![0u64; indices.ndim()];
    let mut out = Vec::with_capacity(indices.data.len());
    for n in 0..indices.data.len() {
        let Scalar::Int(v) = indices.data.get(n) else {
            return Err(cx.error("indices must be integers"));
        };
        let w = if v < 0 { v + d } else { v };
        if !(0..d).contains(&w) {
            return Err(cx.error(format!("index {v} is out of range for axis {axis} of length {d}")));
        }
        let mut at = 0i128;
        for (j, &c) in idx.iter().enumerate() {
            let coord = if j == axis { w } else { c as i128 };
            at += coord * ds[j] as i128;
        }
        out.push(at as usize);
        // The next position of `indices` in row-major order.
        for j in (0..idx.len()).rev() {
            idx[j] += 1;
            if idx[j] < indices.shape[j] {
                break;
            }
            idx[j] = 0;
        }
    }
    Ok(out)
}

/// OP-gather_elements: `out[p] = data[p with axis replaced by indices[p]]`, of
/// `indices`' shape and `data`'s dtype. Errors: not tensors; `axis` (default 0) out of
/// range; indices not of an integer dtype or of another rank; along another axis,
/// indices longer than `data`; an index outside `[-d, d)` for the axis length `d`.
pub(crate) fn gather_elements(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let data = cx.tensor(&args[0], "data")?;
    let indices = cx.tensor(&args[1], "indices")?;
    let axis = pair(cx, &data, &indices)?;
    cx.numel(&indices.shape)?;
    let at = targets(cx, &data, &indices, axis)?;
    let out = super::elem::gather(&data.data, at.into_iter());
    Ok(tensor_value(data.dtype, indices.shape.clone(), out))
}

/// The combination of an element with an update under a reduction.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reduction {
    Update,
    Add,
    Mul,
    Mean,
    Max,
    Min,
}

/// `f(element, update)` in the dtype: the update; the sum or product (integers wrap,
/// `bool` is `uint1`); `(element + update) / 2` (integers truncate, so `bool` gives
/// `false`); NumPy's NaN-propagating `maximum` or `minimum`.
fn combine<T: Elem>(r: Reduction, x: T, u: T) -> T {
    match r {
        Reduction::Update => u,
        Reduction::Add => x.plus(u),
        Reduction::Mul => x.times(u),
        Reduction::Mean => T::mean(x.plus(u), 2).unwrap_or(u),
        Reduction::Max => x.propagating_max(u),
        Reduction::Min => x.propagating_min(u),
    }
}

/// OP-scatter_elements: a copy of `data` where, for each position `p` of `indices` in
/// row-major order, the element at `t = p with axis replaced by indices[p]` becomes
/// `f(out[t], updates[p])` under `reduction` (default `"update"`: the update, so of
/// duplicate targets the last in row-major order wins; `"add"`, `"mul"`, `"mean"`,
/// `"max"`, `"min"` as [`combine`]). Errors: not tensors; `axis` (default 0) out of
/// range; indices not of an integer dtype, of another rank or of another shape than
/// `updates`; `updates` of another dtype than `data`; along another axis, indices
/// longer than `data`; an index outside `[-d, d)`; another reduction.
pub(crate) fn scatter_elements(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 3)?;
    let data = cx.tensor(&args[0], "data")?;
    let indices = cx.tensor(&args[1], "indices")?;
    let updates = cx.tensor(&args[2], "updates")?;
    let r = match cx.attr("reduction") {
        None => Reduction::Update,
        Some(AttrValue::Str(s)) => match s.as_str() {
            "update" => Reduction::Update,
            "add" => Reduction::Add,
            "mul" => Reduction::Mul,
            "mean" => Reduction::Mean,
            "max" => Reduction::Max,
            "min" => Reduction::Min,
            other => return Err(cx.error(format!("no reduction {other:?}"))),
        },
        Some(other) => return Err(cx.error(format!("reduction must be a string, not {other:?}"))),
    };
    let axis = pair(cx, &data, &indices)?;
    if updates.shape != indices.shape {
        return Err(
            cx.error(format!("updates have shape {:?}, other than indices' {:?}", updates.shape, indices.shape))
        );
    }
    if updates.dtype != data.dtype {
        return Err(cx.error(format!("updates have dtype {}, other than data's {}", updates.dtype, data.dtype)));
    }
    cx.numel(&data.shape)?;
    let at = targets(cx, &data, &indices, axis)?;
    let out = map_data2!(wrap, &data.data, &updates.data, x, u => {
        let mut out = x.clone();
        for (n, &t) in at.iter().enumerate() {
            out[t] = combine(r, out[t], u[n]);
        }
        out
    }, return Err(cx.error("updates have another dtype than data")));
    Ok(tensor_value(data.dtype, data.shape.clone(), out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{Attrs, DataType, TensorData};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn run(op: Op, args: &[Value], attrs: &[(&str, AttrValue)]) -> EvalResult<Value> {
        let mut a = Attrs::default();
        attrs.iter().for_each(|(k, v)| a.insert(*k, v.clone()));
        crate::eval::ops::eval_op_standalone(op, args, &a, Span::SYNTHETIC)
    }

    fn i32s(v: &[i32], shape: &[u64]) -> Value {
        tensor_value(DataType::INT32, shape.to_vec(), TensorData::I32(v.to_vec()))
    }

    fn i64s(v: &[i64], shape: &[u64]) -> Value {
        tensor_value(DataType::INT64, shape.to_vec(), TensorData::I64(v.to_vec()))
    }

    fn data(v: &Value) -> TensorData {
        let Value::Tensor(t) = v else { panic!("a tensor") };
        t.borrow().data.clone()
    }

    #[test]
    fn gather_wraps_negative_indices_once() {
        let x = i32s(&[1, 2, 3, 4, 5, 6], &[2, 3]);
        let g = run(Op::GatherElements, &[x.clone(), i64s(&[-1, 0, 1, -3], &[2, 2])], &[("axis", AttrValue::Int(1))]);
        assert_eq!(data(&g.unwrap()), TensorData::I32(vec![3, 1, 5, 4]));
        let g = run(Op::GatherElements, &[x.clone(), i64s(&[1, 0, 1], &[1, 3])], &[]);
        assert_eq!(data(&g.unwrap()), TensorData::I32(vec![4, 2, 6]));
        for bad in [3, -4] {
            let e = run(Op::GatherElements, &[x.clone(), i64s(&[bad], &[1, 1])], &[("axis", AttrValue::Int(1))]);
            assert_eq!(e.err().expect("an error").rule, "OP-gather_elements");
        }
        let e = run(Op::GatherElements, &[x.clone(), i64s(&[0, 0, 0], &[3, 1])], &[("axis", AttrValue::Int(1))]);
        assert_eq!(e.err().expect("an error").rule, "OP-gather_elements", "indices longer than data along axis 0");
        let empty = run(Op::GatherElements, &[x, i64s(&[], &[2, 0])], &[("axis", AttrValue::Int(1))]);
        assert!(data(&empty.unwrap()).is_empty());
    }

    #[test]
    fn scatter_is_sequential_in_row_major_order() {
        let x = i32s(&[10, 20, 30, -5, -7, 9], &[2, 3]);
        let i = i64s(&[0, 0, -1, 2, 2, 2], &[2, 3]);
        let u = i32s(&[1, 2, 3, 4, 5, -6], &[2, 3]);
        let s = |r: &str| {
            let attrs = [("axis", AttrValue::Int(1)), ("reduction", AttrValue::Str(r.into()))];
            data(&run(Op::ScatterElements, &[x.clone(), i.clone(), u.clone()], &attrs).unwrap())
        };
        assert_eq!(s("update"), TensorData::I32(vec![2, 20, 3, -5, -7, -6]), "the last duplicate wins");
        assert_eq!(s("add"), TensorData::I32(vec![13, 20, 33, -5, -7, 12]));
        assert_eq!(s("mul"), TensorData::I32(vec![20, 20, 90, -5, -7, -1080]));
        // ((10 + 1) / 2 + 2) / 2 = (5 + 2) / 2 = 3; ((9 + 4) / 2 + 5) / 2 = 5, (5 - 6) / 2 = 0.
        assert_eq!(s("mean"), TensorData::I32(vec![3, 20, 16, -5, -7, 0]));
        assert_eq!(s("max"), TensorData::I32(vec![10, 20, 30, -5, -7, 9]));
        assert_eq!(s("min"), TensorData::I32(vec![1, 20, 3, -5, -7, -6]));
        let e = run(
            Op::ScatterElements,
            &[x.clone(), i.clone(), u.clone()],
            &[("reduction", AttrValue::Str("sum".into()))],
        );
        assert_eq!(e.err().expect("an error").rule, "OP-scatter_elements");
        let e = run(
            Op::ScatterElements,
            &[x.clone(), i64s(&[3], &[1, 1]), i32s(&[0], &[1, 1])],
            &[("axis", AttrValue::Int(1))],
        );
        assert_eq!(e.err().expect("an error").rule, "OP-scatter_elements");
        let e = run(Op::ScatterElements, &[x, i, i64s(&[0; 6], &[2, 3])], &[]);
        assert_eq!(e.err().expect("an error").rule, "OP-scatter_elements", "updates of another dtype");
    }

    #[test]
    fn scatter_float_mean_and_nan() {
        let x = tensor_value(DataType::FLOAT32, vec![3], TensorData::F32(vec![f32::NAN, 1.0, 2.0]));
        let i = i64s(&[0, 1, 2], &[3]);
        let u = tensor_value(DataType::FLOAT32, vec![3], TensorData::F32(vec![1.0, f32::NAN, 3.0]));
        let m = run(Op::ScatterElements, &[x, i, u], &[("reduction", AttrValue::Str("max".into()))]).unwrap();
        let TensorData::F32(v) = data(&m) else { panic!() };
        assert!(v[0].is_nan() && v[1].is_nan() && v[2] == 3.0, "NaN propagates: {v:?}");
    }
}
