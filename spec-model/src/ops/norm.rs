//! Normalization: `nn.log_softmax`, `nn.layer_norm`, `nn.rms_norm`, `nn.group_norm`,
//! `nn.batch_norm` and `nn.dropout` (TVM's `NormCheckDtypeAndShape` and friends).

use super::infer::{show, tensor_si, Infer, TensorInfo};
use super::{elementwise, OpError};
use crate::grammar::{PrimBinOp, PrimExpr, StructInfo, StructInfoKind};
use crate::require;
use crate::struct_info::Verdict;
use crate::Span;

/// OP-nn.log_softmax: as OP-nn.softmax (TVM registers both with `InferStructInfoSoftmax`):
/// a floating-point tensor and an `axis` (default -1); the result has the operand's
/// StructInfo. Errors: not a tensor; a known non-float dtype; `axis` out of range for a
/// known rank.
pub fn log_softmax(cx: &mut Infer) -> Result<StructInfo, OpError> {
    elementwise::softmax(cx)
}

fn float_data(cx: &Infer, x: &TensorInfo) -> Result<(), OpError> {
    require!(cx => x.dtype.is_void() || x.dtype.is_float(), "needs floating-point data, not {}", x.dtype);
    Ok(())
}

fn same_as(x: &TensorInfo) -> StructInfo {
    StructInfo::new(StructInfoKind::Tensor { shape: x.shape.clone(), dtype: x.dtype, ndim: x.ndim }, Span::SYNTHETIC)
}

const NAMES: [&str; 5] = ["data", "gamma", "beta", "moving_mean", "moving_var"];

/// TVM's `NormCheckDtypeAndShape`: `data` (argument 0) is a float tensor; the axes are
/// in range and distinct; each parameter tensor (arguments `params`) has `data`'s dtype,
/// one dimension per axis, and the lengths of `data` along the axes. Returns whether
/// some length pair is undecided (then the result's shape is unknown, as in TVM).
fn norm_check(cx: &mut Infer, params: &[usize], axes: &[i64], names: &[&str]) -> Result<(TensorInfo, bool), OpError> {
    let x = cx.tensor(0, "data")?;
    let n = axes.len() as i64;
    let axes = if x.ndim == -1 {
        cx.reject_repeats(axes)?;
        None
    } else {
        Some(cx.normalize_axes(axes, x.ndim)?)
    };
    float_data(cx, &x)?;
    let mut undecided = false;
    for &i in params {
        let p = cx.tensor(i, names[i])?;
        cx.same_dtype(x.dtype, p.dtype)
            .map_err(|_| cx.error(format!("{} has dtype {}, other than data's {}", names[i], p.dtype, x.dtype)))?;
        require!(cx => p.ndim == -1 || p.ndim == n,
            "{} must have one dimension per normalized axis ({n}), not rank {}", names[i], p.ndim);
        if let (Some(xd), Some(pd), Some(ax)) = (&x.dims, &p.dims, &axes) {
            for (k, &a) in ax.iter().enumerate() {
                match cx.compare(&xd[a], &pd[k]) {
                    Verdict::Equal => {}
                    Verdict::NotEqual => {
                        return Err(cx.error(format!(
                            "{} has length {} where data has {} (axis {a})",
                            names[i],
                            show(&pd[k]),
                            show(&xd[a])
                        )))
                    }
                    Verdict::Unknown => {
                        cx.warn(format!(
                            "cannot prove {}'s length {} equals data's {}; checked at run time",
                            names[i],
                            show(&pd[k]),
                            show(&xd[a])
                        ));
                        undecided = true;
                    }
                }
            }
        }
    }
    Ok((x, undecided))
}

/// OP-nn.layer_norm: `layer_norm(data, gamma, beta, axes, epsilon=1e-5, center=True,
/// scale=True)` normalizes `data` over `axes`; `gamma` and `beta` have one dimension
/// per axis, of `data`'s lengths there. The result has `data`'s StructInfo (its shape
/// unknown when a length pair is undecided). Errors: not tensors; `data` of a known
/// non-float dtype; an axis out of range or repeated; a parameter of another known
/// dtype, of a known rank other than `len(axes)`, or of a length provably different.
pub fn layer_norm(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let axes = cx.attr_ints("axes").unwrap_or_default();
    let (x, undecided) = norm_check(cx, &[1, 2], &axes, &NAMES)?;
    Ok(if undecided { tensor_si(None, x.dtype, x.ndim) } else { same_as(&x) })
}

/// OP-nn.rms_norm: `rms_norm(data, weight, axes=-1, epsilon=1e-5)`: as OP-nn.layer_norm
/// with the one parameter `weight`.
pub fn rms_norm(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let axes = cx.attr_ints("axes").unwrap_or_else(|| vec![-1]);
    let (x, undecided) = norm_check(cx, &[1], &axes, &["data", "weight"])?;
    Ok(if undecided { tensor_si(None, x.dtype, x.ndim) } else { same_as(&x) })
}

/// OP-nn.batch_norm: `batch_norm(data, gamma, beta, moving_mean, moving_var, axis,
/// epsilon=1e-5, center=True, scale=True, momentum=0.1, training=True)`: the four
/// parameters are 1-D of `data`'s length along `axis`. The result is a 3-tuple: the
/// normalized data (`data`'s StructInfo) and the new moving mean and variance (those
/// of `moving_mean`, `moving_var`); when a length pair is undecided, the first has
/// `data`'s rank and the others rank 1, shapes unknown (as TVM). Errors: as
/// OP-nn.layer_norm with `axes = [axis]`.
pub fn batch_norm(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let axis = cx.attr_int("axis", 1);
    let (x, undecided) = norm_check(cx, &[1, 2, 3, 4], &[axis], &NAMES)?;
    let fields = if undecided {
        vec![tensor_si(None, x.dtype, x.ndim), tensor_si(None, x.dtype, 1), tensor_si(None, x.dtype, 1)]
    } else {
        vec![same_as(&x), cx.args[3].clone(), cx.args[4].clone()]
    };
    Ok(StructInfo::new(StructInfoKind::Tuple { fields }, Span::SYNTHETIC))
}

/// OP-nn.group_norm: `group_norm(data, gamma, beta, num_groups, channel_axis, axes,
/// epsilon=1e-5, center=True, scale=True)`: the channels along `channel_axis` form
/// `num_groups` groups; each group is normalized over its channels and `axes`. `gamma`
/// and `beta` are 1-D of the channel count. The result has `data`'s StructInfo.
/// Errors: not tensors; `data` of a known non-float dtype; `num_groups` not positive;
/// `channel_axis` or an axis out of range, an axis repeated or equal to `channel_axis`;
/// a channel count provably not a multiple of `num_groups`; a parameter of another
/// known dtype, of a known rank other than 1, or of a length provably other than the
/// channel count. Undecided lengths are warnings (checked at run time).
pub fn group_norm(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "data")?;
    let groups = cx.attr_int("num_groups", 1);
    require!(cx => groups > 0, "num_groups must be positive, not {groups}");
    let axes = cx.attr_ints("axes").unwrap_or_default();
    let mut channel = None;
    if x.ndim != -1 {
        let c = cx.normalize_axis(cx.attr_int("channel_axis", 1), x.ndim)?;
        let ax = cx.normalize_axes(&axes, x.ndim)?;
        require!(cx => !ax.contains(&c), "channel_axis {c} must not be in axes {axes:?}");
        channel = Some(c);
    } else {
        cx.reject_repeats(&axes)?;
    }
    float_data(cx, &x)?;
    let channels = channel.and_then(|c| x.dims.as_ref().map(|d| d[c].clone()));
    if let Some(c) = channels.as_ref().filter(|_| groups != 1) {
        let rem = super::dim_op(PrimBinOp::FloorMod, c, &PrimExpr::int(groups));
        match cx.compare(&rem, &PrimExpr::int(0)) {
            Verdict::NotEqual => {
                return Err(cx.error(format!("the {} channels are not a multiple of {groups} groups", show(c))))
            }
            Verdict::Unknown => cx.warn(format!(
                "cannot prove the {} channels are a multiple of {groups} groups; checked at run time",
                show(c)
            )),
            Verdict::Equal => {}
        }
    }
    for i in [1, 2] {
        let p = cx.tensor(i, NAMES[i])?;
        cx.same_dtype(x.dtype, p.dtype)
            .map_err(|_| cx.error(format!("{} has dtype {}, other than data's {}", NAMES[i], p.dtype, x.dtype)))?;
        require!(cx => p.ndim == -1 || p.ndim == 1, "{} must be 1-D, not of rank {}", NAMES[i], p.ndim);
        if let (Some(c), Some(pd)) = (&channels, &p.dims) {
            cx.expect_equal(&pd[0], c, &format!("{}'s length and the channel count", NAMES[i]))?;
        }
    }
    Ok(same_as(&x))
}

/// OP-nn.dropout: `dropout(data, rate=0.5)` is the 2-tuple of the output and the
/// mask, both with `data`'s StructInfo. Error: not a tensor.
pub fn dropout(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "data")?;
    Ok(StructInfo::new(StructInfoKind::Tuple { fields: vec![same_as(&x), same_as(&x)] }, Span::SYNTHETIC))
}
