//! Tensor creation: `zeros`, `ones`, `full`, `arange`, and `one_hot` (creation-like).

use super::elem::convert_scalar;
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, PrimScalar, Value};
use spec_model::grammar::{DataType, Scalar};

/// A tensor of `shape` and `dtype` whose every element is `value` (already of the dtype).
fn filled(cx: &Cx, shape: Vec<u64>, dtype: DataType, value: Scalar) -> EvalResult<Value> {
    let n = cx.numel(&shape)?;
    let mut data = cx.storage(dtype)?;
    for _ in 0..n {
        data.push(value).map_err(|m| cx.error(m))?;
    }
    Ok(tensor_value(dtype, shape, data))
}

/// OP-zeros, OP-ones: a new tensor of `shape` and the attribute `dtype` filled with 0
/// (1; `True` for `bool`). Errors: `shape` not a shape; `dtype` missing or without
/// storage (`OpError`); a negative dimension (`NegativeDimension`); over 2^26 elements
/// (`MemoryExhausted`).
pub(crate) fn zeros_ones(cx: &Cx, args: &[Value], one: bool) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let shape = cx.dims(&cx.shape(&args[0], "the shape")?)?;
    let dtype = cx.attr_dtype("dtype")?.ok_or_else(|| cx.error("needs the attribute `dtype`"))?;
    let value = convert_scalar(Scalar::Int(one as i128), dtype).map_err(|m| cx.error(m))?;
    filled(cx, shape, dtype, value)
}

/// A `PrimValue`'s value and dtype.
fn prim(p: &PrimScalar) -> (Scalar, DataType) {
    match *p {
        PrimScalar::Int(i, dt) => (Scalar::Int(i as i128), dt),
        PrimScalar::Float(f, dt) => (Scalar::Float(f), dt),
        PrimScalar::Bool(b) => (Scalar::Bool(b), DataType::BOOL),
    }
}

/// OP-full: a new tensor of `shape` filled with `fill_value` (a rank-0 tensor, or a
/// `PrimValue`) converted to the attribute `dtype` (default: the fill value's) as
/// OP-astype converts. Errors: `shape` not a shape; the fill value not a scalar; a
/// conversion error (`OpError`); a negative dimension (`NegativeDimension`).
pub(crate) fn full(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let shape = cx.dims(&cx.shape(&args[0], "the shape")?)?;
    let (value, own) = match &args[1] {
        Value::Prim(p) => prim(p),
        v => {
            let t = cx.tensor(v, "the fill value")?;
            if t.ndim() != 0 {
                return Err(cx.error(format!("the fill value must be a scalar (rank 0), not rank {}", t.ndim())));
            }
            (t.data.get(0), t.dtype)
        }
    };
    let dtype = cx.attr_dtype("dtype")?.filter(|d| !d.is_void()).unwrap_or(own);
    cx.storage(dtype)?;
    let value = convert_scalar(value, dtype).map_err(|m| cx.error(m))?;
    filled(cx, shape, dtype, value)
}

/// OP-arange: `arange(start, end, step)` (three `PrimValue`s) is the 1-D tensor of
/// `max(ceil((end - start) / step), 0)` elements `start + i * step`. The dtype is the
/// attribute `dtype`, else `int64` when all three are integers and `float32`
/// otherwise. With integer arguments and an integer (or `bool`) dtype the length and
/// elements are exact, then wrapped into the dtype; otherwise both are computed in
/// float64 and each element converted to the dtype as OP-astype converts.
/// Errors: an argument not a `PrimValue`; a zero step; a NaN or infinite length; more
/// than 2^26 elements; a conversion error.
pub(crate) fn arange(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 3)?;
    let mut vals = [Scalar::Int(0); 3];
    for (i, what) in ["start", "end", "step"].iter().enumerate() {
        match &args[i] {
            Value::Prim(p) => vals[i] = prim(p).0,
            v => return Err(cx.error(format!("`{what}` must be a PrimValue, got {}", v.kind()))),
        }
    }
    let ints: Option<Vec<i128>> = vals
        .iter()
        .map(|s| match *s {
            Scalar::Int(i) => Some(i),
            Scalar::Bool(b) => Some(b as i128),
            Scalar::Float(_) => None,
        })
        .collect();
    let dtype = match cx.attr_dtype("dtype")?.filter(|d| !d.is_void()) {
        Some(d) => d,
        None if ints.is_some() => DataType::INT64,
        None => DataType::FLOAT32,
    };
    let mut data = cx.storage(dtype)?;
    let elems: Vec<Scalar> = match ints {
        Some(v) if !dtype.is_float() => {
            let (start, end, step) = (v[0], v[1], v[2]);
            if step == 0 {
                return Err(cx.error("the step is 0"));
            }
            let (span, s) = if step > 0 { (end - start, step) } else { (start - end, -step) };
            let len = if span > 0 { (span + s - 1) / s } else { 0 };
            let len = u64::try_from(len).unwrap_or(u64::MAX);
            cx.numel(&[len])?;
            (0..len as i128).map(|i| Scalar::Int(start + i * step)).collect()
        }
        _ => {
            let f = |s: Scalar| match s {
                Scalar::Int(i) => i as f64,
                Scalar::Bool(b) => b as u8 as f64,
                Scalar::Float(x) => x,
            };
            let (start, end, step) = (f(vals[0]), f(vals[1]), f(vals[2]));
            if step == 0.0 {
                return Err(cx.error("the step is 0"));
            }
            let len = ((end - start) / step).ceil();
            if !len.is_finite() {
                return Err(cx.error(format!("arange({start}, {end}, {step}) has no finite length")));
            }
            let len = if len >= u64::MAX as f64 { u64::MAX } else { len.max(0.0) as u64 };
            cx.numel(&[len])?;
            (0..len).map(|i| Scalar::Float(start + i as f64 * step)).collect()
        }
    };
    let n = elems.len() as u64;
    for s in elems {
        data.push(convert_scalar(s, dtype).map_err(|m| cx.error(m))?).map_err(|m| cx.error(m))?;
    }
    Ok(tensor_value(dtype, vec![n], data))
}

/// OP-one_hot: `one_hot(indices, on_value, off_value, depth, axis=-1)`: `indices`
/// (an integer tensor of rank `r`) with a new dimension of length `depth` inserted at
/// `axis` (in `-(r+1)..=r`); the element at `[.., j, ..]` (`j` on the new axis) is
/// `on_value` where `indices[..] == j` and `off_value` elsewhere, so a negative or
/// out-of-range index gives a line of `off_value` (TVM's `topi.one_hot`; ONNX would
/// count a negative index from the end). The dtype is the values' (two `PrimValue`s
/// of one dtype, each converted to it as OP-astype converts).
/// Errors: `indices` not an integer tensor; a value not a `PrimValue`, or values of
/// different dtypes; `depth` missing or not positive; `axis` out of range.
pub(crate) fn one_hot(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 3)?;
    let x = cx.tensor(&args[0], "indices")?;
    if !(x.dtype.is_int() || x.dtype.is_uint()) || x.dtype.is_bool() {
        return Err(cx.error(format!("indices must have an integer dtype, not {}", x.dtype)));
    }
    let mut values = [(Scalar::Int(0), DataType::BOOL); 2];
    for (i, what) in [(1, "on_value"), (2, "off_value")] {
        match &args[i] {
            Value::Prim(p) => values[i - 1] = prim(p),
            v => return Err(cx.error(format!("`{what}` must be a PrimValue, got {}", v.kind()))),
        }
    }
    let [(on, dtype), (off, off_dtype)] = values;
    if dtype != off_dtype {
        return Err(cx.error(format!("on_value and off_value have different dtypes {dtype} and {off_dtype}")));
    }
    let depth = match cx.attr_opt_int("depth")? {
        Some(d) if d > 0 => d as u64,
        d => return Err(cx.error(format!("depth must be a positive integer, not {d:?}"))),
    };
    let r = x.ndim();
    let axis = cx.axis(cx.attr_int("axis", -1)?, r + 1)?;
    let mut shape = x.shape.clone();
    shape.insert(axis, depth);
    let n = cx.numel(&shape)?;
    let on = convert_scalar(on, dtype).map_err(|m| cx.error(m))?;
    let off = convert_scalar(off, dtype).map_err(|m| cx.error(m))?;
    let mut data = cx.storage(dtype)?;
    // Row-major over (outer, depth, inner): `outer` the indices' dimensions before
    // `axis`, `inner` those after it.
    let inner: u64 = x.shape[axis..].iter().fold(1u64, |a, &d| a.saturating_mul(d));
    for k in 0..n as u64 {
        let (o, rest) = (k / (depth * inner.max(1)), k % (depth * inner.max(1)));
        let (j, i) = (rest / inner.max(1), rest % inner.max(1));
        let idx = match x.data.get((o * inner + i) as usize) {
            Scalar::Int(v) => v,
            _ => return Err(cx.error("indices must be integers")),
        };
        data.push(if idx == j as i128 { on } else { off }).map_err(|m| cx.error(m))?;
    }
    Ok(tensor_value(dtype, shape, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{AttrValue, Attrs, TensorData};
    use spec_model::Span;

    fn arange_of(a: PrimScalar, b: PrimScalar, c: PrimScalar, dtype: Option<&str>) -> EvalResult<Value> {
        let mut attrs = Attrs::default();
        if let Some(d) = dtype {
            attrs.insert("dtype", AttrValue::Str(d.into()));
        }
        arange(
            &Cx::new(spec_model::ops::Op::Arange, &attrs, Span::SYNTHETIC),
            &[Value::Prim(a), Value::Prim(b), Value::Prim(c)],
        )
    }

    fn one_hot_of(idx: Vec<i32>, shape: &[u64], depth: i64, axis: i64) -> EvalResult<(Vec<u64>, TensorData)> {
        let mut attrs = Attrs::default();
        attrs.insert("depth", AttrValue::Int(depth));
        attrs.insert("axis", AttrValue::Int(axis));
        let x = Value::tensor(spec_model::grammar::NDArray {
            dtype: DataType::INT32,
            shape: shape.to_vec(),
            data: TensorData::I32(idx),
        });
        let on = Value::Prim(PrimScalar::Float(1.5, DataType::FLOAT32));
        let off = Value::Prim(PrimScalar::Float(0.0, DataType::FLOAT32));
        let Value::Tensor(t) = one_hot(&Cx::new(spec_model::ops::Op::OneHot, &attrs, Span::SYNTHETIC), &[x, on, off])?
        else {
            panic!()
        };
        let t = t.borrow();
        Ok((t.shape.clone(), t.data.clone()))
    }

    #[test]
    fn one_hot_axes_and_out_of_range() {
        let (s, d) = one_hot_of(vec![0, 2, -1, 3], &[4], 3, -1).unwrap();
        assert_eq!(s, vec![4, 3]);
        let want = [1.5, 0., 0., 0., 0., 1.5, 0., 0., 0., 0., 0., 0.];
        assert_eq!(d, TensorData::F32(want.to_vec()), "-1 and 3 are off everywhere");
        let (s, d) = one_hot_of(vec![1, 0], &[2], 2, 0).unwrap();
        assert_eq!((s, d), (vec![2, 2], TensorData::F32(vec![0.0, 1.5, 1.5, 0.0])));
        let (s, d) = one_hot_of(vec![1, 0], &[2, 1], 2, -2).unwrap();
        assert_eq!((s, d), (vec![2, 2, 1], TensorData::F32(vec![0.0, 1.5, 1.5, 0.0])));
        assert_eq!(one_hot_of(vec![], &[0, 5], 4, 1).unwrap().0, vec![0, 4, 5]);
        assert!(one_hot_of(vec![0], &[1], 0, -1).is_err(), "depth 0");
        assert!(one_hot_of(vec![0], &[1], 2, 2).is_err(), "axis 2 of rank 1");
        assert!(one_hot_of(vec![0], &[1], 2, -3).is_err(), "axis -3 of rank 1");
        let e = one_hot_of(vec![0, 1], &[2], 1 << 40, -1).unwrap_err();
        assert_eq!(e.kind, crate::eval::value::ErrorKind::MemoryExhausted, "a huge depth meets the budget");
    }

    #[test]
    fn arange_integer_and_float() {
        let i = |v| PrimScalar::Int(v, DataType::INT64);
        let Value::Tensor(t) = arange_of(i(10), i(0), i(-3), None).unwrap() else { panic!() };
        assert_eq!(t.borrow().data, TensorData::I64(vec![10, 7, 4, 1]));
        let Value::Tensor(t) = arange_of(i(0), i(300), i(100), Some("int8")).unwrap() else { panic!() };
        assert_eq!(t.borrow().data, TensorData::I8(vec![0, 100, -56]));
        let Value::Tensor(t) = arange_of(i(5), i(0), i(1), None).unwrap() else { panic!() };
        assert_eq!(t.borrow().shape, vec![0]);
        assert!(arange_of(i(0), i(1), i(0), None).is_err());
        assert!(arange_of(i(0), i(i64::MAX), i(1), None).is_err());
        let fl = |v| PrimScalar::Float(v, DataType::FLOAT32);
        assert!(arange_of(fl(0.0), fl(f64::INFINITY), fl(1.0), None).is_err());
        assert!(arange_of(fl(0.0), fl(1.0), fl(f64::NAN), None).is_err());
    }
}
