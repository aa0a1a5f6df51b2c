//! Sorting: `sort`, `argsort` and `topk` (TVM's `src/relax/op/tensor/sorting.cc`). All
//! three order one axis of one tensor; the order is the stable one (ties keep their
//! positions) with NaN above every number (operator-semantics.md, "Sorting and element
//! indexing").

use super::infer::{show, tensor_si, Infer, TensorInfo};
use super::OpError;
use crate::grammar::{DataType, PrimExpr, StructInfo, StructInfoKind};
use crate::require;
use crate::struct_info::Verdict;
use crate::Span;

/// The StructInfo of `x`, with dtype `dtype`.
fn like(x: &TensorInfo, dtype: DataType) -> StructInfo {
    StructInfo::new(StructInfoKind::Tensor { shape: x.shape.clone(), dtype, ndim: x.ndim }, Span::SYNTHETIC)
}

/// The sorted axis (attribute `axis`, default -1), normalized when the rank is known.
fn sorted_axis(cx: &Infer, x: &TensorInfo) -> Result<Option<usize>, OpError> {
    let axis = cx.attr_int("axis", -1);
    if x.ndim == -1 {
        return Ok(None);
    }
    cx.normalize_axis(axis, x.ndim).map(Some)
}

/// The index dtype (attribute `dtype`, default `int32`): an integer dtype, and, when the
/// sorted axis has a constant length `n`, one that holds `n - 1`, the largest position.
fn index_dtype(cx: &Infer, x: &TensorInfo, axis: Option<usize>) -> Result<DataType, OpError> {
    let dt = cx.attr_dtype("dtype").unwrap_or(DataType::INT32);
    require!(cx => (dt.is_int() || dt.is_uint()) && !dt.is_bool() && dt.lanes == 1,
        "the index dtype must be an integer dtype, not {dt}");
    let len = axis.and_then(|a| x.dims.as_ref().and_then(|d| d[a].as_int()));
    if let Some(n) = len.filter(|&n| n > 0) {
        require!(cx => dt.fits(n as i128 - 1), "positions up to {} do not fit the index dtype {dt}", n - 1);
    }
    Ok(dt)
}

/// OP-sort: `sort(x, axis=-1, descending=False)` has `x`'s StructInfo: the elements of
/// each line along `axis`, in stable ascending (or descending) order, NaN above every
/// number. Any dtype. Errors: not a tensor; `axis` out of range for a known rank (rank
/// 0 has no axis; TVM 0.27 does not check `axis` statically).
pub fn sort(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    sorted_axis(cx, &x)?;
    Ok(like(&x, x.dtype))
}

/// OP-argsort: `argsort(data, axis=-1, descending=False, dtype="int32")` has `data`'s
/// shape and the index dtype: the positions along `axis` of OP-sort's order. Errors:
/// not a tensor; `axis` out of range for a known rank; an index dtype that is not an
/// integer dtype (TVM also writes float indices), or that cannot hold the last
/// position of an axis of constant length.
pub fn argsort(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "data")?;
    let axis = sorted_axis(cx, &x)?;
    let dt = index_dtype(cx, &x, axis)?;
    Ok(like(&x, dt))
}

/// OP-topk: `topk(data, k=1, axis=-1, ret_type="both", largest=True, dtype="int32")`:
/// the first `k` elements of each line along `axis` in OP-sort's order (descending when
/// `largest`), and their positions in the index dtype. `k < 1` means the whole axis
/// (TVM). The result's axis has length `k`, or the axis' own length when `k < 1`; a
/// symbolic length is assumed to be at least `k` (a warning: checked at run time). With
/// `ret_type` `"both"` the result is the tuple `(values, indices)`; `"values"` and
/// `"indices"` give one of them. Errors: not a tensor; `axis` out of range for a known
/// rank; `ret_type` another string; an index dtype as OP-argsort's; `k` above an axis
/// length that is a constant (TVM 0.27 would shrink `k` there, and its kernel writes
/// the `k` positions it allocated past the axis).
pub fn topk(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "data")?;
    let axis = sorted_axis(cx, &x)?;
    let ret = match cx.attr("ret_type") {
        Some(crate::grammar::AttrValue::Str(s)) => s.clone(),
        _ => "both".to_string(),
    };
    require!(cx => matches!(ret.as_str(), "both" | "values" | "indices"),
        "ret_type must be \"both\", \"values\" or \"indices\", not {ret:?}");
    let dt = index_dtype(cx, &x, axis)?;
    let k = cx.attr_int("k", 1);
    let dims = match (&x.dims, axis) {
        (Some(ds), Some(a)) if k >= 1 => {
            let kk = PrimExpr::int(k);
            match ds[a].as_int() {
                Some(n) => require!(cx => k <= n, "k = {k} is more than the length {n} of axis {a}"),
                None if cx.compare(&ds[a], &kk) == Verdict::Equal => {}
                None => cx.warn(format!(
                    "cannot prove k = {k} is at most the length {} of axis {a}; checked at run time",
                    show(&ds[a])
                )),
            }
            let mut out = ds.clone();
            out[a] = kk;
            Some(out)
        }
        (Some(ds), _) => Some(ds.clone()),
        (None, _) => None,
    };
    let values = tensor_si(dims.clone(), x.dtype, x.ndim);
    let indices = tensor_si(dims, dt, x.ndim);
    Ok(match ret.as_str() {
        "values" => values,
        "indices" => indices,
        _ => StructInfo::new(StructInfoKind::Tuple { fields: vec![values, indices] }, Span::SYNTHETIC),
    })
}
