//! The statistics `prod`, `variance`, `std`, `argmax`, `argmin` and `cumsum`: plain
//! loops over the reduced elements of each output element, in row-major order of the
//! reduced indices, in the dtype (as `sum`, see `reduce.rs`).

use super::broadcast::{strides, Walk};
use super::elem::{convert_data, map_data, Elem, Real};
use super::{tensor_value, Cx};
use crate::eval::value::{ErrorKind, EvalResult, Value};
use half::f16;
use spec_model::grammar::{DataType, NDArray, TensorData};

/// The multiplicative identity of each element type (`bool` is `uint1`: `true`).
pub(crate) trait One: Elem {
    fn one() -> Self;
}

macro_rules! one {
    ($($t:ty => $v:expr),*) => {$(impl One for $t { fn one() -> Self { $v } })*};
}
one!(bool => true, i8 => 1, i16 => 1, i32 => 1, i64 => 1, u8 => 1, u16 => 1, u32 => 1, u64 => 1,
    f16 => f16::ONE, f32 => 1.0, f64 => 1.0);

/// A reduction's layout: the result shape, the offset of each output element's first
/// reduced element, and the offsets of the reduced elements from there (row-major).
struct Plan {
    out_shape: Vec<u64>,
    bases: Vec<usize>,
    inner: Vec<usize>,
}

/// Reduce `a` along `axes` (`None`: every axis), keeping them as 1 with `keepdims`.
fn plan(cx: &Cx, a: &NDArray, axes: Option<Vec<i64>>, keepdims: bool) -> EvalResult<Plan> {
    let reduced = match axes {
        None => (0..a.ndim()).collect(),
        Some(list) => cx.axes(&list, a.ndim())?,
    };
    let st = strides(&a.shape);
    let (mut out_shape, mut kd, mut ks, mut rd, mut rs) = (vec![], vec![], vec![], vec![], vec![]);
    for (i, &d) in a.shape.iter().enumerate() {
        if reduced.contains(&i) {
            rd.push(d);
            rs.push(st[i]);
            if keepdims {
                out_shape.push(1);
            }
        } else {
            kd.push(d);
            ks.push(st[i]);
            out_shape.push(d);
        }
    }
    // The offsets are listed only for a non-empty result (then at most the operand's count).
    let n = cx.numel(&out_shape)?;
    let (bases, inner) = if n == 0 {
        (Vec::new(), Vec::new())
    } else {
        (Walk::new(0, kd, ks).collect(), Walk::new(0, rd, rs).collect())
    };
    Ok(Plan { out_shape, bases, inner })
}

fn reduce_attrs(cx: &Cx) -> EvalResult<(Option<Vec<i64>>, bool)> {
    Ok((cx.attr_ints("axis")?, cx.attr_bool("keepdims", false)?))
}

/// OP-prod: the product along `axis` (as OP-sum), folded from 1 in row-major order of
/// the reduced indices, in the dtype (integers wrap; `bool` is `and`). The empty
/// product is 1 (TVM's legalization fills it so). Errors: not a tensor; an axis out of
/// range or repeated.
pub(crate) fn prod(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let (axes, keepdims) = reduce_attrs(cx)?;
    let p = plan(cx, &a, axes, keepdims)?;
    let data = map_data!(&a.data, v => p.bases.iter().map(|b| p.inner.iter().fold(One::one(), |acc, o| Elem::times(acc, v[b + o]))).collect());
    Ok(tensor_value(a.dtype, p.out_shape, data))
}

/// `mean = Σx / n`, `Σ (x - mean)²  / n` in the dtype (TVM's two-pass `_te_variance`).
fn variance_of<T: Elem>(cx: &Cx, v: &[T], base: usize, inner: &[usize]) -> EvalResult<T> {
    let n = inner.len();
    let zero_count = || cx.fail(ErrorKind::DivisionByZero, "the integer variance of zero elements");
    let sum = inner.iter().fold(T::zero(), |acc, o| acc.plus(v[base + o]));
    let mean = T::mean(sum, n).ok_or_else(zero_count)?;
    let sq = inner.iter().fold(T::zero(), |acc, o| {
        let d = v[base + o].minus(mean);
        acc.plus(d.times(d))
    });
    T::mean(sq, n).ok_or_else(zero_count)
}

/// OP-variance: the population variance (ddof 0) along `axis` (as OP-sum): with `n`
/// the reduced count, `mean = (Σ x) / n` and the result `(Σ (x - mean)²) / n`, each
/// sum in row-major order from 0, every operation in the dtype (integers wrap and
/// divide truncating). Zero elements: NaN for floats, `DivisionByZero` for integers.
/// Errors: not a tensor; an axis out of range or repeated.
pub(crate) fn variance(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let (axes, keepdims) = reduce_attrs(cx)?;
    let p = plan(cx, &a, axes, keepdims)?;
    let data = map_data!(&a.data, v => p.bases.iter().map(|&b| variance_of(cx, v, b, &p.inner)).collect::<EvalResult<Vec<_>>>()?);
    Ok(tensor_value(a.dtype, p.out_shape, data))
}

/// OP-std: `sqrt` of OP-variance, for floating-point tensors. Errors: those of
/// OP-variance; a tensor that is not floating-point.
pub(crate) fn std(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let (axes, keepdims) = reduce_attrs(cx)?;
    let p = plan(cx, &a, axes, keepdims)?;
    fn run<T: Real>(cx: &Cx, v: &[T], p: &Plan) -> EvalResult<Vec<T>> {
        p.bases.iter().map(|&b| variance_of(cx, v, b, &p.inner).map(Real::sqrt)).collect()
    }
    let data = match &a.data {
        TensorData::F16(v) => TensorData::F16(run(cx, v, &p)?),
        TensorData::F32(v) => TensorData::F32(run(cx, v, &p)?),
        TensorData::F64(v) => TensorData::F64(run(cx, v, &p)?),
        _ => return Err(cx.error(format!("needs a floating-point tensor, not {}", a.dtype))),
    };
    Ok(tensor_value(a.dtype, p.out_shape, data))
}

/// OP-argmax (`max`: true), OP-argmin: along the integer `axis`, or over the flattened
/// tensor when `axis` is absent or `None` (the index is then the flat one); `keepdims`
/// keeps the axis (every axis, for `None`) as 1. The result is `int64`: the index of the
/// first greatest (least) element, NaN counting as greater (less) than everything, so
/// the first NaN wins (NumPy). Errors: not a tensor; `axis` out of range; a reduction
/// over zero elements with a non-empty result (NumPy raises).
pub(crate) fn arg_reduce(cx: &Cx, args: &[Value], max: bool) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let axis = cx.attr_opt_int("axis")?;
    let keepdims = cx.attr_bool("keepdims", false)?;
    let p = plan(cx, &a, axis.map(|x| vec![x]), keepdims)?;
    if !p.bases.is_empty() && p.inner.is_empty() {
        return Err(cx.error("the arg-reduction of zero elements has no index"));
    }
    fn best<T: Elem>(v: &[T], base: usize, inner: &[usize], max: bool) -> i64 {
        let nan = |x: T| x.partial_cmp(&x).is_none();
        let mut at = 0;
        for j in 1..inner.len() {
            let (b, x) = (v[base + inner[at]], v[base + inner[j]]);
            if nan(b) {
                break;
            }
            if nan(x) || (max && x > b) || (!max && x < b) {
                at = j;
            }
        }
        at as i64
    }
    let all = |v: &dyn Fn(usize, &[usize]) -> i64| p.bases.iter().map(|&b| v(b, &p.inner)).collect::<Vec<i64>>();
    macro_rules! each {
        ($($var:ident),*) => {
            match &a.data {
                $(TensorData::$var(v) => all(&|b, inner| best(v, b, inner, max)),)*
            }
        };
    }
    let idx = each!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64);
    Ok(tensor_value(DataType::INT64, p.out_shape, TensorData::I64(idx)))
}

/// OP-cumsum: each element converted to `dtype` (default: the operand's) as OP-astype
/// converts, then the running sum along the integer `axis` (absent or `None`: over the
/// flattened tensor, giving a 1-D result) from 0, in that dtype: `out[i] = x[0] + ... +
/// x[i]`, or with `exclusive` `x[0] + ... + x[i-1]` (so `out[0] = 0`). Errors: not a
/// tensor; `axis` out of range; `dtype` without storage; a conversion that fails.
pub(crate) fn cumsum(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let axis = cx.attr_opt_int("axis")?;
    let exclusive = cx.attr_bool("exclusive", false)?;
    let dtype = cx.attr_dtype("dtype")?.unwrap_or(a.dtype);
    cx.storage(dtype)?;
    let (shape, axis) = match axis {
        None => (vec![a.data.len() as u64], 0),
        Some(ax) => (a.shape.clone(), cx.axis(ax, a.ndim())?),
    };
    cx.numel(&shape)?;
    let src = if dtype == a.dtype { a.data.clone() } else { convert_data(&a.data, dtype).map_err(|m| cx.error(m))? };
    let len = shape[axis] as usize;
    let stride = strides(&shape)[axis] as usize;
    let mut starts_dims = shape.clone();
    starts_dims[axis] = 1;
    let starts: Vec<usize> = Walk::new(0, starts_dims, strides(&shape)).collect();
    let data = map_data!(&src, v => {
        let mut out = v.clone();
        for &s in &starts {
            let mut acc = Elem::zero();
            for j in 0..len {
                let x = v[s + j * stride];
                if exclusive {
                    out[s + j * stride] = acc;
                    acc = Elem::plus(acc, x);
                } else {
                    acc = Elem::plus(acc, x);
                    out[s + j * stride] = acc;
                }
            }
        }
        out
    });
    Ok(tensor_value(dtype, shape, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn run(op: Op, v: Vec<i32>, shape: &[u64], attrs: &[(&str, AttrValue)]) -> EvalResult<Value> {
        let mut a = Attrs::default();
        attrs.iter().for_each(|(k, v)| a.insert(*k, v.clone()));
        let x = tensor_value(DataType::INT32, shape.to_vec(), TensorData::I32(v));
        crate::eval::ops::eval_op_standalone(op, &[x], &a, Span::SYNTHETIC)
    }

    fn ints(v: &Value) -> Vec<i64> {
        let Value::Tensor(t) = v else { panic!("a tensor") };
        let t = t.borrow();
        (0..t.data.len())
            .map(|i| if let spec_model::grammar::Scalar::Int(x) = t.data.get(i) { x as i64 } else { 0 })
            .collect()
    }

    #[test]
    fn edge_cases() {
        let empty = run(Op::Prod, vec![], &[0, 2], &[("axis", AttrValue::Int(0))]).unwrap();
        assert_eq!(ints(&empty), [1, 1]);
        let e = run(Op::Variance, vec![], &[0], &[]).err().unwrap();
        assert_eq!(e.kind, ErrorKind::DivisionByZero);
        let e = run(Op::Argmax, vec![], &[2, 0], &[("axis", AttrValue::Int(1))]).err().unwrap();
        assert_eq!((e.kind, e.rule.as_str()), (ErrorKind::OpError, "OP-argmax"));
        let e = run(Op::Cumsum, vec![1], &[], &[("axis", AttrValue::Int(0))]).err().unwrap();
        assert_eq!(e.kind, ErrorKind::OpError);
        let c = run(
            Op::Cumsum,
            vec![1, 2, 3, 4],
            &[2, 2],
            &[("axis", AttrValue::Int(0)), ("exclusive", AttrValue::Bool(true))],
        );
        assert_eq!(ints(&c.unwrap()), [0, 0, 1, 2]);
        let m = run(
            Op::Argmin,
            vec![3, 1, 1, 0],
            &[2, 2],
            &[("axis", AttrValue::Int(-1)), ("keepdims", AttrValue::Bool(true))],
        );
        assert_eq!(ints(&m.unwrap()), [1, 1]);
    }
}
