//! `matmul`, `nn.attention` and the reductions `sum`, `mean`, `max`, `min`
//! (`einsum` is in `einsum.rs`).

use super::infer::{show, tensor_si, Infer, TensorInfo};
use super::OpError;
use crate::grammar::{AttrValue, DataType, PrimBinOp, PrimExpr, StructInfo};
use crate::require;
use crate::struct_info::Verdict;

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

/// The causal masks of OP-nn.attention.
pub const CAUSAL_MASKS: [&str; 2] = ["TopLeft", "BottomRight"];

/// OP-nn.attention: `attention(query, key, value, bias=None, scale=None,
/// causal_mask=None, window_size=None)`, multi-head attention in the BSNH layout:
/// `query` is `(b, s, n, h)`, `key` `(b, s_kv, n_k, h)`, `value` `(b, s_kv, n_v, h_v)`
/// and the result `(b, s, n, h_v)` of `query`'s dtype; `n` is a multiple of `n_k` and
/// of `n_v` (grouped heads). The optional `bias` (TVM 0.27's `relax.nn.attention_bias`)
/// is 4-D, `(b, n, s, s_kv)` with its first three dimensions possibly 1 (broadcast).
/// `causal_mask` is `"TopLeft"` or `"BottomRight"`; `window_size` (sliding-window
/// attention) needs `"BottomRight"` and is positive.
/// Errors: 3 or 4 tensor arguments; a known rank other than 4; a known non-float dtype
/// or known different dtypes; batch sizes or key/value lengths provably different;
/// head dimensions of query and key provably different; `n` provably not a multiple of
/// `n_k` or `n_v`; a bias dimension provably neither the expected one nor 1 (the last
/// one: provably different); an unknown `causal_mask`; `window_size` not positive or
/// without `"BottomRight"`. Warnings: those relations undecided.
pub fn attention(cx: &mut Infer) -> Result<StructInfo, OpError> {
    require!(cx => cx.args.len() <= 4, "takes 3 or 4 arguments (query, key, value, bias), {} given", cx.args.len());
    let names = ["query", "key", "value", "bias"];
    let ts: Vec<TensorInfo> = (0..cx.args.len()).map(|i| cx.tensor(i, names[i])).collect::<Result<_, _>>()?;
    for (t, name) in ts.iter().zip(names) {
        require!(cx => t.ndim == -1 || t.ndim == 4,
            "the {name} must have 4 dimensions (batch, sequence, heads, head dimension), not {}", t.ndim);
        require!(cx => t.dtype.is_void() || t.dtype.is_float(), "the {name} must be floating-point, not {}", t.dtype);
    }
    let known: Vec<(DataType, &str)> =
        ts.iter().zip(names).map(|(t, n)| (t.dtype, n)).filter(|(d, _)| !d.is_void()).collect();
    if let Some((d, n)) = known.iter().find(|(d, _)| *d != known[0].0) {
        return Err(cx.error(format!("the {} has dtype {} but the {n} {d}", known[0].1, known[0].0)));
    }
    let mask = match cx.attr("causal_mask") {
        None => None,
        Some(AttrValue::Str(s)) if CAUSAL_MASKS.contains(&s.as_str()) => Some(s.clone()),
        Some(v) => return Err(cx.error(format!("causal_mask must be \"TopLeft\" or \"BottomRight\", not {v:?}"))),
    };
    if cx.attr("window_size").is_some() {
        let w = cx.attr_int("window_size", 0);
        require!(cx => w > 0, "window_size must be positive, not {w}");
        require!(cx => mask.as_deref() == Some("BottomRight"),
            "window_size needs causal_mask=\"BottomRight\" (sliding-window attention is causal, bottom-right aligned)");
    }
    let dtype = ts[0].dtype;
    let (Some(q), Some(k), Some(v)) = (ts[0].dims.clone(), ts[1].dims.clone(), ts[2].dims.clone()) else {
        return Ok(tensor_si(None, dtype, 4));
    };
    // The result's shape is query's and value's whatever is undecided (then checked at
    // run time), as in TVM.
    cx.expect_equal(&q[0], &k[0], "the batch sizes of query and key")?;
    cx.expect_equal(&q[0], &v[0], "the batch sizes of query and value")?;
    cx.expect_equal(&k[1], &v[1], "the sequence lengths of key and value")?;
    cx.expect_equal(&q[3], &k[3], "the head dimensions of query and key")?;
    for (heads, name) in [(&k[2], "key"), (&v[2], "value")] {
        if heads.as_int() == Some(0) {
            continue;
        }
        let rem = super::dim_op(PrimBinOp::FloorMod, &q[2], heads);
        let what = format!("the query's {} heads are a multiple of the {name}'s {}", show(&q[2]), show(heads));
        match cx.compare(&rem, &PrimExpr::int(0)) {
            Verdict::Equal => {}
            Verdict::NotEqual => return Err(cx.error(format!("not true that {what}"))),
            Verdict::Unknown => cx.warn(format!("cannot prove {what}; checked at run time")),
        }
    }
    if let Some(b) = ts.get(3).and_then(|t| t.dims.clone()) {
        let one = PrimExpr::int(1);
        for (i, (want, what)) in
            [(&q[0], "batch size"), (&q[2], "head count"), (&q[1], "query length")].iter().enumerate()
        {
            if cx.compare(&b[i], want) == Verdict::Equal || cx.is_one(&b[i]) {
                continue;
            }
            if cx.compare(&b[i], want) == Verdict::NotEqual && cx.compare(&b[i], &one) == Verdict::NotEqual {
                return Err(cx.error(format!("the bias's {what} {} is neither {} nor 1", show(&b[i]), show(want))));
            }
            cx.warn(format!(
                "cannot prove the bias's {what} {} is {} or 1; checked at run time",
                show(&b[i]),
                show(want)
            ));
        }
        cx.expect_equal(&b[3], &k[1], "the bias's last dimension and the key length")?;
    }
    Ok(tensor_si(Some(vec![q[0].clone(), q[1].clone(), q[2].clone(), v[3].clone()]), dtype, 4))
}
