//! `matmul`.

use super::broadcast::{broadcast_shapes, broadcast_walk};
use super::elem::{convert_data, map_data2, Elem};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{DataType, NDArray, TensorData};
use std::borrow::Cow;

/// OP-matmul: NumPy's `matmul`. A 1-D first operand is `(1, k)` and a 1-D second
/// operand `(k, 1)`, the added dimension dropped from the result; batch dimensions
/// broadcast (NumPy); `(..., n, k) @ (..., k, m)` is `(..., n, m)` with
/// `out[i, j] = Σ_p a[i, p] * b[p, j]` folded sequentially in `p` order starting from
/// 0, every product and sum rounded to (or wrapping in) the dtype. With
/// `out_dtype` both operands are first converted to it (as OP-astype) and computed in
/// it. Errors: not two tensors; rank 0; different dtypes without `out_dtype`; `k`
/// differing; batch dimensions that do not broadcast; a conversion error.
pub(crate) fn matmul(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let a = cx.tensor(&args[0], "the first operand")?;
    let b = cx.tensor(&args[1], "the second operand")?;
    let out_dtype = cx.attr_dtype("out_dtype")?.filter(|d| !d.is_void());
    let (dtype, ad, bd) = match out_dtype {
        Some(dt) => {
            cx.storage(dt)?;
            (dt, converted(cx, &a, dt)?, converted(cx, &b, dt)?)
        }
        None if a.dtype == b.dtype => (a.dtype, Cow::Borrowed(&a.data), Cow::Borrowed(&b.data)),
        None => return Err(cx.error(format!("operands have different dtypes {} and {}", a.dtype, b.dtype))),
    };
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(cx.error("operands must have rank at least 1"));
    }
    let mut ash = a.shape.clone();
    let mut bsh = b.shape.clone();
    if a.ndim() == 1 {
        ash.insert(0, 1);
    }
    if b.ndim() == 1 {
        bsh.push(1);
    }
    let (n, k) = (ash[ash.len() - 2], ash[ash.len() - 1]);
    let (k2, m) = (bsh[bsh.len() - 2], bsh[bsh.len() - 1]);
    if k != k2 {
        return Err(cx.error(format!("the reduction dimensions {k} and {k2} differ")));
    }
    let (abatch, bbatch) = (&ash[..ash.len() - 2], &bsh[..bsh.len() - 2]);
    let batch = broadcast_shapes(&[abatch, bbatch])
        .ok_or_else(|| cx.error(format!("batch dimensions {abatch:?} and {bbatch:?} do not broadcast")))?;
    let mut out_shape = batch.clone();
    if a.ndim() != 1 {
        out_shape.push(n);
    }
    if b.ndim() != 1 {
        out_shape.push(m);
    }
    cx.numel(&out_shape)?;
    let plan = Plan { abatch, bbatch, batch: &batch, n: n as usize, k: k as usize, m: m as usize };
    let data = map_data2!(wrap, ad.as_ref(), bd.as_ref(), x, y => matmul_loop(&plan, x, y),
        return Err(cx.error("operands of different storage")));
    Ok(tensor_value(dtype, out_shape, data))
}

/// `x`'s data in `dt` (borrowed when it already is).
fn converted<'a>(cx: &Cx, x: &'a NDArray, dt: DataType) -> EvalResult<Cow<'a, TensorData>> {
    if x.dtype == dt {
        Ok(Cow::Borrowed(&x.data))
    } else {
        convert_data(&x.data, dt).map(Cow::Owned).map_err(|m| cx.error(m))
    }
}

struct Plan<'a> {
    abatch: &'a [u64],
    bbatch: &'a [u64],
    batch: &'a [u64],
    n: usize,
    k: usize,
    m: usize,
}

fn matmul_loop<T: Elem>(p: &Plan, x: &[T], y: &[T]) -> Vec<T> {
    let (n, k, m) = (p.n, p.k, p.m);
    let mut out = Vec::new();
    for (ab, bb) in broadcast_walk(p.abatch, p.batch).zip(broadcast_walk(p.bbatch, p.batch)) {
        let (a0, b0) = (ab * n * k, bb * k * m);
        for i in 0..n {
            for j in 0..m {
                let term = |q: usize| x[a0 + i * k + q].times(y[b0 + q * m + j]);
                out.push((0..k).fold(T::zero(), |acc, q| acc.plus(term(q))));
            }
        }
    }
    out
}
