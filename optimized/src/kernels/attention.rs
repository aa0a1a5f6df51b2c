//! `nn.attention` as two matrix products per (batch, head): the query rows `S × h` times
//! the packed, transposed keys `h × T` give the scores, which are scaled, biased,
//! masked and turned into softmax weights row by row; the weights `S × T` times the
//! packed values `T × h_v` give the head's output. The (batch, head) pairs are split
//! across threads.

use super::common::{created, operand, read, write};
use super::linalg::{gemm_f32, gemm_f64, gemm_in_order, Dims, Gemm};
use super::simd::pool;
use super::{attrs, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::Real;
use crate::value::Value;
use half::f16;
use rayon::prelude::*;
use spec_model::grammar::AttrValue;

/// OP-nn.attention (the semantics: `proofs-notes/operator-semantics.md`): the scores'
/// and the output's sums through `linalg`'s products (in `d` and `j` order for float16,
/// non-finite or huge values; reassociated by `matrixmultiply` otherwise, F-8); scale,
/// bias, mask and softmax in the oracle's order of operations.
pub fn attention(l: &Lowering) -> Box<dyn Kernel> {
    let scale = match l.attrs.get("scale") {
        None | Some(AttrValue::None) => Ok(None),
        Some(AttrValue::Float(f)) => Ok(Some(f.0)),
        Some(AttrValue::Int(i)) => Ok(Some(*i as f64)),
        Some(_) => Err("attribute `scale` must be a number".to_string()),
    };
    let mask = match l.attrs.get("causal_mask") {
        None | Some(AttrValue::None) => Ok(None),
        Some(AttrValue::Str(s)) if s == "TopLeft" => Ok(Some(Causal::TopLeft)),
        Some(AttrValue::Str(s)) if s == "BottomRight" => Ok(Some(Causal::BottomRight)),
        Some(v) => Err(format!("causal_mask must be \"TopLeft\" or \"BottomRight\", not {v:?}")),
    };
    let window = match (attrs::opt_int(l.attrs, "window_size"), &mask) {
        (Ok(None), _) => Ok(None),
        (Ok(Some(w)), Ok(Some(Causal::BottomRight))) if w > 0 => Ok(Some(w as u64)),
        (Ok(Some(w)), _) => Err(format!("window_size {w} needs to be positive, with causal_mask=\"BottomRight\"")),
        (Err(m), _) => Err(m),
    };
    Box::new(Attention { scale, mask, window })
}

#[derive(Clone, Copy)]
enum Causal {
    TopLeft,
    BottomRight,
}

struct Attention {
    scale: std::result::Result<Option<f64>, String>,
    mask: std::result::Result<Option<Causal>, String>,
    window: std::result::Result<Option<u64>, String>,
}

/// The dimensions of one call (see the oracle's names: `b, s, t, n, n_k, n_v, h, h_v`).
#[derive(Clone, Copy)]
struct Shape {
    b: usize,
    s: usize,
    t: usize,
    n: usize,
    nk: usize,
    nv: usize,
    h: usize,
    hv: usize,
}

fn four(cx: &KernelCx, s: &[u64], what: &str) -> Result<[usize; 4]> {
    match *s {
        [a, b, c, d] => Ok([a as usize, b as usize, c as usize, d as usize]),
        _ => Err(cx.error(format!("the {what} must have 4 dimensions, not {}", s.len()))),
    }
}

fn shape(cx: &KernelCx, q: &[u64], k: &[u64], v: &[u64], bias: Option<&[u64]>) -> Result<(Shape, Option<[usize; 4]>)> {
    let [b, s, n, h] = four(cx, q, "query")?;
    let [kb, t, nk, kh] = four(cx, k, "key")?;
    let [vb, vt, nv, hv] = four(cx, v, "value")?;
    if b != kb || b != vb {
        return Err(cx.error(format!("batch sizes {b}, {kb}, {vb} of query, key, value differ")));
    }
    if t != vt {
        return Err(cx.error(format!("key length {t} and value length {vt} differ")));
    }
    if h != kh {
        return Err(cx.error(format!("head dimensions {h} and {kh} of query and key differ")));
    }
    for heads in [nk, nv] {
        let divides = if heads == 0 { n == 0 } else { n % heads == 0 };
        if !divides {
            return Err(cx.error(format!("{n} query heads are not a multiple of {heads}")));
        }
    }
    let bias = match bias {
        None => None,
        Some(bs) => {
            let d = four(cx, bs, "bias")?;
            let fits = (d[0] == b || d[0] == 1) && (d[1] == n || d[1] == 1) && (d[2] == s || d[2] == 1) && d[3] == t;
            if !fits {
                return Err(cx.error(format!("a bias of shape {bs:?} for scores of shape [{b}, {n}, {s}, {t}]")));
            }
            Some(d)
        }
    };
    Ok((Shape { b, s, t, n, nk, nv, h, hv }, bias))
}

impl Kernel for Attention {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        if !(3..=4).contains(&args.len()) {
            return Err(cx.error(format!("takes 3 or 4 argument(s), {} given", args.len())));
        }
        let names = ["query", "key", "value", "bias"];
        let ts = (0..args.len()).map(|i| operand(cx, args, i, names[i])).collect::<Result<Vec<_>>>()?;
        let dtype = ts[0].dtype();
        if let Some(t) = ts.iter().find(|t| t.dtype() != dtype) {
            return Err(cx.error(format!("operands of dtypes {dtype} and {}", t.dtype())));
        }
        let (sh, bias) = shape(cx, ts[0].shape(), ts[1].shape(), ts[2].shape(), ts.get(3).map(|t| t.shape()))?;
        if !matches!(dtype, DType::F16 | DType::F32 | DType::F64) {
            return Err(cx.error(format!("needs floating-point tensors, not {dtype}")));
        }
        let scale = self.scale.clone().map_err(|m| cx.error(m))?;
        let mask = self.mask.clone().map_err(|m| cx.error(m))?;
        let window = self.window.clone().map_err(|m| cx.error(m))?;
        let offset = mask.map(|c| match c {
            Causal::TopLeft => 0,
            Causal::BottomRight => sh.s.abs_diff(sh.t),
        });
        let out_shape = [sh.b as u64, sh.s as u64, sh.n as u64, sh.hv as u64];
        created(cx, &out_shape)?;
        let out = cx.alloc(dtype, &out_shape)?;
        // The scratch of the threads running at once, reserved against the budget.
        let pairs = sh.b * sh.n;
        let threads = cx.threads_for(out.numel().max(sh.s * sh.t)).min(pairs.max(1));
        let per_pair = [(sh.s, sh.h), (sh.h, sh.t), (sh.s, sh.t), (sh.s, sh.t), (sh.t, sh.hv), (sh.s, sh.hv)]
            .iter()
            .fold(0u64, |a, &(x, y)| a.saturating_add((x as u64).saturating_mul(y as u64)));
        let _reserved = cx.alloc(dtype, &[per_pair.saturating_mul(threads as u64)])?;
        let rows = Rows { offset, window: window.map(|w| w as usize), scale };
        match dtype {
            DType::F32 => heads::<f32>(cx, &ts, sh, bias, rows, threads, gemm_f32, &out),
            DType::F64 => heads::<f64>(cx, &ts, sh, bias, rows, threads, gemm_f64, &out),
            _ => heads::<f16>(cx, &ts, sh, bias, rows, threads, gemm_in_order::<f16>, &out),
        }?;
        Ok(Value::tensor(out))
    }

    fn work(&self, args: &[Value]) -> Option<u64> {
        let (Some(Value::Tensor(q)), Some(Value::Tensor(v))) = (args.first(), args.get(2)) else { return None };
        match (q.shape(), v.shape()) {
            ([b, s, n, h], [_, t, _, hv]) => Some(
                [*b, *n, *s, *t, h.saturating_add(*hv).saturating_add(1)]
                    .iter()
                    .fold(1u64, |a, &x| a.saturating_mul(x)),
            ),
            _ => None,
        }
    }
}

/// What turns a row of scores into weights.
#[derive(Clone, Copy)]
struct Rows {
    /// Keys `j <= i + offset` are kept (none: all).
    offset: Option<usize>,
    /// And `j + window > i + offset`.
    window: Option<usize>,
    scale: Option<f64>,
}

/// All (batch, head) pairs, each computed on its own (in parallel when `threads` > 1),
/// then written to the output.
#[allow(clippy::too_many_arguments)]
fn heads<T: Real>(
    cx: &KernelCx,
    ts: &[&std::rc::Rc<crate::tensor::Tensor>],
    sh: Shape,
    bias: Option<[usize; 4]>,
    rows: Rows,
    threads: usize,
    gemm: Gemm<T>,
    out: &crate::tensor::Tensor,
) -> Result<()> {
    let q = read::<T>(cx, ts[0], "the query")?;
    let k = read::<T>(cx, ts[1], "the key")?;
    let v = read::<T>(cx, ts[2], "the value")?;
    let bv = match ts.get(3) {
        Some(t) => Some(read::<T>(cx, t, "the bias")?),
        None => None,
    };
    let inputs = Inputs { q: &q, k: &k, v: &v, bias: bv.as_deref().zip(bias), sh, rows, gemm };
    let pairs = sh.b * sh.n;
    let results: Vec<Vec<T>> = match (threads > 1).then(|| pool(threads)).flatten() {
        Some(p) => p.install(|| (0..pairs).into_par_iter().map(|pi| inputs.pair(pi, 1)).collect()),
        None => (0..pairs).map(|pi| inputs.pair(pi, cx.threads_for(sh.s * sh.t * sh.h.max(sh.hv)))).collect(),
    };
    let mut o = write::<T>(cx, out)?;
    for (pi, r) in results.iter().enumerate() {
        let (b, n) = (pi / sh.n.max(1), pi % sh.n.max(1));
        for (i, row) in r.chunks_exact(sh.hv.max(1)).enumerate().take(sh.s) {
            let at = ((b * sh.s + i) * sh.n + n) * sh.hv;
            if let Some(dst) = o.get_mut(at..at + sh.hv) {
                dst.copy_from_slice(&row[..sh.hv]);
            }
        }
    }
    Ok(())
}

/// The operands of one call, shared by the threads.
struct Inputs<'a, T> {
    q: &'a [T],
    k: &'a [T],
    v: &'a [T],
    bias: Option<(&'a [T], [usize; 4])>,
    sh: Shape,
    rows: Rows,
    gemm: Gemm<T>,
}

impl<T: Real> Inputs<'_, T> {
    /// The `s × h_v` output of pair `pi` (batch `pi / n`, head `pi % n`).
    fn pair(&self, pi: usize, threads: usize) -> Vec<T> {
        let Shape { s, t, n, nk, nv, h, hv, .. } = self.sh;
        let (b, head) = (pi / n, pi % n);
        let (kh, vh) = (head / (n / nk.max(1)).max(1), head / (n / nv.max(1)).max(1));
        let zero = T::ZERO;
        // Query rows (s × h) and transposed keys (h × t).
        let mut qm = vec![zero; s * h];
        for (i, row) in qm.chunks_exact_mut(h.max(1)).enumerate().take(s) {
            let at = ((b * s + i) * n + head) * h;
            row[..h].copy_from_slice(&self.q[at..at + h]);
        }
        let mut kt = vec![zero; h * t];
        for j in 0..t {
            let at = ((b * t + j) * nk + kh) * h;
            for (d, &x) in self.k[at..at + h].iter().enumerate() {
                kt[d * t + j] = x;
            }
        }
        let mut scores = vec![zero; s * t];
        if h > 0 && s > 0 && t > 0 {
            (self.gemm)(&qm, &kt, &mut scores, Dims { n: s, k: h, m: t }, threads);
        }
        let scale = self.rows.scale.map(|c| T::from_f64(c).unwrap_or(zero));
        let root = T::from_f64(h as f64).unwrap_or(zero).sqrt();
        let mut weights = vec![zero; s * t];
        for (i, (p, w)) in scores.chunks_exact_mut(t.max(1)).zip(weights.chunks_exact_mut(t.max(1))).enumerate().take(s)
        {
            for (j, x) in p[..t].iter_mut().enumerate() {
                *x = match scale {
                    Some(c) => x.mul(c),
                    None => x.div(root),
                };
                if let Some((bv, bd)) = self.bias {
                    let pick = |x: usize, dim: usize| if bd[dim] == 1 { 0 } else { x };
                    *x = x.add(bv[((pick(b, 0) * bd[1] + pick(head, 1)) * bd[2] + pick(i, 2)) * bd[3] + j]);
                }
            }
            self.softmax_row(i, &p[..t], &mut w[..t]);
        }
        // Values (t × h_v), then weights @ values.
        let mut vm = vec![zero; t * hv];
        for (j, row) in vm.chunks_exact_mut(hv.max(1)).enumerate().take(t) {
            let at = ((b * t + j) * nv + vh) * hv;
            row[..hv].copy_from_slice(&self.v[at..at + hv]);
        }
        let mut o = vec![zero; s * hv];
        if t > 0 && s > 0 && hv > 0 {
            (self.gemm)(&weights, &vm, &mut o, Dims { n: s, k: t, m: hv }, threads);
        }
        o
    }

    /// The weights of query `i`'s scores `p`: softmax over the kept keys, TVM's masked
    /// form (masked scores read as 0 in the maximum) when there is a mask.
    fn softmax_row(&self, i: usize, p: &[T], w: &mut [T]) {
        let Rows { offset, window, .. } = self.rows;
        let kept = |j: usize| match offset {
            None => true,
            Some(o) => j <= i + o && window.is_none_or(|wd| j + wd > i + o),
        };
        let Some(&first) = p.first() else { return };
        let first = if kept(0) { first } else { T::ZERO };
        let m = p.iter().enumerate().skip(1).fold(first, |m, (j, &x)| m.max_nan(if kept(j) { x } else { T::ZERO }));
        let mut z = T::ZERO;
        for (j, (y, &x)) in w.iter_mut().zip(p).enumerate() {
            *y = if kept(j) { x.sub(m).exp() } else { T::ZERO };
            z = z.add(*y);
        }
        for y in w.iter_mut() {
            *y = y.div(z);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::run_standalone;
    use crate::tensor::Tensor;
    use crate::Memory;
    use spec_model::grammar::Attrs;
    use spec_model::ops::Op;

    fn t(mem: &std::rc::Rc<Memory>, shape: &[u64], v: &[f64]) -> Value {
        Value::tensor(Tensor::from_slice(DType::F64, shape, v, mem).unwrap())
    }

    fn run(args: &[Value], attrs: &Attrs, mem: &std::rc::Rc<Memory>) -> Result<Vec<f64>> {
        let Value::Tensor(r) = run_standalone(Op::Attention, attrs, args, mem).unwrap()? else { panic!() };
        Ok((0..r.numel()).map(|i| r.get_f64(i).unwrap()).collect())
    }

    #[test]
    fn masks_bias_and_grouped_heads() {
        let mem = Memory::new(1 << 20);
        let q = t(&mem, &[1, 2, 2, 1], &[1.0, 1.0, 1.0, 1.0]);
        let k = t(&mem, &[1, 2, 1, 1], &[0.0, 0.0]);
        let v = t(&mem, &[1, 2, 1, 1], &[2.0, 4.0]);
        let none = Attrs::default();
        assert_eq!(run(&[q.clone(), k.clone(), v.clone()], &none, &mem).unwrap(), vec![3.0; 4]);
        let mut tl = Attrs::default();
        tl.insert("causal_mask", AttrValue::Str("TopLeft".into()));
        assert_eq!(run(&[q.clone(), k.clone(), v.clone()], &tl, &mem).unwrap(), vec![2.0, 2.0, 3.0, 3.0]);
        let bias = t(&mem, &[1, 1, 1, 2], &[f64::NEG_INFINITY, 0.0]);
        assert_eq!(run(&[q.clone(), k.clone(), v.clone(), bias], &none, &mem).unwrap(), vec![4.0; 4]);
        let mut bad = Attrs::default();
        bad.insert("window_size", AttrValue::Int(2));
        let e = run(&[q.clone(), k.clone(), v.clone()], &bad, &mem).unwrap_err();
        assert_eq!((e.kind, e.rule), (crate::ErrorKind::OpError, "OP-nn.attention"));
        let k3 = t(&mem, &[1, 2, 3, 1], &[0.0; 6]);
        assert!(run(&[q, k3, v], &none, &mem).is_err(), "2 query heads over 3 key heads");
    }

    #[test]
    fn empty_keys_give_zeros() {
        let mem = Memory::new(1 << 20);
        let q = t(&mem, &[1, 2, 1, 3], &[1.0; 6]);
        let k = t(&mem, &[1, 0, 1, 3], &[]);
        let v = t(&mem, &[1, 0, 1, 2], &[]);
        assert_eq!(run(&[q, k, v], &Attrs::default(), &mem).unwrap(), vec![0.0; 4]);
    }
}
