//! The normalizations `nn.log_softmax`, `nn.layer_norm`, `nn.rms_norm`,
//! `nn.group_norm`, `nn.batch_norm` and `nn.dropout`.
//!
//! The norms compute float16 data in float32 and round once at the end (as TVM's
//! TOPI does); float32 and float64 in their own dtype. Each statistic is a sum from 0
//! over its elements in row-major order, divided by the count: `mean = Σx / n`,
//! `var = Σ(x - mean)² / n` (two passes).

use super::broadcast::{strides, Walk};
use super::elem::Real;
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use half::f16;
use spec_model::grammar::{DataType, NDArray, TensorData};

/// OP-nn.log_softmax: along `axis` (default -1) of a float tensor: with `m` the
/// line's maximum (NaN-propagating) and `s = Σ exp(x_j - m)` from 0 in order, the
/// result is `(x_j - m) - ln(s)` (TOPI's `log_softmax`); each operation rounded to the
/// dtype (float16 too, as `softmax`). Errors: not a float tensor; `axis` out of range.
pub(crate) fn log_softmax(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let axis = cx.axis(cx.attr_int("axis", -1)?, a.ndim())?;
    let len = a.shape[axis] as usize;
    let stride = strides(&a.shape)[axis] as usize;
    let mut dims = a.shape.clone();
    dims[axis] = 1;
    let starts: Vec<usize> =
        if a.data.is_empty() { Vec::new() } else { Walk::new(0, dims, strides(&a.shape)).collect() };
    fn run<T: Real>(v: &[T], starts: &[usize], len: usize, stride: usize) -> Vec<T> {
        let mut out = v.to_vec();
        for &s in starts {
            let at = |j: usize| s + j * stride;
            let m = (1..len).fold(v[at(0)], |m, j| m.propagating_max(v[at(j)]));
            let sum = (0..len).fold(T::zero(), |acc, j| acc.plus(v[at(j)].minus(m).exp()));
            let ls = sum.ln();
            for j in 0..len {
                out[at(j)] = v[at(j)].minus(m).minus(ls);
            }
        }
        out
    }
    let data = match &a.data {
        TensorData::F16(v) => TensorData::F16(run(v, &starts, len, stride)),
        TensorData::F32(v) => TensorData::F32(run(v, &starts, len, stride)),
        TensorData::F64(v) => TensorData::F64(run(v, &starts, len, stride)),
        _ => return Err(cx.error(format!("needs a floating-point tensor, not {}", a.dtype))),
    };
    Ok(tensor_value(a.dtype, a.shape.clone(), data))
}

/// The type the norms compute in: `f32` (for float16 and float32 data) or `f64`.
trait Fl: Real {
    fn of(x: f64) -> Self;
    /// The elements of float data this type computes (`None` for other dtypes).
    fn load(d: &TensorData) -> Option<Vec<Self>>;
    /// Results rounded to `dtype` (float16 from f32: once).
    fn store(v: Vec<Self>, dtype: DataType) -> TensorData;
}

impl Fl for f32 {
    fn of(x: f64) -> f32 {
        x as f32
    }
    fn load(d: &TensorData) -> Option<Vec<f32>> {
        match d {
            TensorData::F16(v) => Some(v.iter().map(|x| x.to_f32()).collect()),
            TensorData::F32(v) => Some(v.clone()),
            _ => None,
        }
    }
    fn store(v: Vec<f32>, dtype: DataType) -> TensorData {
        if dtype.bits == 16 {
            TensorData::F16(v.into_iter().map(f16::from_f32).collect())
        } else {
            TensorData::F32(v)
        }
    }
}

impl Fl for f64 {
    fn of(x: f64) -> f64 {
        x
    }
    fn load(d: &TensorData) -> Option<Vec<f64>> {
        match d {
            TensorData::F64(v) => Some(v.clone()),
            _ => None,
        }
    }
    fn store(v: Vec<f64>, _: DataType) -> TensorData {
        TensorData::F64(v)
    }
}

/// Element `i`'s group (the flat index of its unreduced coordinates, the channel
/// counting by groups of `gs` when `channel` is `(axis, gs)`), for every element.
fn group_keys(shape: &[u64], reduced: &[bool], channel: Option<(usize, u64)>) -> Vec<usize> {
    let n = shape.iter().product::<u64>() as usize;
    let mut idx = vec![0u64; shape.len()];
    let mut keys = Vec::with_capacity(n);
    for _ in 0..n {
        let mut key = 0u64;
        for (d, &i) in idx.iter().enumerate() {
            match channel {
                Some((c, gs)) if c == d => key = key * (shape[d] / gs) + i / gs,
                _ if reduced[d] => {}
                _ => key = key * shape[d] + i,
            }
        }
        keys.push(key as usize);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    keys
}

/// Per group: `mean = Σx / n`, `var = Σ(x - mean)² / n`, sums in element order.
fn moments<F: Fl>(x: &[F], keys: &[usize], groups: usize, n: usize) -> (Vec<F>, Vec<F>) {
    let count = F::of(n as f64);
    let mut sum = vec![F::zero(); groups];
    for (v, &k) in x.iter().zip(keys) {
        sum[k] = sum[k].plus(*v);
    }
    let mean: Vec<F> = sum.iter().map(|s| s.quot(count).unwrap_or(*s)).collect();
    let mut sq = vec![F::zero(); groups];
    for (v, &k) in x.iter().zip(keys) {
        let d = v.minus(mean[k]);
        sq[k] = sq[k].plus(d.times(d));
    }
    (mean, sq.iter().map(|s| s.quot(count).unwrap_or(*s)).collect())
}

/// A parameter tensor: of `data`'s dtype and exactly `shape`, as compute floats.
fn param<F: Fl>(cx: &Cx, v: &Value, what: &str, data: &NDArray, shape: &[u64]) -> EvalResult<Vec<F>> {
    let p = cx.tensor(v, what)?;
    if p.dtype != data.dtype {
        return Err(cx.error(format!("{what} has dtype {}, other than data's {}", p.dtype, data.dtype)));
    }
    if p.shape != shape {
        return Err(cx.error(format!("{what} has shape {:?}, not {shape:?}", p.shape)));
    }
    F::load(&p.data).ok_or_else(|| cx.error(format!("{what} is not floating-point")))
}

/// Calls `$f::<F>` with the compute type of `data`'s dtype.
macro_rules! by_float {
    ($cx:expr, $a:expr, $f:ident($($arg:expr),*)) => {
        match $a.dtype.code {
            spec_model::grammar::TypeCode::Float if matches!($a.dtype.bits, 16 | 32) => $f::<f32>($($arg),*),
            spec_model::grammar::TypeCode::Float if $a.dtype.bits == 64 => $f::<f64>($($arg),*),
            _ => Err($cx.error(format!("needs floating-point data, not {}", $a.dtype))),
        }
    };
}

/// Normalized axes (`attr`, default `default`) and which dimensions they reduce.
fn norm_axes(cx: &Cx, name: &str, default: Option<i64>, ndim: usize) -> EvalResult<(Vec<usize>, Vec<bool>)> {
    let axes = match (cx.attr_ints(name)?, default) {
        (Some(a), _) => a,
        (None, Some(d)) => vec![d],
        (None, None) => return Err(cx.error(format!("needs the attribute `{name}`"))),
    };
    let axes = cx.axes(&axes, ndim)?;
    let mut reduced = vec![false; ndim];
    axes.iter().for_each(|&a| reduced[a] = true);
    Ok((axes, reduced))
}

/// Element `i`'s offset in a parameter whose dimension `k` runs along `axes[k]`.
fn param_offsets(shape: &[u64], axes: &[usize]) -> Vec<usize> {
    let pshape: Vec<u64> = axes.iter().map(|&a| shape[a]).collect();
    let pst = strides(&pshape);
    let mut st = vec![0i64; shape.len()];
    axes.iter().enumerate().for_each(|(k, &a)| st[a] = pst[k]);
    Walk::new(0, shape.to_vec(), st).collect()
}

/// OP-nn.layer_norm: over `axes` (parameter dimension `k` along `axes[k]`), per group
/// of the other coordinates: `y = (x - mean) * (1 / sqrt(var + epsilon))`, then
/// `* gamma` when `scale` (default true), then `+ beta` when `center` (default true).
/// Errors: data not a float tensor; an axis out of range or repeated; `gamma`/`beta`
/// not tensors of data's dtype and of data's lengths along `axes`.
pub(crate) fn layer_norm(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 3)?;
    let a = cx.tensor(&args[0], "data")?;
    by_float!(cx, a, layer_norm_in(cx, args, &a))
}

fn layer_norm_in<F: Fl>(cx: &Cx, args: &[Value], a: &NDArray) -> EvalResult<Value> {
    let (axes, reduced) = norm_axes(cx, "axes", None, a.ndim())?;
    let pshape: Vec<u64> = axes.iter().map(|&i| a.shape[i]).collect();
    let gamma = param::<F>(cx, &args[1], "gamma", a, &pshape)?;
    let beta = param::<F>(cx, &args[2], "beta", a, &pshape)?;
    let (eps, center, scale) =
        (cx.attr_float("epsilon", 1e-5)?, cx.attr_bool("center", true)?, cx.attr_bool("scale", true)?);
    let x = F::load(&a.data).unwrap_or_default();
    let keys = group_keys(&a.shape, &reduced, None);
    let n: usize = pshape.iter().product::<u64>() as usize;
    let groups = keys.iter().max().map_or(0, |k| k + 1);
    let (mean, var) = moments(&x, &keys, groups, n);
    let poff = param_offsets(&a.shape, &axes);
    let out: Vec<F> = (0..x.len())
        .map(|i| {
            let k = keys[i];
            let r = F::of(1.0).quot(var[k].plus(F::of(eps)).sqrt()).unwrap_or(F::zero());
            let mut y = x[i].minus(mean[k]).times(r);
            if scale {
                y = y.times(gamma[poff[i]]);
            }
            if center {
                y = y.plus(beta[poff[i]]);
            }
            y
        })
        .collect();
    Ok(tensor_value(a.dtype, a.shape.clone(), F::store(out, a.dtype)))
}

/// OP-nn.rms_norm: over `axes` (default `[-1]`), per group of the other coordinates:
/// `r = 1 / sqrt(Σx² / n + epsilon)` (the sum from 0 in order), `y = (x * r) * weight`.
/// Errors: as OP-nn.layer_norm, for `weight`.
pub(crate) fn rms_norm(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let a = cx.tensor(&args[0], "data")?;
    by_float!(cx, a, rms_norm_in(cx, args, &a))
}

fn rms_norm_in<F: Fl>(cx: &Cx, args: &[Value], a: &NDArray) -> EvalResult<Value> {
    let (axes, reduced) = norm_axes(cx, "axes", Some(-1), a.ndim())?;
    let pshape: Vec<u64> = axes.iter().map(|&i| a.shape[i]).collect();
    let weight = param::<F>(cx, &args[1], "weight", a, &pshape)?;
    let eps = F::of(cx.attr_float("epsilon", 1e-5)?);
    let x = F::load(&a.data).unwrap_or_default();
    let keys = group_keys(&a.shape, &reduced, None);
    let count = F::of(pshape.iter().product::<u64>() as f64);
    let groups = keys.iter().max().map_or(0, |k| k + 1);
    let mut sq = vec![F::zero(); groups];
    for (v, &k) in x.iter().zip(&keys) {
        sq[k] = sq[k].plus(v.times(*v));
    }
    let r: Vec<F> =
        sq.iter().map(|s| F::of(1.0).quot(s.quot(count).unwrap_or(*s).plus(eps).sqrt()).unwrap_or(*s)).collect();
    let poff = param_offsets(&a.shape, &axes);
    let out = (0..x.len()).map(|i| x[i].times(r[keys[i]]).times(weight[poff[i]])).collect();
    Ok(tensor_value(a.dtype, a.shape.clone(), F::store(out, a.dtype)))
}

/// OP-nn.group_norm: the channels along `channel_axis` split into `num_groups`
/// consecutive groups; each group, with `axes`, per value of the other coordinates, is
/// normalized as OP-nn.layer_norm (two-pass moments; TOPI uses `E[x²] - mean²`), and
/// `gamma`, `beta` (1-D, one per channel) apply per channel. Errors: data not a float
/// tensor; `num_groups` not positive or not dividing the channel count; an axis out of
/// range, repeated or the channel axis; `gamma`/`beta` not of data's dtype and shape
/// `(channels,)`.
pub(crate) fn group_norm(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 3)?;
    let a = cx.tensor(&args[0], "data")?;
    by_float!(cx, a, group_norm_in(cx, args, &a))
}

fn group_norm_in<F: Fl>(cx: &Cx, args: &[Value], a: &NDArray) -> EvalResult<Value> {
    let g = cx.attr_int("num_groups", 1)?;
    let c = cx.axis(cx.attr_int("channel_axis", 1)?, a.ndim())?;
    let (axes, reduced) = norm_axes(cx, "axes", None, a.ndim())?;
    if axes.contains(&c) {
        return Err(cx.error(format!("channel_axis {c} is among the axes")));
    }
    let channels = a.shape[c];
    if g <= 0 || !channels.is_multiple_of(g as u64) {
        return Err(cx.error(format!("{channels} channels do not split into {g} groups")));
    }
    let gamma = param::<F>(cx, &args[1], "gamma", a, &[channels])?;
    let beta = param::<F>(cx, &args[2], "beta", a, &[channels])?;
    let (eps, center, scale) =
        (cx.attr_float("epsilon", 1e-5)?, cx.attr_bool("center", true)?, cx.attr_bool("scale", true)?);
    let x = F::load(&a.data).unwrap_or_default();
    let gs = channels / g as u64;
    let keys = group_keys(&a.shape, &reduced, Some((c, gs)));
    let n = gs * axes.iter().map(|&i| a.shape[i]).product::<u64>();
    let groups = keys.iter().max().map_or(0, |k| k + 1);
    let (mean, var) = moments(&x, &keys, groups, n as usize);
    let coff = param_offsets(&a.shape, &[c]);
    let out = (0..x.len())
        .map(|i| {
            let k = keys[i];
            let r = F::of(1.0).quot(var[k].plus(F::of(eps)).sqrt()).unwrap_or(F::zero());
            let mut y = x[i].minus(mean[k]).times(r);
            if scale {
                y = y.times(gamma[coff[i]]);
            }
            if center {
                y = y.plus(beta[coff[i]]);
            }
            y
        })
        .collect();
    Ok(tensor_value(a.dtype, a.shape.clone(), F::store(out, a.dtype)))
}

/// OP-nn.batch_norm: per channel `c` along `axis`, with `(m, v)` the batch's moments
/// over every other axis when `training` (default true, TVM's), else `moving_mean[c]`,
/// `moving_var[c]`: `y = (x - m) / sqrt(v + epsilon)`, `* gamma[c]` when `scale`,
/// `+ beta[c]` when `center` (TOPI's `batch_norm`). The other two results are, in
/// training, `(1 - momentum) * moving + momentum * batch` for the mean and the variance;
/// otherwise `moving_mean` and `moving_var` unchanged. Errors: data not a float tensor;
/// `axis` out of range; a parameter not of data's dtype and shape `(channels,)`.
pub(crate) fn batch_norm(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 5)?;
    let a = cx.tensor(&args[0], "data")?;
    by_float!(cx, a, batch_norm_in(cx, args, &a))
}

fn batch_norm_in<F: Fl>(cx: &Cx, args: &[Value], a: &NDArray) -> EvalResult<Value> {
    let c = cx.axis(cx.attr_int("axis", 1)?, a.ndim())?;
    let ch = [a.shape[c]];
    let names = ["data", "gamma", "beta", "moving_mean", "moving_var"];
    let mut ps = Vec::new();
    for i in 1..5 {
        ps.push(param::<F>(cx, &args[i], names[i], a, &ch)?);
    }
    let (eps, center, scale) =
        (cx.attr_float("epsilon", 1e-5)?, cx.attr_bool("center", true)?, cx.attr_bool("scale", true)?);
    let (momentum, training) = (cx.attr_float("momentum", 0.1)?, cx.attr_bool("training", true)?);
    let x = F::load(&a.data).unwrap_or_default();
    let coff = param_offsets(&a.shape, &[c]);
    let (mean, var) = if training {
        let mut reduced = vec![true; a.ndim()];
        reduced[c] = false;
        let n = a.shape.iter().enumerate().filter(|(i, _)| *i != c).map(|(_, d)| *d).product::<u64>();
        moments(&x, &coff, ch[0] as usize, n as usize)
    } else {
        (ps[2].clone(), ps[3].clone())
    };
    let out = (0..x.len())
        .map(|i| {
            let k = coff[i];
            let mut y = x[i].minus(mean[k]).quot(var[k].plus(F::of(eps)).sqrt()).unwrap_or(F::zero());
            if scale {
                y = y.times(ps[0][k]);
            }
            if center {
                y = y.plus(ps[1][k]);
            }
            y
        })
        .collect();
    let (new_mean, new_var) = if training {
        let blend = |old: &[F], new: &[F]| -> Vec<F> {
            old.iter().zip(new).map(|(o, b)| F::of(1.0 - momentum).times(*o).plus(F::of(momentum).times(*b))).collect()
        };
        (blend(&ps[2], &mean), blend(&ps[3], &var))
    } else {
        (ps[2].clone(), ps[3].clone())
    };
    let t = |v: Vec<F>, shape: Vec<u64>| tensor_value(a.dtype, shape, F::store(v, a.dtype));
    Ok(Value::Tuple(std::rc::Rc::new(vec![t(out, a.shape.clone()), t(new_mean, ch.to_vec()), t(new_var, ch.to_vec())])))
}

/// OP-nn.dropout: at inference (the only mode TVM legalizes): `(data, ones)`, the
/// output equal to `data` and the mask all ones of `data`'s shape and dtype (`rate` is
/// not used). Error: not a tensor.
pub(crate) fn dropout(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "data")?;
    cx.attr_float("rate", 0.5)?;
    cx.numel(&a.shape)?;
    let mut ones = cx.storage(a.dtype)?;
    let one = match &a.data {
        TensorData::Bool(_) => spec_model::grammar::Scalar::Bool(true),
        TensorData::F16(_) | TensorData::F32(_) | TensorData::F64(_) => spec_model::grammar::Scalar::Float(1.0),
        _ => spec_model::grammar::Scalar::Int(1),
    };
    for _ in 0..a.data.len() {
        ones.push(one).map_err(|m| cx.error(m))?;
    }
    let out = tensor_value(a.dtype, a.shape.clone(), a.data.clone());
    Ok(Value::Tuple(std::rc::Rc::new(vec![out, tensor_value(a.dtype, a.shape.clone(), ones)])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_keys_follow_the_unreduced_coordinates() {
        // (2, 4) with the channel axis 1 in groups of 2: keys (row, group).
        assert_eq!(group_keys(&[2, 4], &[false, false], Some((1, 2))), vec![0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(group_keys(&[2, 3], &[false, true], None), vec![0, 0, 0, 1, 1, 1]);
        assert_eq!(group_keys(&[2, 3], &[true, false], None), vec![0, 1, 2, 0, 1, 2]);
        assert_eq!(param_offsets(&[2, 3], &[1, 0]), vec![0, 2, 4, 1, 3, 5]);
    }

    #[test]
    fn moments_are_population_moments() {
        let (m, v) = moments(&[1.0f64, 2.0, 3.0, 4.0], &[0, 0, 0, 0], 1, 4);
        assert_eq!((m[0], v[0]), (2.5, 1.25));
    }
}
