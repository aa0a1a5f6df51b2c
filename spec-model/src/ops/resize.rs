//! Image resizing: `image.resize2d` (TVM 0.27's `src/relax/op/image/resize.cc`; the
//! arithmetic is TOPI's `python/tvm/topi/image/resize.py`, see
//! `proofs-notes/operator-semantics.md`).

use super::infer::{show, tensor_si, Infer};
use super::OpError;
use crate::grammar::{AttrValue, ExprKind, PrimExpr, StructInfo};
use crate::require;

/// The interpolation methods TOPI knows (it lowercases `method` first).
pub const METHODS: [&str; 3] = ["nearest_neighbor", "linear", "cubic"];

/// The coordinate transformation modes of TOPI's `get_inx`.
pub const MODES: [&str; 6] =
    ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize"];

/// The rounding methods of TOPI's `get_closest_index` (`""`: `round` under
/// `align_corners`, else `floor`).
pub const ROUNDINGS: [&str; 6] = ["", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"];

fn string_attr(cx: &Infer, name: &str, default: &str) -> String {
    match cx.attr(name) {
        Some(AttrValue::Str(s)) => s.clone(),
        _ => default.to_string(),
    }
}

/// For each letter of `NCHW`, its position in `layout`; `None` unless a permutation.
fn positions(layout: &str) -> Option<Vec<usize>> {
    if layout.len() != 4 {
        return None;
    }
    let mut seen: Vec<usize> = Vec::new();
    for c in "NCHW".chars() {
        let p = layout.find(c)?;
        if seen.contains(&p) {
            return None;
        }
        seen.push(p);
    }
    Some(seen)
}

/// OP-image.resize2d: `resize2d(data, size, roi, layout, method,
/// coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude,
/// extrapolation_value, out_dtype)`: data `(N, C, H, W)` in `layout` (default `NCHW`,
/// any permutation of those letters), `size` a shape of 2 values `(OH, OW)`; the
/// result `(N, C, OH, OW)` in the same layout, of `out_dtype` (default: the data's).
/// The dimensions are known when `size` is written as a shape literal
/// (`R.shape([8, n])`) and the data's shape is known; otherwise only the rank, 4 (TVM
/// reads the literal, not a shape variable's value). `method`: `nearest_neighbor`,
/// `linear` or `cubic`, in any case (TOPI lowercases it);
/// `coordinate_transformation_mode`: `half_pixel` (default), `align_corners`,
/// `asymmetric`, `pytorch_half_pixel`, `tf_half_pixel_for_nn`, `tf_crop_and_resize`;
/// `rounding_method` (read by `nearest_neighbor` only): `round` (default),
/// `round_prefer_floor`, `round_prefer_ceil`, `floor`, `ceil` or `""`; `roi`: one
/// number or 4 (start_h, start_w, end_h, end_w; default zeros). Errors: the data not a
/// tensor; `size` not a shape of exactly 2 values (an unknown length too, as in TVM); a
/// layout that is not a permutation of `NCHW`; a rank other than 4; an unknown method,
/// mode or (for `nearest_neighbor`) rounding method; `roi` of another length; a
/// negative constant size.
pub fn resize2d(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the data")?;
    let (ndim, _) = cx.shape_arg(1, "the size")?;
    require!(cx => ndim == 2, "the size must be a shape of 2 values (height, width), got ndim {ndim}");
    let layout = string_attr(cx, "layout", "NCHW");
    let pos = positions(&layout).ok_or_else(|| {
        cx.error(format!("layout \"{layout}\" is not supported: it must be a permutation of the letters of \"NCHW\""))
    })?;
    let method = string_attr(cx, "method", "linear").to_ascii_lowercase();
    require!(cx => METHODS.contains(&method.as_str()),
        "method \"{method}\" is not one of \"nearest_neighbor\", \"linear\", \"cubic\"");
    let mode = string_attr(cx, "coordinate_transformation_mode", "half_pixel");
    require!(cx => MODES.contains(&mode.as_str()),
        "coordinate_transformation_mode \"{mode}\" is not one of {}", MODES.join(", "));
    let rounding = string_attr(cx, "rounding_method", "round");
    require!(cx => method != "nearest_neighbor" || ROUNDINGS.contains(&rounding.as_str()),
        "rounding_method \"{rounding}\" is not one of \"round\", \"round_prefer_floor\", \"round_prefer_ceil\", \"floor\", \"ceil\", \"\"");
    if let Some(AttrValue::List(roi)) = cx.attr("roi") {
        require!(cx => roi.len() == 4, "roi must have 1 or 4 values (start_h, start_w, end_h, end_w), got {}", roi.len());
    }
    require!(cx => x.ndim == -1 || x.ndim == 4, "the data must have rank 4 (its layout's), got rank {}", x.ndim);
    let dtype = cx.attr_dtype("out_dtype").filter(|d| !d.is_void()).unwrap_or(x.dtype);
    let size = match &cx.call.args[1].kind {
        ExprKind::ShapeExpr(ds) if ds.len() == 2 => Some(ds.clone()),
        _ => None,
    };
    if let Some(bad) = size.iter().flatten().find(|d| d.as_int().is_some_and(|v| v < 0)) {
        return Err(cx.error(format!("the size {} is negative", show(bad))));
    }
    let (Some(xd), Some(size)) = (&x.dims, size) else { return Ok(tensor_si(None, dtype, 4)) };
    let mut out: Vec<PrimExpr> = xd.clone();
    out[pos[2]] = size[0].clone();
    out[pos[3]] = size[1].clone();
    Ok(tensor_si(Some(out), dtype, 4))
}
