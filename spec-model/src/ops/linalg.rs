//! `matmul` and the reductions `sum`, `mean`, `max`, `min`.

use super::infer::{tensor_si, Infer};
use super::OpError;
use crate::grammar::{PrimExpr, StructInfo};
use crate::require;

/// OP-matmul: NumPy's `matmul`. With ranks `a`, `b` ≥ 1: a 1-D first operand is
/// treated as `(1, k)` and a 1-D second operand as `(k, 1)`, the added dimension being
/// dropped from the result; the leading (batch) dimensions broadcast as in OP-add;
/// the result is `batch + (n,) + (m,)` for operands `(..., n, k)` and `(..., k, m)`.
/// The dtype is `out_dtype` if given, else the operands' common dtype.
/// Errors: an operand that is not a tensor or has rank 0; known different dtypes
/// (without `out_dtype`); reduction dimensions `k` provably different; batch dimensions
/// that provably do not broadcast. Warnings: `k` or a batch pair undecided.
pub fn matmul(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let a = cx.tensor(0, "the first operand")?;
    let b = cx.tensor(1, "the second operand")?;
    let dtype = match cx.attr_dtype("out_dtype").filter(|d| !d.is_void()) {
        Some(d) => d,
        None => cx.same_dtype(a.dtype, b.dtype)?,
    };
    require!(cx => a.ndim != 0 && b.ndim != 0, "operands must have rank at least 1");
    if a.ndim == -1 || b.ndim == -1 {
        return Ok(tensor_si(None, dtype, -1));
    }
    let batch_rank = (a.ndim.max(2) - 2).max(b.ndim.max(2) - 2);
    let ndim = batch_rank + i64::from(a.ndim != 1) + i64::from(b.ndim != 1);
    let (Some(ad), Some(bd)) = (&a.dims, &b.dims) else {
        return Ok(tensor_si(None, dtype, ndim));
    };
    let one = PrimExpr::int(1);
    let mut ad = ad.clone();
    let mut bd = bd.clone();
    if a.ndim == 1 {
        ad.insert(0, one.clone());
    }
    if b.ndim == 1 {
        bd.push(one);
    }
    let (ak, bk) = (&ad[ad.len() - 1], &bd[bd.len() - 2]);
    cx.expect_equal(ak, bk, "the reduction dimensions")?;
    let Some(mut out) = cx.broadcast_shapes(&ad[..ad.len() - 2], &bd[..bd.len() - 2])? else {
        return Ok(tensor_si(None, dtype, ndim));
    };
    if a.ndim != 1 {
        out.push(ad[ad.len() - 2].clone());
    }
    if b.ndim != 1 {
        out.push(bd[bd.len() - 1].clone());
    }
    Ok(tensor_si(Some(out), dtype, ndim))
}

/// OP-sum, OP-mean, OP-max, OP-min: reduce along `axis` (`None`: every axis; an
/// integer or a list; negative axes count from the end; an empty list reduces
/// nothing). With `keepdims` (default false) a reduced dimension becomes 1, otherwise
/// it is removed. The dtype is the operand's.
/// Errors: not a tensor; an axis out of range for a known rank; a repeated axis (with
/// an unknown rank: the same integer twice).
pub fn reduce(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let keepdims = cx.attr_bool("keepdims", false);
    let axes = cx.attr_ints("axis");
    if x.ndim == -1 {
        if let Some(list) = &axes {
            cx.reject_repeats(list)?;
        }
        let ndim = if axes.is_none() && !keepdims { 0 } else { -1 };
        let dims = (ndim == 0).then(Vec::new);
        return Ok(tensor_si(dims, x.dtype, ndim));
    }
    let reduced: Vec<usize> = match &axes {
        None => (0..x.ndim as usize).collect(),
        Some(list) => cx.normalize_axes(list, x.ndim)?,
    };
    let ndim = if keepdims { x.ndim } else { x.ndim - reduced.len() as i64 };
    let dims = x.dims.as_ref().map(|ds| {
        ds.iter()
            .enumerate()
            .filter_map(|(i, d)| match (reduced.contains(&i), keepdims) {
                (false, _) => Some(d.clone()),
                (true, true) => Some(PrimExpr::int(1)),
                (true, false) => None,
            })
            .collect()
    });
    Ok(tensor_si(dims, x.dtype, ndim))
}
