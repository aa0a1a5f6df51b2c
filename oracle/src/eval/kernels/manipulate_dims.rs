//! Dimension manipulation and creation-like operators: `zeros_like`, `ones_like`,
//! `full_like`, `squeeze`, `expand_dims`, `flatten`, `flip`, `tril`, `triu`, `tile`,
//! `repeat`, `collapse_sum_like`. Plain loops over row-major indices.

use super::broadcast::{element_count, strides, Walk};
use super::elem::{convert_scalar, gather, map_data, Elem};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, PrimScalar, Value};
use spec_model::grammar::{DataType, Scalar};

/// A new tensor of `shape` and `dtype` whose every element is `value` (of the dtype).
fn filled(cx: &Cx, shape: Vec<u64>, dtype: DataType, value: Scalar) -> EvalResult<Value> {
    let n = cx.numel(&shape)?;
    let mut data = cx.storage(dtype)?;
    for _ in 0..n {
        data.push(value).map_err(|m| cx.error(m))?;
    }
    Ok(tensor_value(dtype, shape, data))
}

/// The attribute `dtype`, else `own`; an error for a dtype without tensor storage.
fn like_dtype(cx: &Cx, own: DataType) -> EvalResult<DataType> {
    let d = cx.attr_dtype("dtype")?.filter(|d| !d.is_void()).unwrap_or(own);
    cx.storage(d)?;
    Ok(d)
}

/// OP-zeros_like, OP-ones_like: a new tensor of `x`'s shape filled with 0 (1; `True`
/// for `bool`), of the attribute `dtype` (default `x`'s). Errors: `x` not a tensor; a
/// dtype without storage (`OpError`).
pub(crate) fn zeros_ones_like(cx: &Cx, args: &[Value], one: bool) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let dtype = like_dtype(cx, x.dtype)?;
    let value = convert_scalar(Scalar::Int(one as i128), dtype).map_err(|m| cx.error(m))?;
    filled(cx, x.shape.clone(), dtype, value)
}

/// OP-full_like: a new tensor of `x`'s shape filled with `fill_value` (a rank-0
/// tensor, or a `PrimValue`) converted to the attribute `dtype` (default `x`'s) as
/// OP-astype converts. Errors: `x` not a tensor; the fill value not a scalar; a dtype
/// without storage; a conversion error (`OpError`).
pub(crate) fn full_like(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let value = match &args[1] {
        Value::Prim(PrimScalar::Int(i, _)) => Scalar::Int(*i as i128),
        Value::Prim(PrimScalar::Float(f, _)) => Scalar::Float(*f),
        Value::Prim(PrimScalar::Bool(b)) => Scalar::Bool(*b),
        v => {
            let t = cx.tensor(v, "the fill value")?;
            if t.ndim() != 0 {
                return Err(cx.error(format!("the fill value must be a scalar (rank 0), not rank {}", t.ndim())));
            }
            t.data.get(0)
        }
    };
    let dtype = like_dtype(cx, x.dtype)?;
    let value = convert_scalar(value, dtype).map_err(|m| cx.error(m))?;
    filled(cx, x.shape.clone(), dtype, value)
}

/// OP-squeeze: removes the axes of `axis` (an integer or a list; negative from the
/// end), each of which must have length 1; without `axis`, every axis of length 1.
/// Errors: not a tensor; an axis out of range or repeated; a listed axis whose length
/// is not 1 (`OpError`).
pub(crate) fn squeeze(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let shape: Vec<u64> = match cx.attr_ints("axis")? {
        None => x.shape.iter().copied().filter(|&d| d != 1).collect(),
        Some(list) => {
            let axes = cx.axes(&list, x.ndim())?;
            if let Some(&a) = axes.iter().find(|&&a| x.shape[a] != 1) {
                return Err(cx.error(format!("cannot squeeze axis {a} of length {}", x.shape[a])));
            }
            (0..x.ndim()).filter(|i| !axes.contains(i)).map(|i| x.shape[i]).collect()
        }
    };
    Ok(tensor_value(x.dtype, shape, x.data.clone()))
}

/// OP-expand_dims: inserts axes of length 1 at `axis` (indices into the result, of
/// rank `ndim + len(axis)`; negative from its end). Errors: not a tensor; `axis`
/// missing; an axis out of range or repeated.
pub(crate) fn expand_dims(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let list = cx.attr_ints("axis")?.ok_or_else(|| cx.error("needs the attribute `axis`"))?;
    let n = x.ndim() + list.len();
    let axes = cx.axes(&list, n)?;
    let mut rest = x.shape.iter();
    let shape = (0..n).map(|i| if axes.contains(&i) { 1 } else { rest.next().copied().unwrap_or(1) }).collect();
    Ok(tensor_value(x.dtype, shape, x.data.clone()))
}

/// OP-flatten: `x`'s elements as a 1-D tensor (rank 0 gives one element).
pub(crate) fn flatten(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the operand")?;
    Ok(tensor_value(x.dtype, vec![x.data.len() as u64], x.data.clone()))
}

/// OP-flip: `x` with its elements along `axis` in reverse order. Errors: not a
/// tensor; `axis` missing or out of range.
pub(crate) fn flip(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let ax = cx.attr_opt_int("axis")?.ok_or_else(|| cx.error("needs the attribute `axis`"))?;
    let ax = cx.axis(ax, x.ndim())?;
    if x.data.is_empty() {
        return Ok(tensor_value(x.dtype, x.shape.clone(), x.data.clone()));
    }
    let mut st = strides(&x.shape);
    let base = (x.shape[ax] as i64 - 1) * st[ax];
    st[ax] = -st[ax];
    Ok(tensor_value(x.dtype, x.shape.clone(), gather(&x.data, Walk::new(base, x.shape.clone(), st))))
}

/// OP-tril (`lower`), OP-triu: each matrix of the last two dimensions keeps the
/// elements at row `i`, column `j` with `j - i <= k` (`tril`) or `j - i >= k`
/// (`triu`); the others are 0 (`False`). `k` is an integer `PrimValue` (any value;
/// beyond the matrix it keeps all or nothing). Errors: `x` not a tensor of rank 2 or
/// more; `k` not an integer `PrimValue` (`OpError`).
pub(crate) fn tril_triu(cx: &Cx, args: &[Value], lower: bool) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let k = match &args[1] {
        Value::Prim(PrimScalar::Int(k, _)) => *k as i128,
        v => return Err(cx.error(format!("the diagonal `k` must be an integer PrimValue, got {}", v.kind()))),
    };
    let n = x.ndim();
    if n < 2 {
        return Err(cx.error(format!("needs a tensor of at least two dimensions, not rank {n}")));
    }
    let (rows, cols) = (x.shape[n - 2] as usize, x.shape[n - 1] as usize);
    let keep = |e: usize| {
        let (i, j) = ((e / cols % rows) as i128, (e % cols) as i128);
        if lower {
            j - i <= k
        } else {
            j - i >= k
        }
    };
    let data =
        map_data!(&x.data, v => v.iter().enumerate().map(|(e, &a)| if keep(e) { a } else { Elem::zero() }).collect());
    Ok(tensor_value(x.dtype, x.shape.clone(), data))
}

/// OP-tile: NumPy `tile`: `x` (promoted with leading 1s to rank `len(repeats)`)
/// repeated `repeats[i]` times along each dimension (shorter `repeats` promoted with
/// leading 1s). Errors: not a tensor; `repeats` missing; a negative repeat
/// (`OpError`); a result beyond the memory budget.
pub(crate) fn tile(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let reps = cx.attr_ints("repeats")?.ok_or_else(|| cx.error("needs the attribute `repeats`"))?;
    if let Some(r) = reps.iter().find(|&&r| r < 0) {
        return Err(cx.error(format!("a repeat count is negative ({r})")));
    }
    let n = reps.len().max(x.ndim());
    let mut dims = vec![1u64; n - x.ndim()];
    dims.extend(x.shape.iter().copied());
    let mut r = vec![1u64; n - reps.len()];
    r.extend(reps.iter().map(|&v| v as u64));
    let shape: Vec<u64> = dims.iter().zip(&r).map(|(&d, &r)| d.saturating_mul(r)).collect();
    let total = cx.numel(&shape)?;
    if total == 0 {
        return Ok(tensor_value(x.dtype, shape, cx.storage(x.dtype)?));
    }
    // Output index `o` along dimension `i` reads input index `o % dims[i]`.
    let st = strides(&dims);
    let at = (0..total).map(|mut e| {
        let mut off = 0i64;
        for i in (0..n).rev() {
            let o = e as u64 % shape[i];
            e /= shape[i] as usize;
            off += (o % dims[i]) as i64 * st[i];
        }
        off as usize
    });
    Ok(tensor_value(x.dtype, shape.clone(), gather(&x.data, at)))
}

/// OP-repeat: NumPy `repeat`: each element of `x` repeated `repeats` times along
/// `axis` (without `axis`, of the flattened `x`, giving a 1-D result). Errors: not a
/// tensor; `repeats` missing or negative; `axis` out of range (`OpError`); a result
/// beyond the memory budget.
pub(crate) fn repeat(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let reps = cx.attr_opt_int("repeats")?.ok_or_else(|| cx.error("needs the attribute `repeats`"))?;
    if reps < 0 {
        return Err(cx.error(format!("the repeat count is negative ({reps})")));
    }
    let (dims, ax) = match cx.attr_opt_int("axis")? {
        None => (vec![x.data.len() as u64], 0),
        Some(a) => (x.shape.clone(), cx.axis(a, x.ndim())?),
    };
    let mut shape = dims.clone();
    shape[ax] = shape[ax].saturating_mul(reps as u64);
    let total = cx.numel(&shape)?;
    if total == 0 {
        return Ok(tensor_value(x.dtype, shape, cx.storage(x.dtype)?));
    }
    // Output index `o` along `axis` reads input index `o / repeats`.
    let st = strides(&dims);
    let at = (0..total).map(|mut e| {
        let mut off = 0i64;
        for i in (0..shape.len()).rev() {
            let o = e as u64 % shape[i];
            e /= shape[i] as usize;
            let src = if i == ax { o / reps as u64 } else { o };
            off += src as i64 * st[i];
        }
        off as usize
    });
    Ok(tensor_value(x.dtype, shape.clone(), gather(&x.data, at)))
}

/// OP-collapse_sum_like: `data` summed to `collapse_target`'s shape: dimensions pair
/// from the right; a target dimension equal to data's is kept, a target dimension 1
/// sums that axis, data's leading dimensions beyond the target's rank are summed
/// away. Each result element is the sum, in data's dtype, of its elements in
/// row-major order, from 0 (integers wrap, `bool` is `uint1`). Errors: an operand not
/// a tensor; a target of higher rank; a pair neither equal nor with target 1.
pub(crate) fn collapse_sum_like(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let data = cx.tensor(&args[0], "the data")?;
    let target = cx.tensor(&args[1], "the collapse target")?;
    let (n, m) = (data.ndim(), target.ndim());
    if m > n {
        return Err(cx.error(format!("cannot collapse rank {n} to the higher rank {m}")));
    }
    let lead = n - m;
    for i in 0..m {
        let (d, t) = (data.shape[lead + i], target.shape[i]);
        if t != d && t != 1 {
            return Err(cx.error(format!("data dimension {} ({d}) cannot be summed to {t}", lead + i)));
        }
    }
    let shape = target.shape.clone();
    let total = cx.numel(&shape)?;
    // Each data element adds into the result element it maps to, in data's row-major
    // order: so each sum runs over its elements in row-major order.
    let ost = strides(&shape);
    let out_stride: Vec<i64> =
        (0..n).map(|i| if i < lead || shape[i - lead] == 1 { 0 } else { ost[i - lead] }).collect();
    let count = element_count(&data.shape).unwrap_or(0) as usize;
    let dst = Walk::new(0, data.shape.clone(), out_stride);
    let out = map_data!(&data.data, v => collapse_loop(v, total, dst.take(count)));
    Ok(tensor_value(data.dtype, shape, out))
}

fn collapse_loop<T: Elem>(v: &[T], total: usize, dst: impl Iterator<Item = usize>) -> Vec<T> {
    let mut out = vec![T::zero(); total];
    for (x, o) in v.iter().zip(dst) {
        out[o] = out[o].plus(*x);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{AttrValue, Attrs, NDArray, TensorData};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn iota(shape: &[u64]) -> Value {
        let n: u64 = shape.iter().product();
        let data = TensorData::I32((0..n as i32).collect());
        Value::tensor(NDArray { dtype: DataType::INT32, shape: shape.to_vec(), data })
    }

    fn run(op: Op, pairs: &[(&str, AttrValue)], args: &[Value]) -> EvalResult<Value> {
        let mut attrs = Attrs::default();
        for (k, v) in pairs {
            attrs.insert(*k, v.clone());
        }
        crate::eval::ops::eval_op_standalone(op, args, &attrs, Span::SYNTHETIC)
    }

    fn got(r: EvalResult<Value>) -> (Vec<u64>, TensorData) {
        let Value::Tensor(t) = r.unwrap() else { panic!("not a tensor") };
        let t = t.borrow();
        (t.shape.clone(), t.data.clone())
    }

    fn list(xs: &[i64]) -> AttrValue {
        AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
    }

    #[test]
    fn values_by_hand() {
        let x = iota(&[2, 3]);
        let (s, d) = got(run(Op::Tile, &[("repeats", list(&[2]))], std::slice::from_ref(&x)));
        assert_eq!((s, d), (vec![2, 6], TensorData::I32(vec![0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5])));
        let (s, d) = got(run(Op::Repeat, &[("repeats", AttrValue::Int(2))], std::slice::from_ref(&x)));
        assert_eq!((s, d), (vec![12], TensorData::I32(vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5])));
        let (_, d) = got(run(Op::Flip, &[("axis", AttrValue::Int(0))], std::slice::from_ref(&x)));
        assert_eq!(d, TensorData::I32(vec![3, 4, 5, 0, 1, 2]));
        let k = Value::Prim(PrimScalar::Int(-1, DataType::INT64));
        let (_, d) = got(run(Op::Tril, &[], &[x.clone(), k]));
        assert_eq!(d, TensorData::I32(vec![0, 0, 0, 3, 0, 0]));
        let (s, d) = got(run(Op::CollapseSumLike, &[], &[x.clone(), iota(&[2, 1])]));
        assert_eq!((s, d), (vec![2, 1], TensorData::I32(vec![3, 12])));
        let (s, _) = got(run(Op::ExpandDims, &[("axis", list(&[-1, 0]))], std::slice::from_ref(&x)));
        assert_eq!(s, vec![1, 2, 3, 1]);
        let (s, _) = got(run(Op::Squeeze, &[], &[iota(&[1, 2, 1])]));
        assert_eq!(s, vec![2]);
        let (s, _) = got(run(Op::Flatten, &[], &[iota(&[])]));
        assert_eq!(s, vec![1]);
    }

    #[test]
    fn errors_are_op_errors_of_the_rule() {
        let x = iota(&[2, 3]);
        type Case<'a> = (Op, Vec<(&'a str, AttrValue)>, Vec<Value>);
        let cases: Vec<Case> = vec![
            (Op::Squeeze, vec![("axis", list(&[1]))], vec![x.clone()]),
            (Op::Squeeze, vec![("axis", list(&[0, 0]))], vec![iota(&[1, 1])]),
            (Op::ExpandDims, vec![("axis", list(&[3]))], vec![x.clone()]),
            (Op::ExpandDims, vec![], vec![x.clone()]),
            (Op::Flip, vec![("axis", AttrValue::Int(i64::MIN))], vec![x.clone()]),
            (Op::Tile, vec![("repeats", list(&[1, -2]))], vec![x.clone()]),
            (Op::Repeat, vec![("repeats", AttrValue::Int(-1))], vec![x.clone()]),
            (Op::Tril, vec![], vec![x.clone(), Value::Prim(PrimScalar::Float(0.0, DataType::FLOAT32))]),
            (Op::Triu, vec![], vec![iota(&[4]), Value::Prim(PrimScalar::Int(0, DataType::INT64))]),
            (Op::CollapseSumLike, vec![], vec![x.clone(), iota(&[4])]),
            (Op::FullLike, vec![], vec![x.clone(), iota(&[1])]),
            (Op::ZerosLike, vec![], vec![Value::Null]),
        ];
        for (op, a, args) in cases {
            let e = run(op, &a, &args).err().unwrap_or_else(|| panic!("{op}: no error"));
            assert_eq!(e.rule, op.def().rule, "{op}");
        }
    }
}
