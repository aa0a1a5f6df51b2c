//! Convolution, pooling and padding: `nn.pad`, `nn.conv1d`, `nn.conv2d`,
//! `nn.conv2d_transpose`, `nn.max_pool2d`, `nn.avg_pool2d`, `nn.adaptive_avg_pool2d`
//! (TVM 0.27's `src/relax/op/nn/{convolution,pooling,nn}.cc`).
//!
//! A layout is a permutation of the operator's canonical letters (`NCHW`, `OIHW`,
//! `NCW`, `OIW`); TVM's packed layouts (`NCHW16c`) are refused. Window attributes
//! (strides, padding, dilation, pool sizes) must fit in int32, as TVM builds them as
//! `IntImm::Int32`, so the shape arithmetic below cannot overflow on them.

use super::infer::{dim_op, show, tensor_si, Infer, TensorInfo};
use super::OpError;
use crate::grammar::{PrimBinOp, PrimExpr, PrimExprKind, StructInfo};
use crate::require;
use crate::span::Span;
use crate::struct_info::prover::fold;
use crate::struct_info::Verdict;

const I32_MAX: i64 = i32::MAX as i64;

/// For each letter of `canonical`, its position in `layout`; `None` unless `layout` is a
/// permutation of `canonical`.
fn layout_positions(layout: &str, canonical: &str) -> Option<Vec<usize>> {
    if layout.len() != canonical.len() {
        return None;
    }
    let mut seen = Vec::new();
    for c in canonical.chars() {
        let p = layout.find(c)?;
        if seen.contains(&p) {
            return None;
        }
        seen.push(p);
    }
    Some(seen)
}

/// A layout attribute (default `default`), as positions of the canonical letters.
fn layout(cx: &Infer, name: &str, default: &str, canonical: &str) -> Result<Vec<usize>, OpError> {
    let l = match cx.attr(name) {
        Some(crate::grammar::AttrValue::Str(s)) => s.clone(),
        _ => default.to_string(),
    };
    layout_positions(&l, canonical).ok_or_else(|| {
        cx.error(format!("{name} \"{l}\" is not supported: it must be a permutation of the letters of \"{canonical}\""))
    })
}

/// An int-list attribute of `n` values (a single value repeated), each in `lo..=I32_MAX`.
fn window_attr(cx: &Infer, name: &str, n: usize, default: i64, lo: i64) -> Result<Vec<i64>, OpError> {
    let v = cx.attr_ints(name).unwrap_or_else(|| vec![default]);
    let v = match v.len() {
        1 => vec![v[0]; n],
        k if k == n => v,
        k => return Err(cx.error(format!("{name} must have 1 or {n} values, got {k}"))),
    };
    if let Some(bad) = v.iter().find(|&&x| x < lo || x > I32_MAX) {
        return Err(cx.error(format!("{name} value {bad} is out of range ({lo} to {I32_MAX})")));
    }
    Ok(v)
}

/// `padding` completed as TVM's `GetCompletePadding1D/2D` do: (before.., after..).
fn padding(cx: &Infer, spatial: usize) -> Result<Vec<i64>, OpError> {
    let p = cx.attr_ints("padding").unwrap_or_else(|| vec![0]);
    let full = match (spatial, p.len()) {
        (_, 1) => vec![p[0]; 2 * spatial],
        (1, 2) | (2, 4) => p,
        (2, 2) => vec![p[0], p[1], p[0], p[1]],
        (_, k) => {
            let allowed = if spatial == 1 { "1 or 2" } else { "1, 2 or 4" };
            return Err(cx.error(format!("padding must have {allowed} values, got {k}")));
        }
    };
    if let Some(bad) = full.iter().find(|&&x| !(0..=I32_MAX).contains(&x)) {
        return Err(cx.error(format!("padding value {bad} is out of range (0 to {I32_MAX})")));
    }
    Ok(full)
}

fn int(v: i64) -> PrimExpr {
    PrimExpr::int(v)
}

/// `floordiv(x + pad - dilation * (k - 1) - 1 [+ stride - 1], stride)`: a window's
/// output length less one (ceil mode adds `stride - 1` to the numerator, as TVM does).
/// With a literal `k` the constants are summed first and a stride of 1 divides by
/// nothing, so `h + 2 - 2 - 1` is written `h - 1` (TVM's `Simplify` does the same).
fn window_quotient(x: &PrimExpr, pad: i64, dilation: i64, k: &PrimExpr, stride: i64, ceil: bool) -> PrimExpr {
    let extra = if ceil { stride - 1 } else { 0 };
    // Every term is within int32 (attributes) or a tensor dimension: exact in i128.
    let constant = k
        .as_int()
        .and_then(|k| i64::try_from(pad as i128 - dilation as i128 * (k as i128 - 1) - 1 + extra as i128).ok());
    let num = match constant {
        Some(c) if c < 0 && c != i64::MIN => dim_op(PrimBinOp::Sub, x, &int(-c)),
        Some(c) => dim_op(PrimBinOp::Add, x, &int(c)),
        None => {
            let span = dim_op(PrimBinOp::Mul, &int(dilation), &dim_op(PrimBinOp::Sub, k, &int(1)));
            let num = dim_op(PrimBinOp::Sub, &dim_op(PrimBinOp::Add, x, &int(pad)), &span);
            dim_op(PrimBinOp::Add, &dim_op(PrimBinOp::Sub, &num, &int(1)), &int(extra))
        }
    };
    dim_op(PrimBinOp::FloorDiv, &num, &int(stride))
}

/// `window_quotient + 1`, with `(x - c) + 1` written `x - (c - 1)` (a stride of 1).
fn plus_one(q: &PrimExpr) -> PrimExpr {
    if let PrimExprKind::Binary { op: PrimBinOp::Sub, a, b } = &*q.kind {
        if let Some(c) = b.as_int().filter(|&c| c >= 1) {
            return dim_op(PrimBinOp::Sub, a, &int(c - 1));
        }
    }
    dim_op(PrimBinOp::Add, q, &int(1))
}

/// `dims` (in canonical order) written in the layout `pos`.
fn in_layout(dims: Vec<PrimExpr>, pos: &[usize]) -> Vec<PrimExpr> {
    let mut out = dims.clone();
    for (i, d) in dims.into_iter().enumerate() {
        out[pos[i]] = d;
    }
    out
}

/// A tensor argument's rank checked against a layout's.
fn check_rank(cx: &Infer, t: &TensorInfo, rank: usize, what: &str) -> Result<(), OpError> {
    require!(cx => t.ndim == -1 || t.ndim == rank as i64,
        "{what} must have rank {rank} (its layout's), got rank {}", t.ndim);
    Ok(())
}

/// OP-nn.pad: `pad(data, pad_width, pad_mode, pad_value)` widens axis `i` by
/// `pad_width[2i]` before and `pad_width[2i+1]` after (output dim `d + before + after`);
/// same dtype. `pad_mode` is `"constant"` (default; `pad_value`, default 0), `"reflect"`,
/// `"replicate"` or `"circular"`. With an unknown rank, the rank is `len(pad_width) / 2`.
/// Errors: not a tensor; `pad_width` missing, of odd length or not twice the rank; a
/// negative width or one over 2^31-1; another `pad_mode`.
pub fn pad(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the data")?;
    let widths = cx.attr_ints("pad_width").unwrap_or_default();
    require!(cx => widths.len().is_multiple_of(2), "pad_width must have an even number of values, got {}", widths.len());
    require!(cx => x.ndim == -1 || widths.len() == 2 * x.ndim as usize,
        "pad_width must have 2 values per axis ({} for rank {}), got {}", 2 * x.ndim, x.ndim, widths.len());
    if let Some(bad) = widths.iter().find(|&&w| !(0..=I32_MAX).contains(&w)) {
        return Err(cx.error(format!("pad_width value {bad} is out of range (0 to {I32_MAX})")));
    }
    let mode = match cx.attr("pad_mode") {
        Some(crate::grammar::AttrValue::Str(s)) => s.clone(),
        _ => "constant".to_string(),
    };
    require!(cx => ["constant", "reflect", "replicate", "circular"].contains(&mode.as_str()),
        "pad_mode \"{mode}\" is not one of \"constant\", \"reflect\", \"replicate\", \"circular\"");
    let ndim = (widths.len() / 2) as i64;
    let dims = x.dims.as_ref().map(|ds| {
        ds.iter().enumerate().map(|(i, d)| dim_op(PrimBinOp::Add, d, &int(widths[2 * i] + widths[2 * i + 1]))).collect()
    });
    Ok(tensor_si(dims, x.dtype, ndim))
}

/// OP-nn.conv1d: as OP-nn.conv2d with one spatial axis: layouts permutations of `NCW`
/// (data, out) and `OIW` (kernel); padding of 1 or 2 values.
pub fn conv1d(cx: &mut Infer) -> Result<StructInfo, OpError> {
    conv(cx, 1)
}

/// OP-nn.conv2d: data `(N, C, H, W)` in `data_layout` (default `NCHW`), weight
/// `(O, C/groups, KH, KW)` in `kernel_layout` (default `OIHW`); the result
/// `(N, O, OH, OW)` in `out_layout` (default: `data_layout`), with
/// `OH = floordiv(H + pt + pb - dh*(KH-1) - 1, sh) + 1` (and `OW` alike). Layouts are
/// permutations of those letters. `strides`, `dilation`: 1 or 2 values, each at least 1;
/// `padding`: 1, 2 or 4 values (top, left, bottom, right), each at least 0; `groups`
/// at least 1. The dtype is `out_dtype` if given, else the operands' common dtype.
/// Errors: not tensors; a layout that is not such a permutation; a rank other than the
/// layout's; attribute lengths or values out of range (values over 2^31-1); different
/// known dtypes without `out_dtype`; `C != I * groups` provably; `O` provably not a
/// multiple of `groups`; an output length that is a negative constant (the window
/// longer than the padded input). Warning: `C = I * groups` undecided.
pub fn conv2d(cx: &mut Infer) -> Result<StructInfo, OpError> {
    conv(cx, 2)
}

fn conv(cx: &mut Infer, spatial: usize) -> Result<StructInfo, OpError> {
    let (data_c, kernel_c) = if spatial == 1 { ("NCW", "OIW") } else { ("NCHW", "OIHW") };
    let data = cx.tensor(0, "the data")?;
    let weight = cx.tensor(1, "the weight")?;
    let dpos = layout(cx, "data_layout", data_c, data_c)?;
    let kpos = layout(cx, "kernel_layout", kernel_c, kernel_c)?;
    let default_out: String = match cx.attr("data_layout") {
        Some(crate::grammar::AttrValue::Str(s)) => s.clone(),
        _ => data_c.to_string(),
    };
    let opos = layout(cx, "out_layout", &default_out, data_c)?;
    let strides = window_attr(cx, "strides", spatial, 1, 1)?;
    let dilation = window_attr(cx, "dilation", spatial, 1, 1)?;
    let pad = padding(cx, spatial)?;
    let groups = cx.attr_int("groups", 1);
    require!(cx => (1..=I32_MAX).contains(&groups), "groups must be at least 1 (and at most {I32_MAX}), got {groups}");
    let rank = spatial + 2;
    check_rank(cx, &data, rank, "the data")?;
    check_rank(cx, &weight, rank, "the weight")?;
    let dtype = match cx.attr_dtype("out_dtype").filter(|d| !d.is_void()) {
        Some(d) => d,
        None => cx.same_dtype(data.dtype, weight.dtype)?,
    };
    let (Some(dd), Some(wd)) = (&data.dims, &weight.dims) else {
        return Ok(tensor_si(None, dtype, rank as i64));
    };
    let d: Vec<PrimExpr> = dpos.iter().map(|&p| dd[p].clone()).collect();
    let w: Vec<PrimExpr> = kpos.iter().map(|&p| wd[p].clone()).collect();
    let channels = dim_op(PrimBinOp::Mul, &w[1], &int(groups));
    match cx.compare(&d[1], &channels) {
        Verdict::NotEqual => {
            return Err(cx.error(format!(
                "the data's channels {} must equal the weight's input channels {} times groups {groups}",
                show(&d[1]),
                show(&w[1])
            )))
        }
        Verdict::Unknown => cx.warn(format!(
            "cannot prove the data's channels {} equal {}; checked at run time",
            show(&d[1]),
            show(&channels)
        )),
        Verdict::Equal => {}
    }
    let rem = fold(&PrimExpr::binary(PrimBinOp::FloorMod, w[0].clone(), int(groups)));
    require!(cx => rem.as_int().is_none_or(|r| r == 0),
        "the output channels {} are not a multiple of groups {groups}", show(&w[0]));
    let mut out = vec![d[0].clone(), w[0].clone()];
    for i in 0..spatial {
        let q = window_quotient(&d[2 + i], pad[i] + pad[i + spatial], dilation[i], &w[2 + i], strides[i], false);
        out.push(plus_one(&q));
    }
    negative_lengths(cx, &out)?;
    Ok(tensor_si(Some(in_layout(out, &opos)), dtype, rank as i64))
}

/// OP-nn.conv2d_transpose: data `(N, C, H, W)` in `data_layout` (default `NCHW`),
/// weight `(I, O, KH, KW)` in `kernel_layout` (default `IOHW`: input channels first);
/// the result `(N, O * groups, OH, OW)` in `out_layout` (default: `data_layout`), with
/// `OH = (H - 1)*sh - (pt + pb) + dh*(KH - 1) + oph + 1` (and `OW` alike), written
/// `h * sh + kh * dh + c` with the constants summed (`h * 2 + 1`, as TVM's `Simplify`
/// prints it). Layouts are permutations of those letters. `strides`, `dilation`: 1 or 2
/// values, each at least 1; `padding`: 1, 2 or 4 values (top, left, bottom, right), at
/// least 0; `output_padding`: 1 or 2 values, at least 0 and each below the stride of its
/// axis (TVM's check; not below the dilation, as PyTorch also allows); `groups` at
/// least 1. The dtype is `out_dtype` if given, else the operands' common dtype. Errors: not
/// tensors; a layout that is not such a permutation; a rank other than 4; attribute
/// lengths or values out of range (values over 2^31-1); an `output_padding` not below
/// its stride; different known dtypes without `out_dtype`; `C != I` provably; `I`
/// provably not a multiple of `groups`; an output length that is a negative constant.
/// Warning: `C = I` undecided.
pub fn conv2d_transpose(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let data = cx.tensor(0, "the data")?;
    let weight = cx.tensor(1, "the weight")?;
    let dpos = layout(cx, "data_layout", "NCHW", "NCHW")?;
    let kpos = layout(cx, "kernel_layout", "IOHW", "IOHW")?;
    let default_out: String = match cx.attr("data_layout") {
        Some(crate::grammar::AttrValue::Str(s)) => s.clone(),
        _ => "NCHW".to_string(),
    };
    let opos = layout(cx, "out_layout", &default_out, "NCHW")?;
    let strides = window_attr(cx, "strides", 2, 1, 1)?;
    let dilation = window_attr(cx, "dilation", 2, 1, 1)?;
    let out_pad = window_attr(cx, "output_padding", 2, 0, 0)?;
    let pad = padding(cx, 2)?;
    let groups = cx.attr_int("groups", 1);
    require!(cx => (1..=I32_MAX).contains(&groups), "groups must be at least 1 (and at most {I32_MAX}), got {groups}");
    for i in 0..2 {
        require!(cx => out_pad[i] < strides[i],
            "output_padding {} must be less than the stride {} of its axis", out_pad[i], strides[i]);
    }
    check_rank(cx, &data, 4, "the data")?;
    check_rank(cx, &weight, 4, "the weight")?;
    let dtype = match cx.attr_dtype("out_dtype").filter(|d| !d.is_void()) {
        Some(d) => d,
        None => cx.same_dtype(data.dtype, weight.dtype)?,
    };
    let (Some(dd), Some(wd)) = (&data.dims, &weight.dims) else {
        return Ok(tensor_si(None, dtype, 4));
    };
    let d: Vec<PrimExpr> = dpos.iter().map(|&p| dd[p].clone()).collect();
    let w: Vec<PrimExpr> = kpos.iter().map(|&p| wd[p].clone()).collect();
    match cx.compare(&d[1], &w[0]) {
        Verdict::NotEqual => {
            return Err(cx.error(format!(
                "the data's channels {} must equal the weight's input channels {}",
                show(&d[1]),
                show(&w[0])
            )))
        }
        Verdict::Unknown => cx.warn(format!(
            "cannot prove the data's channels {} equal the weight's input channels {}; checked at run time",
            show(&d[1]),
            show(&w[0])
        )),
        Verdict::Equal => {}
    }
    let rem = fold(&PrimExpr::binary(PrimBinOp::FloorMod, w[0].clone(), int(groups)));
    require!(cx => rem.as_int().is_none_or(|r| r == 0),
        "the input channels {} are not a multiple of groups {groups}", show(&w[0]));
    let mut out = vec![d[0].clone(), dim_op(PrimBinOp::Mul, &w[1], &int(groups))];
    for i in 0..2 {
        let c = out_pad[i] + 1 - strides[i] - pad[i] - pad[i + 2] - dilation[i];
        let len = transposed_len(&d[2 + i], strides[i], &w[2 + i], dilation[i], c)
            .ok_or_else(|| cx.error("an output length does not fit in int64"))?;
        out.push(len);
    }
    if let Some(bad) = out.iter().find(|d| d.as_int().is_some_and(|v| v < 0)) {
        return Err(cx.error(format!("the padding is larger than the output: output length {}", show(bad))));
    }
    Ok(tensor_si(Some(in_layout(out, &opos)), dtype, 4))
}

/// `x * s + k * d + c`, the literal terms summed into `c` first and a negative `c`
/// subtracted (`h * 2 + kh - 12`, `w * 2 - 9`, `h + 2`); `None` when the summed
/// constant leaves int64. Every term is an int32 attribute or an int64 dimension, so
/// the sum is exact in i128.
fn transposed_len(x: &PrimExpr, s: i64, k: &PrimExpr, d: i64, c: i64) -> Option<PrimExpr> {
    let mut constant = c as i128;
    let mut terms: Vec<PrimExpr> = Vec::new();
    for (v, m) in [(x, s), (k, d)] {
        match v.as_int() {
            Some(v) => constant += v as i128 * m as i128,
            None => terms.push(dim_op(PrimBinOp::Mul, v, &int(m))),
        }
    }
    let constant = i64::try_from(constant).ok()?;
    Some(match terms.into_iter().reduce(|a, b| dim_op(PrimBinOp::Add, &a, &b)) {
        None => int(constant),
        Some(e) if constant < 0 && constant != i64::MIN => dim_op(PrimBinOp::Sub, &e, &int(-constant)),
        Some(e) => dim_op(PrimBinOp::Add, &e, &int(constant)),
    })
}

/// The attributes of a 2-D pooling call, normalized.
struct Pool2d {
    size: Vec<i64>,
    strides: Vec<i64>,
    dilation: Vec<i64>,
    pad: Vec<i64>,
    ceil: bool,
}

/// OP-nn.max_pool2d, OP-nn.avg_pool2d: data `(N, C, H, W)` in `layout` (default
/// `NCHW`, any permutation of it); the result `(N, C, OH, OW)` in `out_layout` (default:
/// `layout`), same dtype, `OH = floordiv(H + pt + pb - dh*(KH-1) - 1 [+ sh - 1], sh) + 1`
/// (`[..]` with `ceil_mode`), and with `ceil_mode` one less when the last window would
/// start at or past `H + pt` (TVM's `invalid_last`; a `Select` on symbolic shapes).
/// `pool_size`, `strides`, `dilation`: 1 or 2 values, at least 1; `padding`: 1, 2 or 4
/// values, at least 0. Errors: not a tensor; a layout that is not a permutation of
/// `NCHW`; a rank other than 4; attribute lengths or values out of range; an output
/// length that is a negative constant.
pub fn pool2d(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the data")?;
    let dpos = layout(cx, "layout", "NCHW", "NCHW")?;
    let default_out: String = match cx.attr("layout") {
        Some(crate::grammar::AttrValue::Str(s)) => s.clone(),
        _ => "NCHW".to_string(),
    };
    let opos = layout(cx, "out_layout", &default_out, "NCHW")?;
    let p = Pool2d {
        size: window_attr(cx, "pool_size", 2, 1, 1)?,
        strides: window_attr(cx, "strides", 2, 1, 1)?,
        dilation: window_attr(cx, "dilation", 2, 1, 1)?,
        pad: padding(cx, 2)?,
        ceil: cx.attr_bool("ceil_mode", false),
    };
    check_rank(cx, &x, 4, "the data")?;
    let Some(xd) = &x.dims else { return Ok(tensor_si(None, x.dtype, 4)) };
    let d: Vec<PrimExpr> = dpos.iter().map(|&q| xd[q].clone()).collect();
    let mut out = vec![d[0].clone(), d[1].clone()];
    for i in 0..2 {
        let (s, head) = (p.strides[i], p.pad[i]);
        let q = window_quotient(&d[2 + i], head + p.pad[i + 2], p.dilation[i], &int(p.size[i]), s, p.ceil);
        let raw = plus_one(&q);
        if !p.ceil {
            out.push(raw);
            continue;
        }
        // invalid_last: (raw - 1) * s >= H + head, with raw - 1 = q.
        let last = dim_op(PrimBinOp::Mul, &q, &int(s));
        let limit = dim_op(PrimBinOp::Add, &d[2 + i], &int(head));
        let less = q.clone();
        out.push(match (last.as_int(), limit.as_int()) {
            (Some(a), Some(b)) => {
                if a >= b {
                    less
                } else {
                    raw
                }
            }
            _ => {
                let cond = PrimExpr::binary(PrimBinOp::Ge, last, limit);
                fold(&PrimExpr::new(PrimExprKind::Select { cond, then_value: less, else_value: raw }, Span::SYNTHETIC))
            }
        });
    }
    negative_lengths(cx, &out)?;
    Ok(tensor_si(Some(in_layout(out, &opos)), x.dtype, 4))
}

/// An error when an output length is a negative constant (a window longer than the
/// padded input; TVM derives the negative dimension).
fn negative_lengths(cx: &Infer, out: &[PrimExpr]) -> Result<(), OpError> {
    match out.iter().find(|d| d.as_int().is_some_and(|v| v < 0)) {
        Some(d) => Err(cx.error(format!("the window is longer than the padded input: output length {}", show(d)))),
        None => Ok(()),
    }
}

/// OP-nn.adaptive_avg_pool2d: data `(N, C, H, W)` in `layout` (default `NCHW`, any
/// permutation); the result `(N, C, OH, OW)` in `out_layout` (default: `layout`), same
/// dtype, where `output_size` is `None` (`OH, OW = H, W`), one value (both) or two.
/// Errors: not a tensor; a layout that is not a permutation of `NCHW`; a rank other than
/// 4; `output_size` of another length, or a value negative or over 2^31-1.
pub fn adaptive_avg_pool2d(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the data")?;
    let dpos = layout(cx, "layout", "NCHW", "NCHW")?;
    let default_out: String = match cx.attr("layout") {
        Some(crate::grammar::AttrValue::Str(s)) => s.clone(),
        _ => "NCHW".to_string(),
    };
    let opos = layout(cx, "out_layout", &default_out, "NCHW")?;
    let size = match cx.attr_ints("output_size") {
        None => None,
        Some(v) => {
            let v = match v.len() {
                1 => vec![v[0], v[0]],
                2 => v,
                k => return Err(cx.error(format!("output_size must have 1 or 2 values, got {k}"))),
            };
            if let Some(bad) = v.iter().find(|&&s| !(0..=I32_MAX).contains(&s)) {
                return Err(cx.error(format!("output_size value {bad} is out of range (0 to {I32_MAX})")));
            }
            Some(v)
        }
    };
    check_rank(cx, &x, 4, "the data")?;
    let Some(xd) = &x.dims else { return Ok(tensor_si(None, x.dtype, 4)) };
    let d: Vec<PrimExpr> = dpos.iter().map(|&q| xd[q].clone()).collect();
    let (oh, ow) = match size {
        Some(v) => (int(v[0]), int(v[1])),
        None => (d[2].clone(), d[3].clone()),
    };
    Ok(tensor_si(Some(in_layout(vec![d[0].clone(), d[1].clone(), oh, ow], &opos)), x.dtype, 4))
}
