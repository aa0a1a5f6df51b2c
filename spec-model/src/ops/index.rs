//! Element indexing: `gather_elements` and `scatter_elements` (ONNX's GatherElements and
//! ScatterElements; TVM's `src/relax/op/tensor/manipulate.cc`). Both pair a tensor of
//! indices with `data` position by position: the index replaces the position's
//! coordinate along `axis`.

use super::infer::{tensor_si, Infer, TensorInfo};
use super::OpError;
use crate::grammar::{AttrValue, StructInfo, StructInfoKind};
use crate::require;
use crate::Span;

/// The reductions `scatter_elements` accepts (TVM 0.27's `topi.scatter_elements`).
pub const REDUCTIONS: [&str; 6] = ["update", "add", "mul", "mean", "max", "min"];

/// An error unless `indices` has an integer dtype (`unsigned` too, when allowed) or an
/// unknown one.
fn integer_indices(cx: &Infer, indices: &TensorInfo, unsigned: bool) -> Result<(), OpError> {
    let dt = indices.dtype;
    let ok = dt.is_void() || dt.is_int() || (unsigned && dt.is_uint() && !dt.is_bool());
    let want = if unsigned { "an integer dtype" } else { "a signed integer dtype" };
    require!(cx => ok, "indices must have {want}, not {dt}");
    Ok(())
}

/// Along every axis but `axis`, the indices' length must not exceed `data`'s: an
/// error when both are constants and it does (otherwise checked at run time).
fn within_data(cx: &Infer, data: &TensorInfo, indices: &TensorInfo, axis: usize) -> Result<(), OpError> {
    let (Some(dd), Some(id)) = (&data.dims, &indices.dims) else { return Ok(()) };
    for (j, (d, i)) in dd.iter().zip(id).enumerate() {
        if let (Some(d), Some(i)) = (d.as_int(), i.as_int()) {
            require!(cx => j == axis || i <= d,
                "indices have length {i} along axis {j}, where data has only {d}");
        }
    }
    Ok(())
}

/// The `axis` attribute (default 0) normalized against `data`'s known rank.
fn element_axis(cx: &Infer, data: &TensorInfo) -> Result<usize, OpError> {
    cx.normalize_axis(cx.attr_int("axis", 0), data.ndim)
}

/// OP-gather_elements: `gather_elements(data, indices, axis=0)`: `out[p] = data[p']`
/// where `p'` is `p` with its coordinate along `axis` replaced by `indices[p]`
/// (negative indices count from the end once). The result has `indices`' shape and
/// `data`'s dtype; when either rank is unknown, an unknown rank (as TVM). Errors: not
/// tensors; indices of a known dtype that is not a signed integer one (TVM's rule);
/// `axis` out of range for `data`'s rank (rank 0 has none); ranks that differ; along
/// another axis, an indices length above `data`'s when both are constants.
pub fn gather_elements(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let data = cx.tensor(0, "data")?;
    let indices = cx.tensor(1, "indices")?;
    integer_indices(cx, &indices, false)?;
    if data.ndim == -1 || indices.ndim == -1 {
        return Ok(tensor_si(None, data.dtype, -1));
    }
    let axis = element_axis(cx, &data)?;
    require!(cx => data.ndim == indices.ndim,
        "data (rank {}) and indices (rank {}) must have the same rank", data.ndim, indices.ndim);
    within_data(cx, &data, &indices, axis)?;
    Ok(StructInfo::new(
        StructInfoKind::Tensor { shape: indices.shape.clone(), dtype: data.dtype, ndim: indices.ndim },
        Span::SYNTHETIC,
    ))
}

/// OP-scatter_elements: `scatter_elements(data, indices, updates, axis=0,
/// reduction="update")`: a copy of `data` where, for each position `p` of `indices` in
/// row-major order, the element at `p` with its coordinate along `axis` replaced by
/// `indices[p]` (negative counting from the end once) becomes `f(element, updates[p])`:
/// `updates[p]` for `"update"` (so the last of duplicate indices wins), the sum,
/// product, pairwise mean `(element + update) / 2`, maximum or minimum for `"add"`,
/// `"mul"`, `"mean"`, `"max"`, `"min"`. The result has `data`'s StructInfo. Errors:
/// not tensors; known ranks that differ; `data` and `updates` of different known
/// dtypes; indices of a known non-integer dtype; `axis` out of range for a known rank
/// (TVM checks it only when legalizing); another `reduction`; `indices` and `updates`
/// of provably different lengths (undecided: a warning); along an axis other than
/// `axis`, an indices length above `data`'s when both are constants.
pub fn scatter_elements(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let data = cx.tensor(0, "data")?;
    let indices = cx.tensor(1, "indices")?;
    let updates = cx.tensor(2, "updates")?;
    let reduction = match cx.attr("reduction") {
        Some(AttrValue::Str(s)) => s.clone(),
        _ => "update".to_string(),
    };
    require!(cx => REDUCTIONS.contains(&reduction.as_str()),
        "reduction must be one of {}, not {reduction:?}", REDUCTIONS.join(", "));
    let ranks = [("data", data.ndim), ("indices", indices.ndim), ("updates", updates.ndim)];
    for (i, (a, ra)) in ranks.iter().enumerate() {
        for (b, rb) in &ranks[i + 1..] {
            require!(cx => *ra == -1 || *rb == -1 || ra == rb, "{a} (rank {ra}) and {b} (rank {rb}) must have the same rank");
        }
    }
    cx.same_dtype(data.dtype, updates.dtype)
        .map_err(|_| cx.error(format!("updates have dtype {}, other than data's {}", updates.dtype, data.dtype)))?;
    integer_indices(cx, &indices, true)?;
    if data.ndim == -1 {
        return Ok(tensor_si(None, data.dtype, -1));
    }
    let axis = element_axis(cx, &data)?;
    if let (Some(id), Some(ud)) = (&indices.dims, &updates.dims) {
        for (j, (i, u)) in id.iter().zip(ud).enumerate() {
            cx.expect_equal(i, u, &format!("the lengths of indices and updates along axis {j}"))?;
        }
    }
    within_data(cx, &data, &indices, axis)?;
    Ok(StructInfo::new(
        StructInfoKind::Tensor { shape: data.shape.clone(), dtype: data.dtype, ndim: data.ndim },
        Span::SYNTHETIC,
    ))
}
