//! `nn.attention`: multi-head attention in the BSNH layout, as TVM 0.27's legalization
//! computes it (`legalize_ops/nn.py`, `_te_attention`), in plain loops.

use super::elem::{Real, Storage};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use half::f16;
use spec_model::grammar::{AttrValue, NDArray, TensorData};
use std::cell::Ref;

/// The float types attention computes in (its dtype: every step rounded to it).
trait Fl: Real + Storage {
    fn of(x: f64) -> Self;
}

impl Fl for f16 {
    fn of(x: f64) -> f16 {
        spec_model::grammar::f16_nearest(x)
    }
}

impl Fl for f32 {
    fn of(x: f64) -> f32 {
        x as f32
    }
}

impl Fl for f64 {
    fn of(x: f64) -> f64 {
        x
    }
}

/// The dimensions of one call.
struct Dims {
    batch: usize,
    /// Query length `s`, key/value length `t`.
    s: usize,
    t: usize,
    /// Query, key and value heads.
    n: usize,
    nk: usize,
    nv: usize,
    /// Head dimensions of query/key and of value.
    h: usize,
    hv: usize,
    /// The bias's shape (its first three dimensions 1 or the full ones), if any.
    bias: Option<[usize; 4]>,
}

/// The mask of one call: which key `j` query `i` sees.
#[derive(Clone, Copy)]
struct Mask {
    /// `j <= i + offset` (none: every key).
    offset: Option<usize>,
    /// And `j + window > i + offset`.
    window: Option<usize>,
}

impl Mask {
    fn keeps(self, i: usize, j: usize) -> bool {
        match self.offset {
            None => true,
            Some(o) => j <= i + o && self.window.is_none_or(|w| j + w > i + o),
        }
    }
}

fn four(cx: &Cx, t: &NDArray, what: &str) -> EvalResult<[usize; 4]> {
    match t.shape[..] {
        [a, b, c, d] => Ok([a as usize, b as usize, c as usize, d as usize]),
        _ => Err(cx.error(format!("the {what} must have 4 dimensions, not {}", t.ndim()))),
    }
}

/// The checked dimensions of `q`, `k`, `v` and the bias.
fn dims(cx: &Cx, ts: &[Ref<NDArray>]) -> EvalResult<Dims> {
    let names = ["query", "key", "value", "bias"];
    let [b, s, n, h] = four(cx, &ts[0], names[0])?;
    let [kb, t, nk, kh] = four(cx, &ts[1], names[1])?;
    let [vb, vt, nv, hv] = four(cx, &ts[2], names[2])?;
    for (x, name) in ts.iter().zip(names) {
        if x.dtype != ts[0].dtype {
            return Err(cx.error(format!("the query has dtype {} but the {name} {}", ts[0].dtype, x.dtype)));
        }
    }
    let same = |x: usize, y: usize, what: &str| {
        if x == y {
            Ok(())
        } else {
            Err(cx.error(format!("{what} differ: {x} and {y}")))
        }
    };
    same(b, kb, "the batch sizes of query and key")?;
    same(b, vb, "the batch sizes of query and value")?;
    same(t, vt, "the sequence lengths of key and value")?;
    same(h, kh, "the head dimensions of query and key")?;
    for (heads, name) in [(nk, "key"), (nv, "value")] {
        if (heads == 0 && n != 0) || (heads != 0 && n % heads != 0) {
            return Err(cx.error(format!("the query's {n} heads are not a multiple of the {name}'s {heads}")));
        }
    }
    let bias = match ts.get(3) {
        None => None,
        Some(x) => {
            let bd = four(cx, x, "bias")?;
            for (i, (want, what)) in [(b, "batch size"), (n, "head count"), (s, "query length")].iter().enumerate() {
                if bd[i] != *want && bd[i] != 1 {
                    return Err(cx.error(format!("the bias's {what} {} is neither {want} nor 1", bd[i])));
                }
            }
            same(bd[3], t, "the bias's last dimension and the key length")?;
            Some(bd)
        }
    };
    Ok(Dims { batch: b, s, t, n, nk, nv, h, hv, bias })
}

/// OP-nn.attention: `attention(q, k, v, bias=None, scale=None, causal_mask=None,
/// window_size=None)` with `q (b, s, n, h)`, `k (b, t, n_k, h)`, `v (b, t, n_v, h_v)`
/// of one float dtype, computed in it (each step rounded): for each batch `b`, head
/// `n` (reading key head `n / (n / n_k)` and value head `n / (n / n_v)`), query `i`:
/// 1. `p_j = (Σ_d q[b,i,n,d] · k[b,j,·,d])` folded from 0 in `d` order, then `· scale`
///    (converted to the dtype) or, without `scale`, `/ sqrt(h)` (`h` converted, the root
///    in the dtype), then `+ bias[b,n,i,j]` (a bias dimension of 1 reads index 0);
/// 2. without a mask, softmax: `m = max_j p_j` (NaN-propagating), `e_j = exp(p_j - m)`,
///    `z = Σ_j e_j` from 0, `w_j = e_j / z`;
///    with a mask, TVM's masked softmax: key `j` is kept when `j <= i + o` (`o` = 0 for
///    `"TopLeft"`, `|s - t|` for `"BottomRight"`, as TVM's `abs`) and, with
///    `window_size` `w`, `j > i + o - w`; `p'_j` is `p_j` where kept, 0 elsewhere;
///    `m = max_j p'_j` (the zeros included), `e_j = exp(p'_j - m)` where kept, 0
///    elsewhere; `w_j = e_j / Σ e_j` (a row keeping nothing is 0/0, NaN);
/// 3. `out[b,i,n,e] = Σ_j w_j · v[b,j,·,e]` folded from 0 in `j` order.
///
/// Errors: 3 or 4 arguments, tensors of rank 4 and one float dtype; batch sizes, key
/// and value lengths, query and key head dimensions that differ; `n` not a multiple
/// of `n_k` or `n_v`; a bias dimension neither the expected one nor 1 (the last one:
/// other than `t`); an unknown `causal_mask`; `window_size` not positive or without
/// `"BottomRight"`.
pub(crate) fn attention(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    if !(3..=4).contains(&args.len()) {
        return Err(cx.error(format!("takes 3 or 4 argument(s), {} given", args.len())));
    }
    let names = ["query", "key", "value", "bias"];
    let ts: Vec<Ref<NDArray>> = args.iter().zip(names).map(|(a, n)| cx.tensor(a, n)).collect::<EvalResult<_>>()?;
    let d = dims(cx, &ts)?;
    let scale = match cx.attr("scale") {
        None => None,
        Some(AttrValue::Float(f)) => Some(f.0),
        Some(AttrValue::Int(i)) => Some(*i as f64),
        Some(_) => return Err(cx.error("attribute `scale` must be a number")),
    };
    let mask = mask(cx, &d)?;
    let out_shape = vec![d.batch as u64, d.s as u64, d.n as u64, d.hv as u64];
    let n = cx.numel(&out_shape)?;
    let bias = ts.get(3).map(|t| &t.data);
    let data = match (&ts[0].data, &ts[1].data, &ts[2].data) {
        (TensorData::F16(q), TensorData::F16(k), TensorData::F16(v)) => {
            run(q, k, v, bias, &d, scale, mask).map(TensorData::F16)
        }
        (TensorData::F32(q), TensorData::F32(k), TensorData::F32(v)) => {
            run(q, k, v, bias, &d, scale, mask).map(TensorData::F32)
        }
        (TensorData::F64(q), TensorData::F64(k), TensorData::F64(v)) => {
            run(q, k, v, bias, &d, scale, mask).map(TensorData::F64)
        }
        _ => return Err(cx.error(format!("needs floating-point tensors, not {}", ts[0].dtype))),
    };
    match data {
        Some(data) if data.len() == n => Ok(tensor_value(ts[0].dtype, out_shape, data)),
        _ => Err(cx.error("an index left an operand")),
    }
}

fn mask(cx: &Cx, d: &Dims) -> EvalResult<Mask> {
    let offset = match cx.attr("causal_mask") {
        None => None,
        Some(AttrValue::Str(s)) if s == "TopLeft" => Some(0),
        Some(AttrValue::Str(s)) if s == "BottomRight" => Some(d.s.abs_diff(d.t)),
        Some(v) => return Err(cx.error(format!("causal_mask must be \"TopLeft\" or \"BottomRight\", not {v:?}"))),
    };
    let window = match cx.attr_opt_int("window_size")? {
        None => None,
        Some(w) if w > 0 && cx.attr("causal_mask") == Some(&AttrValue::Str("BottomRight".into())) => {
            Some(usize::try_from(w).unwrap_or(usize::MAX))
        }
        Some(w) => return Err(cx.error(format!("window_size {w} must be positive, with causal_mask=\"BottomRight\""))),
    };
    Ok(Mask { offset, window })
}

/// The loops; `None` if an index left an operand.
fn run<T: Fl>(
    q: &[T],
    k: &[T],
    v: &[T],
    bias: Option<&TensorData>,
    d: &Dims,
    scale: Option<f64>,
    mask: Mask,
) -> Option<Vec<T>> {
    let bias: Option<&[T]> = match bias {
        Some(b) => Some(T::slice(b)?),
        None => None,
    };
    let (gk, gv) = (d.n.checked_div(d.nk).unwrap_or(1).max(1), d.n.checked_div(d.nv).unwrap_or(1).max(1));
    let mut out = vec![T::zero(); d.batch * d.s * d.n * d.hv];
    let mut p = vec![T::zero(); d.t];
    for b in 0..d.batch {
        for n in 0..d.n {
            let (kh, vh) = (n / gk, n / gv);
            for i in 0..d.s {
                for (j, pj) in p.iter_mut().enumerate() {
                    let mut acc = T::zero();
                    for e in 0..d.h {
                        let x = *q.get(((b * d.s + i) * d.n + n) * d.h + e)?;
                        let y = *k.get(((b * d.t + j) * d.nk + kh) * d.h + e)?;
                        acc = acc.plus(x.times(y));
                    }
                    acc = match scale {
                        Some(c) => acc.times(T::of(c)),
                        None => acc.quot(T::of(d.h as f64).sqrt())?,
                    };
                    if let (Some(bv), Some(bd)) = (bias, d.bias) {
                        let at = |x: usize, dim: usize| if bd[dim] == 1 { 0 } else { x };
                        let idx = ((at(b, 0) * bd[1] + at(n, 1)) * bd[2] + at(i, 2)) * bd[3] + j;
                        acc = acc.plus(*bv.get(idx)?);
                    }
                    *pj = acc;
                }
                let w = softmax(&p, i, mask)?;
                for e in 0..d.hv {
                    let mut acc = T::zero();
                    for (j, &wj) in w.iter().enumerate() {
                        acc = acc.plus(wj.times(*v.get(((b * d.t + j) * d.nv + vh) * d.hv + e)?));
                    }
                    *out.get_mut(((b * d.s + i) * d.n + n) * d.hv + e)? = acc;
                }
            }
        }
    }
    Some(out)
}

/// The weights of one row of scores (query `i`).
fn softmax<T: Fl>(p: &[T], i: usize, mask: Mask) -> Option<Vec<T>> {
    let kept = |j: usize| mask.keeps(i, j);
    let masked: Vec<T> = p.iter().enumerate().map(|(j, &x)| if kept(j) { x } else { T::zero() }).collect();
    let Some((&first, rest)) = masked.split_first() else { return Some(Vec::new()) };
    let m = rest.iter().fold(first, |m, &x| m.propagating_max(x));
    let e: Vec<T> =
        masked.iter().enumerate().map(|(j, &x)| if kept(j) { x.minus(m).exp() } else { T::zero() }).collect();
    let z = e.iter().fold(T::zero(), |acc, &x| acc.plus(x));
    e.iter().map(|&x| x.quot(z)).collect()
}

/// LIMIT-fuel: the multiply-adds of a call and its softmax, `b · n · s · t · (h + h_v + 1)` (the reads when
/// the arguments are not four-dimensional tensors: the kernel reports the error).
pub(crate) fn attention_work(args: &[Value]) -> u64 {
    let shape = |i: usize| match args.get(i) {
        Some(Value::Tensor(t)) => t.try_borrow().ok().map(|t| t.shape.clone()),
        _ => None,
    };
    match (shape(0), shape(2)) {
        (Some(q), Some(v)) if q.len() == 4 && v.len() == 4 => {
            [q[0], q[2], q[1], v[1], q[3].saturating_add(v[3]).saturating_add(1)]
                .iter()
                .fold(1u64, |a, &x| a.saturating_mul(x))
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{Attrs, DataType, FloatLit};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn t(shape: &[u64], v: &[f64]) -> Value {
        Value::tensor(NDArray { dtype: DataType::float(64), shape: shape.to_vec(), data: TensorData::F64(v.to_vec()) })
    }

    fn run_attn(args: &[Value], attrs: &Attrs) -> EvalResult<Vec<f64>> {
        let Value::Tensor(r) = attention(&Cx::new(Op::Attention, attrs, Span::SYNTHETIC), args)? else { panic!() };
        let r = r.borrow();
        let TensorData::F64(v) = &r.data else { panic!() };
        Ok(v.clone())
    }

    #[test]
    fn one_query_two_keys() {
        // q·k = [0, 2]; scale 1/sqrt(1); softmax [1/(1+e^2), e^2/(1+e^2)]; v = [1, 3].
        let q = t(&[1, 1, 1, 1], &[1.0]);
        let k = t(&[1, 2, 1, 1], &[0.0, 2.0]);
        let v = t(&[1, 2, 1, 1], &[1.0, 3.0]);
        let w = 1.0 / (1.0 + 2f64.exp());
        let out = run_attn(&[q.clone(), k.clone(), v.clone()], &Attrs::default()).unwrap();
        assert!((out[0] - (w + 3.0 * (1.0 - w))).abs() < 1e-12);
        // TopLeft keeps key 0 only; BottomRight (offset |1 - 2| = 1) keeps both.
        let mut a = Attrs::default();
        a.insert("causal_mask", AttrValue::Str("TopLeft".into()));
        assert_eq!(run_attn(&[q.clone(), k.clone(), v.clone()], &a).unwrap(), vec![1.0]);
        a.insert("causal_mask", AttrValue::Str("BottomRight".into()));
        a.insert("window_size", AttrValue::Int(1));
        assert_eq!(run_attn(&[q.clone(), k.clone(), v.clone()], &a).unwrap(), vec![3.0]);
        let mut s = Attrs::default();
        s.insert("scale", AttrValue::Float(FloatLit(0.0)));
        assert_eq!(run_attn(&[q.clone(), k.clone(), v.clone()], &s).unwrap(), vec![2.0]);
        // A bias of -inf on key 1.
        let bias = t(&[1, 1, 1, 2], &[0.0, f64::NEG_INFINITY]);
        assert_eq!(run_attn(&[q, k, v, bias], &Attrs::default()).unwrap(), vec![1.0]);
    }

    #[test]
    fn grouped_heads_empty_and_errors() {
        // Two query heads share one key/value head.
        let q = t(&[1, 1, 2, 1], &[1.0, -1.0]);
        let k = t(&[1, 1, 1, 1], &[5.0]);
        let v = t(&[1, 1, 1, 2], &[7.0, 8.0]);
        assert_eq!(run_attn(&[q.clone(), k.clone(), v.clone()], &Attrs::default()).unwrap(), vec![7.0, 8.0, 7.0, 8.0]);
        // No keys: every output is the empty sum.
        let (k0, v0) = (t(&[1, 0, 1, 1], &[]), t(&[1, 0, 1, 2], &[]));
        assert_eq!(run_attn(&[q.clone(), k0, v0], &Attrs::default()).unwrap(), vec![0.0; 4]);
        let k3 = t(&[1, 1, 3, 1], &[0.0; 3]);
        assert!(run_attn(&[q.clone(), k3, v.clone()], &Attrs::default()).is_err(), "2 heads over 3");
        assert!(run_attn(&[q.clone(), k.clone()], &Attrs::default()).is_err());
        let mut a = Attrs::default();
        a.insert("causal_mask", AttrValue::Str("Diagonal".into()));
        assert!(run_attn(&[q.clone(), k.clone(), v.clone()], &a).is_err());
        let bad_bias = t(&[1, 3, 1, 1], &[0.0; 3]);
        assert!(run_attn(&[q, k, v, bad_bias], &Attrs::default()).is_err());
    }

    #[test]
    fn masked_rows_follow_tvm() {
        // All kept scores far below 0: TVM's max includes the masked zeros, so every
        // exp underflows and the row is 0/0.
        let q = t(&[1, 1, 1, 1], &[1.0]);
        let k = t(&[1, 2, 1, 1], &[-2000.0, 5.0]);
        let v = t(&[1, 2, 1, 1], &[1.0, 3.0]);
        let mut a = Attrs::default();
        a.insert("causal_mask", AttrValue::Str("TopLeft".into()));
        assert!(run_attn(&[q, k, v], &a).unwrap()[0].is_nan());
    }
}
