//! Calls of `einsum` (random equations: shared and reduced labels, diagonals, labels
//! broadcast from 1, ellipses, implied and explicit outputs), `nn.attention` (grouped
//! heads, bias broadcasting, masks, windows, scales) and `one_hot`, with the type their
//! rules derive.

use super::exprs::{call, no};
use super::ty::{Dim, Ty};
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr, ExprKind, FloatLit, PrimExpr, PrimExprKind};
use spec_model::ops::Op;
use spec_model::Span;

const S: Span = Span::SYNTHETIC;

/// The letters equations use (both cases: the implied output sorts upper case first).
const LETTERS: &[u8] = b"ijkbnAZxyB";

/// One operand of a generated equation: its labels (`None`: the ellipsis) and dims.
struct Operand {
    term: Vec<Option<u8>>,
    dims: Vec<Dim>,
    /// Each letter's dimension, in term order.
    labels: Vec<(u8, Dim)>,
}

impl Gen<'_, '_> {
    pub(super) fn linalg_call(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        match op {
            Op::Einsum => self.einsum_call(sc),
            Op::Attention => self.attention_call(sc),
            _ => self.one_hot_call(sc),
        }
    }

    fn einsum_call(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, dt) = self.operand(sc, |d| !d.is_bool(), DataType::FLOAT32, 0);
        // Labels: the first operand's dimensions get distinct letters, or a leading
        // run of them the ellipsis.
        let mut pool: Vec<u8> = LETTERS.to_vec();
        let mut extent: Vec<(u8, Dim)> = Vec::new();
        let ell_len = if xd.is_empty() || self.chance(2, 3) { 0 } else { 1 + self.pick(xd.len()) };
        let ellipsis: Vec<Dim> = xd[..ell_len].to_vec();
        let use_ellipsis = ell_len > 0 || self.chance(1, 6);
        let mut first = Operand {
            term: if use_ellipsis { vec![None] } else { Vec::new() },
            dims: ellipsis.clone(),
            labels: Vec::new(),
        };
        if xd.len() - ell_len > pool.len() {
            return None;
        }
        for d in &xd[ell_len..] {
            let l = pool.remove(self.pick(pool.len()));
            extent.push((l, d.clone()));
            first.term.push(Some(l));
            first.dims.push(d.clone());
            first.labels.push((l, d.clone()));
        }
        let mut operands = vec![first];
        let mut args = vec![x];
        for _ in 0..self.pick(3) {
            let mut o = Operand { term: Vec::new(), dims: Vec::new(), labels: Vec::new() };
            if use_ellipsis && self.chance(1, 2) {
                // A suffix of the ellipsis, some dimensions broadcast from 1.
                let from = self.pick(ellipsis.len() + 1).min(ellipsis.len());
                o.term.push(None);
                for d in &ellipsis[from..] {
                    o.dims.push(if self.chance(1, 4) { Dim::lit(1) } else { d.clone() });
                }
            }
            for _ in 0..self.pick(4) {
                let reuse = !extent.is_empty() && (pool.is_empty() || self.chance(2, 3));
                let (l, d) = if reuse {
                    extent[self.pick(extent.len())].clone()
                } else {
                    let l = pool.remove(self.pick(pool.len()));
                    let d = self.new_dim(sc);
                    extent.push((l, d.clone()));
                    (l, d)
                };
                // A label this operand repeats is a diagonal of equal dimensions.
                let d = match o.labels.iter().find(|(m, _)| *m == l) {
                    Some((_, own)) => own.clone(),
                    None if reuse && self.chance(1, 8) => Dim::lit(1),
                    None => d,
                };
                o.term.push(Some(l));
                o.dims.push(d.clone());
                o.labels.push((l, d));
            }
            if !self.fits(&o.dims) {
                return None;
            }
            args.push(self.arg_of(&Ty::tensor(o.dims.clone(), dt), sc));
            operands.push(o);
        }
        // A label is as long as its first dimension other than a broadcast 1.
        for (l, d) in extent.iter_mut() {
            for o in &operands {
                for (m, od) in &o.labels {
                    if m == l && d.as_lit() == Some(1) && od.as_lit() != Some(1) {
                        *d = od.clone();
                    }
                }
            }
        }
        let count = |l: u8| operands.iter().flat_map(|o| &o.term).filter(|t| **t == Some(l)).count();
        let implied = self.chance(1, 3);
        let output: Vec<Option<u8>> = if implied {
            // NumPy's implied output: the ellipsis, then the letters used once, sorted.
            let mut once: Vec<u8> = extent.iter().map(|(l, _)| *l).filter(|&l| count(l) == 1).collect();
            once.sort_unstable();
            use_ellipsis.then_some(None).into_iter().chain(once.into_iter().map(Some)).collect()
        } else {
            let mut out: Vec<Option<u8>> = extent.iter().map(|(l, _)| Some(*l)).filter(|_| self.chance(1, 2)).collect();
            for i in (1..out.len()).rev() {
                let j = self.pick(i + 1);
                out.swap(i, j);
            }
            if use_ellipsis && self.chance(3, 4) {
                let at = self.pick(out.len() + 1).min(out.len());
                out.insert(at, None);
            }
            out
        };
        let term = |t: &[Option<u8>]| -> String {
            t.iter().map(|l| l.map_or("...".to_string(), |c| (c as char).to_string())).collect()
        };
        let inputs: Vec<String> = operands.iter().map(|o| term(&o.term)).collect();
        let subscripts = if implied { inputs.join(",") } else { format!("{}->{}", inputs.join(","), term(&output)) };
        let out_dims: Vec<Dim> = output
            .iter()
            .flat_map(|l| match l {
                None => ellipsis.clone(),
                Some(c) => extent.iter().filter(|(m, _)| m == c).map(|(_, d)| d.clone()).collect(),
            })
            .collect();
        // The loop nest visits each label's extent (and the ellipsis') once per
        // combination: keep that product small.
        let every: Vec<Dim> = extent.iter().map(|(_, d)| d.clone()).chain(ellipsis.iter().cloned()).collect();
        if !self.fits(&out_dims) || !self.fits(&every) {
            return None;
        }
        let mut attrs = Attrs::default();
        attrs.insert("subscripts", AttrValue::Str(subscripts));
        let tuple = Expr::new(ExprKind::Tuple(args), S);
        Some((call(Expr::op(Op::Einsum), vec![tuple], Vec::new(), attrs), Ty::tensor(out_dims, dt)))
    }

    fn attention_call(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let dt = self.choose(&[DataType::FLOAT32, DataType::FLOAT32, DataType::float(64), DataType::float(16)])?;
        let small = |g: &mut Self| if g.chance(1, 2) { Dim::lit(g.range(1, 4)) } else { g.new_dim(sc) };
        let (b, s, h, hv, t) = (small(self), small(self), small(self), small(self), small(self));
        let n = Dim::lit(self.choose(&[1, 2, 4])?);
        let heads = |g: &mut Self| {
            let k = n.as_lit().unwrap_or(1);
            Dim::lit(g.choose(&[1, k, k / 2]).unwrap_or(1).max(1))
        };
        let (nk, nv) = (heads(self), heads(self));
        let q_dims = vec![b.clone(), s.clone(), n.clone(), h.clone()];
        let k_dims = vec![b.clone(), t.clone(), nk, h];
        let v_dims = vec![b.clone(), t.clone(), nv, hv.clone()];
        let scores = vec![b.clone(), n.clone(), s.clone(), t.clone()];
        if !self.fits(&scores) || !self.fits(&q_dims) || !self.fits(&k_dims) || !self.fits(&v_dims) {
            return None;
        }
        let mut args = vec![
            self.arg_of(&Ty::tensor(q_dims, dt), sc),
            self.arg_of(&Ty::tensor(k_dims, dt), sc),
            self.arg_of(&Ty::tensor(v_dims, dt), sc),
        ];
        if self.chance(1, 3) {
            let bias: Vec<Dim> = scores[..3]
                .iter()
                .map(|d| if self.chance(1, 2) { Dim::lit(1) } else { d.clone() })
                .chain([t])
                .collect();
            args.push(self.arg_of(&Ty::tensor(bias, dt), sc));
        }
        let mut attrs = no();
        if self.chance(1, 3) {
            attrs.insert("scale", AttrValue::Float(FloatLit(self.choose(&[0.5, 0.125, 1.0, 2.0])?)));
        }
        match self.pick(4) {
            0 => attrs.insert("causal_mask", AttrValue::Str("TopLeft".into())),
            1 => {
                attrs.insert("causal_mask", AttrValue::Str("BottomRight".into()));
                if self.chance(1, 2) {
                    attrs.insert("window_size", AttrValue::Int(self.range(1, 3)));
                }
            }
            _ => {}
        }
        Some((call(Expr::op(Op::Attention), args, Vec::new(), attrs), Ty::tensor(vec![b, s, n, hv], dt)))
    }

    fn one_hot_call(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, _) = self.operand(sc, |d| d.is_int(), DataType::INT64, 0);
        let dt = self.choose(&[DataType::FLOAT32, DataType::INT32, DataType::INT64, DataType::float(64)])?;
        let value = |g: &mut Self| {
            let kind = if dt.is_float() {
                PrimExprKind::FloatImm { value: FloatLit(g.choose(&[1.0, 0.0, -2.5, 0.5]).unwrap_or(1.0)), dtype: dt }
            } else {
                PrimExprKind::IntImm { value: g.range(-3, 3), dtype: dt }
            };
            Expr::new(ExprKind::PrimValue(PrimExpr::new(kind, S)), S)
        };
        let (on, off) = (value(self), value(self));
        let r = xd.len() as i64;
        let depth = self.range(1, 5);
        let axis = self.range(-r - 1, r);
        let at = if axis < 0 { axis + r + 1 } else { axis } as usize;
        let mut out = xd.clone();
        out.insert(at, Dim::lit(depth));
        if !self.fits(&out) {
            return None;
        }
        let mut attrs = no();
        attrs.insert("depth", AttrValue::Int(depth));
        if axis != -1 || self.chance(1, 2) {
            attrs.insert("axis", AttrValue::Int(axis));
        }
        Some((call(Expr::op(Op::OneHot), vec![x, on, off], Vec::new(), attrs), Ty::tensor(out, dt)))
    }
}
